//! Which tool calls wait for a person (PRODUCT §3.17): a module says per
//! tool `approval: ask | auto | by_annotation`, the operator per server.
//! The operator's `ask` is a floor no graph lowers (what touches the host
//! is the operator's to allow); otherwise the module's word counts, else the
//! server's. `by_annotation` believes a tool's read-only mark only from a
//! server the operator trusts: a server's own hints are its claims.
//! One function decides, with the reason in words, for the detail panel
//! before a run and for the run itself.

use serde::{Deserialize, Serialize};

/// Whether a tool's calls wait for a person.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ToolApproval {
    /// Every call waits.
    Ask,
    /// No call waits.
    Auto,
    /// A call waits unless a trusted server marks the tool read-only.
    #[default]
    ByAnnotation,
}

impl ToolApproval {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolApproval::Ask => "ask",
            ToolApproval::Auto => "auto",
            ToolApproval::ByAnnotation => "by_annotation",
        }
    }
}

/// What is known of a tool's server when deciding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerPolicy {
    /// The operator's `approval` for the server.
    pub approval: ToolApproval,
    /// The operator's `trusted`: the server's annotations are believed.
    pub trusted: bool,
}

/// Why a call waits or runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalReason {
    /// The operator asks for every call of this server.
    ServerAsks,
    /// The module asks for every call of this tool.
    ModuleAsks,
    /// The module lets this tool's calls run.
    ModuleAllows,
    /// The operator lets this server's calls run.
    ServerAllows,
    /// A trusted server marks the tool read-only.
    TrustedReadOnly,
    /// The tool says it is read-only, but its server is not trusted.
    UntrustedMark,
    /// The tool is not marked read-only.
    NotReadOnly,
}

/// Whether a call waits, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApprovalVerdict {
    pub waits: bool,
    pub reason: ApprovalReason,
}

impl ApprovalVerdict {
    /// The verdict in a person's words, for the detail panel and the run.
    pub fn words(&self) -> &'static str {
        match self.reason {
            ApprovalReason::ServerAsks => {
                "Calls wait for you: the operator asks for every call of this server"
            }
            ApprovalReason::ModuleAsks => "Calls wait for you: this module asks",
            ApprovalReason::ModuleAllows => "Calls run without asking: this module allows it",
            ApprovalReason::ServerAllows => {
                "Calls run without asking: the operator allows this server's calls"
            }
            ApprovalReason::TrustedReadOnly => {
                "Calls run without asking: a trusted server marks it read-only"
            }
            ApprovalReason::UntrustedMark => {
                "Calls wait for you: it says it is read-only, but its server is not trusted"
            }
            ApprovalReason::NotReadOnly => "Calls wait for you: it is not marked read-only",
        }
    }
}

/// Whether a call of a tool waits: `module` is the module's `approval`
/// for it (unset: the server's), `read_only` the tool's own annotation.
pub fn verdict(
    module: Option<ToolApproval>,
    server: ServerPolicy,
    read_only: bool,
) -> ApprovalVerdict {
    let (waits, reason) = match (server.approval, module) {
        (ToolApproval::Ask, _) => (true, ApprovalReason::ServerAsks),
        (_, Some(ToolApproval::Ask)) => (true, ApprovalReason::ModuleAsks),
        (_, Some(ToolApproval::Auto)) => (false, ApprovalReason::ModuleAllows),
        (ToolApproval::Auto, None) => (false, ApprovalReason::ServerAllows),
        // By annotation, the server's word or the module's.
        _ => match (read_only, server.trusted) {
            (true, true) => (false, ApprovalReason::TrustedReadOnly),
            (true, false) => (true, ApprovalReason::UntrustedMark),
            (false, _) => (true, ApprovalReason::NotReadOnly),
        },
    };
    ApprovalVerdict { waits, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNTRUSTED: ServerPolicy = ServerPolicy {
        approval: ToolApproval::ByAnnotation,
        trusted: false,
    };
    const TRUSTED: ServerPolicy = ServerPolicy {
        approval: ToolApproval::ByAnnotation,
        trusted: true,
    };

    #[test]
    fn by_default_only_a_trusted_servers_read_only_tool_runs_without_asking() {
        assert_eq!(
            verdict(None, TRUSTED, true),
            ApprovalVerdict {
                waits: false,
                reason: ApprovalReason::TrustedReadOnly
            }
        );
        assert_eq!(
            verdict(None, UNTRUSTED, true),
            ApprovalVerdict {
                waits: true,
                reason: ApprovalReason::UntrustedMark
            }
        );
        assert!(verdict(None, TRUSTED, false).waits);
        assert!(verdict(Some(ToolApproval::ByAnnotation), UNTRUSTED, false).waits);
    }

    #[test]
    fn a_module_may_ask_for_more_or_let_calls_run_but_never_lowers_the_operators_ask() {
        assert!(verdict(Some(ToolApproval::Ask), TRUSTED, true).waits);
        assert!(!verdict(Some(ToolApproval::Auto), UNTRUSTED, false).waits);
        let asking = ServerPolicy {
            approval: ToolApproval::Ask,
            trusted: true,
        };
        let forced = verdict(Some(ToolApproval::Auto), asking, true);
        assert!(forced.waits);
        assert_eq!(forced.reason, ApprovalReason::ServerAsks);
    }

    #[test]
    fn a_server_the_operator_allows_runs_unless_the_module_asks() {
        let allowing = ServerPolicy {
            approval: ToolApproval::Auto,
            trusted: false,
        };
        assert_eq!(
            verdict(None, allowing, false).reason,
            ApprovalReason::ServerAllows
        );
        assert!(verdict(Some(ToolApproval::Ask), allowing, false).waits);
        assert_eq!(
            verdict(Some(ToolApproval::ByAnnotation), allowing, true).reason,
            ApprovalReason::UntrustedMark
        );
    }

    #[test]
    fn approvals_read_and_write_as_the_documents_words() {
        for approval in [
            ToolApproval::Ask,
            ToolApproval::Auto,
            ToolApproval::ByAnnotation,
        ] {
            let written = serde_json::to_value(approval).unwrap_or_default();
            assert_eq!(written, approval.as_str());
            let read: ToolApproval = serde_json::from_value(written).unwrap_or(ToolApproval::Auto);
            assert_eq!(read, approval);
        }
        assert!(serde_json::from_str::<ToolApproval>("\"sometimes\"").is_err());
    }
}
