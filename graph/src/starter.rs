//! The graphs a person can start from: the starter graph a new visitor
//! gets (input → agent task with two re-prompts → output), and the
//! examples the home page offers. Every one runs offline, on the built-in
//! simulated provider and simulated coding agent.

use crate::config::{
    AgentConfig, AgentTaskConfig, CodingAgentAssignment, CodingConfig, Criterion, InputConfig,
    JudgeConfig, ModuleConfig, OutputConfig, ReviewGateConfig, SessionStyle,
};
use crate::experiment::{COMPARISON_OUT, ConfigOverrides, Variant};
use crate::intent::{ESCALATE_OUT, Intent, IntentGate, NEXT_OUT};
use crate::kinds::approval::{ApprovalConfig, REJECTED_OUT};
use crate::kinds::coding::DIFF_OUT;
use crate::kinds::judge::COMPARISON_IN;
use crate::kinds::review_gate::{APPROVED_OUT, REVISE_OUT};
use crate::ports::{CONTEXT_IN, DATA_IN, DATA_OUT};
use crate::{Cable, Endpoint, Extra, Graph, Module, Position, RePrompt};

/// A graph to start from, as the home page lists it and `/new?example=`
/// names it.
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    /// Stable, URL-safe: `/new?example={id}`.
    pub id: &'static str,
    pub title: &'static str,
    /// One line: what the graph does.
    pub description: &'static str,
    pub graph: Graph,
}

/// The id of the example that is the starter graph.
pub const STARTER_EXAMPLE: &str = "draft-review-finalize";

fn module(id: &str, label: &str, x: f64, y: f64, config: ModuleConfig) -> Module {
    Module {
        id: id.to_owned(),
        label: label.to_owned(),
        position: Position { x, y },
        config,
        extra: Extra::new(),
    }
}

fn cable(id: &str, from: (&str, &str), to: (&str, &str)) -> Cable {
    Cable::new(id, Endpoint::new(from.0, from.1), Endpoint::new(to.0, to.1))
}

fn topic(default_text: &str) -> ModuleConfig {
    ModuleConfig::Input(InputConfig {
        description: "What should the agent write about?".to_owned(),
        default_text: default_text.to_owned(),
        ..InputConfig::default()
    })
}

pub fn starter_graph() -> Graph {
    Graph {
        name: "Draft, review, finalize".to_owned(),
        modules: vec![
            module(
                "m1",
                "Topic",
                80.0,
                120.0,
                topic("Why teams should write design documents"),
            ),
            module(
                "m2",
                "Draft",
                360.0,
                120.0,
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
                120.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![
            cable("c1", ("m1", DATA_OUT), ("m2", DATA_IN)),
            cable("c2", ("m2", DATA_OUT), ("m3", DATA_IN)),
        ],
        ..Graph::default()
    }
}

/// An essay drafted, then checked by a review gate whose feedback goes back
/// to the draft (in the same session) until it approves, at most 3 rounds.
fn review_loop_graph() -> Graph {
    Graph {
        name: "Revise until approved".to_owned(),
        modules: vec![
            module(
                "topic",
                "Topic",
                80.0,
                120.0,
                topic("How to run a useful post-mortem"),
            ),
            module(
                "draft",
                "Draft",
                360.0,
                120.0,
                ModuleConfig::AgentTask(AgentTaskConfig {
                    instruction: "Write a short essay on the topic above. When a reviewer's feedback arrives, revise the essay to address every point."
                        .to_owned(),
                    agent_config: AgentConfig::simulated(),
                    re_prompts: vec![RePrompt::new(
                        "Tighten your essay: cut repetition and make each paragraph's point explicit.",
                    )],
                    // The second round continues the same conversation, so
                    // the draft sees the feedback next to what it wrote.
                    session_persist: true,
                    ..AgentTaskConfig::default()
                }),
            ),
            // Below the draft, so that the feedback cable back to it shows
            // as a loop rather than running behind both modules.
            module(
                "review",
                "Review",
                660.0,
                300.0,
                ModuleConfig::ReviewGate(ReviewGateConfig {
                    instruction: "Approve the essay if it is clear, accurate and on topic; otherwise say exactly what to change."
                        .to_owned(),
                    agent_config: AgentConfig::simulated(),
                    max_rounds: 3,
                    ..ReviewGateConfig::default()
                }),
            ),
            module(
                "final",
                "Approved essay",
                960.0,
                300.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![
            cable("c1", ("topic", DATA_OUT), ("draft", DATA_IN)),
            cable("c2", ("draft", DATA_OUT), ("review", DATA_IN)),
            cable("c3", ("review", APPROVED_OUT), ("final", DATA_IN)),
            cable("c4", ("review", REVISE_OUT), ("draft", CONTEXT_IN)),
        ],
        ..Graph::default()
    }
}

/// The task of the examples whose coding agent writes a file.
fn welcome_note_task() -> Module {
    module(
        "task",
        "Task",
        80.0,
        120.0,
        ModuleConfig::Input(InputConfig {
            description: "What should the agent write?".to_owned(),
            default_text: "A short welcome note for new contributors".to_owned(),
            ..InputConfig::default()
        }),
    )
}

/// A coding module whose agent (the built-in simulated one, named so the
/// example stays offline whatever the server's default agent) writes a file
/// in a fresh git workspace; its reply and its diff are the results.
fn coding_graph() -> Graph {
    Graph {
        name: "A coding agent writes a file".to_owned(),
        modules: vec![
            welcome_note_task(),
            module(
                "build",
                "Write the file",
                360.0,
                120.0,
                ModuleConfig::Coding(CodingConfig {
                    instruction: "Write the file the task above asks for.\nwrite WELCOME.md: Welcome! Start with the README, then pick an issue labelled good-first-issue."
                        .to_owned(),
                    agents: vec![CodingAgentAssignment {
                        role: "builder".to_owned(),
                        acp_profile_id: Some("sim-agent".to_owned()),
                        re_prompts: vec![RePrompt::new(
                            "Read the file you wrote again and note anything to improve.",
                        )],
                        ..CodingAgentAssignment::default()
                    }],
                    ..CodingConfig::default()
                }),
            ),
            module(
                "result",
                "Result and diff",
                660.0,
                120.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![
            cable("c1", ("task", DATA_OUT), ("build", DATA_IN)),
            cable("c2", ("build", DATA_OUT), ("result", DATA_IN)),
            cable("c3", ("build", DIFF_OUT), ("result", DATA_IN)),
        ],
        ..Graph::default()
    }
}

/// A person approves a coding agent's change: the approval shows the
/// agent's reply and its diff, and a person approves it, rejects it with a
/// reason, or sends it back with what to change — to the same agent, in its
/// same session (its sessions are parked between rounds), at most three
/// rounds.
fn approval_graph() -> Graph {
    Graph {
        name: "A person approves the change".to_owned(),
        modules: vec![
            welcome_note_task(),
            module(
                "build",
                "Write the file",
                360.0,
                120.0,
                ModuleConfig::Coding(CodingConfig {
                    instruction: "Write the file the task above asks for. When a person sends your change back, change it as they say.\nwrite WELCOME.md: Welcome! Start with the README, then pick an issue labelled good-first-issue."
                        .to_owned(),
                    agents: vec![CodingAgentAssignment {
                        role: "builder".to_owned(),
                        acp_profile_id: Some("sim-agent".to_owned()),
                        ..CodingAgentAssignment::default()
                    }],
                    session_style: SessionStyle::Park,
                    ..CodingConfig::default()
                }),
            ),
            // Below the agent, so that the cable sent back to it shows as
            // a loop rather than running behind both modules.
            module(
                "review",
                "Review the change",
                660.0,
                300.0,
                ModuleConfig::Approval(ApprovalConfig {
                    ask: "Does this change do what the task asked? Approve it, reject it with a reason, or send it back with what to change."
                        .to_owned(),
                    ..ApprovalConfig::default()
                }),
            ),
            module(
                "approved",
                "Approved change",
                960.0,
                220.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
            module(
                "rejected",
                "Rejected, and why",
                960.0,
                400.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![
            cable("c1", ("task", DATA_OUT), ("build", DATA_IN)),
            cable("c2", ("build", DATA_OUT), ("review", DATA_IN)),
            cable("c3", ("build", DIFF_OUT), ("review", DATA_IN)),
            cable("c4", ("review", APPROVED_OUT), ("approved", DATA_IN)),
            cable("c5", ("review", REJECTED_OUT), ("rejected", DATA_IN)),
            cable("c6", ("review", REVISE_OUT), ("build", CONTEXT_IN)),
        ],
        ..Graph::default()
    }
}

/// A coding module whose agent builds a small program, checked by two
/// validators when it is done: the program runs, and it has usage notes.
/// The notes are missing at first, so the failure pattern's prompt asks the
/// agent, in the same session, to add them; then the checks pass. Needs a
/// server that runs commands.
fn checks_graph() -> Graph {
    use crate::validators::{FailurePattern, OnFailure, Validation, Validator};
    let validator = |name: &str, command: &str, success_when: &str, pattern: &str| Validator {
        name: name.to_owned(),
        command: command.to_owned(),
        success_when: success_when.to_owned(),
        failure_pattern: pattern.to_owned(),
        extract_params: [("problem".to_owned(), "output".to_owned())].into(),
        ..Validator::default()
    };
    let pattern = |name: &str, description: &str, prompt: &str| FailurePattern {
        name: name.to_owned(),
        description: description.to_owned(),
        prompt: prompt.to_owned(),
        params: vec!["problem".to_owned()],
        ..FailurePattern::default()
    };
    Graph {
        name: "Build until the checks pass".to_owned(),
        modules: vec![
            module(
                "task",
                "Task",
                80.0,
                120.0,
                ModuleConfig::Input(InputConfig {
                    description: "What should the agent build?".to_owned(),
                    default_text: "A script that greets whoever is named".to_owned(),
                    ..InputConfig::default()
                }),
            ),
            module(
                "build",
                "Build",
                360.0,
                120.0,
                ModuleConfig::Coding(CodingConfig {
                    instruction:
                        "Build what the task above asks for.\nwrite greet.sh: echo \"Hello, $1\""
                            .to_owned(),
                    agents: vec![CodingAgentAssignment {
                        role: "builder".to_owned(),
                        acp_profile_id: Some("sim-agent".to_owned()),
                        ..CodingAgentAssignment::default()
                    }],
                    validation: Validation {
                        validators: vec![
                            validator(
                                "runs",
                                "sh greet.sh World | grep -q 'Hello, World' || echo 'sh greet.sh World does not say Hello, World'",
                                "empty",
                                "broken",
                            ),
                            validator(
                                "documented",
                                "test -f USAGE.md || echo 'USAGE.md is missing: nobody will know how to run it'",
                                "empty",
                                "undocumented",
                            ),
                        ],
                        failure_patterns: vec![
                            pattern(
                                "broken",
                                "The program does not work",
                                "A check failed: {{ problem }}\nFix the program so that it passes.",
                            ),
                            pattern(
                                "undocumented",
                                "The usage notes are missing",
                                "A check failed: {{ problem }}\nAdd the usage notes.\nwrite USAGE.md: Run `sh greet.sh NAME` to greet NAME.",
                            ),
                        ],
                        on_failure: OnFailure { max_attempts: 3 },
                    },
                    ..CodingConfig::default()
                }),
            ),
            module(
                "result",
                "Result and diff",
                660.0,
                120.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![
            cable("c1", ("task", DATA_OUT), ("build", DATA_IN)),
            cable("c2", ("build", DATA_OUT), ("result", DATA_IN)),
            cable("c3", ("build", DIFF_OUT), ("result", DATA_IN)),
        ],
        ..Graph::default()
    }
}

/// A classifier whose structured gate says where a customer's message goes:
/// `next` with the team as a handoff field held to three values, whose
/// cables carry a condition each (and a catch-all for anything else), or
/// `escalate` to a person.
fn triage_graph() -> Graph {
    let team = |label: &str| {
        ModuleConfig::AgentTask(AgentTaskConfig {
            instruction: format!(
                "You are on the {label} team. Write a short, friendly reply to the customer's request summarised above."
            ),
            agent_config: AgentConfig::simulated(),
            ..AgentTaskConfig::default()
        })
    };
    let to_team = |id: &str, team: Option<&str>, target: &str| {
        let mut cable = cable(id, ("classify", NEXT_OUT), (target, DATA_IN));
        cable.condition = team.map(|team| format!("get('$.output.team') == '{team}'"));
        cable
    };
    Graph {
        name: "Triage".to_owned(),
        modules: vec![
            module(
                "request",
                "Customer message",
                80.0,
                300.0,
                ModuleConfig::Input(InputConfig {
                    description: "What did the customer write?".to_owned(),
                    default_text: "Billing: I was charged twice for my subscription this month."
                        .to_owned(),
                    ..InputConfig::default()
                }),
            ),
            module(
                "classify",
                "Classify",
                380.0,
                300.0,
                ModuleConfig::AgentTask(AgentTaskConfig {
                    instruction: "Read the customer's message above. Choose the team that should answer it and summarise the request in one sentence for them. Escalate when a person must look at it first (a legal threat, a safety issue, an angry customer)."
                        .to_owned(),
                    agent_config: AgentConfig::simulated(),
                    intent_gate: Some(IntentGate {
                        allowed_intents: vec![Intent::Next, Intent::Escalate],
                        handoff_fields: vec![
                            "team: billing | technical | sales".to_owned(),
                            "summary".to_owned(),
                        ],
                        ..IntentGate::default()
                    }),
                    ..AgentTaskConfig::default()
                }),
            ),
            module("billing", "Billing reply", 760.0, 40.0, team("billing")),
            module("technical", "Technical reply", 760.0, 220.0, team("technical")),
            module("sales", "Sales reply", 760.0, 400.0, team("sales")),
            module("general", "General reply", 760.0, 580.0, team("customer care")),
            module(
                "person",
                "Needs a person",
                760.0,
                760.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![
            cable("c1", ("request", DATA_OUT), ("classify", DATA_IN)),
            to_team("c2", Some("billing"), "billing"),
            to_team("c3", Some("technical"), "technical"),
            to_team("c4", Some("sales"), "sales"),
            to_team("c5", None, "general"),
            cable("c6", ("classify", ESCALATE_OUT), ("person", DATA_IN)),
        ],
        // A help desk posts each new ticket here (PRODUCT §6.5); the
        // webhook's secret is made in the Triggers dialog.
        extra: serde_json::json!({"triggers": [{"id": "tickets", "kind": "webhook"}]})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..Graph::default()
    }
}

/// "An agent that looks things up": an agent task with two tools of the
/// built-in MCP server — the refund policy (the lookup, its key locked, so
/// the model cannot read another entry) and a calculator — answers a
/// customer; what the policy said routes the answer, by the seed's path.
fn tools_graph() -> Graph {
    let mut locked = serde_json::Map::new();
    locked.insert(
        "key".to_owned(),
        serde_json::Value::String("refund-policy".to_owned()),
    );
    let mut approved = cable("c2", ("answer", DATA_OUT), ("reply", DATA_IN));
    approved.condition =
        Some("get('$.tools.policy.outputs.latest.decision') == 'approved'".to_owned());
    Graph {
        name: "An agent that looks things up".to_owned(),
        modules: vec![
            module(
                "question",
                "Customer question",
                80.0,
                200.0,
                ModuleConfig::Input(InputConfig {
                    description: "What did the customer ask?".to_owned(),
                    default_text: "I bought these shoes 12 days ago and they don't fit. Can I still get a refund, and how long do I have?"
                        .to_owned(),
                    ..InputConfig::default()
                }),
            ),
            module(
                "answer",
                "Answer from the policy",
                380.0,
                200.0,
                ModuleConfig::AgentTask(AgentTaskConfig {
                    instruction: "Answer the customer's question above. Read the refund policy with the policy tool first, and use the calculator for any arithmetic; quote the policy.
[sim:tool policy {}]
[sim:tool calculate {\"expression\": \"30 - 12\"}]"
                        .to_owned(),
                    agent_config: AgentConfig::simulated(),
                    tools: vec![
                        crate::tools::ToolChoice {
                            server: "patchbay".to_owned(),
                            tool: "lookup".to_owned(),
                            alias: Some("policy".to_owned()),
                            arguments: locked,
                            ..crate::tools::ToolChoice::default()
                        },
                        crate::tools::ToolChoice {
                            server: "patchbay".to_owned(),
                            tool: "calculate".to_owned(),
                            ..crate::tools::ToolChoice::default()
                        },
                    ],
                    ..AgentTaskConfig::default()
                }),
            ),
            module(
                "reply",
                "Reply to the customer",
                700.0,
                100.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
            module(
                "person",
                "A person decides",
                700.0,
                320.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![
            cable("c1", ("question", DATA_OUT), ("answer", DATA_IN)),
            approved,
            cable("c3", ("answer", DATA_OUT), ("person", DATA_IN)),
        ],
        ..Graph::default()
    }
}

/// "Which prompt is better?": three variants of a re-prompt chain — as
/// written, with an instruction of its own, with re-prompts of its own —
/// scored side by side by a judge.
fn which_prompt_graph() -> Graph {
    let re_prompts = |texts: &[&str]| texts.iter().copied().map(RePrompt::new).collect();
    Graph {
        name: "Which prompt is better?".to_owned(),
        modules: vec![
            module(
                "topic",
                "Topic",
                80.0,
                160.0,
                topic("Why teams should write design documents"),
            ),
            module(
                "draft",
                "Draft",
                380.0,
                160.0,
                ModuleConfig::AgentTask(AgentTaskConfig {
                    instruction: "Write a short essay on the topic above.".to_owned(),
                    agent_config: AgentConfig::simulated(),
                    re_prompts: re_prompts(&[
                        "Review your essay above. What is weak or missing?",
                        "Rewrite it with your review in mind.",
                    ]),
                    variants: vec![
                        Variant::new("As written"),
                        Variant {
                            instruction_override: Some(
                                "Write a short essay on the topic above for a reader who has never written one. Lead with one concrete example."
                                    .to_owned(),
                            ),
                            ..Variant::new("Concrete")
                        },
                        Variant {
                            config_overrides: ConfigOverrides {
                                re_prompts: Some(re_prompts(&[
                                    "List the three strongest objections to your essay.",
                                    "Answer each objection in the essay, then shorten it by a third.",
                                ])),
                                ..ConfigOverrides::default()
                            },
                            ..Variant::new("Devil's advocate")
                        },
                    ],
                    ..AgentTaskConfig::default()
                }),
            ),
            module(
                "judge",
                "Judge",
                760.0,
                160.0,
                ModuleConfig::Judge(JudgeConfig {
                    instruction: "Which essay would convince a busy engineering manager?".to_owned(),
                    agent_config: AgentConfig::simulated(),
                    rubric: vec![
                        Criterion {
                            name: "Clarity".to_owned(),
                            description: "Easy to follow on a first read.".to_owned(),
                            weight: 2.0,
                            extra: Extra::new(),
                        },
                        Criterion {
                            name: "Persuasion".to_owned(),
                            description: "Answers the reader's doubts.".to_owned(),
                            weight: 1.0,
                            extra: Extra::new(),
                        },
                    ],
                    ..JudgeConfig::default()
                }),
            ),
            module(
                "verdict",
                "Verdict",
                1080.0,
                160.0,
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![
            cable("c1", ("topic", DATA_OUT), ("draft", DATA_IN)),
            cable("c2", ("draft", COMPARISON_OUT), ("judge", COMPARISON_IN)),
            cable("c3", ("judge", DATA_OUT), ("verdict", DATA_IN)),
        ],
        ..Graph::default()
    }
}

/// What the home page says of an example, without building its graph: the
/// home page is the browser's main module, which should not carry every
/// example's graph (the graphs are built where a graph is opened, on the
/// server at `/new?example=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Stable, URL-safe: `/new?example={id}`.
    pub id: &'static str,
    pub title: &'static str,
    /// One line: what the graph does.
    pub description: &'static str,
    /// How many modules its graph has (a test holds it to the graph).
    pub modules: usize,
}

/// Every example as the home page lists it, the starter graph first.
pub const CATALOGUE: [Listed; 8] = [
    Listed {
        id: STARTER_EXAMPLE,
        title: "Draft, review, finalize",
        description: "One agent writes an essay, reviews its own work and rewrites it, in one session.",
        modules: 3,
    },
    Listed {
        id: "revise-until-approved",
        title: "Revise until approved",
        description: "A review gate sends its feedback back to the draft until it approves (at most 3 rounds).",
        modules: 4,
    },
    Listed {
        id: "which-prompt-is-better",
        title: "Which prompt is better?",
        description: "Three variants of a draft-and-rewrite chain run side by side; a judge scores each and names the winner.",
        modules: 4,
    },
    Listed {
        id: "triage",
        title: "Triage",
        description: "A classifier chooses an intent and a team; conditions on its cables send the message to that team, anything else to a catch-all, and escalations to a person. A help desk can post tickets to its webhook.",
        modules: 7,
    },
    Listed {
        id: "an-agent-that-looks-things-up",
        title: "An agent that looks things up",
        description: "An agent calls tools of the built-in MCP server (a policy lookup with its key locked, a calculator) before it answers; what the policy decided routes the answer.",
        modules: 4,
    },
    Listed {
        id: "coding-agent",
        title: "A coding agent writes a file",
        description: "A coding module's agent writes a file in a fresh git workspace; its reply and the diff are the results.",
        modules: 3,
    },
    Listed {
        id: "build-until-the-checks-pass",
        title: "Build until the checks pass",
        description: "A coding agent builds a script; validators check it, and a failed check's prompt sends the agent back to fix it (needs a server started with --enable-commands).",
        modules: 3,
    },
    Listed {
        id: "a-person-approves-the-change",
        title: "A person approves the change",
        description: "A coding agent writes a file; the run waits for a person, who sees the diff and approves it, rejects it, or sends it back to the agent with what to change.",
        modules: 5,
    },
];

/// The graph of the example with this id.
fn build(id: &str) -> Option<Graph> {
    Some(match id {
        STARTER_EXAMPLE => starter_graph(),
        "revise-until-approved" => review_loop_graph(),
        "which-prompt-is-better" => which_prompt_graph(),
        "triage" => triage_graph(),
        "an-agent-that-looks-things-up" => tools_graph(),
        "coding-agent" => coding_graph(),
        "build-until-the-checks-pass" => checks_graph(),
        "a-person-approves-the-change" => approval_graph(),
        _ => return None,
    })
}

/// Every example, the starter graph first.
pub fn examples() -> Vec<Example> {
    CATALOGUE
        .iter()
        .filter_map(|listed| {
            build(listed.id).map(|graph| Example {
                id: listed.id,
                title: listed.title,
                description: listed.description,
                graph,
            })
        })
        .collect()
}

/// The example with this id.
pub fn example(id: &str) -> Option<Example> {
    examples().into_iter().find(|example| example.id == id)
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

    /// The built-in MCP server's tools, as a server lists them.
    fn built_in_tools() -> crate::tools::ToolCatalogue {
        let tool = |name: &str, arguments: &[&str]| crate::tools::ToolSpec {
            name: name.to_owned(),
            arguments: arguments
                .iter()
                .map(|argument| (*argument).to_owned())
                .collect(),
        };
        [(
            "patchbay".to_owned(),
            crate::tools::ServerSpec {
                tools: vec![
                    tool("calculate", &["expression"]),
                    tool("clock", &[]),
                    tool("lookup", &["key"]),
                ],
                problem: None,
                not_for_agents: None,
            },
        )]
        .into_iter()
        .collect()
    }

    #[test]
    fn every_example_is_valid_with_no_findings() {
        // The context of a server with only its built-in provider and agent,
        // which runs commands and confines processes.
        let context = ValidationContext {
            providers: Some(vec!["sim".to_owned()]),
            acp_profiles: Some(vec!["sim-agent".to_owned()]),
            workspace_roots: Some(Vec::new()),
            webhooks: Some(Vec::new()),
            commands_enabled: Some(true),
            sandbox_available: Some(true),
            tool_servers: Some(built_in_tools()),
            providers_without_tools: Some(Vec::new()),
        };
        for example in examples() {
            let findings = validate(&example.graph, &context);
            assert!(findings.is_empty(), "{}: {findings:#?}", example.id);
        }
    }

    #[test]
    fn examples_have_distinct_url_safe_ids_and_say_what_they_do() {
        let examples = examples();
        let mut ids: Vec<&str> = examples.iter().map(|example| example.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), examples.len());
        for example in &examples {
            assert!(
                example
                    .id
                    .bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte == b'-'),
                "{}",
                example.id
            );
            assert!(!example.title.is_empty() && !example.description.contains('\n'));
            assert_eq!(example.graph.name, example.title);
        }
        // The catalogue says what the graphs are, each one built.
        assert_eq!(examples.len(), CATALOGUE.len());
        for (listed, example) in CATALOGUE.iter().zip(&examples) {
            assert_eq!(listed.id, example.id);
            assert_eq!(listed.modules, example.graph.modules.len(), "{}", listed.id);
        }
        assert_eq!(CATALOGUE[0].id, STARTER_EXAMPLE);
        assert_eq!(examples[0].graph, starter_graph());
        assert_eq!(
            example("revise-until-approved").map(|example| example.title),
            Some("Revise until approved")
        );
        assert_eq!(example("nothing-here"), None);
    }
}
