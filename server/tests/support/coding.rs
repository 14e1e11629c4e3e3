//! Coding modules through the HTTP API: a server with its own workspace
//! folder and ACP profiles, the graph Task (input) → Build (coding) → Result
//! (output), and readers for what the coding module reported.

use std::path::Path;

use axum::Router;
use graph::config::{AgentConfig, CodingAgentAssignment, CodingConfig, InputConfig, OutputConfig};
use graph::{Cable, Endpoint, Extra, Graph, Module, ModuleConfig, Position, RePrompt};
use serde_json::Value;

use super::{create_graph, start, wait_for};

pub struct Setup {
    pub router: Router,
    pub state: server::state::AppState,
    pub workspaces: tempfile::TempDir,
    _database: super::TestDatabase,
    _config: Option<tempfile::TempDir>,
}

/// A server whose coding modules may copy folders in the system's
/// temporary folder (where the tests make their projects) and run no
/// commands, as by default.
pub async fn setup(config_file: Option<&Path>) -> Setup {
    setup_with(config_file.map(Path::to_path_buf), None, false).await
}

/// A server started with `--enable-commands` whose simulated agent's
/// policy allows commands: "run the tests" runs `sh test.sh`, confined.
pub async fn setup_running_commands() -> Setup {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("patchbay.toml");
    std::fs::write(
        &file,
        "[sim]\nagent_permissions = \"workspace_edits_and_commands\"\n",
    )
    .unwrap();
    setup_with(Some(file), Some(folder), true).await
}

/// A server with `config_file` (kept alive by `config_folder`) and
/// commands enabled or not.
pub async fn setup_with(
    config_file: Option<std::path::PathBuf>,
    config_folder: Option<tempfile::TempDir>,
    commands: bool,
) -> Setup {
    let database = super::databases().await.remove(0);
    let workspaces = tempfile::tempdir().unwrap();
    let mut settings = super::settings(&database, graph::Limits::default());
    settings.workspace_root = workspaces.path().to_path_buf();
    settings.workspace_roots = vec![std::env::temp_dir()];
    settings.config_file = config_file;
    settings.commands_enabled = commands;
    let state = server::build_state(settings).await.unwrap();
    Setup {
        router: server::router::router(state.clone()),
        state,
        workspaces,
        _database: database,
        _config: config_folder,
    }
}

pub fn agent(role: &str, instruction: Option<&str>, re_prompts: &[&str]) -> CodingAgentAssignment {
    CodingAgentAssignment {
        role: role.to_owned(),
        agent_config: AgentConfig::default(),
        acp_profile_id: None,
        instruction_override: instruction.map(str::to_owned),
        re_prompts: re_prompts.iter().map(|text| RePrompt::new(*text)).collect(),
        acp_mode: None,
        session_mode: graph::config::SessionMode::New,
        mcp_servers: Vec::new(),
        extra: Extra::new(),
    }
}

/// A cable from (module, port) to (module, port).
pub fn cable(id: &str, from: (&str, &str), to: (&str, &str)) -> Cable {
    Cable::new(id, Endpoint::new(from.0, from.1), Endpoint::new(to.0, to.1))
}

/// Task (input) → Build (coding) → Result (output).
pub fn coding_graph(config: CodingConfig) -> Value {
    coding_chain_graph(vec![("build", "Build", config)])
}

/// Task (input) → each coding module in turn, its `data_out` into the
/// next's `data_in` → Result (output).
pub fn coding_chain_graph(coding: Vec<(&str, &str, CodingConfig)>) -> Value {
    let module = |id: &str, label: &str, x: f64, config: ModuleConfig| Module {
        id: id.to_owned(),
        label: label.to_owned(),
        position: Position { x, y: 100.0 },
        config,
        extra: Extra::new(),
    };
    let mut modules = vec![module(
        "task",
        "Task",
        0.0,
        ModuleConfig::Input(InputConfig::default()),
    )];
    let mut cables = Vec::new();
    let mut previous = "task".to_owned();
    let mut x = 0.0;
    for (id, label, config) in coding {
        x += 300.0;
        modules.push(module(id, label, x, ModuleConfig::Coding(config)));
        cables.push(cable(
            &format!("c{}", cables.len() + 1),
            (&previous, "data_out"),
            (id, "data_in"),
        ));
        previous = id.to_owned();
    }
    modules.push(module(
        "result",
        "Result",
        x + 300.0,
        ModuleConfig::Output(OutputConfig::default()),
    ));
    cables.push(cable(
        &format!("c{}", cables.len() + 1),
        (&previous, "data_out"),
        ("result", "data_in"),
    ));
    let graph = Graph {
        name: "Coding".to_owned(),
        modules,
        cables,
        ..Graph::default()
    };
    serde_json::to_value(graph).unwrap()
}

pub fn config(instruction: &str, agents: Vec<CodingAgentAssignment>) -> CodingConfig {
    CodingConfig {
        instruction: instruction.to_owned(),
        agents,
        ..CodingConfig::default()
    }
}

pub async fn run(setup: &Setup, config: CodingConfig, input: &str) -> Value {
    run_document(setup, coding_graph(config), input).await
}

/// Creates the graph `document`, runs it with `input` and waits for the end.
pub async fn run_document(setup: &Setup, document: Value, input: &str) -> Value {
    let graph_id = create_graph(&setup.router, document).await;
    let run_id = start(&setup.router, &graph_id, input).await;
    wait_for(
        &setup.router,
        &run_id,
        &["completed", "failed", "cancelled"],
    )
    .await
}

pub fn activation(run: &Value) -> &Value {
    activation_of(run, "build")
}

/// The first activation of module `id`.
pub fn activation_of<'a>(run: &'a Value, id: &str) -> &'a Value {
    &run["modules"][id]["activations"][0]
}

pub fn responses(run: &Value) -> Vec<(String, String)> {
    responses_of(run, "build")
}

/// The label and text of each response of module `id`'s first activation.
pub fn responses_of(run: &Value, id: &str) -> Vec<(String, String)> {
    activation_of(run, id)["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|response| {
            (
                response["label"].as_str().unwrap().to_owned(),
                response["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The labels of the module's first activation's responses, in order.
pub fn labels(run: &Value) -> Vec<String> {
    responses(run).into_iter().map(|(label, _)| label).collect()
}

pub fn transcript(run: &Value) -> String {
    transcript_of(run, "build")
}

/// The transcript of module `id`'s first activation, an entry a line.
pub fn transcript_of(run: &Value, id: &str) -> String {
    activation_of(run, id)["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["text"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}
