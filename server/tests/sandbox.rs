//! The host belongs to the operator: what a graph makes run is confined
//! (a command, and a process a coding agent starts, cannot read the
//! database, the configuration, the server user's HOME or another run's
//! workspace, nor write outside its own folders), runs only with the
//! operator's switch, never runs unconfined, may start from no folder but
//! the operator's, and leaves nothing on the disk past its retention.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::http::StatusCode;
use graph::config::{CodingConfig, WorkspaceConfig};
use graph::starter::starter_graph;
use graph::{Extra, Limits};
use serde_json::{Value, json};
use support::coding::{
    Setup, activation, agent, coding_graph, config, responses, run, setup, setup_running_commands,
    setup_with, transcript,
};
use support::{as_editor, call, create_graph, post, start, wait_for};

/// Secrets where a stranger's process must not reach them, removed when
/// dropped: a file in the server user's HOME (only the test knows its name).
struct HomeSecret(PathBuf);

impl HomeSecret {
    fn new() -> HomeSecret {
        let home = PathBuf::from(std::env::var("HOME").unwrap());
        let path = home.join(format!(
            ".patchbay-sandbox-test-{:016x}",
            rand::random::<u64>()
        ));
        std::fs::write(&path, "home secret\n").unwrap();
        HomeSecret(path)
    }
}

impl Drop for HomeSecret {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A shell script that tries to read each of `secrets` and write into each
/// of `outside`, and says what happened, one line each; then checks that its
/// own places are writable.
fn probe_script(secrets: &[PathBuf], outside: &[PathBuf]) -> String {
    let mut script = String::new();
    for secret in secrets {
        let path = secret.display();
        script.push_str(&format!(
            "if cat '{path}' >/dev/null 2>&1; then echo 'READ {path}'; else echo 'cannot read {path}'; fi\n"
        ));
    }
    for folder in outside {
        let path = folder.display();
        script.push_str(&format!(
            "if echo x > '{path}/escaped' 2>/dev/null; then echo 'WROTE {path}'; else echo 'cannot write {path}'; fi\n"
        ));
    }
    script.push_str(
        "echo x > \"$HOME/mine\" && echo 'home writable'\n\
         echo x > \"$TMPDIR/mine\" && echo 'temporary folder writable'\n\
         echo x > ./mine && echo 'work folder writable'\n\
         if cat /etc/shadow >/dev/null 2>&1; then echo 'READ /etc/shadow'; fi\n",
    );
    script
}

/// What the probe said: nothing read, nothing written outside, its own
/// places writable. A folder under /tmp is, for the process, inside its
/// own temporary folder (its /tmp), so a write there may succeed; what
/// counts is that nothing reached the host's folder.
fn assert_confined(said: &str, secrets: &[PathBuf], outside: &[PathBuf]) {
    assert!(!said.contains("READ "), "{said}");
    for secret in secrets {
        assert!(
            said.contains(&format!("cannot read {}", secret.display())),
            "{said}"
        );
    }
    for folder in outside {
        assert!(
            !folder.join("escaped").exists(),
            "escaped into {}",
            folder.display()
        );
        if !folder.starts_with("/tmp") {
            assert!(
                said.contains(&format!("cannot write {}", folder.display())),
                "{said}"
            );
        }
    }
    for place in [
        "home writable",
        "temporary folder writable",
        "work folder writable",
    ] {
        assert!(said.contains(place), "{place}: {said}");
    }
}

/// A coding run of `setup` that leaves a file in its workspace; its path.
async fn another_runs_file(setup: &Setup) -> PathBuf {
    let earlier = run(
        setup,
        config(
            "write private.txt: another run's work",
            vec![agent("builder", None, &[])],
        ),
        "x",
    )
    .await;
    assert_eq!(earlier["status"], "completed", "{earlier}");
    let path = setup
        .workspaces
        .path()
        .join(earlier["id"].as_str().unwrap())
        .join("build/private.txt");
    assert!(path.exists());
    path
}

fn database_file(setup: &Setup) -> PathBuf {
    let url = &setup.state.settings.database_url;
    PathBuf::from(url.strip_prefix("sqlite://").unwrap())
}

/// What a probe on `setup` must not reach: files to read (the database,
/// the configuration, a file in the server user's HOME, another run's work)
/// and folders to write (elsewhere in /tmp, the run workspaces, another
/// run's workspace, the HOME, the checkout).
struct Targets {
    secrets: Vec<PathBuf>,
    places: Vec<PathBuf>,
    _home: HomeSecret,
    _outside: tempfile::TempDir,
}

async fn targets(setup: &Setup) -> Targets {
    let other_run = another_runs_file(setup).await;
    let home = HomeSecret::new();
    let outside = tempfile::tempdir().unwrap();
    Targets {
        secrets: vec![
            database_file(setup),
            setup.state.settings.config_file.clone().unwrap(),
            home.0.clone(),
            other_run.clone(),
        ],
        places: vec![
            outside.path().to_path_buf(),
            setup.workspaces.path().to_path_buf(),
            other_run.parent().unwrap().to_path_buf(),
            home.0.parent().unwrap().to_path_buf(),
            PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        ],
        _home: home,
        _outside: outside,
    }
}

#[tokio::test]
async fn a_command_reaches_its_own_folders_and_nothing_else_of_the_host() {
    let setup = setup_running_commands().await;
    let Targets {
        secrets, places, ..
    } = &targets(&setup).await;
    let script = probe_script(secrets, places);
    let graph = json!({
        "name": "Probe",
        "modules": [
            {"id": "in", "kind": "step.input", "config": {}},
            {"id": "probe", "kind": "step.command", "config": {"command": script}},
            {"id": "out", "kind": "step.output", "config": {}},
        ],
        "cables": [
            {"id": "c1", "from": {"module": "in", "port": "data_out"}, "to": {"module": "probe", "port": "data_in"}},
            {"id": "c2", "from": {"module": "probe", "port": "pass_out"}, "to": {"module": "out", "port": "data_in"}},
        ],
    });
    let graph_id = create_graph(&setup.router, graph).await;
    let run_id = start(&setup.router, &graph_id, "go").await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    let said = run["modules"]["probe"]["activations"][0]["outputs"]["pass_out"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_confined(&said, secrets, places);
}

#[tokio::test]
async fn a_process_a_coding_agent_starts_is_confined_like_the_agent() {
    let setup = setup_running_commands().await;
    let Targets {
        secrets, places, ..
    } = &targets(&setup).await;
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("test.sh"),
        probe_script(secrets, places),
    )
    .unwrap();
    let mut coding = config("Run the tests.", vec![agent("builder", None, &[])]);
    coding.capture_test_results = true;
    coding.workspace = WorkspaceConfig {
        path: Some(project.path().display().to_string()),
        extra: Extra::new(),
    };
    let run = run(&setup, coding, "probe").await;
    assert_eq!(run["status"], "completed", "{run}");
    let tests = &activation(&run)["outputs"]["test_results_out"]["content"];
    assert_eq!(tests["ran"], true, "{run}");
    assert_confined(tests["output"].as_str().unwrap(), secrets, places);
}

fn project_whose_tests_leave_a_mark() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("test.sh"), "echo ran > tests-ran.txt\n").unwrap();
    project
}

fn coding_on(project: &Path) -> CodingConfig {
    let mut coding = config("Run the tests.", vec![agent("builder", None, &[])]);
    coding.workspace = WorkspaceConfig {
        path: Some(project.display().to_string()),
        extra: Extra::new(),
    };
    coding
}

#[tokio::test]
async fn nothing_executes_without_the_operators_switch_whatever_the_policy() {
    // The policy allows commands; the server was not started with them.
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("patchbay.toml");
    std::fs::write(
        &file,
        "[sim]\nagent_permissions = \"workspace_edits_and_commands\"\n",
    )
    .unwrap();
    let without_switch = setup(Some(&file)).await;
    let project = project_whose_tests_leave_a_mark();
    let run = run(&without_switch, coding_on(project.path()), "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    assert!(
        responses(&run)[0]
            .1
            .contains("I was not allowed to run the tests."),
        "{run}"
    );
    assert!(
        transcript(&run).contains("permission refused (this server does not run commands)"),
        "{}",
        transcript(&run)
    );
    let diff = activation(&run)["outputs"]["diff_out"]["content"]
        .as_str()
        .unwrap();
    assert!(!diff.contains("tests-ran.txt"), "{diff}");

    // The switch is on; the simulated agent's own policy allows edits only.
    let with_switch_default_policy = setup_with(None, None, true).await;
    let router = &with_switch_default_policy.router;
    let graph_id = create_graph(router, coding_graph(coding_on(project.path()))).await;
    let run_id = start(router, &graph_id, "x").await;
    let run = wait_for(router, &run_id, &["completed", "failed"]).await;
    assert!(
        transcript(&run).contains("permission refused: sh test.sh"),
        "{}",
        transcript(&run)
    );
    assert!(!project.path().join("tests-ran.txt").exists());
}

#[tokio::test]
async fn without_bubblewrap_runs_that_start_processes_are_refused_and_the_rest_run() {
    let database = support::databases().await.remove(0);
    let mut settings = support::settings(&database, Limits::default());
    settings.bwrap = "/nonexistent/bwrap".to_owned();
    settings.commands_enabled = true;
    let router = server::router::router(server::build_state(settings).await.unwrap());
    let coding = create_graph(
        &router,
        coding_graph(config("write a.txt: a", vec![agent("builder", None, &[])])),
    )
    .await;
    let (status, body) = call(
        &router,
        as_editor(
            post(&format!("/api/graphs/{coding}/runs"), json!({})),
            &coding,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "run.sandbox_unavailable");
    assert_eq!(body["error"]["details"]["module_id"], "build");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("bubblewrap"), "{message}");
    assert!(message.contains("cannot confine"), "{message}");
    // An agent task whose validators are commands starts processes too.
    let checked = create_graph(
        &router,
        json!({"name": "Checked", "modules": [
            {"id": "in", "kind": "step.input", "config": {}},
            {"id": "draft", "kind": "step.agent_task", "config": {
                "instruction": "Write", "agent_config": {"provider": "sim"},
                "validators": [{"name": "lint", "command": "true", "success_when": "exit_code:0", "failure_pattern": "fix"}],
                "failure_patterns": [{"name": "fix", "prompt": "Fix it."}]}},
        ], "cables": [
            {"id": "c1", "from": {"module": "in", "port": "data_out"}, "to": {"module": "draft", "port": "data_in"}},
        ]}),
    )
    .await;
    let (status, body) = call(
        &router,
        as_editor(
            post(&format!("/api/graphs/{checked}/runs"), json!({})),
            &checked,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "run.sandbox_unavailable");
    assert_eq!(body["error"]["details"]["module_id"], "draft");
    // A graph that starts no process runs as ever.
    let plain = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
    let run_id = start(&router, &plain, "x").await;
    let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed");
}

fn coding_from(path: &str) -> Value {
    let mut coding = config("write a.txt: a", vec![agent("builder", None, &[])]);
    coding.workspace = WorkspaceConfig {
        path: Some(path.to_owned()),
        extra: Extra::new(),
    };
    coding_graph(coding)
}

#[tokio::test]
async fn a_workspace_folder_outside_the_operators_roots_is_a_finding_and_refused() {
    // No roots: no folder at all.
    let database = support::databases().await.remove(0);
    let router = server::router::router(support::state(&database, Limits::default()).await);
    let (_, checked) = call(&router, post("/api/validate", coding_from("/etc"))).await;
    assert_eq!(
        checked["findings"][0]["code"], "validation.workspace_path_not_allowed",
        "{checked}"
    );
    assert_eq!(
        checked["findings"][0]["path"],
        "modules[1].config.workspace.path"
    );
    let graph = create_graph(&router, coding_from("/etc")).await;
    let (status, body) = call(
        &router,
        as_editor(
            post(&format!("/api/graphs/{graph}/runs"), json!({})),
            &graph,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["code"], "run.graph_invalid");

    // With a root: `..` does not climb out, and a link out is caught when
    // the run resolves it.
    let setup = setup(None).await;
    let root = std::env::temp_dir();
    let climbing = format!("{}/../etc", root.display());
    let (_, checked) = call(&setup.router, post("/api/validate", coding_from(&climbing))).await;
    assert_eq!(
        checked["findings"][0]["code"],
        "validation.workspace_path_not_allowed"
    );
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("to-etc");
    std::os::unix::fs::symlink("/etc", &link).unwrap();
    let (_, checked) = call(
        &setup.router,
        post("/api/validate", coding_from(&link.display().to_string())),
    )
    .await;
    assert_eq!(checked["findings"], json!([]), "lexically it is inside");
    let graph = create_graph(&setup.router, coding_from(&link.display().to_string())).await;
    let run_id = start(&setup.router, &graph, "x").await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "failed");
    let error = run["modules"]["build"]["activations"][0]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("through a link"), "{error}");
    assert!(error.contains("/etc"), "{error}");

    // Another run's workspace is never a source, even inside a root.
    let earlier = run_with(&setup, "write a.txt: a").await;
    let other = setup
        .workspaces
        .path()
        .join(earlier["id"].as_str().unwrap())
        .join("build");
    let graph = create_graph(&setup.router, coding_from(&other.display().to_string())).await;
    let run_id = start(&setup.router, &graph, "x").await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "failed");
    let error = run["modules"]["build"]["activations"][0]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("run workspaces"), "{error}");
}

async fn run_with(setup: &Setup, instruction: &str) -> Value {
    run(
        setup,
        config(instruction, vec![agent("builder", None, &[])]),
        "x",
    )
    .await
}

#[tokio::test]
async fn a_runs_folder_goes_after_its_retention_and_never_while_it_runs() {
    let setup = setup(None).await;
    let finished = run_with(&setup, "write kept.txt: the diff stays").await;
    assert_eq!(finished["status"], "completed");
    let finished_id = finished["id"].as_str().unwrap();
    let finished_folder = setup.workspaces.path().join(finished_id);
    assert!(finished_folder.join("build/kept.txt").exists());
    assert!(finished_folder.join(".home").is_dir());

    // Within the retention (a day by default) it stays.
    assert_eq!(server::janitor::sweep(&setup.state).await, 0);
    assert!(finished_folder.exists());

    // A run still going, with no retention at all.
    let graph = create_graph(
        &setup.router,
        coding_graph(config("sim: slow", vec![agent("builder", None, &[])])),
    )
    .await;
    let running_id = start(&setup.router, &graph, "x").await;
    let running_folder = setup.workspaces.path().join(&running_id);
    for _ in 0..300 {
        if running_folder.join("build").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut state = setup.state.clone();
    let mut settings = (*state.settings).clone();
    settings.workspace_retention = Duration::ZERO;
    state.settings = std::sync::Arc::new(settings);
    assert_eq!(server::janitor::sweep(&state).await, 1);
    assert!(!finished_folder.exists(), "the ended run's folder went");
    assert!(
        running_folder.join("build").exists(),
        "the running one stays"
    );

    // What the record keeps: the diff and the changed files.
    let (_, record) = call(
        &setup.router,
        support::get(&format!("/api/runs/{finished_id}")),
    )
    .await;
    let outputs = &record["modules"]["build"]["activations"][0]["outputs"];
    assert!(
        outputs["diff_out"]["content"]
            .as_str()
            .unwrap()
            .contains("+the diff stays")
    );
    assert!(
        outputs["files_out"]["content"]
            .as_array()
            .unwrap()
            .contains(&json!({"path": "kept.txt", "status": "added"}))
    );
    let (status, _) = call(
        &setup.router,
        as_editor(
            post(&format!("/api/runs/{running_id}/cancel"), json!({})),
            &graph,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    wait_for(&setup.router, &running_id, &["cancelled"]).await;
}
