//! The built-in simulated coding agent (`patchbay sim-agent`): speaks ACP v1
//! over stdio as a real agent does — newline-delimited JSON-RPC, written
//! here by hand rather than with the client's crate, so the two sides check
//! each other. Deterministic, offline, and it says it is simulated.
//!
//! What it does with a prompt:
//! - `write <path>: <text>` lines: asks permission, then writes the file
//!   through the client (`fs/write_text_file`), and says what happened
//!   (`write! …` writes without asking);
//! - "run the tests": runs `sh test.sh` in the workspace as an execute tool
//!   call (after asking permission) and reports the result;
//! - asked for a review decision (`"decision"`): answers revise until the
//!   round named by `sim: approve on round <k>` (default 1), then approve;
//! - asked an intent gate's question (`## Your decision`): answers the
//!   JSON it shows, with the intent `sim: intent <x>` named earlier in the
//!   session (else the first allowed; `sim: intent repeat, next` names one
//!   per attempt, as a repeated activation's note counts them);
//! - otherwise appends a line to `SIMULATED_NOTES.md`, so every turn leaves
//!   a diff;
//! - `sim: tool <server> <tool> <arguments>`: calls the tool of the stdio
//!   MCP server the client gave the session by that name (`mcpServers`),
//!   and says what it answered (`sim_agent/mcp.rs`);
//! - `sim: slow` streams for a minute unless cancelled (a `session/cancel`
//!   ends the turn and is noted in `SIMULATED_NOTES.md`); `sim: crash` exits
//!   with an error; `sim: malformed` first sends an update no client can
//!   parse.
//!
//! Its sessions are kept on disk under its HOME (the run's), a turn per
//! line, so a later process of the same run can take one up with
//! `session/load`: it replays the conversation, and its first reply after
//! says which session it continued and what it was first asked there.
//! With `PATCHBAY_SIM_LOAD_SESSION=off` in its environment it does not
//! offer `session/load`, as many agents do not.
//!
//! It streams its reply a word at a time, `PATCHBAY_SIM_LATENCY_MS` apart
//! (the server passes its simulator's pace), so progress shows on a canvas.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

mod mcp;

pub const NOTES_FILE: &str = "SIMULATED_NOTES.md";
/// The environment variable with the pause between streamed words, in ms.
pub const LATENCY_VARIABLE: &str = "PATCHBAY_SIM_LATENCY_MS";
/// The JSON-RPC error code ACP gives to a missing file.
const RESOURCE_NOT_FOUND: i64 = -32002;

#[derive(Default)]
struct SessionState {
    cwd: PathBuf,
    turns: u32,
    reviews: u32,
    approve_on: u32,
    /// What `sim: intent X` said in the session, for the intent gate:
    /// one intent, or one per attempt (`repeat, next`).
    intent: Option<String>,
    /// The attempt a repeated activation's note named (1 when none did).
    attempt: u32,
    cancel: CancellationToken,
    /// What the client chose for the session (`mode ask`, `model …`), said
    /// back in every reply so tests see it arrived.
    chosen: Vec<String>,
    /// Said in the first reply after `session/load`: the session taken up.
    loaded: Option<String>,
    /// The MCP servers the client gave the session, as it declared them.
    tool_servers: Vec<Value>,
}

/// The environment variable that turns `session/load` off.
pub const LOAD_SESSION_VARIABLE: &str = "PATCHBAY_SIM_LOAD_SESSION";

fn offers_load() -> bool {
    std::env::var(LOAD_SESSION_VARIABLE).map_or(true, |value| value != "off")
}

/// One turn as the session's file keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Remembered {
    user: String,
    agent: String,
}

/// Where a session's turns are kept: under the agent's HOME, which the
/// server makes per run, so only the run's own agents see them.
fn session_file(session_id: &str) -> Option<PathBuf> {
    let safe = !session_id.is_empty()
        && session_id
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || character == '-');
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    safe.then(|| {
        home.join(".patchbay-sim-agent")
            .join("sessions")
            .join(format!("{session_id}.jsonl"))
    })
}

fn remember(session_id: &str, user: &str, agent: &str) {
    use std::io::Write;
    let Some(path) = session_file(session_id) else {
        return;
    };
    let Ok(line) = serde_json::to_string(&Remembered {
        user: user.to_owned(),
        agent: agent.to_owned(),
    }) else {
        return;
    };
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
        })
        .and_then(|mut file| writeln!(file, "{line}"));
    if let Err(error) = written {
        eprintln!("sim-agent: could not keep the turn of {session_id}: {error}");
    }
}

fn remembered(session_id: &str) -> Option<Vec<Remembered>> {
    let text = std::fs::read_to_string(session_file(session_id)?).ok()?;
    Some(
        text.lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect(),
    )
}

/// The session modes the simulated agent offers.
const MODES: [&str; 2] = ["code", "ask"];
/// The models it offers, through its `model` configuration option.
const MODELS: [&str; 2] = ["sim-standard", "sim-careful"];

/// Its configuration options, with the model currently chosen.
fn config_options(model: &str) -> Value {
    json!([{
        "id": "model", "name": "Model", "category": "model", "type": "select",
        "currentValue": model,
        "options": MODELS.iter().map(|value| json!({"value": value, "name": value})).collect::<Vec<_>>(),
    }])
}

struct Peer {
    outgoing: mpsc::UnboundedSender<String>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, Value>>>>,
    sessions: Mutex<HashMap<String, SessionState>>,
    session_count: AtomicU64,
    /// Pause between streamed words.
    pace: Duration,
}

impl Peer {
    fn send(&self, message: Value) {
        let _ = self.outgoing.send(message.to_string());
    }

    fn notify(&self, session_id: &str, update: Value) {
        self.send(json!({
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": { "sessionId": session_id, "update": update },
        }));
    }

    fn say(&self, session_id: &str, text: &str) {
        self.notify(
            session_id,
            json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text } }),
        );
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, sender);
        }
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        receiver
            .await
            .unwrap_or_else(|_| Err(json!({ "message": "the client went away" })))
    }

    /// Asks the client; true when it chose an allow option.
    async fn permission(
        &self,
        session_id: &str,
        call_id: &str,
        title: &str,
        kind: &str,
        path: Option<&Path>,
    ) -> bool {
        let locations: Vec<Value> = path
            .map(|path| vec![json!({ "path": path })])
            .unwrap_or_default();
        let answer = self
            .request(
                "session/request_permission",
                json!({
                    "sessionId": session_id,
                    "toolCall": { "toolCallId": call_id, "title": title, "kind": kind, "locations": locations },
                    "options": [
                        { "optionId": "allow", "name": "Allow", "kind": "allow_once" },
                        { "optionId": "reject", "name": "Reject", "kind": "reject_once" },
                    ],
                }),
            )
            .await;
        matches!(answer, Ok(result) if result.pointer("/outcome/optionId") == Some(&json!("allow")))
    }
}

/// Serves ACP on stdin/stdout until stdin closes.
pub async fn serve() -> std::io::Result<()> {
    let (outgoing, mut lines_out) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = lines_out.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err()
                || stdout.write_all(b"\n").await.is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    let peer = Arc::new(Peer {
        outgoing,
        next_id: AtomicU64::new(1),
        pending: Mutex::new(HashMap::new()),
        sessions: Mutex::new(HashMap::new()),
        session_count: AtomicU64::new(0),
        pace: Duration::from_millis(
            std::env::var(LATENCY_VARIABLE)
                .ok()
                .and_then(|value| value.parse().ok())
                .unwrap_or(0),
        ),
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            eprintln!("sim-agent: ignored a line that is not JSON");
            continue;
        };
        let id = message.get("id").cloned();
        match (message.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => {
                let peer = peer.clone();
                let method = method.to_owned();
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                tokio::spawn(async move {
                    let reply = match handle(&peer, &method, params).await {
                        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
                    };
                    peer.send(reply);
                });
            }
            (Some("session/cancel"), None) => {
                let session_id = message
                    .pointer("/params/sessionId")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Ok(sessions) = peer.sessions.lock()
                    && let Some(session) = sessions.get(session_id)
                {
                    session.cancel.cancel();
                }
            }
            (None, Some(id)) => {
                let sender = id
                    .as_u64()
                    .and_then(|id| peer.pending.lock().ok()?.remove(&id));
                if let Some(sender) = sender {
                    let answer = match message.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = sender.send(answer);
                }
            }
            _ => {}
        }
    }
    drop(peer);
    let _ = writer.await;
    Ok(())
}

fn error(code: i64, message: &str) -> Value {
    json!({ "code": code, "message": message })
}

async fn handle(peer: &Arc<Peer>, method: &str, params: Value) -> Result<Value, Value> {
    match method {
        "initialize" => Ok(json!({
            "protocolVersion": 1,
            "agentCapabilities": { "loadSession": offers_load(), "promptCapabilities": {} },
            "authMethods": [],
            "agentInfo": { "name": "patchbay-sim-agent", "title": "Simulated agent", "version": env!("CARGO_PKG_VERSION") },
        })),
        "session/new" => {
            let cwd = params
                .get("cwd")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !Path::new(cwd).is_absolute() {
                return Err(error(-32602, "cwd must be an absolute path"));
            }
            let number = peer.session_count.fetch_add(1, Ordering::Relaxed) + 1;
            // Unique across the run's agent processes, whose sessions share
            // one folder.
            let since_epoch = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_micros();
            let session_id = format!("sim-{since_epoch}-{}-{number}", std::process::id());
            if let Ok(mut sessions) = peer.sessions.lock() {
                sessions.insert(
                    session_id.clone(),
                    SessionState {
                        cwd: PathBuf::from(cwd),
                        approve_on: 1,
                        tool_servers: params
                            .get("mcpServers")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default(),
                        ..SessionState::default()
                    },
                );
            }
            Ok(json!({
                "sessionId": session_id,
                "modes": {
                    "currentModeId": MODES[0],
                    "availableModes": MODES.iter().map(|id| json!({"id": id, "name": id})).collect::<Vec<_>>(),
                },
                "configOptions": config_options(MODELS[0]),
            }))
        }
        "session/load" => load(peer, &params).await,
        "session/set_mode" => {
            let mode = params["modeId"].as_str().unwrap_or_default();
            if !MODES.contains(&mode) {
                return Err(error(-32602, &format!("no mode {mode}")));
            }
            choose(peer, &params, format!("mode {mode}"))?;
            Ok(json!({}))
        }
        "session/set_config_option" => {
            let value = params["value"].as_str().unwrap_or_default();
            if params["configId"] != "model" || !MODELS.contains(&value) {
                return Err(error(-32602, &format!("no such option value {value}")));
            }
            choose(peer, &params, format!("model {value}"))?;
            Ok(json!({ "configOptions": config_options(value) }))
        }
        "session/prompt" => prompt(peer, &params).await,
        _ => Err(error(-32601, &format!("method not found: {method}"))),
    }
}

/// Takes up a session kept on disk: replays it to the client, then
/// answers as `session/new` does, in the `cwd` it is given now.
async fn load(peer: &Arc<Peer>, params: &Value) -> Result<Value, Value> {
    if !offers_load() {
        return Err(error(-32601, "method not found: session/load"));
    }
    let session_id = params["sessionId"].as_str().unwrap_or_default().to_owned();
    let cwd = params["cwd"].as_str().unwrap_or_default();
    if !Path::new(cwd).is_absolute() {
        return Err(error(-32602, "cwd must be an absolute path"));
    }
    let Some(turns) = remembered(&session_id) else {
        return Err(error(
            RESOURCE_NOT_FOUND,
            &format!("no session {session_id} here"),
        ));
    };
    for turn in &turns {
        peer.notify(
            &session_id,
            json!({ "sessionUpdate": "user_message_chunk", "content": { "type": "text", "text": turn.user } }),
        );
        peer.say(&session_id, &turn.agent);
    }
    let first: String = turns
        .first()
        .map(|turn| {
            turn.user
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect()
        })
        .unwrap_or_default();
    if let Ok(mut sessions) = peer.sessions.lock() {
        sessions.insert(
            session_id.clone(),
            SessionState {
                cwd: PathBuf::from(cwd),
                turns: u32::try_from(turns.len()).unwrap_or(u32::MAX),
                approve_on: 1,
                loaded: Some(format!(
                    "(Continued session {session_id}: {} earlier turns; first asked: “{first}”.)",
                    turns.len()
                )),
                tool_servers: params
                    .get("mcpServers")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                ..SessionState::default()
            },
        );
    }
    Ok(json!({
        "modes": {
            "currentModeId": MODES[0],
            "availableModes": MODES.iter().map(|id| json!({"id": id, "name": id})).collect::<Vec<_>>(),
        },
        "configOptions": config_options(MODELS[0]),
    }))
}

struct Turn {
    session_id: String,
    cwd: PathBuf,
    number: u32,
    review_round: Option<(u32, u32)>,
    cancel: CancellationToken,
    /// The answer to an intent gate's question, when that is the prompt.
    gate_reply: Option<String>,
    /// What the client chose for the session, if anything.
    chosen: String,
    /// The session this one continues, said in its first reply.
    loaded: Option<String>,
    tool_servers: Vec<Value>,
}

/// Calls `tool` of the MCP server the session was given as `server`, and
/// says what came of it.
async fn call_tool(turn: &Turn, server: &str, tool: &str, arguments: Value) -> String {
    let Some(declared) = turn
        .tool_servers
        .iter()
        .find(|declared| declared["name"] == server)
    else {
        let given: Vec<&str> = turn
            .tool_servers
            .iter()
            .filter_map(|declared| declared["name"].as_str())
            .collect();
        return format!(
            "I have no MCP server called {server} (this session was given: {}).",
            if given.is_empty() {
                "none".to_owned()
            } else {
                given.join(", ")
            }
        );
    };
    match mcp::call(declared, tool, arguments).await {
        Ok(said) => format!("The tool {tool} of {server} said: {said}"),
        Err(why) => format!("I could not call {tool} of {server}: {why}."),
    }
}

/// Notes what the client chose for the session `params` names.
fn choose(peer: &Arc<Peer>, params: &Value, choice: String) -> Result<(), Value> {
    let session_id = params["sessionId"].as_str().unwrap_or_default();
    let Ok(mut sessions) = peer.sessions.lock() else {
        return Err(error(-32603, "internal error"));
    };
    let Some(session) = sessions.get_mut(session_id) else {
        return Err(error(-32602, &format!("unknown session {session_id}")));
    };
    session.chosen.push(choice);
    Ok(())
}

/// The session's state as this prompt's turn begins: the directives it
/// carries noted, its number counted.
fn begin_turn(peer: &Arc<Peer>, session_id: &str, text: &str) -> Result<Turn, Value> {
    let lower = text.to_lowercase();
    let asks_decision = text.contains("\"decision\"");
    let Ok(mut sessions) = peer.sessions.lock() else {
        return Err(error(-32603, "internal error"));
    };
    let Some(session) = sessions.get_mut(session_id) else {
        return Err(error(-32602, &format!("unknown session {session_id}")));
    };
    session.turns += 1;
    session.cancel = CancellationToken::new();
    if let Some(round) = directive_number(&lower, "sim: approve on round") {
        session.approve_on = round;
    }
    if asks_decision {
        session.reviews += 1;
    }
    if let Some(start) = lower.find("sim: intent ") {
        let rest = &lower[start + "sim: intent ".len()..];
        session.intent = Some(rest.lines().next().unwrap_or_default().trim().to_owned());
    }
    if let Some(start) = lower.find("(attempt ") {
        let digits: String = lower[start + "(attempt ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(attempt) = digits.parse::<u32>() {
            session.attempt = session.attempt.max(attempt);
        }
    }
    let gate_reply = text.contains(graph::intent::INSTRUCTION_HEADING).then(|| {
        let intent = session.intent.as_deref().and_then(|list| {
            let items: Vec<&str> = list.split(',').map(str::trim).collect();
            let index = usize::try_from(session.attempt.max(1) - 1).unwrap_or(0);
            items.get(index.min(items.len().saturating_sub(1))).copied()
        });
        gate_reply(text, intent)
    });
    Ok(Turn {
        session_id: session_id.to_owned(),
        cwd: session.cwd.clone(),
        number: session.turns,
        review_round: asks_decision.then_some((session.reviews, session.approve_on)),
        cancel: session.cancel.clone(),
        gate_reply,
        chosen: session.chosen.join(", "),
        loaded: session.loaded.take(),
        tool_servers: session.tool_servers.clone(),
    })
}

async fn prompt(peer: &Arc<Peer>, params: &Value) -> Result<Value, Value> {
    let session_id = params
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let text: String = params
        .get("prompt")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let lower = text.to_lowercase();
    let turn = begin_turn(peer, &session_id, &text)?;

    if lower.contains("sim: crash") {
        eprintln!(
            "sim-agent: simulated crash, as the prompt asked (turn {})",
            turn.number
        );
        std::process::exit(3);
    }
    if lower.contains("sim: malformed") {
        peer.notify(
            &session_id,
            json!({ "bogus": "an update with no sessionUpdate tag" }),
        );
    }
    if let Some(answer) = &turn.gate_reply {
        peer.say(&session_id, answer);
        remember(&session_id, &text, answer);
        return Ok(json!({ "stopReason": "end_turn" }));
    }
    let mut reply = vec![format!("Simulated agent, turn {}.", turn.number)];
    if !turn.chosen.is_empty() {
        reply.push(format!("(Chosen for this session: {}.)", turn.chosen));
    }
    if let Some(loaded) = &turn.loaded {
        reply.push(loaded.clone());
    }
    if lower.contains("sim: slow") {
        peer.say(&session_id, &reply.join(" "));
        for _ in 0..300 {
            tokio::select! {
                () = turn.cancel.cancelled() => {
                    // Leave a trace in the workspace: the client's
                    // session/cancel arrived and ended the turn.
                    note_cancel(&turn);
                    return Ok(json!({ "stopReason": "cancelled" }));
                }
                () = tokio::time::sleep(Duration::from_millis(200)) => peer.say(&session_id, " working…"),
            }
        }
    }

    let mut wrote = false;
    for line in text.lines() {
        let trimmed = line.trim();
        // `write!` writes without asking, as some agents do.
        let (rest, ask) = match trimmed.strip_prefix("write! ") {
            Some(rest) => (Some(rest), false),
            None => (trimmed.strip_prefix("write "), true),
        };
        if let Some((path, content)) = rest.and_then(|rest| rest.split_once(':')) {
            wrote = true;
            reply.push(write(peer, &turn, path.trim(), content.trim(), ask).await);
        }
    }
    if let Some((server, tool, arguments)) = mcp::asked(&text) {
        reply.push(call_tool(&turn, &server, &tool, arguments).await);
    }
    if lower.contains("run the tests") || lower.contains("run tests") {
        reply.push(run_tests(peer, &turn).await);
    }
    if !wrote && turn.review_round.is_none() {
        reply.push(append_note(peer, &turn, text.lines().next().unwrap_or_default()).await);
    }
    let first_line: String = text
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(80)
        .collect();
    reply.push(format!("I was asked: “{first_line}”."));
    if let Some((round, approve_on)) = turn.review_round {
        let decision = if round >= approve_on {
            json!({ "decision": "approve", "feedback": format!("Simulated review, round {round}: approved.") })
        } else {
            json!({ "decision": "revise", "feedback": format!("Simulated review, round {round}: please handle the empty input case.") })
        };
        reply.push(decision.to_string());
    }
    let reply = reply.join("\n");
    // Stream it in pieces, as a real agent does: a word at a time when paced.
    let pieces: Vec<&str> = if peer.pace.is_zero() {
        reply.split_inclusive('\n').collect()
    } else {
        reply.split_inclusive([' ', '\n']).collect()
    };
    for piece in pieces {
        if turn.cancel.is_cancelled() {
            return Ok(json!({ "stopReason": "cancelled" }));
        }
        peer.say(&session_id, piece);
        if !peer.pace.is_zero() {
            tokio::select! {
                () = turn.cancel.cancelled() => {}
                () = tokio::time::sleep(peer.pace) => {}
            }
        }
    }
    remember(&session_id, &text, &reply);
    let input_tokens = text.split_whitespace().count();
    let output_tokens = reply.split_whitespace().count();
    // What the session has cost, as agents that know report it: nothing.
    peer.notify(
        &session_id,
        json!({ "sessionUpdate": "usage_update", "used": input_tokens + output_tokens, "size": 200_000,
                "cost": { "amount": 0.0, "currency": "USD" } }),
    );
    Ok(json!({
        "stopReason": "end_turn",
        "usage": { "inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens },
    }))
}

/// The JSON an intent gate's question asks for, read from the shape it
/// shows: the first "one of: …" is the intent (`sim: intent X`, else the
/// first listed), other "one of: …" fields their first value.
fn gate_reply(question: &str, intent: Option<&str>) -> String {
    let shape = question
        .find('{')
        .and_then(|start| {
            serde_json::Deserializer::from_str(&question[start..])
                .into_iter::<Value>()
                .next()?
                .ok()
        })
        .unwrap_or(Value::Null);
    let mut intent_given = false;
    let mut fill = |name: &str, text: &str| -> Value {
        let choices: Vec<&str> = text
            .strip_prefix("one of: ")
            .map(|list| list.split(", ").collect())
            .unwrap_or_default();
        if !intent_given && !choices.is_empty() {
            intent_given = true;
            return json!(intent.unwrap_or(choices[0]));
        }
        match (name, choices.first()) {
            (graph::intent::REASON_FIELD, _) => json!("Simulated reason for this decision."),
            (_, Some(first)) => json!(first),
            (_, None) => json!(format!("Simulated {name}.")),
        }
    };
    fill_shape(&shape, "", &mut fill).to_string()
}

fn fill_shape(shape: &Value, name: &str, fill: &mut dyn FnMut(&str, &str) -> Value) -> Value {
    match shape {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, value)| (key.clone(), fill_shape(value, key, fill)))
                .collect(),
        ),
        Value::String(text) => fill(name, text),
        other => other.clone(),
    }
}

fn directive_number(lower: &str, directive: &str) -> Option<u32> {
    let start = lower.find(directive)? + directive.len();
    lower
        .get(start..)?
        .split_whitespace()
        .next()?
        .trim_end_matches(['.', ','])
        .parse()
        .ok()
}

async fn write(peer: &Peer, turn: &Turn, path: &str, content: &str, ask: bool) -> String {
    let target = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        turn.cwd.join(path)
    };
    let call_id = format!("write-{}-{path}", turn.number);
    if ask
        && !peer
            .permission(
                &turn.session_id,
                &call_id,
                &format!("Write {path}"),
                "edit",
                Some(&target),
            )
            .await
    {
        return format!("I was not allowed to write {path}.");
    }
    let answer = peer
        .request(
            "fs/write_text_file",
            json!({ "sessionId": turn.session_id, "path": target, "content": format!("{content}\n") }),
        )
        .await;
    match answer {
        Ok(_) => format!("I wrote {path}."),
        Err(error) => format!(
            "I could not write {path}: {}",
            error
                .get("data")
                .and_then(Value::as_str)
                .or_else(|| error.get("message").and_then(Value::as_str))
                .unwrap_or("refused")
        ),
    }
}

async fn append_note(peer: &Peer, turn: &Turn, first_line: &str) -> String {
    let path = turn.cwd.join(NOTES_FILE);
    let read = peer
        .request(
            "fs/read_text_file",
            json!({ "sessionId": turn.session_id, "path": path }),
        )
        .await;
    let existing = match read {
        Ok(result) => result
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        // Only ACP's "resource not found" means the notes are still to be made.
        Err(error) if error.get("code").and_then(Value::as_i64) == Some(RESOURCE_NOT_FOUND) => {
            "# Notes of the simulated agent\n".to_owned()
        }
        Err(_) => return format!("I could not read {NOTES_FILE}."),
    };
    let line: String = first_line.chars().take(80).collect();
    let content = format!("{existing}- turn {}: {line}\n", turn.number);
    let answer = peer
        .request(
            "fs/write_text_file",
            json!({ "sessionId": turn.session_id, "path": path, "content": content }),
        )
        .await;
    match answer {
        Ok(_) => format!("I added a note to {NOTES_FILE}."),
        Err(_) => format!("I could not update {NOTES_FILE}."),
    }
}

async fn run_tests(peer: &Peer, turn: &Turn) -> String {
    if !turn.cwd.join("test.sh").exists() {
        return "There are no tests to run here (no test.sh).".to_owned();
    }
    let call_id = format!("tests-{}", turn.number);
    let command = "sh test.sh";
    if !peer
        .permission(&turn.session_id, &call_id, command, "execute", None)
        .await
    {
        return "I was not allowed to run the tests.".to_owned();
    }
    peer.notify(
        &turn.session_id,
        json!({ "sessionUpdate": "tool_call", "toolCallId": call_id, "title": command, "kind": "execute", "status": "in_progress", "rawInput": { "command": command } }),
    );
    let output = tokio::process::Command::new("sh")
        .arg("test.sh")
        .current_dir(&turn.cwd)
        .output()
        .await;
    let (code, text) = match output {
        Ok(output) => (
            output.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        ),
        Err(error) => (-1, error.to_string()),
    };
    peer.notify(
        &turn.session_id,
        json!({ "sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": if code == 0 { "completed" } else { "failed" }, "rawOutput": { "exit_code": code, "output": text } }),
    );
    if code == 0 {
        "I ran the tests: they pass.".to_owned()
    } else {
        format!("I ran the tests: they fail (exit code {code}).")
    }
}

fn note_cancel(turn: &Turn) {
    use std::io::Write;
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(turn.cwd.join(NOTES_FILE))
        .and_then(|mut file| writeln!(file, "- turn {}: cancelled by the client", turn.number));
    if let Err(error) = written {
        eprintln!("sim-agent: could not note the cancel: {error}");
    }
}
