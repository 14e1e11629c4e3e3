//! The graph a new visitor starts from: input → agent task with two
//! re-prompts → output, on the built-in simulated provider.

use crate::config::{AgentConfig, AgentTaskConfig, InputConfig, ModuleConfig, OutputConfig};
use crate::{Cable, Endpoint, Extra, Graph, Module, Position, RePrompt};

pub fn starter_graph() -> Graph {
    let module = |id: &str, label: &str, x: f64, config: ModuleConfig| Module {
        id: id.to_owned(),
        label: label.to_owned(),
        position: Position { x, y: 120.0 },
        config,
        extra: Extra::new(),
    };
    let cable = |id: &str, from: &str, to: &str| Cable {
        id: id.to_owned(),
        from: Endpoint::new(from, "data_out"),
        to: Endpoint::new(to, "data_in"),
        extra: Extra::new(),
    };
    Graph {
        name: "Draft, review, finalize".to_owned(),
        modules: vec![
            module(
                "m1",
                "Topic",
                80.0,
                ModuleConfig::Input(InputConfig {
                    description: "What should the agent write about?".to_owned(),
                    default_text: "Why teams should write design documents".to_owned(),
                    ..InputConfig::default()
                }),
            ),
            module(
                "m2",
                "Draft",
                360.0,
                ModuleConfig::AgentTask(AgentTaskConfig {
                    instruction: "Write a short, well-structured essay on the topic above."
                        .to_owned(),
                    agent_config: AgentConfig::simulated(),
                    re_prompts: vec![
                        RePrompt::new("Review your work above. What did you miss?"),
                        RePrompt::new("Incorporate your review into a final version."),
                    ],
                    ..AgentTaskConfig::default()
                }),
            ),
            module(
                "m3",
                "Final essay",
                660.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![cable("c1", "m1", "m2"), cable("c2", "m2", "m3")],
        ..Graph::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ValidationContext, validate};

    #[test]
    fn the_starter_graph_is_valid_with_no_findings() {
        let findings = validate(&starter_graph(), &ValidationContext::default());
        assert!(findings.is_empty(), "{findings:#?}");
    }
}
