//! `patchbay validate` and `patchbay run` as a person runs them: the built
//! binary, its exit codes (0 done, 1 findings or a failed or cancelled run,
//! 2 a file or graph it cannot take), progress on stderr, the report as
//! JSON on stdout, and Ctrl+C cancelling a run.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use graph::starter::starter_graph;
use serde_json::{Value, json};

fn patchbay() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_patchbay"));
    // Nothing from the environment of whoever runs the tests.
    for variable in ["PATCHBAY_CONFIG", "PATCHBAY_SIM_LATENCY_MS", "RUST_LOG"] {
        command.env_remove(variable);
    }
    command
}

fn write(folder: &Path, name: &str, document: &Value) -> PathBuf {
    let path = folder.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(document).unwrap()).unwrap();
    path
}

fn starter() -> Value {
    serde_json::to_value(starter_graph()).unwrap()
}

/// The starter graph with an error: its draft's second re-prompt is empty.
fn with_an_empty_re_prompt() -> Value {
    let mut graph = starter();
    graph["modules"][1]["config"]["re_prompts"][1] = json!("");
    graph
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn code(output: &Output) -> i32 {
    output.status.code().expect("ended by a signal")
}

#[test]
fn validate_exits_0_for_a_valid_graph_1_for_errors_and_2_for_what_is_not_a_graph() {
    let folder = tempfile::tempdir().unwrap();
    let valid = write(folder.path(), "starter.json", &starter());
    let output = patchbay().arg("validate").arg(&valid).output().unwrap();
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("no findings"));

    let broken = write(folder.path(), "broken.json", &with_an_empty_re_prompt());
    let output = patchbay().arg("validate").arg(&broken).output().unwrap();
    assert_eq!(code(&output), 1);
    let findings = text(&output.stdout);
    assert!(
        findings.starts_with("error validation.reprompt_empty at modules[1].config.re_prompts[1]"),
        "{findings}"
    );

    let not_json = folder.path().join("notes.txt");
    std::fs::write(&not_json, "not a graph").unwrap();
    let output = patchbay().arg("validate").arg(&not_json).output().unwrap();
    assert_eq!(code(&output), 2);
    assert!(text(&output.stderr).contains("notes.txt"));
    let output = patchbay()
        .arg("validate")
        .arg(folder.path().join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert!(text(&output.stderr).contains("cannot read"));
}

#[test]
fn run_reports_progress_on_stderr_and_the_outputs_as_json_on_stdout() {
    let folder = tempfile::tempdir().unwrap();
    let file = write(folder.path(), "starter.json", &starter());
    let output = patchbay()
        .args(["run", "--input", "tide tables"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    let progress = text(&output.stderr);
    for line in [
        "▶ Draft",
        "Draft · Re-prompt 1/2…",
        "Draft · Re-prompt 2/2…",
        "✓ Draft",
        "✓ Final essay",
    ] {
        assert!(progress.contains(line), "{line} not in: {progress}");
    }
    let report: Value = serde_json::from_slice(&output.stdout).expect("stdout is one JSON report");
    assert_eq!(report["status"], "completed");
    let draft = &report["modules"]["m2"]["activations"][0];
    assert_eq!(draft["responses"].as_array().unwrap().len(), 3);
    assert!(
        draft["responses"][0]["text"]
            .as_str()
            .unwrap()
            .contains("tide tables")
    );

    // A module that fails: exit 1, and the report says why.
    let mut failing = starter();
    failing["modules"][1]["config"]["instruction"] = json!("Write it. [sim:fail]");
    let file = write(folder.path(), "failing.json", &failing);
    let output = patchbay().args(["run"]).arg(&file).output().unwrap();
    assert_eq!(code(&output), 1);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["status"], "failed");
    assert!(text(&output.stderr).contains("✗ Draft"));

    // A graph with validation errors is not run: exit 2, nothing on stdout.
    let file = write(folder.path(), "invalid.json", &with_an_empty_re_prompt());
    let output = patchbay().args(["run"]).arg(&file).output().unwrap();
    assert_eq!(code(&output), 2);
    assert!(output.stdout.is_empty());
    assert!(text(&output.stderr).contains("nothing was run"));

    // An approval: nobody is there to decide, so nothing is run.
    let mut approving = starter();
    approving["modules"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "ok", "kind": "step.approval", "label": "Sign-off", "position": {"x": 0, "y": 0}, "config": {}}));
    approving["cables"].as_array_mut().unwrap().push(
        json!({"id": "c_ok", "from": {"module": "m2", "port": "data_out"}, "to": {"module": "ok", "port": "data_in"}}),
    );
    let file = write(folder.path(), "approving.json", &approving);
    let output = patchbay().args(["run"]).arg(&file).output().unwrap();
    assert_eq!(code(&output), 2, "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
    assert!(
        text(&output.stderr).contains("\"Sign-off\" is an approval, and nobody is here to decide"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn ctrl_c_cancels_a_run_and_still_reports_it() {
    let folder = tempfile::tempdir().unwrap();
    let file = write(folder.path(), "starter.json", &starter());
    let mut child = patchbay()
        .args(["run", "--sim-latency-ms", "60", "--input", "tides"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once the draft is under way, as a person would.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let began = Instant::now();
    let mut seen = String::new();
    while !seen.contains("▶ Draft") {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "no progress: {seen}"
        );
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("the run ended before it was interrupted: {seen}");
        }
        seen.push_str(&line);
    }
    let signal = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signal.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(code(&output), 1, "{seen}{rest}");
    assert!(rest.contains("cancelling…"), "{rest}");
    assert!(rest.contains("run cancelled"), "{rest}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["status"], "cancelled");
    assert!(
        report["modules"]
            .get("m3")
            .is_none_or(|module| { module["activations"][0]["status"] != "completed" })
    );
}
