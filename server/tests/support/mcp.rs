//! MCP servers for the tests of tools (PRODUCT §3.17): the reference
//! server over stdio and Streamable HTTP, the Python SDK's refunds server,
//! their entries as the operator writes them, and a `patchbay serve` with
//! them; `scripts/test` installs the servers and says where.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::processes::{Server, cable, module};

/// The reference server's script, or why it is not there.
pub fn everything() -> Option<PathBuf> {
    installed("PATCHBAY_TEST_MCP_EVERYTHING", "the reference MCP server")
}

/// The python of the environment with the MCP Python SDK.
pub fn python() -> Option<PathBuf> {
    installed("PATCHBAY_TEST_MCP_PYTHON", "the MCP Python SDK")
}

pub fn installed(variable: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(variable).map(PathBuf::from) {
        Some(path) if path.exists() => Some(path),
        _ if std::env::var("PATCHBAY_REQUIRE_MCP").as_deref() == Ok("1") => {
            panic!("{variable} does not name {what}, and PATCHBAY_REQUIRE_MCP=1")
        }
        _ => {
            eprintln!("skipped: {variable} is not set to {what} (scripts/test installs it)");
            None
        }
    }
}

/// The folder the reference server is installed in (what its process may
/// read): `…/everything` of `…/everything/node_modules/@…/dist/index.js`.
/// The reference filesystem server's script, or why it is not there.
pub fn filesystem() -> Option<PathBuf> {
    installed(
        "PATCHBAY_TEST_MCP_FILESYSTEM",
        "the reference filesystem MCP server",
    )
}

/// The filesystem server over `folder` (where it may write), the operator
/// trusting its annotations, with `more`.
pub fn filesystem_entry(script: &Path, folder: &Path, more: &str) -> String {
    format!(
        "[[mcp_servers]]\nid = \"files\"\nname = \"Files\"\ncommand = \"node\"\nargs = [\"{}\", \"{}\"]\nfolder = \"{}\"\nread_only = [\"{}\"]\ntrusted = true\n{more}\n",
        script.display(),
        folder.display(),
        folder.display(),
        install_folder(script).display()
    )
}

pub fn install_folder(script: &Path) -> PathBuf {
    script.ancestors().nth(5).unwrap().to_path_buf()
}

pub fn refunds_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/refunds.py")
}

/// A mark in this test's server command lines, to count their processes.
pub fn mark() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "--patchbay-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    )
}

/// The processes whose command line has `mark`.
pub fn processes_with(mark: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(command_line) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let command_line = String::from_utf8_lossy(&command_line).replace('\0', " ");
        if command_line.contains(mark) {
            found.push(format!(
                "{} {command_line}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// Waits up to 10 s for every process with `mark` to be gone.
pub async fn no_process_left(mark: &str, after: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_with(mark);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "after {after}, MCP server processes are left: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Lets a server's calls run without asking (PRODUCT §3.17), unless the
/// test says how they are approved.
pub fn approval(more: &str) -> &'static str {
    if more.contains("approval") {
        ""
    } else {
        "approval = \"auto\"\n"
    }
}

/// The reference server over stdio, as the operator configures it.
pub fn everything_entry(id: &str, script: &Path, mark: &str, more: &str) -> String {
    format!(
        "[[mcp_servers]]\nid = \"{id}\"\nname = \"Everything\"\ncommand = \"node\"\nargs = [\"{}\", \"stdio\", \"{mark}\"]\nread_only = [\"{}\"]\n{}{more}\n",
        script.display(),
        install_folder(script).display(),
        approval(more)
    )
}

/// The Python SDK's server over stdio: it may read its script, its
/// environment and the Python installation the environment was made from.
pub fn refunds_entry(python: &Path, mark: &str, more: &str) -> String {
    let environment = python.parent().unwrap().parent().unwrap();
    let base = Command::new(python)
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .unwrap();
    let base = String::from_utf8(base.stdout).unwrap().trim().to_owned();
    let script = refunds_script();
    format!(
        "[[mcp_servers]]\nid = \"refunds\"\ncommand = {:?}\nargs = [{:?}, \"{mark}\"]\nread_only = [{:?}, {:?}, {:?}]\n{}{more}\n",
        python.display().to_string(),
        script.display().to_string(),
        environment.display().to_string(),
        base,
        script.parent().unwrap().display().to_string(),
        approval(more)
    )
}

/// The reference server over Streamable HTTP, on a port of its own;
/// stopped when dropped.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub async fn start(script: &Path) -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("node")
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the HTTP MCP server did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `patchbay serve` on a fresh SQLite file with `config` written to the
/// folder (kept alive by what is returned).
pub async fn serve(config: &str) -> (Server, tempfile::TempDir) {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("patchbay.toml");
    std::fs::write(&file, config).unwrap();
    let database = format!(
        "sqlite://{}?mode=rwc",
        folder.path().join("db.sqlite").display()
    );
    let server = Server::start(&database, &file.display().to_string(), &[]).await;
    (server, folder)
}

/// input → ask (an agent task with `tools`) → out, its error_out → failed,
/// and `more` cables from ask.
pub fn agent_graph(instruction: &str, tools: Value, extra: Value, routes: Vec<Value>) -> Value {
    let mut config = json!({
        "instruction": instruction,
        "agent_config": {"provider": "sim", "model": "sim-1"},
        "tools": tools
    });
    if let (Value::Object(config), Value::Object(extra)) = (&mut config, extra) {
        config.extend(extra);
    }
    let mut modules = vec![
        module("in", "step.input", json!({})),
        module("ask", "step.agent_task", config),
        module("failed", "step.output", json!({})),
    ];
    let mut cables = vec![
        cable("c1", ("in", "data_out"), ("ask", "data_in")),
        cable("c2", ("ask", "error_out"), ("failed", "data_in")),
    ];
    if routes.is_empty() {
        modules.push(module("out", "step.output", json!({})));
        cables.push(cable("c3", ("ask", "data_out"), ("out", "data_in")));
    }
    for (at, route) in routes.into_iter().enumerate() {
        let target = route["to"].as_str().unwrap().to_owned();
        modules.push(module(&target, "step.output", json!({})));
        let mut routed = cable(&format!("r{at}"), ("ask", "data_out"), (&target, "data_in"));
        if let Some(condition) = route.get("condition") {
            routed["condition"] = condition.clone();
        }
        cables.push(routed);
    }
    json!({"modules": modules, "cables": cables})
}

/// Each tool call of an activation's record: its tool and how it ended.
pub fn outcomes(activation: &Value) -> Vec<(&str, &str)> {
    activation["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| {
            (
                call["tool"].as_str().unwrap(),
                call["outcome"].as_str().unwrap(),
            )
        })
        .collect()
}

pub fn ask(run: &Value) -> &Value {
    &run["modules"]["ask"]["activations"][0]
}

pub fn reached(run: &Value, module: &str) -> bool {
    run["modules"][module]["activations"]
        .as_array()
        .is_some_and(|activations| !activations.is_empty())
}

/// The run's whole event log as its stream gives it (the run has ended).
pub async fn event_log(server: &Server, run_id: &str) -> String {
    engine::tls::client()
        .get(format!("{}/api/runs/{run_id}/events", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}
