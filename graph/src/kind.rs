//! The module kinds of PRODUCT §1.1: their wire names, titles, and which of
//! them take re-prompts.

/// A module kind the model knows. Documents may name kinds this build does not
/// know; those load as [`crate::ModuleConfig::Unknown`] and fail validation.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::IntoStaticStr,
    strum::EnumString,
)]
pub enum ModuleKind {
    #[strum(serialize = "step.input")]
    Input,
    #[strum(serialize = "step.output")]
    Output,
    #[strum(serialize = "step.agent_task")]
    AgentTask,
    #[strum(serialize = "step.coding")]
    Coding,
    #[strum(serialize = "step.agent_review_gate")]
    ReviewGate,
    #[strum(serialize = "step.red_team")]
    RedTeam,
    #[strum(serialize = "step.panel")]
    Panel,
    #[strum(serialize = "step.judge")]
    Judge,
    #[strum(serialize = "step.transform")]
    Transform,
    #[strum(serialize = "step.claim_extractor")]
    ClaimExtractor,
    #[strum(serialize = "step.command")]
    Command,
}

impl ModuleKind {
    /// Every kind, in palette order.
    pub const ALL: [ModuleKind; 11] = [
        ModuleKind::Input,
        ModuleKind::AgentTask,
        ModuleKind::Coding,
        ModuleKind::ReviewGate,
        ModuleKind::RedTeam,
        ModuleKind::Panel,
        ModuleKind::Judge,
        ModuleKind::Transform,
        ModuleKind::ClaimExtractor,
        ModuleKind::Command,
        ModuleKind::Output,
    ];

    /// The `kind` string of the graph document.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(kind: &str) -> Option<ModuleKind> {
        kind.parse().ok()
    }

    /// What a person calls it in the palette and on the module header.
    pub fn title(self) -> &'static str {
        match self {
            ModuleKind::Input => "Input",
            ModuleKind::Output => "Output",
            ModuleKind::AgentTask => "Agent task",
            ModuleKind::Coding => "Coding",
            ModuleKind::ReviewGate => "Review gate",
            ModuleKind::RedTeam => "Red team",
            ModuleKind::Panel => "Panel",
            ModuleKind::Judge => "Judge",
            ModuleKind::Transform => "Transform",
            ModuleKind::ClaimExtractor => "Claim extractor",
            ModuleKind::Command => "Command",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            ModuleKind::Input => "The run's input text and files",
            ModuleKind::Output => "Collects final results for the run panel",
            ModuleKind::AgentTask => {
                "One LLM session: instruction, then re-prompts in the same session"
            }
            ModuleKind::Coding => "Coding agents over ACP: sequential, parallel or review chain",
            ModuleKind::ReviewGate => "An LLM reviewer that approves or asks for revision",
            ModuleKind::RedTeam => "An LLM adversary that attacks its input",
            ModuleKind::Panel => "Several personas discuss over a number of rounds",
            ModuleKind::Judge => "Scores its target against a rubric",
            ModuleKind::Transform => "One LLM call that rewrites its input",
            ModuleKind::ClaimExtractor => "One LLM call that lists the claims in its input",
            ModuleKind::Command => "Runs a shell command as a validator",
        }
    }

    /// Kinds with a module-level `re_prompts` list (DOC23 §8). Coding has
    /// re-prompts per agent instead, which this does not count.
    pub fn has_module_re_prompts(self) -> bool {
        matches!(
            self,
            ModuleKind::AgentTask | ModuleKind::ReviewGate | ModuleKind::RedTeam
        )
    }

    /// Kinds that call an LLM provider through `agent_config`.
    pub fn uses_provider(self) -> bool {
        matches!(
            self,
            ModuleKind::AgentTask
                | ModuleKind::ReviewGate
                | ModuleKind::RedTeam
                | ModuleKind::Panel
                | ModuleKind::Judge
                | ModuleKind::Transform
                | ModuleKind::ClaimExtractor
        )
    }
}

impl std::fmt::Display for ModuleKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_back_from_its_wire_name() {
        for kind in ModuleKind::ALL {
            assert_eq!(ModuleKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(ModuleKind::parse("step.teleport"), None);
    }
}
