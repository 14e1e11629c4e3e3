//! The module kinds of PRODUCT §1.1, each said once. A kind is one file
//! under `kinds/` (its config, the defaults a new module starts with, its
//! title and description, the ports its config gives, its own validation
//! and its flags) plus its line in `register_kinds!` below. From that
//! list come [`ModuleKind`], [`ModuleConfig`] and the dispatch from either
//! to the kind's file, so the palette, the canvas, validation, topology and
//! the server ask the same code. What only a kind can do is still written
//! where it is done, and the compiler points at both places: its activation
//! in `engine/src/activation.rs` and its form in `app/src/editor/panel.rs`.

pub mod agent_task;
pub mod approval;
pub mod claim_extractor;
pub mod coding;
pub mod command;
pub mod input;
pub mod judge;
pub mod output;
pub mod panel;
pub mod poll;
pub mod red_team;
pub mod review_gate;
pub mod transform;

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::config::{AgentConfig, ConfigError, RePromptList, RePromptOwner, typed};
use crate::ports::ModulePorts;
use crate::validate::ModuleFindings;
use crate::{Extra, RePrompt};

/// Where a kind keeps its re-prompts (DOC23 §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RePromptLevel {
    None,
    /// One `re_prompts` list on the module.
    Module,
    /// A list on each coding agent.
    PerAgent,
}

/// The session a kind's output names (`source_session_key`) for a module
/// downstream set to continue its input's session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputSession {
    None,
    /// The chat it had with a model, which an agent task takes up.
    Chat,
    /// A coding agent's session (ACP), when its coordination hands one on,
    /// which only a coding agent of the same profile takes up.
    CodingAgent,
}

/// What a kind is, said without a config at hand: the facts the palette,
/// validation, topology and the server's switches ask of a kind.
pub trait KindDefinition:
    KindConfig + Clone + Debug + Default + PartialEq + Serialize + DeserializeOwned
{
    /// The `kind` string of the graph document.
    const WIRE_NAME: &'static str;
    /// What a person calls it in the palette and on the module header.
    const TITLE: &'static str;
    /// One line in the palette under the title.
    const DESCRIPTION: &'static str;
    const RE_PROMPTS: RePromptLevel = RePromptLevel::None;
    /// Calls an LLM provider through `agent_config` (the kind then has one).
    const USES_PROVIDER: bool = false;
    /// Its activations start processes on the server, which must then be
    /// able to confine them.
    const STARTS_PROCESSES: bool = false;
    /// A run starts at every module of this kind, wired or not.
    const STARTS_A_RUN: bool = false;
    /// A loop through a module of this kind ends by itself.
    const BOUNDS_LOOPS: bool = false;
    /// Its activation is a shell command of the graph's own, which a
    /// server runs only with commands enabled, and which may set run state
    /// keys (`PATCHBAY_SET:`).
    const RUNS_A_COMMAND: bool = false;
    const OUTPUT_SESSION: OutputSession = OutputSession::None;
    /// The retry variables it has besides those every kind with a retry
    /// instruction has ([`crate::attempts::RETRY_VARIABLES`]).
    const RETRY_VARIABLES: &'static [&'static str] = &[];

    /// The config of a module added in the editor. `Default` is what absent
    /// fields of a document mean, which is not what a new module should
    /// start with where it talks to a provider: it starts on the simulated
    /// one, so a new graph runs offline.
    fn new_module() -> Self {
        let mut config = Self::default();
        if let Some(agent) = config.agent_config_mut() {
            *agent = AgentConfig::simulated();
        }
        config
    }
}

/// The checks only a kind makes of its config, which [`crate::validate()`]
/// alone asks for. Apart from [`KindConfig`]: a trait object carries every
/// method of its trait, so a browser that only draws modules (their ports,
/// through `&dyn KindConfig`) would carry every kind's checks too, which it
/// fetches with the graph's check (`ModuleConfig::kind_checks`).
pub trait KindChecks {
    /// Findings only this kind can have; the checks every kind shares are in
    /// [`crate::validate()`].
    fn validate(&self, _findings: &mut ModuleFindings<'_>) {}

    /// Findings about the cables into the module only this kind can have (a
    /// judge's target, a session to continue), after the shared checks of
    /// its required inputs.
    fn validate_cables(&self, _findings: &mut ModuleFindings<'_>) {}

    /// Why this config cannot have validators, when it cannot: the end of
    /// "\"<module>\" has validators, …".
    fn validators_unsupported(&self) -> Option<&'static str> {
        None
    }
}

/// What a kind does with a config of its own. Apart from [`KindDefinition`]
/// because a trait with constants cannot be a trait object, and
/// [`ModuleConfig::kind_config`] hands out `&dyn KindConfig` so that every
/// question below is answered by one dispatch.
pub trait KindConfig {
    /// The ports this config gives (PRODUCT §2.2); see [`crate::ports()`].
    fn ports(&self) -> ModulePorts;

    /// Fields this build does not know, kept to be written back.
    fn extra(&self) -> &Extra;

    fn instruction(&self) -> Option<&str> {
        None
    }

    /// The structured gate of kinds that may have one (PRODUCT §3.8).
    fn intent_gate(&self) -> Option<&crate::intent::IntentGate> {
        None
    }

    /// Where a gate goes, for kinds that may have one (turned on and off
    /// by the panel).
    fn intent_gate_slot(&mut self) -> Option<&mut Option<crate::intent::IntentGate>> {
        None
    }

    fn instruction_mut(&mut self) -> Option<&mut String> {
        None
    }

    /// Attempts and backoff of kinds that retry (PRODUCT §3.9).
    fn retry(&self) -> Option<&crate::attempts::Retry> {
        None
    }

    fn retry_mut(&mut self) -> Option<&mut crate::attempts::Retry> {
        None
    }

    /// The instruction of attempts after the first, of kinds that have one.
    fn retry_instruction(&self) -> Option<&str> {
        None
    }

    fn retry_instruction_mut(&mut self) -> Option<&mut String> {
        None
    }

    /// The timeout the module sets, in seconds; `None` is the default
    /// ([`crate::attempts::DEFAULT_TIMEOUT_SECONDS`]), and kinds that do no
    /// work of their own (input, output) have none.
    fn timeout_seconds(&self) -> Option<u32> {
        None
    }

    /// How its inputs join, in kinds that have inputs.
    fn join(&self) -> Option<crate::join::Join> {
        None
    }

    fn join_slot(&mut self) -> Option<&mut crate::join::Join> {
        None
    }

    /// Validators and failure patterns of kinds that may have them.
    fn validation(&self) -> Option<&crate::validators::Validation> {
        None
    }

    fn validation_mut(&mut self) -> Option<&mut crate::validators::Validation> {
        None
    }

    /// The timeout of a module of this kind that sets none.
    fn default_timeout_seconds(&self) -> u32 {
        crate::attempts::DEFAULT_TIMEOUT_SECONDS
    }

    /// Whether an activation of this kind has a timeout at all.
    fn times_out(&self) -> bool {
        false
    }

    /// Where the timeout goes, in kinds that may set one.
    fn timeout_slot(&mut self) -> Option<&mut Option<u32>> {
        None
    }

    fn agent_config(&self) -> Option<&AgentConfig> {
        None
    }

    fn agent_config_mut(&mut self) -> Option<&mut AgentConfig> {
        None
    }

    fn re_prompts(&self, _owner: RePromptOwner) -> Option<&Vec<RePrompt>> {
        None
    }

    fn re_prompts_mut(&mut self, _owner: RePromptOwner) -> Option<&mut Vec<RePrompt>> {
        None
    }

    fn re_prompt_lists(&self) -> Vec<RePromptList<'_>> {
        Vec::new()
    }

    /// Texts that may hold `{{ … }}` variables besides the system prompt,
    /// the instruction and the re-prompts, which every kind that has them
    /// shares (see [`ModuleConfig::prompt_texts`]).
    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        Vec::new()
    }
}

/// Implements the [`KindConfig`] accessors of fields several kinds share:
/// `extra`, `instruction`, `agent_config`, a module-level `re_prompts`
/// list, an `intent_gate`, `retry` (flattened), `retry_instruction`,
/// `timeout_seconds`, `join` and `validation` (flattened). Used inside `impl KindConfig`, it names the
/// fields the kind has.
macro_rules! standard_fields {
    (@extra) => {
        fn extra(&self) -> &$crate::Extra {
            &self.extra
        }
    };
    (@instruction) => {
        fn instruction(&self) -> Option<&str> {
            Some(&self.instruction)
        }

        fn instruction_mut(&mut self) -> Option<&mut String> {
            Some(&mut self.instruction)
        }
    };
    (@agent_config) => {
        fn agent_config(&self) -> Option<&$crate::config::AgentConfig> {
            Some(&self.agent_config)
        }

        fn agent_config_mut(&mut self) -> Option<&mut $crate::config::AgentConfig> {
            Some(&mut self.agent_config)
        }
    };
    (@intent_gate) => {
        fn intent_gate(&self) -> Option<&$crate::intent::IntentGate> {
            self.intent_gate.as_ref()
        }

        fn intent_gate_slot(&mut self) -> Option<&mut Option<$crate::intent::IntentGate>> {
            Some(&mut self.intent_gate)
        }
    };
    (@retry) => {
        fn retry(&self) -> Option<&$crate::attempts::Retry> {
            Some(&self.retry)
        }

        fn retry_mut(&mut self) -> Option<&mut $crate::attempts::Retry> {
            Some(&mut self.retry)
        }
    };
    (@retry_instruction) => {
        fn retry_instruction(&self) -> Option<&str> {
            Some(&self.retry_instruction)
        }

        fn retry_instruction_mut(&mut self) -> Option<&mut String> {
            Some(&mut self.retry_instruction)
        }
    };
    (@timeout) => {
        fn timeout_seconds(&self) -> Option<u32> {
            self.timeout_seconds
        }

        fn times_out(&self) -> bool {
            true
        }

        fn timeout_slot(&mut self) -> Option<&mut Option<u32>> {
            Some(&mut self.timeout_seconds)
        }
    };
    (@validation) => {
        fn validation(&self) -> Option<&$crate::validators::Validation> {
            Some(&self.validation)
        }

        fn validation_mut(&mut self) -> Option<&mut $crate::validators::Validation> {
            Some(&mut self.validation)
        }
    };
    (@join) => {
        fn join(&self) -> Option<$crate::join::Join> {
            Some(self.join)
        }

        fn join_slot(&mut self) -> Option<&mut $crate::join::Join> {
            Some(&mut self.join)
        }
    };
    (@re_prompts) => {
        fn re_prompts(
            &self,
            owner: $crate::config::RePromptOwner,
        ) -> Option<&Vec<$crate::RePrompt>> {
            (owner == $crate::config::RePromptOwner::Module).then_some(&self.re_prompts)
        }

        fn re_prompts_mut(
            &mut self,
            owner: $crate::config::RePromptOwner,
        ) -> Option<&mut Vec<$crate::RePrompt>> {
            (owner == $crate::config::RePromptOwner::Module).then_some(&mut self.re_prompts)
        }

        fn re_prompt_lists(&self) -> Vec<$crate::config::RePromptList<'_>> {
            vec![$crate::config::RePromptList::module_level(&self.re_prompts)]
        }
    };
    ($($field:ident),+ $(,)?) => {
        $($crate::kinds::standard_fields!(@$field);)+
    };
}
pub(crate) use standard_fields;

/// A kind's constants, gathered so that [`ModuleKind`] answers from one
/// dispatch.
#[derive(Clone, Copy)]
struct Facts {
    wire_name: &'static str,
    title: &'static str,
    description: &'static str,
    re_prompts: RePromptLevel,
    uses_provider: bool,
    starts_processes: bool,
    starts_a_run: bool,
    bounds_loops: bool,
    runs_a_command: bool,
    output_session: OutputSession,
    retry_variables: &'static [&'static str],
}

impl Facts {
    const fn of<Kind: KindDefinition>() -> Facts {
        Facts {
            wire_name: Kind::WIRE_NAME,
            title: Kind::TITLE,
            description: Kind::DESCRIPTION,
            re_prompts: Kind::RE_PROMPTS,
            uses_provider: Kind::USES_PROVIDER,
            starts_processes: Kind::STARTS_PROCESSES,
            starts_a_run: Kind::STARTS_A_RUN,
            bounds_loops: Kind::BOUNDS_LOOPS,
            runs_a_command: Kind::RUNS_A_COMMAND,
            output_session: Kind::OUTPUT_SESSION,
            retry_variables: Kind::RETRY_VARIABLES,
        }
    }
}

/// Makes [`ModuleKind`] and [`ModuleConfig`] from the list of kinds, with
/// every match that goes from one to the other or to the kind's file.
macro_rules! register_kinds {
    ($($variant:ident => $config:ty,)+) => {
        /// A module kind the model knows. Documents may name kinds this build
        /// does not know; those load as [`ModuleConfig::Unknown`] and fail
        /// validation.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ModuleKind {
            $($variant,)+
        }

        impl ModuleKind {
            /// Every kind, in palette order.
            pub const ALL: [ModuleKind; [$(stringify!($variant)),+].len()] =
                [$(ModuleKind::$variant),+];

            fn facts(self) -> Facts {
                match self {
                    $(ModuleKind::$variant => Facts::of::<$config>(),)+
                }
            }
        }

        /// A module's config, typed by its kind.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ModuleConfig {
            $($variant($config),)+
            /// A kind this build does not know: kept verbatim, rendered as
            /// "unknown module", refused by validation.
            Unknown { kind: String, config: Value },
        }

        impl ModuleConfig {
            /// The defaults a new module of this kind starts with in the editor.
            pub fn new_for(kind: ModuleKind) -> ModuleConfig {
                match kind {
                    $(ModuleKind::$variant => {
                        ModuleConfig::$variant(<$config as KindDefinition>::new_module())
                    })+
                }
            }

            /// Types a raw config of a known kind.
            pub(crate) fn typed_for(
                kind: ModuleKind,
                config: Value,
            ) -> Result<ModuleConfig, ConfigError> {
                match kind {
                    $(ModuleKind::$variant => typed(config).map(ModuleConfig::$variant),)+
                }
            }

            /// The known kind, or `None` for an unknown one.
            pub fn kind(&self) -> Option<ModuleKind> {
                match self {
                    $(ModuleConfig::$variant(_) => Some(ModuleKind::$variant),)+
                    ModuleConfig::Unknown { .. } => None,
                }
            }

            /// The config with its kind's code behind it; `None` for an unknown kind.
            pub fn kind_config(&self) -> Option<&dyn KindConfig> {
                match self {
                    $(ModuleConfig::$variant(config) => Some(config),)+
                    ModuleConfig::Unknown { .. } => None,
                }
            }

            /// The checks of its kind (`validate()`'s); `None` for an unknown kind.
            pub fn kind_checks(&self) -> Option<&dyn KindChecks> {
                match self {
                    $(ModuleConfig::$variant(config) => Some(config),)+
                    ModuleConfig::Unknown { .. } => None,
                }
            }

            pub fn kind_config_mut(&mut self) -> Option<&mut dyn KindConfig> {
                match self {
                    $(ModuleConfig::$variant(config) => Some(config),)+
                    ModuleConfig::Unknown { .. } => None,
                }
            }
        }

        /// The config object alone, as it stands under a module's `config`;
        /// the module writes its `kind` beside it.
        impl Serialize for ModuleConfig {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(ModuleConfig::$variant(config) => config.serialize(serializer),)+
                    ModuleConfig::Unknown { config, .. } => config.serialize(serializer),
                }
            }
        }
    };
}

// The registration: one line a kind, in palette order.
register_kinds! {
    Input => input::InputConfig,
    AgentTask => agent_task::AgentTaskConfig,
    Coding => coding::CodingConfig,
    ReviewGate => review_gate::ReviewGateConfig,
    Approval => approval::ApprovalConfig,
    RedTeam => red_team::RedTeamConfig,
    Panel => panel::PanelConfig,
    Judge => judge::JudgeConfig,
    Transform => transform::TransformConfig,
    ClaimExtractor => claim_extractor::ClaimExtractorConfig,
    Command => command::CommandConfig,
    Poll => poll::PollConfig,
    Output => output::OutputConfig,
}

impl ModuleKind {
    /// The `kind` string of the graph document.
    pub fn as_str(self) -> &'static str {
        self.facts().wire_name
    }

    pub fn parse(kind: &str) -> Option<ModuleKind> {
        ModuleKind::ALL
            .into_iter()
            .find(|known| known.as_str() == kind)
    }

    /// What a person calls it in the palette and on the module header.
    pub fn title(self) -> &'static str {
        self.facts().title
    }

    pub fn description(self) -> &'static str {
        self.facts().description
    }

    pub fn re_prompt_level(self) -> RePromptLevel {
        self.facts().re_prompts
    }

    /// Kinds with a module-level `re_prompts` list (DOC23 §8). Coding has
    /// re-prompts per agent instead, which this does not count.
    pub fn has_module_re_prompts(self) -> bool {
        self.re_prompt_level() == RePromptLevel::Module
    }

    /// Kinds that call an LLM provider through `agent_config`.
    pub fn uses_provider(self) -> bool {
        self.facts().uses_provider
    }

    /// Kinds whose activations start processes (shell commands, coding
    /// agents), which the server runs only confined.
    pub fn starts_processes(self) -> bool {
        self.facts().starts_processes
    }

    /// Kinds a run starts at even when a cable comes in.
    pub fn starts_a_run(self) -> bool {
        self.facts().starts_a_run
    }

    /// Kinds that end a loop through them by themselves, so validation does
    /// not call the loop unbounded.
    pub fn bounds_loops(self) -> bool {
        self.facts().bounds_loops
    }

    /// Kinds whose activation is a shell command of the graph's own (and
    /// so may set run state keys).
    pub fn runs_a_command(self) -> bool {
        self.facts().runs_a_command
    }

    /// The session a module of this kind hands on to one that continues it.
    pub fn output_session(self) -> OutputSession {
        self.facts().output_session
    }

    /// Every retry variable a module of this kind has.
    pub fn retry_variables(self) -> Vec<&'static str> {
        let mut names = crate::attempts::RETRY_VARIABLES.to_vec();
        names.extend(self.facts().retry_variables);
        names
    }
}

impl std::fmt::Display for ModuleKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::validate::Code;
    use crate::{Graph, Module, Position, ValidationContext, validate};

    #[test]
    fn every_kind_parses_back_from_its_wire_name() {
        for kind in ModuleKind::ALL {
            assert_eq!(ModuleKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(ModuleKind::parse("step.teleport"), None);
    }

    /// What each registered kind says of itself agrees with what its config
    /// does, so a new kind that forgets half of its file fails here.
    #[test]
    fn every_registered_kind_is_consistent() {
        let mut wire_names = HashSet::new();
        let mut titles = HashSet::new();
        for kind in ModuleKind::ALL {
            assert!(kind.as_str().starts_with("step."), "{kind}");
            assert!(wire_names.insert(kind.as_str()), "{kind} twice");
            assert!(!kind.title().trim().is_empty(), "{kind} has no title");
            assert!(titles.insert(kind.title()), "{kind}'s title twice");
            assert!(!kind.description().trim().is_empty(), "{kind}");

            let config = ModuleConfig::new_for(kind);
            assert_eq!(config.kind(), Some(kind));
            assert_eq!(config.kind_name(), kind.as_str());
            let written = serde_json::to_value(&config).unwrap();
            assert_eq!(
                ModuleConfig::from_kind_and_value(kind.as_str(), written).unwrap(),
                config,
                "{kind} does not load back as it was written"
            );
            assert!(
                ModuleConfig::from_kind_and_value(kind.as_str(), Value::Null).is_ok(),
                "{kind} needs a config"
            );

            assert_eq!(
                kind.uses_provider(),
                config.agent_config().is_some(),
                "{kind}"
            );
            assert_eq!(
                kind.has_module_re_prompts(),
                config.re_prompts(RePromptOwner::Module).is_some(),
                "{kind}"
            );
            assert_eq!(
                kind.re_prompt_level() == RePromptLevel::None,
                config.re_prompt_lists().is_empty(),
                "{kind}"
            );

            let ports = crate::ports::ports_of(&config);
            assert!(
                !ports.inputs.is_empty() || !ports.outputs.is_empty(),
                "{kind} has no ports"
            );
            // PRODUCT §2.2: any module can fail, and a failure is routed
            // like any other result.
            assert!(
                ports.output("error_out").is_some(),
                "{kind} has no error_out"
            );
            for side in [&ports.inputs, &ports.outputs] {
                let mut ids = HashSet::new();
                assert!(side.iter().all(|port| ids.insert(&port.id)), "{kind}");
            }

            // Alone, a new module is wanting only the cables into its
            // required inputs and out of its failing decisions.
            let module = Module::new("m1", kind, Position::default());
            assert_eq!(module.label, kind.title());
            let mut graph = Graph::from_value(serde_json::json!({})).unwrap();
            graph.modules.push(module);
            let context = ValidationContext {
                providers: Some(vec!["sim".to_owned()]),
                acp_profiles: Some(Vec::new()),
                workspace_roots: Some(Vec::new()),
                webhooks: Some(Vec::new()),
                ..ValidationContext::default()
            };
            let codes: Vec<Code> = validate(&graph, &context)
                .into_iter()
                .map(|finding| finding.code)
                .collect();
            // A judge wants its target or a comparison: one of the two.
            let required = ports.inputs.iter().filter(|port| port.required).count()
                + usize::from(kind == ModuleKind::Judge);
            let decisions = ports
                .outputs
                .iter()
                .filter(|port| {
                    !crate::ports::failure_without_warning(&port.id)
                        && crate::ports::failure_outcome(&port.id).is_some()
                })
                .count();
            let mut wanted = vec![Code::RequiredInputMissing; required];
            wanted.extend(vec![Code::UnwiredFailure; decisions]);
            assert_eq!(codes, wanted, "{kind}");
        }
    }
}
