//! The simulated agent's MCP client, written by hand as its ACP side is
//! (so the two sides check each other): for a prompt line `sim: tool
//! <server> <tool> <arguments>`, it starts the stdio MCP server the client
//! gave the session (`session/new`'s `mcpServers`, by name), asks it to
//! initialize, calls the tool once, and stops it — as a real agent uses
//! the servers its client hands it.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

/// How long the whole exchange may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// A `sim: tool <server> <tool> <arguments>` line of a prompt: the
/// server's name, the tool and its arguments (an object; `{}` when none).
pub fn asked(prompt: &str) -> Option<(String, String, Value)> {
    prompt.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("sim: tool ")?;
        let mut parts = rest.splitn(3, ' ');
        let server = parts.next()?.to_owned();
        let tool = parts.next()?.to_owned();
        let arguments = match parts.next().map(str::trim) {
            Some(text) if !text.is_empty() => serde_json::from_str(text).ok()?,
            _ => json!({}),
        };
        Some((server, tool, arguments))
    })
}

/// Calls `tool` of the stdio server `server` (as `session/new` gave it):
/// the text it answered, or why there is none.
pub async fn call(server: &Value, tool: &str, arguments: Value) -> Result<String, String> {
    match tokio::time::timeout(PATIENCE, exchange(server, tool, arguments)).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "the MCP server did not answer within {} s",
            PATIENCE.as_secs()
        )),
    }
}

async fn exchange(server: &Value, tool: &str, arguments: Value) -> Result<String, String> {
    let command = server["command"]
        .as_str()
        .ok_or("the MCP server has no command (only stdio servers are called here)")?;
    let args: Vec<&str> = server["args"]
        .as_array()
        .map(|args| args.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let env: Vec<(&str, &str)> = server["env"]
        .as_array()
        .map(|env| {
            env.iter()
                .filter_map(|pair| Some((pair["name"].as_str()?, pair["value"].as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    let mut child = tokio::process::Command::new(command)
        .args(args)
        .envs(env)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("the MCP server did not start: {error}"))?;
    let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the MCP server's streams are not available".to_owned());
    };
    let mut lines = BufReader::new(output).lines();
    send(
        &mut input,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "patchbay-sim-agent", "version": env!("CARGO_PKG_VERSION")}
        }}),
    )
    .await?;
    answer(&mut lines, 1).await?;
    send(
        &mut input,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await?;
    send(
        &mut input,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
    )
    .await?;
    let result = answer(&mut lines, 2).await?;
    drop(input);
    let _ = child.kill().await;
    let text = result["content"]
        .as_array()
        .map(|content| {
            content
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    if result["isError"] == true {
        return Err(format!("the tool failed: {text}"));
    }
    Ok(text)
}

async fn send(input: &mut ChildStdin, message: &Value) -> Result<(), String> {
    let mut line = message.to_string();
    line.push('\n');
    input
        .write_all(line.as_bytes())
        .await
        .map_err(|error| format!("the MCP server stopped reading: {error}"))
}

/// The result of request `id`, past whatever else the server says first.
async fn answer(lines: &mut Lines<BufReader<ChildStdout>>, id: u64) -> Result<Value, String> {
    while let Some(line) = lines
        .next_line()
        .await
        .map_err(|error| format!("the MCP server's answer could not be read: {error}"))?
    {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message["id"] != id {
            continue;
        }
        if let Some(error) = message.get("error") {
            return Err(format!("the MCP server refused: {}", error["message"]));
        }
        return Ok(message["result"].clone());
    }
    Err("the MCP server stopped before it answered".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_line_names_the_server_the_tool_and_its_arguments() {
        assert_eq!(
            asked("Do it.\nsim: tool patchbay calculate {\"expression\": \"6*7\"}\n"),
            Some((
                "patchbay".to_owned(),
                "calculate".to_owned(),
                json!({"expression": "6*7"})
            ))
        );
        assert_eq!(
            asked("sim: tool patchbay clock"),
            Some(("patchbay".to_owned(), "clock".to_owned(), json!({})))
        );
        assert_eq!(asked("no tool here"), None);
    }
}
