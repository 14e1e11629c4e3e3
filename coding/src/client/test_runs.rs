//! Test runs: which of the agent's tool calls ran a project's tests, and
//! what they said, read from the calls as they finish.

use agent_client_protocol::v1::schema::{ToolCallStatus, ToolKind};
use serde_json::Value;

use super::turn::{ToolCallSeen, TurnOutcome};

pub use wire::content::TestRun;

/// The command line of an execute tool call, from its input or its title.
fn command_of(call: &ToolCallSeen) -> String {
    call.raw_input
        .as_ref()
        .and_then(|input| {
            input.get("command").and_then(|command| match command {
                Value::String(text) => Some(text.clone()),
                Value::Array(parts) => Some(
                    parts
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                _ => None,
            })
        })
        .unwrap_or_else(|| call.title.clone())
}

/// Commands that run a project's tests: `cargo test`, `npm test`, `pytest`,
/// `go test`, `make test`, `sh test.sh`, …
pub fn looks_like_tests(command: &str) -> bool {
    let lower = command.to_lowercase();
    [
        "test", "pytest", "jest", "vitest", "rspec", "phpunit", "ctest",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

pub(super) fn record_test(
    call: &ToolCallSeen,
    status: ToolCallStatus,
    raw_output: Option<&Value>,
    outcome: &mut TurnOutcome,
) {
    if call.kind != ToolKind::Execute {
        return;
    }
    let command = command_of(call);
    if !looks_like_tests(&command) {
        return;
    }
    let exit_code = raw_output.and_then(|output| {
        ["exit_code", "exitCode", "code"]
            .iter()
            .find_map(|key| output.get(key).and_then(Value::as_i64))
    });
    let output = raw_output
        .and_then(|output| {
            ["output", "stdout", "formatted_output"]
                .iter()
                .find_map(|key| output.get(key).and_then(Value::as_str))
                .map(str::to_owned)
                .or_else(|| output.as_str().map(str::to_owned))
        })
        .unwrap_or_default();
    outcome.tests.push(TestRun {
        command,
        exit_code,
        passed: status == ToolCallStatus::Completed && exit_code.is_none_or(|code| code == 0),
        output,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_commands_are_recognised() {
        assert!(looks_like_tests("cargo test --quiet"));
        assert!(looks_like_tests("sh test.sh"));
        assert!(looks_like_tests("pytest -q"));
        assert!(!looks_like_tests("ls -la"));
    }
}
