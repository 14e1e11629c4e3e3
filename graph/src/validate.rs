//! `validate()`: the findings of PRODUCT §1.3. The browser runs it on every
//! edit and the server on save and run, so both say the same thing.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod capabilities;
pub(crate) mod sessions;

use crate::kinds::{KindChecks, KindConfig, RePromptLevel};
use crate::template::{self, BUILT_INS, STATE_KEYS};
use crate::topology::Topology;
use crate::{Graph, Module};

/// The most re-prompts a module (or one coding agent) should have.
pub const MAX_RE_PROMPTS: usize = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Blocks a run.
    Error,
    Warning,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Code {
    #[serde(rename = "validation.reprompt_empty")]
    #[strum(serialize = "validation.reprompt_empty")]
    RepromptEmpty,
    #[serde(rename = "validation.reprompt_too_many")]
    #[strum(serialize = "validation.reprompt_too_many")]
    RepromptTooMany,
    #[serde(rename = "validation.reprompt_unsupported")]
    #[strum(serialize = "validation.reprompt_unsupported")]
    RepromptUnsupported,
    #[serde(rename = "validation.dangling_cable")]
    #[strum(serialize = "validation.dangling_cable")]
    DanglingCable,
    #[serde(rename = "validation.port_type_mismatch")]
    #[strum(serialize = "validation.port_type_mismatch")]
    PortTypeMismatch,
    #[serde(rename = "validation.required_input_missing")]
    #[strum(serialize = "validation.required_input_missing")]
    RequiredInputMissing,
    #[serde(rename = "validation.no_entry")]
    #[strum(serialize = "validation.no_entry")]
    NoEntry,
    #[serde(rename = "validation.orphan_module")]
    #[strum(serialize = "validation.orphan_module")]
    OrphanModule,
    #[serde(rename = "validation.unbounded_cycle")]
    #[strum(serialize = "validation.unbounded_cycle")]
    UnboundedCycle,
    #[serde(rename = "validation.coding_no_agents")]
    #[strum(serialize = "validation.coding_no_agents")]
    CodingNoAgents,
    #[serde(rename = "validation.unknown_kind")]
    #[strum(serialize = "validation.unknown_kind")]
    UnknownKind,
    #[serde(rename = "validation.unknown_provider")]
    #[strum(serialize = "validation.unknown_provider")]
    UnknownProvider,
    #[serde(rename = "validation.unknown_acp_profile")]
    #[strum(serialize = "validation.unknown_acp_profile")]
    UnknownAcpProfile,
    #[serde(rename = "validation.template_unresolved")]
    #[strum(serialize = "validation.template_unresolved")]
    TemplateUnresolved,
    #[serde(rename = "validation.workspace_path_not_allowed")]
    #[strum(serialize = "validation.workspace_path_not_allowed")]
    WorkspacePathNotAllowed,
    #[serde(rename = "validation.attachment_unsupported")]
    #[strum(serialize = "validation.attachment_unsupported")]
    AttachmentUnsupported,
    #[serde(rename = "validation.unwired_failure")]
    #[strum(serialize = "validation.unwired_failure")]
    UnwiredFailure,
    #[serde(rename = "validation.condition_invalid")]
    #[strum(serialize = "validation.condition_invalid")]
    ConditionInvalid,
    #[serde(rename = "validation.condition_no_catch_all")]
    #[strum(serialize = "validation.condition_no_catch_all")]
    ConditionNoCatchAll,
    #[serde(rename = "validation.condition_unreachable")]
    #[strum(serialize = "validation.condition_unreachable")]
    ConditionUnreachable,
    #[serde(rename = "validation.intent_gate_invalid")]
    #[strum(serialize = "validation.intent_gate_invalid")]
    IntentGateInvalid,
    #[serde(rename = "validation.intent_unwired")]
    #[strum(serialize = "validation.intent_unwired")]
    IntentUnwired,
    #[serde(rename = "validation.retry_invalid")]
    #[strum(serialize = "validation.retry_invalid")]
    RetryInvalid,
    #[serde(rename = "validation.repeat_without_attempts")]
    #[strum(serialize = "validation.repeat_without_attempts")]
    RepeatWithoutAttempts,
    #[serde(rename = "validation.poll_invalid")]
    #[strum(serialize = "validation.poll_invalid")]
    PollInvalid,
    #[serde(rename = "validation.validator_invalid")]
    #[strum(serialize = "validation.validator_invalid")]
    ValidatorInvalid,
    #[serde(rename = "validation.budget_invalid")]
    #[strum(serialize = "validation.budget_invalid")]
    BudgetInvalid,
    #[serde(rename = "validation.experiment_invalid")]
    #[strum(serialize = "validation.experiment_invalid")]
    ExperimentInvalid,
    #[serde(rename = "validation.session_not_continuable")]
    #[strum(serialize = "validation.session_not_continuable")]
    SessionNotContinuable,
    #[serde(rename = "validation.approval_invalid")]
    #[strum(serialize = "validation.approval_invalid")]
    ApprovalInvalid,
    #[serde(rename = "validation.webhook_not_allowed")]
    #[strum(serialize = "validation.webhook_not_allowed")]
    WebhookNotAllowed,
    /// It runs shell commands and the server does not run commands.
    #[serde(rename = "validation.commands_disabled")]
    #[strum(serialize = "validation.commands_disabled")]
    CommandsDisabled,
    /// It starts processes and the server cannot confine them.
    #[serde(rename = "validation.sandbox_unavailable")]
    #[strum(serialize = "validation.sandbox_unavailable")]
    SandboxUnavailable,
    /// A tool of a server the server does not have, a tool the server
    /// does not have, a locked argument the tool does not take, or a
    /// re-prompt allowing a tool the module does not have (PRODUCT §3.17).
    #[serde(rename = "validation.tool_unknown")]
    #[strum(serialize = "validation.tool_unknown")]
    ToolUnknown,
    /// Tools a model could not tell apart or call, or a number of tool
    /// calls out of range.
    #[serde(rename = "validation.tool_invalid")]
    #[strum(serialize = "validation.tool_invalid")]
    ToolInvalid,
    /// Tools on a module whose provider cannot call them.
    #[serde(rename = "validation.tools_unsupported")]
    #[strum(serialize = "validation.tools_unsupported")]
    ToolsUnsupported,
}

impl Code {
    pub const ALL: [Code; 36] = [
        Code::RepromptEmpty,
        Code::RepromptTooMany,
        Code::RepromptUnsupported,
        Code::DanglingCable,
        Code::PortTypeMismatch,
        Code::RequiredInputMissing,
        Code::NoEntry,
        Code::OrphanModule,
        Code::UnboundedCycle,
        Code::CodingNoAgents,
        Code::UnknownKind,
        Code::UnknownProvider,
        Code::UnknownAcpProfile,
        Code::TemplateUnresolved,
        Code::WorkspacePathNotAllowed,
        Code::AttachmentUnsupported,
        Code::UnwiredFailure,
        Code::ConditionInvalid,
        Code::ConditionNoCatchAll,
        Code::ConditionUnreachable,
        Code::IntentGateInvalid,
        Code::IntentUnwired,
        Code::RetryInvalid,
        Code::RepeatWithoutAttempts,
        Code::PollInvalid,
        Code::ValidatorInvalid,
        Code::BudgetInvalid,
        Code::ExperimentInvalid,
        Code::SessionNotContinuable,
        Code::ApprovalInvalid,
        Code::WebhookNotAllowed,
        Code::CommandsDisabled,
        Code::SandboxUnavailable,
        Code::ToolUnknown,
        Code::ToolInvalid,
        Code::ToolsUnsupported,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn severity(self) -> Severity {
        match self {
            Code::RepromptTooMany
            | Code::DanglingCable
            | Code::OrphanModule
            | Code::UnwiredFailure
            | Code::ConditionNoCatchAll
            | Code::ConditionUnreachable
            | Code::IntentUnwired
            | Code::RepeatWithoutAttempts
            | Code::SessionNotContinuable => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Finding {
    pub code: Code,
    pub severity: Severity,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub module_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cable_id: Option<String>,
    /// Where in the document, e.g. `modules[1].config.re_prompts[0]`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<String>,
    pub message: String,
}

/// What validation knows of the server it will run on. `None` means "not
/// known here" (the editor before `/api/providers` answered): those checks
/// are skipped rather than guessed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ValidationContext {
    pub providers: Option<Vec<String>>,
    pub acp_profiles: Option<Vec<String>>,
    /// The folders a coding module's `workspace.path` may name (the
    /// operator's `--workspace-roots`; empty allows none).
    #[serde(default)]
    pub workspace_roots: Option<Vec<String>>,
    /// The webhooks an approval may notify (the operator's `[[webhooks]]`;
    /// empty allows none).
    #[serde(default)]
    pub webhooks: Option<Vec<String>>,
    /// Whether the server runs shell commands (`--enable-commands`).
    #[serde(default)]
    pub commands_enabled: Option<bool>,
    /// Whether the server can confine the processes it starts.
    #[serde(default)]
    pub sandbox_available: Option<bool>,
    /// The tools of each MCP server the operator configured (PRODUCT
    /// §3.17), by server id.
    #[serde(default)]
    pub tool_servers: Option<crate::tools::ToolCatalogue>,
    /// The providers that cannot call tools (the operator's `tools =
    /// false`).
    #[serde(default)]
    pub providers_without_tools: Option<Vec<String>>,
}

pub fn has_errors(findings: &[Finding]) -> bool {
    findings
        .iter()
        .any(|finding| finding.severity == Severity::Error)
}

struct Findings(Vec<Finding>);

impl Findings {
    fn module(
        &mut self,
        code: Code,
        index: usize,
        module: &Module,
        path: Option<String>,
        message: String,
    ) {
        self.0.push(Finding {
            code,
            severity: code.severity(),
            module_id: Some(module.id.clone()),
            cable_id: None,
            path: Some(match path {
                Some(inner) => format!("modules[{index}].{inner}"),
                None => format!("modules[{index}]"),
            }),
            message,
        });
    }

    fn cable(&mut self, code: Code, index: usize, cable_id: &str, message: String) {
        self.cable_at(code, format!("cables[{index}]"), cable_id, message);
    }

    fn cable_at(&mut self, code: Code, path: String, cable_id: &str, message: String) {
        self.0.push(Finding {
            code,
            severity: code.severity(),
            module_id: None,
            cable_id: Some(cable_id.to_owned()),
            path: Some(path),
            message,
        });
    }
}

/// Every finding for `graph`, modules first in document order, then cables,
/// then findings about the graph as a whole.
pub fn validate(graph: &Graph, context: &ValidationContext) -> Vec<Finding> {
    let topology = Topology::new(graph);
    let mut findings = Findings(Vec::new());
    for (index, module) in graph.modules.iter().enumerate() {
        check_module(&mut findings, &topology, index, module, context);
    }
    check_cables(&mut findings, &topology);
    check_unwired_failures(&mut findings, &topology);
    check_unwired_intents(&mut findings, &topology);
    check_conditions(&mut findings, &topology);
    check_shape(&mut findings, &topology);
    capabilities::check(&mut findings, graph, context);
    findings.0
}

/// Conditions parse, and each port whose cables have conditions can always
/// send its value somewhere: a catch-all (a cable without a condition) is
/// there, and last, since the cables are tried in order and the first that
/// holds wins.
fn check_conditions(findings: &mut Findings, topology: &Topology<'_>) {
    let graph = topology.graph;
    let mut ports: Vec<(&str, &str)> = Vec::new();
    for (index, cable) in graph.cables.iter().enumerate() {
        let Some(text) = cable.condition() else {
            continue;
        };
        if let Err(error) = crate::condition::Condition::parse(text) {
            findings.cable_at(
                Code::ConditionInvalid,
                format!("cables[{index}].condition"),
                &cable.id,
                format!(
                    "The condition “{}” does not read: {error}",
                    crate::condition::quoted(text)
                ),
            );
        }
        let port = (cable.from.module.as_str(), cable.from.port.as_str());
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    for (module_id, port_id) in ports {
        let cables: Vec<(usize, &crate::Cable)> = graph
            .cables
            .iter()
            .enumerate()
            .filter(|(_, cable)| cable.from.module == module_id && cable.from.port == port_id)
            .collect();
        let source = topology
            .module_index(module_id)
            .map_or(module_id, |index| graph.modules[index].display_label());
        let port = format!("“{source}” · {port_id}");
        match cables
            .iter()
            .position(|(_, cable)| cable.condition().is_none())
        {
            None => {
                let (index, last) = cables[cables.len() - 1];
                findings.cable(
                    Code::ConditionNoCatchAll,
                    index,
                    &last.id,
                    format!(
                        "Every cable from {port} has a condition: when none holds, nothing leaves that port and the branch ends. Add a cable without a condition to catch the rest"
                    ),
                );
            }
            Some(catch_all) => {
                for &(index, cable) in &cables[catch_all + 1..] {
                    findings.cable(
                        Code::ConditionUnreachable,
                        index,
                        &cable.id,
                        format!(
                            "This cable from {port} comes after the one without a condition (number {}), which always carries the value, so it never will; move it up",
                            catch_all + 1
                        ),
                    );
                }
            }
        }
    }
}

/// A decision that fails (a failed check, a request for revision) on a port
/// no cable leaves fails the run when it is made: said before the run, as
/// Cloche says "all results must be wired". Errors, timeouts and giving up
/// are left out on purpose: every module that calls a model or a process
/// can have them, and failing the run naming the module is what an unwired
/// one should do, so a warning on every such module would only teach
/// people to ignore warnings.
fn check_unwired_failures(findings: &mut Findings, topology: &Topology<'_>) {
    for (index, module) in topology.graph.modules.iter().enumerate() {
        for port in &topology.ports[index].outputs {
            let Some(outcome) = crate::ports::failure_outcome(&port.id) else {
                continue;
            };
            let wired = topology
                .live
                .iter()
                .any(|(cable, from, _)| *from == index && cable.from.port == port.id);
            if crate::ports::failure_without_warning(&port.id) || wired {
                continue;
            }
            findings.module(
                Code::UnwiredFailure,
                index,
                module,
                None,
                format!(
                    "\"{}\" can end with {outcome} ({}), and no cable leads on from that port: the run would fail there. Wire {} to the module that should handle it",
                    module.display_label(),
                    port.id,
                    port.label
                ),
            );
        }
    }
}

/// An intent a module allows whose port no cable leaves: when the model
/// chooses it, that branch ends, which is rarely what the person meant
/// (Climpt asks every allowed intent for a transition). `closing` is left
/// out: ending there is what it means.
fn check_unwired_intents(findings: &mut Findings, topology: &Topology<'_>) {
    for (index, module) in topology.graph.modules.iter().enumerate() {
        for port in &topology.ports[index].outputs {
            let Some(intent) = crate::intent::Intent::of_port(&port.id) else {
                continue;
            };
            let wired = topology
                .live
                .iter()
                .any(|(cable, from, _)| *from == index && cable.from.port == port.id);
            if intent == crate::intent::Intent::Closing || wired {
                continue;
            }
            findings.module(
                Code::IntentUnwired,
                index,
                module,
                Some("config.intent_gate.allowed_intents".to_owned()),
                format!(
                    "\"{}\" allows the intent “{intent}”, and no cable leaves its port {}: when the model chooses it, the run goes nowhere from there. Wire {} or stop allowing it",
                    module.display_label(),
                    port.id,
                    port.label
                ),
            );
        }
    }
}

/// One module's findings as they are found. A kind's own checks
/// ([`crate::kinds::KindConfig::validate`]) read the module and the server's
/// context through it and report here.
pub struct ModuleFindings<'a> {
    findings: &'a mut Findings,
    index: usize,
    module: &'a Module,
    context: &'a ValidationContext,
    topology: &'a Topology<'a>,
}

impl<'a> ModuleFindings<'a> {
    /// The module as messages name it: its label, or its kind's title.
    pub fn name(&self) -> &'a str {
        self.module.display_label()
    }

    pub fn context(&self) -> &'a ValidationContext {
        self.context
    }

    /// Whether a live cable comes into the module's input `port`.
    pub fn wired(&self, port: &str) -> bool {
        self.wired_from(port, None)
    }

    /// Whether a live cable comes into input `port` from an output
    /// `from_port` (any output, with `None`).
    pub fn wired_from(&self, port: &str, from_port: Option<&str>) -> bool {
        self.topology.live.iter().any(|(cable, _, to)| {
            *to == self.index
                && cable.to.port == port
                && from_port.is_none_or(|from_port| cable.from.port == from_port)
        })
    }

    /// `path` is inside the module (`config.agents`); `None` is the module.
    pub fn report(&mut self, code: Code, path: Option<String>, message: String) {
        self.findings
            .module(code, self.index, self.module, path, message);
    }

    /// A structured gate that cannot work: each problem at its field.
    /// A provider the module names, which the server must have.
    pub fn provider(&mut self, provider: &str, path: &str) {
        if let Some(providers) = &self.context.providers
            && !provider.is_empty()
            && !providers.contains(&provider.to_owned())
        {
            let name = self.name();
            self.report(
                Code::UnknownProvider,
                Some(path.to_owned()),
                format!("\"{name}\" uses provider \"{provider}\", which this server does not have"),
            );
        }
    }

    /// An agent task's tools (PRODUCT §3.17) — the module's own or a
    /// variant's — each part of `offer` checked where it says it is, and
    /// how many calls the module allows.
    pub fn tools(&mut self, offer: ToolsOffer<'_>, max_tool_calls: Option<u32>) {
        use crate::tools::{self, MOST_TOOL_CALLS, ToolProblem};
        let name = self.name();
        if let Some(at) = offer.tools_at {
            for (path, problem) in tools::problems(offer.tools, self.context.tool_servers.as_ref())
            {
                let code = match problem {
                    ToolProblem::NameTaken { .. } | ToolProblem::BadName { .. } => {
                        Code::ToolInvalid
                    }
                    _ => Code::ToolUnknown,
                };
                self.report(code, Some(format!("{at}{path}")), problem.message(name));
            }
        }
        if let Some((re_prompts, at)) = offer.re_prompts {
            for (index, re_prompt) in re_prompts.iter().enumerate() {
                for allowed in tools::not_the_modules(
                    offer.tools,
                    re_prompt.allowed_tools.as_deref().unwrap_or_default(),
                ) {
                    let problem = ToolProblem::NotTheModules {
                        name: allowed.to_owned(),
                    };
                    self.report(
                        Code::ToolUnknown,
                        Some(format!("{at}re_prompts[{index}].allowed_tools")),
                        problem.message(name),
                    );
                }
            }
        }
        if let Some(most) = max_tool_calls
            && !(1..=MOST_TOOL_CALLS).contains(&most)
        {
            self.report(
                Code::ToolInvalid,
                Some("config.max_tool_calls".to_owned()),
                format!("\"{name}\" allows {most} tool calls: from 1 to {MOST_TOOL_CALLS}"),
            );
        }
        let Some((provider, path)) = offer.provider else {
            return;
        };
        let provider = match (provider, &self.context.providers) {
            ("", Some(providers)) => providers.first().map_or("", String::as_str),
            (provider, _) => provider,
        };
        if !offer.tools.is_empty()
            && self
                .context
                .providers_without_tools
                .as_ref()
                .is_some_and(|without| without.iter().any(|id| id == provider))
        {
            let problem = ToolProblem::ProviderCannot {
                provider: provider.to_owned(),
            };
            self.report(Code::ToolsUnsupported, Some(path), problem.message(name));
        }
    }

    /// The webhooks a module notifies (`config.notify`), which the
    /// operator must have listed.
    pub fn webhooks(&mut self, notify: &[String]) {
        let name = self.name();
        let allowed = self.context.webhooks.clone();
        for (index, webhook) in notify.iter().enumerate() {
            if let Some(allowed) = &allowed
                && !allowed.contains(webhook)
            {
                let known = if allowed.is_empty() {
                    "this server has none (the operator lists them in its configuration, [[webhooks]])".to_owned()
                } else {
                    format!("this server has {}", allowed.join(", "))
                };
                self.report(
                    Code::WebhookNotAllowed,
                    Some(format!("config.notify[{index}]")),
                    format!("\"{name}\" notifies “{webhook}”, which is not a webhook of this server: {known}"),
                );
            }
        }
    }

    /// The MCP servers a coding agent is given (`{at}.mcp_servers`): each
    /// one the server has, and may give an agent.
    pub fn agent_tool_servers(&mut self, servers: &[String], at: &str) {
        use crate::tools::ToolProblem;
        let Some(catalogue) = &self.context.tool_servers else {
            return;
        };
        let name = self.name().to_owned();
        let mut found = Vec::new();
        for (index, server) in servers.iter().enumerate() {
            let problem = match catalogue.get(server) {
                None => ToolProblem::UnknownServer {
                    server: server.clone(),
                },
                Some(spec) => match &spec.not_for_agents {
                    Some(why) => ToolProblem::NotForAgents {
                        server: server.clone(),
                        why: why.clone(),
                    },
                    None => continue,
                },
            };
            found.push((format!("{at}.mcp_servers[{index}]"), problem.message(&name)));
        }
        for (path, message) in found {
            self.report(Code::ToolUnknown, Some(path), message);
        }
    }

    /// An ACP profile the module names, which the server must have.
    pub fn acp_profile(&mut self, profile: &str, path: &str) {
        if let Some(profiles) = &self.context.acp_profiles
            && !profiles.contains(&profile.to_owned())
        {
            let name = self.name();
            self.report(
                Code::UnknownAcpProfile,
                Some(path.to_owned()),
                format!(
                    "\"{name}\" uses ACP profile \"{profile}\", which this server does not have"
                ),
            );
        }
    }

    pub fn intent_gate(&mut self, gate: &crate::intent::IntentGate) {
        let name = self.name();
        for problem in gate.problems() {
            self.report(
                Code::IntentGateInvalid,
                Some(format!("config.intent_gate.{}", problem.field)),
                format!("The intent gate of \"{name}\" {}", problem.message),
            );
        }
    }

    /// Attachments that no model can be sent (an archive, a binary): the run
    /// would fail on them, so it is said before.
    pub fn attachments(&mut self, attachments: &[crate::Attachment], path: &str, owner: &str) {
        for (position, attachment) in attachments.iter().enumerate() {
            if crate::attachment_kind(&attachment.media_type).is_none() {
                self.report(
                    Code::AttachmentUnsupported,
                    Some(format!("{path}[{position}]")),
                    format!(
                        "{owner} attaches \"{}\" ({}), which cannot be sent: {}",
                        attachment.name,
                        attachment.media_type,
                        crate::reprompt::ACCEPTED_KINDS
                    ),
                );
            }
        }
    }
}

/// Attempts, backoff and timeout in range, and a gate that may choose
/// `repeat` with an attempt to repeat into (PRODUCT §3.9).
fn check_attempts(findings: &mut ModuleFindings<'_>, kind_config: &dyn KindConfig) {
    let name = findings.name();
    if let Some(budget) = findings.module.config.budget_usd()
        && !(budget.is_finite() && budget > 0.0)
    {
        findings.report(
            Code::BudgetInvalid,
            Some("config.agent_config.budget_usd".to_owned()),
            format!("\"{name}\": a budget is an amount of US dollars more than 0"),
        );
    }
    if let Some(retry) = kind_config.retry() {
        for (field, problem) in retry.problems() {
            findings.report(
                Code::RetryInvalid,
                Some(format!("config.{field}")),
                format!("\"{name}\": {problem}"),
            );
        }
    }
    if let Some(problem) = kind_config
        .timeout_seconds()
        .and_then(crate::attempts::timeout_problem)
    {
        findings.report(
            Code::RetryInvalid,
            Some("config.timeout_seconds".to_owned()),
            format!("\"{name}\": {problem}"),
        );
    }
    let attempts = kind_config.retry().map_or(1, |retry| retry.max_attempts);
    if attempts == 1
        && kind_config
            .intent_gate()
            .is_some_and(|gate| gate.allows(crate::intent::Intent::Repeat))
    {
        findings.report(
            Code::RepeatWithoutAttempts,
            Some("config.max_attempts".to_owned()),
            format!(
                "\"{name}\" may choose to repeat, but it has 1 attempt: a repeat would give up at once and fail the run. Give it 2 or more attempts, or stop allowing repeat"
            ),
        );
    }
}

/// Validators that can work: each problem at its field; and, for now, on a
/// module whose last turn is its own (not with an intent gate, whose reply
/// a fix turn would replace; not with parallel agents or a review chain,
/// where no one session does the fixing).
fn check_validators(
    findings: &mut ModuleFindings<'_>,
    kind_config: &dyn KindConfig,
    checks: &dyn KindChecks,
) {
    let Some(validation) = kind_config.validation() else {
        return;
    };
    if validation.is_empty() {
        return;
    }
    let name = findings.name();
    for problem in validation.problems() {
        findings.report(
            Code::ValidatorInvalid,
            Some(format!("config.{}", problem.field)),
            format!("\"{name}\": {}", problem.message),
        );
    }
    if kind_config.intent_gate().is_some() {
        findings.report(
            Code::ValidatorInvalid,
            Some("config.validators".to_owned()),
            format!("\"{name}\" has validators and an intent gate: a fix turn would take the place of the gate's answer. Check its work in a module of its own after the gate (a command with the validators' command), or remove the gate"),
        );
    }
    if let Some(why) = checks.validators_unsupported() {
        findings.report(
            Code::ValidatorInvalid,
            Some("config.validators".to_owned()),
            format!("\"{name}\" has validators, {why}"),
        );
    }
}

fn check_module(
    findings: &mut Findings,
    topology: &Topology<'_>,
    index: usize,
    module: &Module,
    context: &ValidationContext,
) {
    let name = module.display_label();
    let (Some(kind_config), Some(checks)) =
        (module.config.kind_config(), module.config.kind_checks())
    else {
        findings.module(
            Code::UnknownKind,
            index,
            module,
            Some("kind".to_owned()),
            format!(
                "\"{name}\" is of kind \"{}\", which this server does not know",
                module.config.kind_name()
            ),
        );
        return;
    };
    let mut findings = ModuleFindings {
        findings,
        index,
        module,
        context,
        topology,
    };

    for list in kind_config.re_prompt_lists() {
        let owner = match list.agent_role {
            Some(role) if !role.is_empty() => format!("agent \"{role}\" of \"{name}\""),
            _ => format!("\"{name}\""),
        };
        for (position, re_prompt) in list.re_prompts.iter().enumerate() {
            if re_prompt.is_blank() {
                findings.report(
                    Code::RepromptEmpty,
                    Some(format!("{}[{position}]", list.path)),
                    format!("Re-prompt {} of {owner} is empty", position + 1),
                );
            }
            findings.attachments(
                &re_prompt.attachments,
                &format!("{}[{position}].attachments", list.path),
                &format!("Re-prompt {} of {owner}", position + 1),
            );
        }
        if list.re_prompts.len() > MAX_RE_PROMPTS {
            findings.report(
                Code::RepromptTooMany,
                Some(list.path.clone()),
                format!(
                    "{owner} has {} re-prompts; at most {MAX_RE_PROMPTS} are supported",
                    list.re_prompts.len()
                ),
            );
        }
    }

    checks.validate(&mut findings);
    check_attempts(&mut findings, kind_config);
    check_validators(&mut findings, kind_config, checks);

    if let Some(kind) = module.kind()
        && kind.re_prompt_level() == RePromptLevel::None
        && let Some(value) = kind_config.extra().get("re_prompts")
        && !matches!(value, Value::Array(items) if items.is_empty())
    {
        findings.report(
            Code::RepromptUnsupported,
            Some("config.re_prompts".to_owned()),
            format!(
                "\"{name}\" is a {} module, which does not take re-prompts",
                kind.title()
            ),
        );
    }

    if let Some(agent) = kind_config.agent_config() {
        findings.provider(&agent.provider, "config.agent_config.provider");
    }

    for port in topology.ports[index]
        .inputs
        .iter()
        .filter(|port| port.required)
    {
        if !findings.wired(&port.id) {
            findings.report(
                Code::RequiredInputMissing,
                None,
                format!("\"{name}\" needs a cable into its \"{}\" input", port.label),
            );
        }
    }
    checks.validate_cables(&mut findings);
    check_templates(&mut findings, topology);
    check_shell_scripts(&mut findings, kind_config);
}

/// Its shell scripts (a command's or poll's, each validator's): a variable
/// in a quoted here-document (`<<'EOF'`) is never filled in, which the run
/// would find only when it reaches the module.
fn check_shell_scripts(findings: &mut ModuleFindings<'_>, kind_config: &dyn KindConfig) {
    let mut scripts: Vec<(String, &str)> = Vec::new();
    if findings
        .module
        .kind()
        .is_some_and(crate::ModuleKind::runs_a_command)
    {
        scripts.extend(
            kind_config
                .further_prompt_texts()
                .into_iter()
                .filter(|(path, _)| path == "config.command"),
        );
    }
    if let Some(validation) = kind_config.validation() {
        for (index, validator) in validation.validators.iter().enumerate() {
            scripts.push((
                format!("config.validators[{index}].command"),
                validator.command.as_str(),
            ));
        }
    }
    let name = findings.name().to_owned();
    for (path, script) in scripts {
        for variable in crate::shell_places::in_quoted_here_documents(script) {
            findings.report(
                Code::TemplateUnresolved,
                Some(path.clone()),
                format!(
                    "{{{{ {} }}}} in \"{name}\" cannot be filled: it is in a quoted here-document (<<'EOF'), where nothing is filled in; use an unquoted one (<<EOF), where its value goes in as written",
                    variable.name
                ),
            );
        }
    }
}

/// The module upstream of one (`upstream` says which are) labelled `label`.
fn upstream_labelled<'a>(
    topology: &Topology<'a>,
    upstream: &[bool],
    label: &str,
) -> Option<(usize, &'a crate::Module)> {
    topology
        .graph
        .modules
        .iter()
        .enumerate()
        .find(|(position, other)| upstream[*position] && other.display_label().trim() == label)
}

fn check_templates(findings: &mut ModuleFindings<'_>, topology: &Topology<'_>) {
    let (index, module) = (findings.index, findings.module);
    let texts = module.config.prompt_texts();
    if texts.is_empty() {
        return;
    }
    let upstream = topology.upstream_of(index);
    let upstream_labels: HashSet<&str> = topology
        .graph
        .modules
        .iter()
        .enumerate()
        .filter(|(position, _)| upstream[*position])
        .map(|(_, other)| other.display_label().trim())
        .collect();
    let retry_variables = module
        .kind()
        .map(crate::ModuleKind::retry_variables)
        .unwrap_or_default();
    for (path, text) in texts {
        let retry_text = path == "config.retry_instruction";
        for variable in template::variables(text) {
            let problem = if BUILT_INS.contains(&variable.name) {
                None
            } else if retry_variables.contains(&variable.name) {
                // A retry variable has a value only from the second attempt
                // on, which is when only the retry instruction is sent.
                (!retry_text).then(|| {
                    "it is a retry variable, which has a value only in the retry instruction (attempts 2 and later)".to_owned()
                })
            } else if let Some((label, name)) = variable.name.split_once(".set.") {
                // A key a command sets: known only when it runs, so its
                // absence fails the activation then, saying so.
                let label = label.trim();
                match upstream_labelled(topology, &upstream, label) {
                    None => Some(format!("no module upstream of it is labelled \"{label}\"")),
                    Some((_, other))
                        if !other.kind().is_some_and(crate::ModuleKind::runs_a_command) =>
                    {
                        Some(format!(
                            "\"{label}\" is not a command or a poll, and only those set keys (PATCHBAY_SET:{}=…)",
                            name.trim()
                        ))
                    }
                    Some(_) => None,
                }
            } else if let Some((label, tool)) = variable.name.split_once(".tools.") {
                // What a tool of an upstream agent task last returned.
                let label = label.trim();
                match upstream_labelled(topology, &upstream, label).map(|(_, other)| &other.config)
                {
                    None => Some(format!("no module upstream of it is labelled \"{label}\"")),
                    Some(crate::ModuleConfig::AgentTask(task))
                        if task.tools.iter().any(|choice| choice.name() == tool.trim()) =>
                    {
                        None
                    }
                    Some(_) => Some(format!(
                        "\"{label}\" has no tool called \"{}\"",
                        tool.trim()
                    )),
                }
            } else if let Some((label, key)) = variable.module_reference() {
                if !STATE_KEYS.contains(&key) {
                    Some(format!(
                        "\"{key}\" is not a module state key (use one of {})",
                        STATE_KEYS.join(", ")
                    ))
                } else if !upstream_labels.contains(label) {
                    Some(format!("no module upstream of it is labelled \"{label}\""))
                } else {
                    None
                }
            } else if retry_text {
                Some(format!(
                    "\"{}\" is neither a built-in ({}), a retry variable ({}) nor <label>.<key>",
                    variable.name,
                    BUILT_INS.join(", "),
                    retry_variables.join(", ")
                ))
            } else {
                Some(format!(
                    "\"{}\" is neither a built-in ({}) nor <label>.<key>",
                    variable.name,
                    BUILT_INS.join(", ")
                ))
            };
            if let Some(problem) = problem {
                findings.report(
                    Code::TemplateUnresolved,
                    Some(path.clone()),
                    format!(
                        "{{{{ {} }}}} in \"{}\" cannot be filled: {problem}",
                        variable.name,
                        module.display_label()
                    ),
                );
            }
        }
    }
}

/// What an agent task (or one of its variants) offers the model: its
/// tools, and each part to check with where it is (`None`: checked with
/// the module already).
pub struct ToolsOffer<'a> {
    pub tools: &'a [crate::tools::ToolChoice],
    /// Where the tools are (`config.` or a variant's overrides).
    pub tools_at: Option<&'a str>,
    /// The re-prompts narrowing them, and where those are.
    pub re_prompts: Option<(&'a [crate::RePrompt], &'a str)>,
    /// The provider that would call them, and the path naming it.
    pub provider: Option<(&'a str, String)>,
}

/// A port as a person knows it: its title ("Re-prompt 2", "Results"), or,
/// for a port that is gone, what its id says it was.
fn port_words(port: Option<&crate::Port>, id: &str) -> String {
    if let Some(port) = port {
        return port.title.clone();
    }
    let removed = crate::port_moves::is_removed_port_id(id);
    let id = id.trim_end_matches("~removed");
    let name = if let Some(name) = id.strip_prefix(crate::ports::NAMED_OUTPUT_PREFIX) {
        format!("“{name}”")
    } else if let Some(number) = id
        .strip_prefix("reprompt_")
        .and_then(|rest| rest.strip_suffix("_out"))
    {
        format!("Re-prompt {number}")
    } else if id == crate::kinds::agent_task::ORIGINAL_OUT {
        "Original Response".to_owned()
    } else {
        let words = id
            .trim_end_matches("_out")
            .trim_end_matches("_in")
            .replace('_', " ");
        // Port ids are ASCII; `char::to_uppercase` would bring Unicode's
        // case tables into the browser bundle.
        let mut characters = words.chars();
        characters.next().map_or_else(String::new, |first| {
            std::iter::once(first.to_ascii_uppercase())
                .chain(characters)
                .collect()
        })
    };
    if removed {
        format!("{name} (removed)")
    } else {
        name
    }
}

fn check_cables(findings: &mut Findings, topology: &Topology<'_>) {
    let graph = topology.graph;
    for (index, cable) in graph.cables.iter().enumerate() {
        let from = topology.module_index(&cable.from.module);
        let to = topology.module_index(&cable.to.module);
        let (Some(from), Some(to)) = (from, to) else {
            let end = |position: Option<usize>| {
                position.map_or_else(
                    || "a module that was deleted".to_owned(),
                    |position| format!("“{}”", graph.modules[position].display_label()),
                )
            };
            findings.cable(
                Code::DanglingCable,
                index,
                &cable.id,
                format!(
                    "A cable from {} to {} leads to a module that no longer exists; delete it",
                    end(from),
                    end(to)
                ),
            );
            continue;
        };
        let from_module = &graph.modules[from];
        let to_module = &graph.modules[to];
        let output = topology.ports[from].output(&cable.from.port);
        let input = topology.ports[to].input(&cable.to.port);
        let between = format!(
            "The cable from “{}” · {} to “{}” · {}",
            from_module.display_label(),
            port_words(output, &cable.from.port),
            to_module.display_label(),
            port_words(input, &cable.to.port),
        );
        match (output, input) {
            (Some(output), Some(input)) => {
                if !output.port_type.connects_to(input.port_type) {
                    findings.cable(
                        Code::PortTypeMismatch,
                        index,
                        &cable.id,
                        format!(
                            "{between} joins ports that do not fit: a {} output cannot feed a {} input",
                            output.port_type.as_str(),
                            input.port_type.as_str()
                        ),
                    );
                }
            }
            (None, _) => findings.cable(
                Code::DanglingCable,
                index,
                &cable.id,
                format!(
                    "{between} starts at an output that no longer exists; wire it again or delete it"
                ),
            ),
            (_, None) => findings.cable(
                Code::DanglingCable,
                index,
                &cable.id,
                format!(
                    "{between} ends at an input that no longer exists; wire it again or delete it"
                ),
            ),
        }
    }
}

fn check_shape(findings: &mut Findings, topology: &Topology<'_>) {
    let graph = topology.graph;
    let entries = topology.entries();
    if entries.is_empty() {
        findings.0.push(Finding {
            code: Code::NoEntry,
            severity: Code::NoEntry.severity(),
            module_id: None,
            cable_id: None,
            path: None,
            message: if graph.modules.is_empty() {
                "The graph has no modules, so nothing can run".to_owned()
            } else {
                "No module can start: every module waits on an input (add an Input module)"
                    .to_owned()
            },
        });
    } else {
        let reached = topology.reachable_from(&entries);
        for (index, module) in graph.modules.iter().enumerate() {
            if !reached[index] {
                findings.module(
                    Code::OrphanModule,
                    index,
                    module,
                    None,
                    format!(
                        "\"{}\" cannot be reached from any module a run starts at",
                        module.display_label()
                    ),
                );
            }
        }
    }
    for cycle in topology.cycles() {
        if topology.cycle_is_bounded(&cycle) {
            continue;
        }
        let names: Vec<&str> = cycle
            .iter()
            .map(|&module| graph.modules[module].display_label())
            .collect();
        let first = cycle[0];
        findings.module(
            Code::UnboundedCycle,
            first,
            &graph.modules[first],
            None,
            format!(
                "The loop through {} has nothing to end it: give one of its modules more than one attempt (it gives up when they are used), or put a review gate or an intent gate on it",
                names
                    .iter()
                    .map(|name| format!("\"{name}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
}
