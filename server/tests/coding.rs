//! Coding modules through the HTTP API, driving the built-in simulated ACP
//! agent (`patchbay sim-agent`, a separate process speaking ACP over stdio)
//! and, when its packages are installed, an agent on the official Python
//! SDK: per-agent re-prompts in one session, the three coordination modes,
//! the merged format, workspace confinement, crash, cancel, max_iterations.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use graph::config::{AgentConfig, Coordination, ReviewGateConfig, SessionStyle, WorkspaceConfig};
use graph::{Extra, Graph, Module, ModuleConfig, Position};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::coding::{
    Setup, activation, activation_of, agent, cable, coding_graph, config, labels, responses,
    responses_of, run, run_document, setup, setup_running_commands, transcript, transcript_of,
};
use support::{as_editor, call, create_graph, get, post, start, wait_for};
use tower::ServiceExt;

/// The names of a finished run's events, from its SSE replay.
async fn event_names(router: &Router, run_id: &str) -> Vec<(String, Value)> {
    let response = router
        .clone()
        .oneshot(get(&format!("/api/runs/{run_id}/events")))
        .await
        .unwrap();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let mut events = Vec::new();
    let mut name = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("event: ") {
            name = rest.to_owned();
        } else if let Some(rest) = line.strip_prefix("data: ") {
            events.push((name.clone(), serde_json::from_str(rest).unwrap()));
        }
    }
    events
}

fn project_with_tests(passing: bool) -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("README.md"), "A small project.\n").unwrap();
    std::fs::write(
        folder.path().join("test.sh"),
        if passing {
            "echo '3 tests passed'\nexit 0\n"
        } else {
            "echo '1 test failed'\nexit 1\n"
        },
    )
    .unwrap();
    folder
}

#[tokio::test]
async fn one_agent_runs_its_re_prompts_in_order_in_one_session_and_its_work_is_captured() {
    let setup = setup_running_commands().await;
    let project = project_with_tests(true);
    let mut config = config(
        "Implement the greeting.\nwrite hello.txt: Hello from the builder",
        vec![agent(
            "builder",
            None,
            &[
                "Run the tests and fix what fails.",
                "write notes/done.txt: done",
            ],
        )],
    );
    config.capture_test_results = true;
    config.workspace = WorkspaceConfig {
        path: Some(project.path().display().to_string()),
        extra: Extra::new(),
    };
    let run = run(&setup, config, "a greeting").await;
    assert_eq!(run["status"], "completed", "{run}");

    let responses = responses(&run);
    let labels: Vec<&str> = responses.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "builder · Original",
            "builder · Re-prompt 1",
            "builder · Re-prompt 2"
        ]
    );
    // One ACP session: the agent counts its turns in it.
    for (turn, (_, text)) in responses.iter().enumerate() {
        assert!(
            text.starts_with(&format!("Simulated agent, turn {}.", turn + 1)),
            "{text}"
        );
    }
    assert!(responses[0].1.contains("I wrote hello.txt."));
    assert!(responses[1].1.contains("I ran the tests: they pass."));
    assert!(responses[2].1.contains("I wrote notes/done.txt."));

    let outputs = &activation(&run)["outputs"];
    let merged = outputs["data_out"]["content"]["merged_content"]
        .as_str()
        .unwrap();
    assert_eq!(
        merged,
        format!(
            "═══ builder: Simulated agent ═══\n{}\n───── Re-prompt 1 ─────\n{}\n───── Re-prompt 2 ─────\n{}",
            responses[0].1, responses[1].1, responses[2].1
        )
    );
    assert_eq!(outputs["data_out"]["content"]["response_count"], 3);
    assert_eq!(outputs["data_out"]["content"]["has_re_prompts"], true);
    let diff = outputs["diff_out"]["content"].as_str().unwrap();
    assert!(diff.contains("+Hello from the builder"), "{diff}");
    assert!(diff.contains("notes/done.txt"), "{diff}");
    let files = outputs["files_out"]["content"].as_array().unwrap();
    assert!(
        files.contains(&json!({"path": "hello.txt", "status": "added"})),
        "{files:?}"
    );
    assert_eq!(
        outputs["summary_out"]["content"].as_str().unwrap(),
        responses[2].1
    );
    let tests = &outputs["test_results_out"]["content"];
    assert_eq!(tests["ran"], true, "{tests}");
    assert_eq!(tests["passed"], true);
    assert_eq!(tests["command"], "sh test.sh");
    assert!(tests["output"].as_str().unwrap().contains("3 tests passed"));
    assert!(outputs["signal_out"].is_object());
    let receipt = &activation(&run)["receipt"];
    assert_eq!(receipt["re_prompt_count"], 2);
    assert_eq!(receipt["simulated"], true);
    assert_eq!(receipt["provider"], "acp:sim-agent");
    assert!(receipt["tokens_out"].as_u64().unwrap() > 0);
    // The downstream module sees the merged output.
    assert_eq!(
        run["modules"]["result"]["activations"][0]["outputs"]["result_1"]["content"]["merged_content"],
        merged
    );
    // The configured folder was copied, never edited in place.
    assert!(!project.path().join("hello.txt").exists());

    let events = event_names(&setup.router, run["id"].as_str().unwrap()).await;
    let coding: Vec<(String, Value)> = events
        .into_iter()
        .filter(|(name, _)| name.starts_with("task.coding."))
        .collect();
    let names: Vec<&str> = coding.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "task.coding.agent_started",
            "task.coding.agent_reprompt_dispatched",
            "task.coding.agent_reprompt_response",
            "task.coding.agent_reprompt_dispatched",
            "task.coding.agent_reprompt_response",
            "task.coding.agent_finished",
        ]
    );
    assert_eq!(coding[1].1["agent_role"], "builder");
    assert_eq!(coding[1].1["reprompt_index"], 1);
    assert_eq!(coding[3].1["reprompt_index"], 2);
    assert_eq!(
        coding[5].1["files_changed"], 3,
        "hello.txt, notes/done.txt, the notes file"
    );
}

#[tokio::test]
async fn an_agent_reads_back_in_a_later_turn_the_file_it_wrote_before() {
    let setup = setup(None).await;
    let builder = agent("builder", None, &["Look again."]);
    let run = run(&setup, config("Look around.", vec![builder]), "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    // Turn 1 asked for the notes (ACP's "not found") and noted its prompt's
    // first line; turn 2 read them back
    // through fs/read_text_file and added its line under the first one.
    let diff = activation(&run)["outputs"]["diff_out"]["content"]
        .as_str()
        .unwrap();
    assert!(
        diff.contains("+- turn 1: ## Input from \"Task\"\n+- turn 2: Look again."),
        "{diff}"
    );
    assert!(transcript(&run).contains("read "), "{}", transcript(&run));
}

/// DOC23 §2.3: asked to capture test results when no test ran, the port
/// carries the sentinel, not nothing and not a made-up pass.
#[tokio::test]
async fn capturing_test_results_when_no_test_ran_sends_the_sentinel() {
    let setup = setup(None).await;
    let mut config = config("Write the notes.", vec![agent("builder", None, &[])]);
    config.capture_test_results = true;
    let run = run(&setup, config, "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    let tests = &activation(&run)["outputs"]["test_results_out"]["content"];
    assert_eq!(
        tests,
        &json!({"ran": false, "passed": null, "message": "The agents ran no tests."})
    );
}

/// PRODUCT §1.2: a coding agent's `agent_config.model` and `acp_mode` go
/// to its ACP session (`session/set_config_option` on the agent's model
/// option, `session/set_mode`), and the agent works with them; one it does
/// not offer fails the module saying what it does offer.
#[tokio::test]
async fn the_agents_model_and_mode_reach_its_acp_session() {
    let setup = setup(None).await;
    // What the agent offers is known once a session of it has opened.
    let offers = || async {
        let (status, catalogue) = call(&setup.router, get("/api/providers")).await;
        assert_eq!(status, StatusCode::OK);
        catalogue["acp_profiles"][0]["offers"].clone()
    };
    assert_eq!(offers().await, Value::Null);
    let mut builder = agent("builder", None, &["Again."]);
    builder.agent_config.model = "sim-careful".to_owned();
    builder.acp_mode = Some("ask".to_owned());
    let run = run(
        &setup,
        config("Write the notes.", vec![builder.clone()]),
        "x",
    )
    .await;
    assert_eq!(run["status"], "completed", "{run}");
    for (label, text) in responses(&run) {
        assert!(
            text.contains("(Chosen for this session: mode ask, model sim-careful.)"),
            "{label}: {text}"
        );
    }
    assert_eq!(
        offers().await,
        json!({"models": ["sim-standard", "sim-careful"], "modes": ["code", "ask"], "load_session": true})
    );

    builder.agent_config.model = "gpt-9".to_owned();
    let run = run_with_model_refused(&setup, builder.clone()).await;
    assert!(
        run.contains(
            "the agent has no model \"gpt-9\"; it offers \"sim-standard\", \"sim-careful\""
        ),
        "{run}"
    );
    // A mode the operator did not allow for the profile is refused before
    // the agent starts, whatever the graph says (a mode can let an agent
    // skip its permission requests).
    builder.agent_config.model = String::new();
    builder.acp_mode = Some("bypassPermissions".to_owned());
    let run = run_with_model_refused(&setup, builder).await;
    assert!(
        run.contains("the server's operator allows no session mode \"bypassPermissions\" for \"Simulated agent\"; allowed: \"code\", \"ask\""),
        "{run}"
    );
}

/// DOC23 §7.1 for coding modules: the module names the session of the
/// agent that holds its work (the last of a sequential chain) on
/// `data_out`, and a downstream coding agent set to continue takes it up
/// with ACP `session/load` — the conversation goes on (the simulated agent
/// replays it and says so), while the work is in the downstream module's
/// own workspace. Where it cannot, the transcript says why and the agent
/// works in a new session.
#[tokio::test]
async fn a_downstream_coding_agent_continues_the_upstream_agents_session() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("patchbay.toml");
    std::fs::write(
        &file,
        format!(
            "[[acp_profiles]]\nid = \"sim-two\"\nname = \"Second simulated agent\"\ncommand = {program:?}\nargs = [\"sim-agent\"]\n\n\
             [[acp_profiles]]\nid = \"sim-no-load\"\nname = \"Simulated agent without session/load\"\ncommand = {program:?}\nargs = [\"sim-agent\"]\nenv = {{ PATCHBAY_SIM_LOAD_SESSION = \"off\" }}\n",
            program = env!("CARGO_BIN_EXE_patchbay")
        ),
    )
    .unwrap();
    let setup = support::coding::setup_with(Some(file), Some(folder), false).await;
    let upstream = || {
        config(
            "Write the plan.",
            vec![agent(
                "builder",
                Some("write plan.txt: the plan"),
                &["Check it."],
            )],
        )
    };
    let mut fixer = agent("fixer", Some("Fix what the builder left."), &["Once more."]);
    fixer.session_mode = graph::config::SessionMode::Continue;
    let chained = |upstream: graph::config::CodingConfig,
                   fixer: graph::config::CodingAgentAssignment| {
        support::coding::coding_chain_graph(vec![
            ("build", "Build", upstream),
            ("fix", "Fix", config("Go on.", vec![fixer])),
        ])
    };
    let fix_responses = |run: &Value| -> Vec<String> {
        responses_of(run, "fix")
            .into_iter()
            .map(|(_, text)| text)
            .collect()
    };
    let fix_transcript = |run: &Value| transcript_of(run, "fix");

    let run = run_document(&setup, chained(upstream(), fixer.clone()), "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    let data_out = &activation(&run)["outputs"]["data_out"];
    assert_eq!(data_out["source_session_key"], "build#1/acp", "{data_out}");
    // The builder's session had two turns; the fixer's are the third and
    // fourth of the same conversation, its first reply saying what it took up.
    let replies = fix_responses(&run);
    assert!(
        replies[0].starts_with("Simulated agent, turn 3."),
        "{}",
        replies[0]
    );
    assert!(
        replies[0].contains(": 2 earlier turns; first asked: “## Input from \"Task\"”.)"),
        "{}",
        replies[0]
    );
    assert!(
        replies[1].starts_with("Simulated agent, turn 4."),
        "{}",
        replies[1]
    );
    let transcript = fix_transcript(&run);
    assert!(
        transcript
            .contains("[fixer] continues the session of \"Build\" (builder) (ACP session sim-")
            && transcript.contains(", 2 earlier turns)"),
        "{transcript}"
    );
    // Build's output is not repeated to the fixer: its conversation holds
    // it. The work is in the fixer's own workspace: its notes, not the plan.
    assert!(
        replies[0].contains("I was asked: “Fix what the builder left.”"),
        "{}",
        replies[0]
    );
    let diff = activation_of(&run, "fix")["outputs"]["diff_out"]["content"]
        .as_str()
        .unwrap();
    assert!(
        diff.contains("+- turn 3: Fix what the builder left."),
        "{diff}"
    );
    assert!(!diff.contains("plan.txt"), "{diff}");

    // In a chain, the last agent holds the module's session; its output
    // (the planner's reply too, which the builder never had) is given
    // again.
    let mut chain = upstream();
    chain.agents.insert(0, agent("planner", None, &[]));
    let run = run_document(&setup, chained(chain, fixer.clone()), "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    let replies = fix_responses(&run);
    assert!(
        replies[0].contains(": 2 earlier turns; first asked: “## Input from \"Task\"”.)"),
        "{}",
        replies[0]
    );
    assert!(
        replies[0].contains("I was asked: “## Input from \"Build\"”."),
        "{}",
        replies[0]
    );

    // Taking a session up continues it, so only one taker may: of two
    // variants, the second works in a new session and says why.
    let mut compared = config("Go on.", vec![fixer.clone()]);
    compared.variants = ["a", "b"]
        .into_iter()
        .map(|name| graph::experiment::Variant {
            name: name.to_owned(),
            ..graph::experiment::Variant::default()
        })
        .collect();
    let graph = support::coding::coding_chain_graph(vec![
        ("build", "Build", upstream()),
        ("fix", "Fix", compared),
    ]);
    let run = run_document(&setup, graph, "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    let transcript = fix_transcript(&run);
    assert_eq!(
        transcript
            .matches("[fixer] continues the session of \"Build\"")
            .count(),
        1,
        "{transcript}"
    );
    assert!(
        transcript.contains("was taken up by \"fix--variant-"),
        "{transcript}"
    );

    // A parallel module hands on no session.
    let mut parallel = upstream();
    parallel.coordination = Coordination::Parallel;
    let run = run_document(&setup, chained(parallel, fixer.clone()), "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    assert!(
        activation(&run)["outputs"]["data_out"]
            .get("source_session_key")
            .is_none(),
        "{run}"
    );
    assert!(fix_responses(&run)[0].starts_with("Simulated agent, turn 1."));
    assert!(
        fix_transcript(&run).contains("[fixer] cannot continue its input's session: nothing on its inputs hands on a coding agent's session"),
        "{}",
        fix_transcript(&run)
    );

    // Another agent cannot take up the session.
    let mut other = fixer.clone();
    other.acp_profile_id = Some("sim-two".to_owned());
    let run = run_document(&setup, chained(upstream(), other), "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    assert!(fix_responses(&run)[0].starts_with("Simulated agent, turn 1."));
    assert!(
        fix_transcript(&run).contains("the session of \"Build\" (builder) is held by another agent (profile \"sim-agent\", not \"sim-two\")"),
        "{}",
        fix_transcript(&run)
    );

    // An agent that does not offer session/load: a new session, and why.
    let mut without_load = upstream();
    for agent in &mut without_load.agents {
        agent.acp_profile_id = Some("sim-no-load".to_owned());
    }
    let mut other = fixer;
    other.acp_profile_id = Some("sim-no-load".to_owned());
    let run = run_document(&setup, chained(without_load, other), "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    assert!(fix_responses(&run)[0].starts_with("Simulated agent, turn 1."));
    assert!(
        fix_transcript(&run).contains("[fixer] could not continue the session of \"Build\" (builder): the agent does not offer to load a session (ACP loadSession); it works in a new session"),
        "{}",
        fix_transcript(&run)
    );
}

/// Runs one agent that should be refused; returns the run's error.
async fn run_with_model_refused(
    setup: &Setup,
    builder: graph::config::CodingAgentAssignment,
) -> String {
    let run = run(setup, config("Write the notes.", vec![builder]), "x").await;
    assert_eq!(run["status"], "failed", "{run}");
    run["error"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn sequential_agents_hand_off_in_array_order() {
    let setup = setup(None).await;
    let config = config(
        "Make the change.",
        vec![
            agent(
                "builder",
                Some("write lib.txt: the library"),
                &["Check your work."],
            ),
            agent("tester", Some("write lib_test.txt: its test"), &[]),
        ],
    );
    let run = run(&setup, config, "change").await;
    assert_eq!(run["status"], "completed", "{run}");
    let responses = responses(&run);
    assert_eq!(responses.len(), 3);
    let merged = activation(&run)["outputs"]["data_out"]["content"]["merged_content"]
        .as_str()
        .unwrap();
    assert_eq!(
        merged,
        format!(
            "═══ builder: Simulated agent ═══\n{}\n───── Re-prompt 1 ─────\n{}\n═══ tester: Simulated agent ═══\n{}",
            responses[0].1, responses[1].1, responses[2].1
        )
    );
    // The tester starts a session of its own and is handed the builder's output.
    assert!(responses[2].1.starts_with("Simulated agent, turn 1."));
    let transcript = transcript(&run);
    assert!(
        transcript.contains("## Handoff from builder (Simulated agent)"),
        "{transcript}"
    );
    let diff = activation(&run)["outputs"]["diff_out"]["content"]
        .as_str()
        .unwrap();
    assert!(
        diff.contains("+the library") && diff.contains("+its test"),
        "{diff}"
    );
}

#[tokio::test]
async fn parallel_agents_work_at_once_in_their_own_worktrees_and_both_results_count() {
    let setup = setup(None).await;
    let mut config = config(
        "Split the work.",
        vec![
            agent(
                "frontend",
                Some("write ui.txt: the page"),
                &["write ui.css: its style"],
            ),
            agent(
                "backend",
                Some("write api.txt: the endpoint"),
                &["write api.md: its docs"],
            ),
        ],
    );
    config.coordination = Coordination::Parallel;
    let run = run(&setup, config, "split").await;
    assert_eq!(run["status"], "completed", "{run}");
    let responses = responses(&run);
    assert_eq!(responses.len(), 4, "each agent's prompt and re-prompt");
    for role in ["frontend", "backend"] {
        let own: Vec<&String> = responses
            .iter()
            .filter(|(label, _)| label.starts_with(role))
            .map(|(_, text)| text)
            .collect();
        assert_eq!(own.len(), 2);
        assert!(own[0].starts_with("Simulated agent, turn 1."));
        assert!(
            own[1].starts_with("Simulated agent, turn 2."),
            "re-prompt in the same session"
        );
    }
    let merged = activation(&run)["outputs"]["data_out"]["content"]["merged_content"]
        .as_str()
        .unwrap();
    assert!(merged.starts_with("═══ frontend: Simulated agent ═══\n"));
    assert!(merged.contains("\n═══ backend: Simulated agent ═══\n"));
    let diff = activation(&run)["outputs"]["diff_out"]["content"]
        .as_str()
        .unwrap();
    assert!(
        diff.contains("+the page") && diff.contains("+the endpoint"),
        "{diff}"
    );
    let worktrees = setup
        .workspaces
        .path()
        .join(run["id"].as_str().unwrap())
        .join("build.worktrees");
    assert!(worktrees.join("0-frontend/ui.txt").exists());
    assert!(
        !worktrees.join("0-frontend/api.txt").exists(),
        "worktrees are apart"
    );
}

#[tokio::test]
async fn parallel_agents_editing_the_same_file_keep_the_unmerged_work_in_the_diff() {
    let setup = setup(None).await;
    let mut config = config(
        "Both edit one file.",
        vec![
            agent("first", Some("write shared.txt: the first version"), &[]),
            agent("second", Some("write shared.txt: the second version"), &[]),
        ],
    );
    config.coordination = Coordination::Parallel;
    let run = run(&setup, config, "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    // The first merges; the second conflicts, is reported, and its work is
    // still in diff_out rather than lost.
    let text = transcript(&run);
    assert!(
        text.contains("[second] its work was not merged into the workspace"),
        "{text}"
    );
    let diff = activation(&run)["outputs"]["diff_out"]["content"]
        .as_str()
        .unwrap();
    assert!(diff.contains("+the first version"), "{diff}");
    assert!(diff.contains("(not merged: "), "{diff}");
    assert!(diff.contains("+the second version"), "{diff}");
    let workspace = setup
        .workspaces
        .path()
        .join(run["id"].as_str().unwrap())
        .join("build");
    assert_eq!(
        std::fs::read_to_string(workspace.join("shared.txt")).unwrap(),
        "the first version\n",
        "no conflict markers left in the workspace"
    );
}

/// Task → Build (coding) ⇄ Gate (review gate that always asks for revision,
/// two rounds) → Result: the coding module activates twice in one run.
fn revision_loop(session_style: SessionStyle) -> Value {
    let mut coding = config("Build it.", vec![agent("builder", None, &["Check it."])]);
    coding.session_style = session_style;
    let mut graph: Graph = serde_json::from_value(coding_graph(coding)).unwrap();
    graph.modules.push(Module {
        id: "gate".to_owned(),
        label: "Gate".to_owned(),
        position: Position { x: 450.0, y: 300.0 },
        config: ModuleConfig::ReviewGate(ReviewGateConfig {
            instruction: "Review [sim:revise]".to_owned(),
            agent_config: AgentConfig {
                provider: "sim".to_owned(),
                ..AgentConfig::default()
            },
            max_rounds: 2,
            ..ReviewGateConfig::default()
        }),
        extra: Extra::new(),
    });
    graph.cables = vec![
        cable("c1", ("task", "data_out"), ("build", "data_in")),
        cable("c2", ("build", "data_out"), ("gate", "data_in")),
        cable("c3", ("gate", "revise_out"), ("build", "context_in")),
        cable("c4", ("gate", "approved_out"), ("result", "data_in")),
    ];
    serde_json::to_value(graph).unwrap()
}

/// The first line of each response of the coding module's activations.
async fn turns_by_activation(setup: &Setup, session_style: SessionStyle) -> Vec<Vec<String>> {
    let graph_id = create_graph(&setup.router, revision_loop(session_style)).await;
    let run_id = start(&setup.router, &graph_id, "x").await;
    let run = wait_for(
        &setup.router,
        &run_id,
        &["completed", "failed", "cancelled"],
    )
    .await;
    assert!(
        run["error"]
            .as_str()
            .unwrap_or_default()
            .contains("running out of rounds (exhausted_out)"),
        "the gate never approves: {run}"
    );
    run["modules"]["build"]["activations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|activation| {
            activation["responses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|response| {
                    response["text"]
                        .as_str()
                        .unwrap()
                        .lines()
                        .next()
                        .unwrap()
                        .to_owned()
                })
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn a_parked_session_carries_on_when_a_revision_loop_activates_the_module_again() {
    let setup = setup(None).await;
    let parked = turns_by_activation(&setup, SessionStyle::Park).await;
    assert_eq!(
        parked,
        [
            ["Simulated agent, turn 1.", "Simulated agent, turn 2."],
            ["Simulated agent, turn 3.", "Simulated agent, turn 4."],
        ],
        "the second activation continues the same ACP session"
    );
    let closed = turns_by_activation(&setup, SessionStyle::Close).await;
    assert_eq!(
        closed,
        [
            ["Simulated agent, turn 1.", "Simulated agent, turn 2."],
            ["Simulated agent, turn 1.", "Simulated agent, turn 2."],
        ],
        "closed sessions start afresh"
    );
}

#[tokio::test]
async fn the_review_chain_loops_until_the_reviewer_approves() {
    let setup = setup(None).await;
    let mut config = config(
        "Build the parser.",
        vec![
            agent("builder", None, &["Run the tests."]),
            agent(
                "reviewer",
                Some("Review the work. sim: approve on round 2"),
                &["Double-check."],
            ),
        ],
    );
    config.coordination = Coordination::ReviewChain;
    config.max_rounds = 3;
    let run = run(&setup, config, "parser").await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(
        labels(&run),
        [
            "builder · Original",
            "builder · Re-prompt 1",
            "reviewer · Original",
            "reviewer · Re-prompt 1",
            "builder · Original (round 2)",
            "builder · Re-prompt 1 (round 2)",
            "reviewer · Original (round 2)",
            "reviewer · Re-prompt 1 (round 2)",
        ]
    );
    let responses = responses(&run);
    // The feedback went into the builder's same session.
    assert!(
        responses[4].1.starts_with("Simulated agent, turn 3."),
        "{}",
        responses[4].1
    );
    let transcript = transcript(&run);
    assert!(transcript.contains("The reviewer asked for changes:\n\nSimulated review, round 1: please handle the empty input case."));
    let data = &activation(&run)["outputs"]["data_out"];
    assert_eq!(data["meta"]["review_decision"], "approve");
    assert_eq!(data["meta"]["review_rounds"], 2);
    assert_eq!(data["content"]["response_count"], 8);
}

#[tokio::test]
async fn the_review_chain_stops_at_max_rounds() {
    let setup = setup(None).await;
    let mut config = config(
        "Build the parser.",
        vec![
            agent("builder", None, &[]),
            agent("reviewer", Some("Review. sim: approve on round 9"), &[]),
        ],
    );
    config.coordination = Coordination::ReviewChain;
    config.max_rounds = 2;
    // Out of rounds with nothing wired to take it: as the review gate, the
    // run fails there, and the work is on `exhausted_out`, not on the ports
    // that pass approved work on.
    let unwired = run(&setup, config.clone(), "parser").await;
    assert_eq!(unwired["status"], "failed", "{unwired}");
    assert!(
        unwired["error"]
            .as_str()
            .unwrap()
            .contains("\"Build\" ended with running out of rounds (exhausted_out)"),
        "{unwired}"
    );
    assert_eq!(activation(&unwired)["status"], "completed");
    assert_eq!(responses(&unwired).len(), 4);
    let outputs = &activation(&unwired)["outputs"];
    let exhausted = &outputs["exhausted_out"];
    assert_eq!(exhausted["meta"]["review_decision"], "revise");
    assert_eq!(exhausted["meta"]["review_rounds"], 2);
    assert!(exhausted["meta"]["diff"].is_string(), "{exhausted}");
    for port in ["data_out", "diff_out", "files_out", "summary_out"] {
        assert!(outputs.get(port).is_none(), "{port}: {outputs}");
    }
    // Wired on, the run completes with the work where the cable leads.
    let mut document = coding_graph(config);
    document["cables"][1]["from"]["port"] = json!("exhausted_out");
    let graph_id = create_graph(&setup.router, document).await;
    let run_id = start(&setup.router, &graph_id, "parser").await;
    let wired = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(wired["status"], "completed", "{wired}");
    let result = &wired["modules"]["result"]["activations"][0]["outputs"]["result_1"];
    assert_eq!(result["meta"]["review_decision"], "revise", "{result}");
}

#[tokio::test]
async fn the_last_agent_or_the_reviewer_answers_the_intent_gate_in_a_turn_of_its_own() {
    let setup = setup(None).await;
    let gate = graph::intent::IntentGate {
        allowed_intents: vec![
            graph::intent::Intent::Next,
            graph::intent::Intent::Closing,
            graph::intent::Intent::Handoff,
        ],
        handoff_fields: vec!["status: ready | blocked".to_owned()],
        ..graph::intent::IntentGate::default()
    };
    // Sequential: the last agent decides, after its work is committed.
    let mut sequential = config(
        "Build the parser.",
        vec![
            agent("builder", None, &[]),
            agent("tester", Some("Test it. sim: intent closing"), &[]),
        ],
    );
    sequential.intent_gate = Some(gate.clone());
    let finished = run(&setup, sequential, "parser").await;
    assert_eq!(finished["status"], "completed", "{finished}");
    assert_eq!(
        labels(&finished),
        [
            "builder · Original",
            "tester · Original",
            "tester · Decision"
        ]
    );
    let record = activation(&finished);
    assert_eq!(record["intent"]["intent"], "closing", "{record}");
    let closing = &record["outputs"]["closing_out"]["content"];
    assert_eq!(closing["intent"], "closing");
    assert_eq!(closing["status"], "ready");
    assert!(record["outputs"].get("next_out").is_none());
    // The decision is not part of the work: data_out has the two agents.
    assert_eq!(
        record["outputs"]["data_out"]["content"]["response_count"],
        2
    );

    // Review chain: the reviewer decides once the rounds are over.
    let mut chain = config(
        "Build the parser.",
        vec![
            agent("builder", None, &[]),
            agent("reviewer", Some("Review. sim: intent handoff"), &[]),
        ],
    );
    chain.coordination = Coordination::ReviewChain;
    chain.intent_gate = Some(gate);
    let chained = run(&setup, chain, "parser").await;
    assert_eq!(chained["status"], "completed", "{chained}");
    assert_eq!(
        labels(&chained),
        [
            "builder · Original",
            "reviewer · Original",
            "reviewer · Decision"
        ]
    );
    assert_eq!(activation(&chained)["intent"]["intent"], "handoff");
    assert!(activation(&chained)["outputs"]["handoff_out"].is_object());

    // Repeat: the module runs again, its agent told why, and only the
    // last activation sends its work on.
    let mut again = config(
        "Build the parser. sim: intent repeat, next",
        vec![agent("builder", None, &[])],
    );
    again.intent_gate = Some(graph::intent::IntentGate {
        allowed_intents: vec![graph::intent::Intent::Next, graph::intent::Intent::Repeat],
        ..graph::intent::IntentGate::default()
    });
    again.retry.max_attempts = 2;
    let repeated = run(&setup, again, "parser").await;
    assert_eq!(repeated["status"], "completed", "{repeated}");
    let activations = repeated["modules"]["build"]["activations"]
        .as_array()
        .unwrap();
    assert_eq!(activations.len(), 2, "{repeated}");
    assert_eq!(activations[0]["intent"]["intent"], "repeat");
    assert_eq!(activations[0]["outputs"], json!({}));
    assert_eq!(activations[1]["intent"]["intent"], "next");
    assert!(activations[1]["outputs"]["next_out"].is_object());
    let second = activations[1]["transcript"].to_string();
    assert!(
        second.contains(
            "This step runs again (attempt 2 of 2) because your last reply chose to repeat it"
        ),
        "{second}"
    );
}

#[tokio::test]
async fn an_agent_asking_to_write_outside_its_workspace_is_refused() {
    let setup = setup(None).await;
    let config = config(
        "write ../asked.txt: refused by the permission policy\nwrite! ../escaped.txt: refused by the client\nwrite inside.txt: fine",
        vec![agent("builder", None, &[])],
    );
    let run = run(&setup, config, "escape").await;
    assert_eq!(run["status"], "completed", "{run}");
    let reply = &responses(&run)[0].1;
    assert!(
        reply.contains("I was not allowed to write ../asked.txt."),
        "{reply}"
    );
    assert!(
        reply.contains("I could not write ../escaped.txt"),
        "{reply}"
    );
    assert!(reply.contains("I wrote inside.txt."), "{reply}");
    let run_folder = setup.workspaces.path().join(run["id"].as_str().unwrap());
    assert!(!run_folder.join("escaped.txt").exists());
    assert!(!run_folder.join("asked.txt").exists());
    assert!(run_folder.join("build/inside.txt").exists());
    assert!(transcript(&run).contains("refused to write"));
}

#[tokio::test]
async fn a_malformed_update_is_skipped_and_the_turn_goes_on() {
    let setup = setup(None).await;
    let run = run(
        &setup,
        config("sim: malformed", vec![agent("builder", None, &[])]),
        "x",
    )
    .await;
    assert_eq!(run["status"], "completed", "{run}");
    assert!(responses(&run)[0].1.starts_with("Simulated agent, turn 1."));
    assert!(transcript(&run).contains("skipped a malformed update"));
}

#[tokio::test]
async fn an_agent_crash_fails_the_module_with_the_tail_of_its_stderr() {
    let setup = setup(None).await;
    let run = run(
        &setup,
        config("sim: crash", vec![agent("builder", None, &[])]),
        "x",
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    let error = activation(&run)["error"].as_str().unwrap();
    assert!(error.starts_with("builder: "), "{error}");
    assert!(
        error.contains("simulated crash, as the prompt asked"),
        "{error}"
    );
}

#[tokio::test]
async fn max_iterations_caps_the_turns_and_is_not_a_way_to_finish() {
    let setup = setup(None).await;
    let mut config = config(
        "Work.",
        vec![agent("builder", None, &["More.", "More.", "More."])],
    );
    config.max_iterations = 2;
    let run = run(&setup, config, "x").await;
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        activation(&run)["error"]
            .as_str()
            .unwrap()
            .contains("max_iterations (2 turns)")
    );
    assert_eq!(responses(&run).len(), 2);
}

/// Processes whose working folder is `folder` (the agents of a workspace).
fn processes_in(folder: &Path) -> Vec<u32> {
    let Ok(canonical) = folder.canonicalize() else {
        return Vec::new();
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (cwd == canonical).then_some(pid)
        })
        .collect()
}

#[tokio::test]
async fn cancel_sends_session_cancel_and_stops_the_agent() {
    let setup = setup(None).await;
    let graph_id = create_graph(
        &setup.router,
        coding_graph(config("sim: slow", vec![agent("builder", None, &[])])),
    )
    .await;
    let run_id = start(&setup.router, &graph_id, "x").await;
    let workspace = setup.workspaces.path().join(&run_id).join("build");
    let mut started = false;
    for _ in 0..300 {
        if !processes_in(&workspace).is_empty() {
            started = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(started, "the agent never started in its workspace");
    // Let it stream for a while.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let (status, _) = call(
        &setup.router,
        as_editor(
            post(&format!("/api/runs/{run_id}/cancel"), json!({})),
            &graph_id,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let run = wait_for(&setup.router, &run_id, &["cancelled"]).await;
    assert_eq!(activation(&run)["status"], "cancelled");
    let partial = activation(&run)["responses"][0]["text"].as_str().unwrap();
    assert!(
        partial.contains("working…"),
        "what streamed is kept: {partial}"
    );
    let mut gone = false;
    for _ in 0..100 {
        if processes_in(&workspace).is_empty() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the agent process was stopped");
    let notes = std::fs::read_to_string(workspace.join("SIMULATED_NOTES.md")).unwrap_or_default();
    assert!(
        notes.contains("turn 1: cancelled by the client"),
        "session/cancel reached the agent: {notes:?}"
    );
}

#[tokio::test]
async fn cancelling_parallel_agents_removes_their_worktrees() {
    let setup = setup(None).await;
    let mut config = config(
        "Split the work.",
        vec![
            agent("frontend", Some("sim: slow"), &[]),
            agent("backend", Some("sim: slow"), &[]),
        ],
    );
    config.coordination = Coordination::Parallel;
    let graph_id = create_graph(&setup.router, coding_graph(config)).await;
    let run_id = start(&setup.router, &graph_id, "x").await;
    let worktrees = setup
        .workspaces
        .path()
        .join(&run_id)
        .join("build.worktrees");
    let both_working = || {
        ["0-frontend", "1-backend"]
            .iter()
            .all(|name| !processes_in(&worktrees.join(name)).is_empty())
    };
    let mut started = false;
    for _ in 0..300 {
        if both_working() {
            started = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(started, "the agents never started in their worktrees");
    let (status, _) = call(
        &setup.router,
        as_editor(
            post(&format!("/api/runs/{run_id}/cancel"), json!({})),
            &graph_id,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    wait_for(&setup.router, &run_id, &["cancelled"]).await;
    let mut left = Vec::new();
    for _ in 0..100 {
        left = std::fs::read_dir(&worktrees)
            .map(|entries| entries.flatten().map(|entry| entry.file_name()).collect())
            .unwrap_or_default();
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(left.is_empty(), "worktrees left after the cancel: {left:?}");
}

/// The Python interpreter of a virtual environment with the official ACP
/// Python SDK (scripts/test makes it); `None` with the reason when absent.
fn python_sdk() -> Result<PathBuf, String> {
    match std::env::var("PATCHBAY_TEST_ACP_PYTHON") {
        Ok(python) if Path::new(&python).exists() => Ok(PathBuf::from(python)),
        Ok(python) => Err(format!("PATCHBAY_TEST_ACP_PYTHON={python} does not exist")),
        Err(_) => Err("PATCHBAY_TEST_ACP_PYTHON is not set (scripts/test sets it up)".to_owned()),
    }
}

#[tokio::test]
async fn an_agent_on_the_official_python_sdk_takes_a_prompt_and_re_prompts_in_one_session() {
    let python = match python_sdk() {
        Ok(python) => python,
        Err(reason) => {
            assert!(
                std::env::var("PATCHBAY_REQUIRE_ACP_PYTHON").is_err(),
                "the Python SDK agent is required here: {reason}"
            );
            eprintln!("skipped: the Python SDK ACP agent is not available: {reason}");
            return;
        }
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/scripted_agent.py");
    // What the agent may read: its script, its environment, and the Python
    // installation the environment was made from.
    let environment = python.parent().and_then(Path::parent).unwrap();
    let base = std::process::Command::new(&python)
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .unwrap();
    let base = String::from_utf8(base.stdout).unwrap().trim().to_owned();
    let folder = tempfile::tempdir().unwrap();
    let config_file = folder.path().join("patchbay.toml");
    std::fs::write(
        &config_file,
        format!(
            "[[acp_profiles]]\nid = \"python\"\nname = \"Scripted Python agent\"\ncommand = {:?}\nargs = [{:?}]\nread_only = [{:?}, {:?}, {:?}]\nnetwork = false\n",
            python.display().to_string(),
            script.display().to_string(),
            script.display().to_string(),
            environment.display().to_string(),
            base,
        ),
    )
    .unwrap();
    let setup = setup(Some(&config_file)).await;
    let mut builder = agent("builder", None, &["Now summarise what you did."]);
    builder.acp_profile_id = Some("python".to_owned());
    let run = run(&setup, config("Create the file.", vec![builder]), "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    let responses = responses(&run);
    assert_eq!(responses.len(), 2);
    assert!(responses[0].1.contains("turn 1"), "{}", responses[0].1);
    assert!(
        responses[0].1.contains("wrote python.txt"),
        "{}",
        responses[0].1
    );
    // The second turn sees the first: one session.
    assert!(responses[1].1.contains("turn 2"), "{}", responses[1].1);
    assert!(
        responses[1].1.contains("Create the file."),
        "{}",
        responses[1].1
    );
    let outputs = &activation(&run)["outputs"];
    assert!(
        outputs["diff_out"]["content"]
            .as_str()
            .unwrap()
            .contains("+written by the Python agent")
    );
    let receipt = &activation(&run)["receipt"];
    assert_eq!(receipt["provider"], "acp:python");
    assert_eq!(receipt["simulated"], false);
    assert_eq!(
        receipt["tokens_in"], 14,
        "2 turns × 7 reported by the agent"
    );
    assert!(transcript(&run).contains("permission allowed: Write python.txt"));
}

#[tokio::test]
async fn a_coding_module_s_variants_work_in_workspaces_of_their_own() {
    let setup = setup(None).await;
    let mut config = config(
        "write hello.txt: Hello from A",
        vec![agent("builder", None, &["write notes.txt: checked"])],
    );
    config.variants = vec![
        graph::experiment::Variant::new("A"),
        graph::experiment::Variant {
            instruction_override: Some("write hello.txt: Hello from B".to_owned()),
            ..graph::experiment::Variant::new("B")
        },
        graph::experiment::Variant {
            config_overrides: graph::experiment::ConfigOverrides {
                agent_profiles: Some([("builder".to_owned(), "sim-agent".to_owned())].into()),
                ..graph::experiment::ConfigOverrides::default()
            },
            ..graph::experiment::Variant::new("C")
        },
    ];
    let run = run(&setup, config, "a greeting").await;
    assert_eq!(run["status"], "completed", "{run}");
    let labels = labels(&run);
    for variant in ["A", "B", "C"] {
        assert!(
            labels.contains(&format!("{variant} · builder · Original")),
            "{labels:?}"
        );
    }
    // Each variant's agent is in a session of its own: its first turn is
    // its session's first.
    for (label, text) in responses(&run) {
        if label.ends_with("builder · Original") {
            assert!(
                text.starts_with("Simulated agent, turn 1."),
                "{label}: {text}"
            );
        }
    }
    let outputs = &activation(&run)["outputs"];
    let variants = outputs["comparison_out"]["content"]["variants"]
        .as_array()
        .unwrap();
    assert_eq!(variants.len(), 3);
    for variant in variants {
        assert_eq!(variant["status"], "completed", "{variant}");
        assert_eq!(variant["cost"], 0.0, "the simulated agent reports $0");
    }
    assert_eq!(variants[2]["summary"], "builder on sim-agent");
    // The baseline's workspace has its own file, not another variant's.
    let diff = outputs["diff_out"]["content"].to_string();
    assert!(diff.contains("Hello from A"), "{diff}");
    assert!(!diff.contains("Hello from B"), "{diff}");
    // Each variant's own diff is in the comparison, beside its reply.
    let own = |index: usize| variants[index]["diff"].as_str().unwrap_or_default();
    assert!(own(0).contains("+Hello from A"), "{}", own(0));
    assert!(own(1).contains("+Hello from B"), "{}", own(1));
    assert!(!own(1).contains("Hello from A"), "{}", own(1));
    assert!(own(1).contains("+checked"), "its re-prompt's work too");
}

/// The paths a coding module's activation changed, from its `files_out`.
fn changed_paths(run: &Value, module: &str) -> Vec<String> {
    run["modules"][module]["activations"][0]["outputs"]["files_out"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{run}"))
        .iter()
        .map(|file| file["path"].as_str().unwrap().to_owned())
        .collect()
}

/// A coding module fed by another goes on from that one's work: its
/// workspace starts as a copy of the upstream's at the commit it left,
/// and its diff is its own work. A run from the second module reuses the
/// first one's recorded work (PRODUCT §3.15): it starts from the recorded
/// commit, whatever is on the disk since, and says so when that workspace
/// is gone.
#[tokio::test]
async fn a_coding_chain_goes_on_from_the_upstream_s_work_and_a_run_from_its_second_module_starts_at_the_recorded_commit()
 {
    let setup = support::coding::setup(None).await;
    let graph = support::coding::coding_chain_graph(vec![
        (
            "build",
            "Build",
            config(
                "Write the plan.",
                vec![agent("builder", Some("write plan.txt: the plan"), &[])],
            ),
        ),
        (
            "fix",
            "Fix",
            config(
                "Fix it.",
                vec![agent("fixer", Some("write fix.txt: fixed"), &[])],
            ),
        ),
    ]);
    let graph_id = create_graph(&setup.router, graph).await;
    let first_id = start(&setup.router, &graph_id, "x").await;
    let first = wait_for(&setup.router, &first_id, &["completed", "failed"]).await;
    assert_eq!(first["status"], "completed", "{first}");
    let workspaces = setup.workspaces.path();
    let planned =
        std::fs::read_to_string(workspaces.join(&first_id).join("build/plan.txt")).unwrap();
    // Fix worked on Build's files, and its changes are its own.
    assert_eq!(
        std::fs::read_to_string(workspaces.join(&first_id).join("fix/plan.txt")).unwrap(),
        planned
    );
    assert_eq!(changed_paths(&first, "fix"), ["fix.txt"]);
    assert_eq!(changed_paths(&first, "build"), ["plan.txt"]);

    // Build's workspace changes on the disk after the run.
    std::fs::write(
        workspaces.join(&first_id).join("build/plan.txt"),
        "changed on disk\n",
    )
    .unwrap();
    let run_from_fix = || async {
        let (status, started) = call(
            &setup.router,
            as_editor(
                post(
                    &format!("/api/graphs/{graph_id}/runs"),
                    json!({"from": {"run": first_id, "module": "fix"}}),
                ),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{started}");
        let id = started["id"].as_str().unwrap().to_owned();
        let run = wait_for(&setup.router, &id, &["completed", "failed"]).await;
        (id, run)
    };
    let (second_id, second) = run_from_fix().await;
    assert_eq!(second["status"], "completed", "{second}");
    assert_eq!(
        second["modules"]["build"]["activations"][0]["status"],
        "reused"
    );
    assert!(
        !workspaces.join(&second_id).join("build").exists(),
        "Build did not run again"
    );
    assert_eq!(
        std::fs::read_to_string(workspaces.join(&second_id).join("fix/plan.txt")).unwrap(),
        planned,
        "Fix starts from Build's recorded commit, not from what is on disk"
    );
    assert_eq!(changed_paths(&second, "fix"), ["fix.txt"]);

    // Once Build's workspace is gone, a run from Fix says so.
    std::fs::remove_dir_all(workspaces.join(&first_id).join("build")).unwrap();
    let (_, third) = run_from_fix().await;
    assert_eq!(third["status"], "failed", "{third}");
    let error = third["error"].as_str().unwrap();
    assert!(
        error.contains("\"Fix\" goes on from the work \"Build\" left in run")
            && error.contains("is no longer on this server"),
        "{error}"
    );
}

/// Task → Build (coding) ⇄ Review (an approval sending it back) → Result.
fn approval_loop() -> Value {
    let mut coding = config(
        "Build it.",
        vec![agent("builder", Some("write plan.txt: the plan"), &[])],
    );
    coding.session_style = SessionStyle::Park;
    let mut graph: Graph = serde_json::from_value(coding_graph(coding)).unwrap();
    graph.modules.push(Module {
        id: "review".to_owned(),
        label: "Review".to_owned(),
        position: Position { x: 450.0, y: 300.0 },
        config: ModuleConfig::Approval(graph::kinds::approval::ApprovalConfig::default()),
        extra: Extra::new(),
    });
    graph.cables = vec![
        cable("c1", ("task", "data_out"), ("build", "data_in")),
        cable("c2", ("build", "data_out"), ("review", "data_in")),
        cable("c3", ("review", "revise_out"), ("build", "context_in")),
        cable("c4", ("review", "approved_out"), ("result", "data_in")),
    ];
    serde_json::to_value(graph).unwrap()
}

/// Waits until the run's Review waits for round `round`.
async fn review_waits(setup: &Setup, run_id: &str, round: usize) -> Value {
    for _ in 0..1500 {
        let (_, run) = call(&setup.router, get(&format!("/api/runs/{run_id}"))).await;
        let rounds = &run["modules"]["review"]["activations"];
        if rounds
            .get(round - 1)
            .is_some_and(|activation| activation["status"] == "waiting")
        {
            return run;
        }
        assert_ne!(run["status"], "failed", "{run}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("run {run_id}'s review never waited for round {round}");
}

/// Decides on the run's Review, as its editor.
async fn decide(setup: &Setup, graph_id: &str, run_id: &str, decision: Value) {
    let (status, body) = call(
        &setup.router,
        as_editor(
            post(
                &format!("/api/runs/{run_id}/modules/review/decision"),
                decision,
            ),
            graph_id,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A run from an approval that sends its work back to a coding module
/// reuses the coding module's first round (no agent asked before the
/// approval waits again); sent back in the new run, the coding module goes
/// on from the work that reused round left, not from an empty folder.
#[tokio::test]
async fn a_run_from_an_approval_reuses_the_coding_round_before_it_and_a_send_back_goes_on_from_its_work()
 {
    let setup = setup(None).await;
    let graph_id = create_graph(&setup.router, approval_loop()).await;
    let first = start(&setup.router, &graph_id, "x").await;
    review_waits(&setup, &first, 1).await;
    decide(
        &setup,
        &graph_id,
        &first,
        json!({"decision": "revise", "feedback": "write notes.txt: keep it short"}),
    )
    .await;
    review_waits(&setup, &first, 2).await;
    decide(
        &setup,
        &graph_id,
        &first,
        json!({"decision": "approve", "activation": 2}),
    )
    .await;
    let recorded = wait_for(&setup.router, &first, &["completed", "failed"]).await;
    assert_eq!(recorded["status"], "completed", "{recorded}");

    let (status, started) = call(
        &setup.router,
        as_editor(
            post(
                &format!("/api/graphs/{graph_id}/runs"),
                json!({"from": {"run": first, "module": "review"}}),
            ),
            &graph_id,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    let second = started["id"].as_str().unwrap().to_owned();
    let waiting = review_waits(&setup, &second, 1).await;
    let build = waiting["modules"]["build"]["activations"]
        .as_array()
        .unwrap();
    assert_eq!(build.len(), 1, "{waiting}");
    assert_eq!(
        build[0]["status"], "reused",
        "no agent was asked: {waiting}"
    );
    let workspaces = setup.workspaces.path();
    assert!(!workspaces.join(&second).join("build").exists());

    decide(
        &setup,
        &graph_id,
        &second,
        json!({"decision": "revise", "feedback": "write notes.txt: shorter still"}),
    )
    .await;
    let run = review_waits(&setup, &second, 2).await;
    let again = &run["modules"]["build"]["activations"][1];
    assert_eq!(again["status"], "completed", "{run}");
    // It went on from the first round's work: the plan is there, at what
    // the recorded round left, and only the notes are this round's.
    assert_eq!(
        std::fs::read_to_string(workspaces.join(&second).join("build/plan.txt")).unwrap(),
        std::fs::read_to_string(workspaces.join(&first).join("build/plan.txt")).unwrap()
    );
    let changed: Vec<&str> = again["outputs"]["files_out"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["notes.txt"], "{run}");
}

/// PRODUCT §3.17: an agent over ACP gets the MCP servers its card names in
/// its session (`session/new` `mcpServers`), starts them inside its own
/// confinement, and calls their tools; a server the operator does not have
/// is refused before the run, in the run's words.
#[tokio::test]
async fn a_coding_agent_is_given_the_mcp_servers_its_card_names_and_calls_their_tools() {
    let setup = setup(None).await;
    let mut builder = agent(
        "builder",
        Some("Work it out.\nsim: tool patchbay calculate {\"expression\": \"6*7\"}"),
        &[],
    );
    builder.mcp_servers = vec!["patchbay".to_owned()];
    let given = run(&setup, config("Build it.", vec![builder.clone()]), "x").await;
    assert_eq!(given["status"], "completed", "{given}");
    let said = transcript(&given);
    assert!(
        said.contains("The tool calculate of patchbay said:") && said.contains("42"),
        "{said}"
    );
    // Not given, it has none.
    let mut bare = builder.clone();
    bare.mcp_servers.clear();
    let run_without = run(&setup, config("Build it.", vec![bare]), "x").await;
    assert!(
        transcript(&run_without)
            .contains("I have no MCP server called patchbay (this session was given: none)"),
        "{}",
        transcript(&run_without)
    );
    // A server this server does not have is a finding before the run.
    builder.mcp_servers = vec!["files".to_owned()];
    let (status, findings) = call(
        &setup.router,
        post(
            "/api/validate",
            coding_graph(config("Build it.", vec![builder])),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        findings
            .to_string()
            .contains("uses tools of MCP server \\\"files\\\", which this server does not have"),
        "{findings}"
    );
}

/// PRODUCT §3.17: an operator's stdio server (the Python SDK's) is given
/// to the agent, which starts it inside its own confinement and calls it;
/// one whose configuration holds an environment value is not given to
/// agents, said before the run.
#[tokio::test]
async fn an_operators_stdio_server_is_given_to_an_agent_unless_its_configuration_holds_a_value() {
    let Some(python) = support::mcp::python() else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("patchbay.toml");
    let secret = "[[mcp_servers]]\nid = \"secret\"\ncommand = \"node\"\nenv = { TOKEN = \"s3cret-value\" }\n";
    std::fs::write(
        &file,
        format!(
            "{}{secret}",
            support::mcp::refunds_entry(&python, &support::mcp::mark(), "")
        ),
    )
    .unwrap();
    let setup = support::coding::setup_with(Some(file), Some(folder), false).await;
    let mut builder = agent(
        "builder",
        Some(
            "Check the refund.\nsim: tool refunds review_refund {\"amount\": 20, \"reason\": \"arrived broken\"}",
        ),
        &[],
    );
    builder.mcp_servers = vec!["refunds".to_owned()];
    let given = run(&setup, config("Refund it.", vec![builder.clone()]), "x").await;
    assert_eq!(given["status"], "completed", "{given}");
    let said = transcript(&given);
    assert!(
        said.contains("The tool review_refund of refunds said:") && said.contains("approved"),
        "{said}"
    );
    builder.mcp_servers = vec!["secret".to_owned()];
    let (_, findings) = call(
        &setup.router,
        post(
            "/api/validate",
            coding_graph(config("Build it.", vec![builder])),
        ),
    )
    .await;
    assert!(
        findings.to_string().contains(
            "gives its agent MCP server \\\"secret\\\", which is not given to coding agents: its environment (env, pass_env) would be the agent's to read"
        ),
        "{findings}"
    );
}

/// A session taken up with `session/load` (a downstream agent continuing
/// an upstream's, §3.15) is given its card's MCP servers as a new one is.
#[tokio::test]
async fn an_agent_that_continues_a_session_is_given_its_mcp_servers_too() {
    let setup = setup(None).await;
    let builder = agent("builder", Some("write plan.txt: the plan"), &[]);
    let mut fixer = agent(
        "fixer",
        Some("Check the sum.\nsim: tool patchbay calculate {\"expression\": \"40+2\"}"),
        &[],
    );
    fixer.session_mode = graph::config::SessionMode::Continue;
    fixer.mcp_servers = vec!["patchbay".to_owned()];
    let document = support::coding::coding_chain_graph(vec![
        ("build", "Build", config("Write the plan.", vec![builder])),
        ("fix", "Fix", config("Go on.", vec![fixer])),
    ]);
    let run = run_document(&setup, document, "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    let said = transcript_of(&run, "fix");
    assert!(said.contains("continues the session of"), "{said}");
    assert!(
        said.contains("The tool calculate of patchbay said:") && said.contains("42"),
        "{said}"
    );
}
