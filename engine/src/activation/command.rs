//! `step.command`: a shell command as a validator (Climpt validators, Cloche
//! `run`). Off unless the server is started with commands enabled. The
//! command runs with `sh -c`, confined (`crate::sandbox`: no network, only
//! the run's commands folder, HOME and temporary folder writable), gets the
//! input on stdin, and fires `pass_out` on exit 0 and `fail_out` otherwise.
//! It reads the run state from the JSON file `$PATCHBAY_STATE` and sets
//! keys of its own by printing `PATCHBAY_SET:name=value` lines (Gump's
//! `clo get`/`clo set`, through the sandbox: it has no database).

use std::collections::BTreeMap;
use std::process::Stdio;

use graph::config::CommandConfig;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::{ActivationContext, ActivationError, ActivationOutput};
use crate::bundle::PortValue;

/// Output kept per stream, so a chatty command cannot fill the record.
const MAX_OUTPUT_BYTES: usize = 64 * 1024;

fn tail(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(MAX_OUTPUT_BYTES);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

pub async fn command(
    context: &ActivationContext,
    config: &CommandConfig,
) -> Result<ActivationOutput, ActivationError> {
    let label = context.module.display_label();
    if !context.settings.commands_enabled {
        return Err(ActivationError(format!(
            "\"{label}\": step.command is disabled on this server (start it with --enable-commands)"
        )));
    }
    let sandbox = context
        .settings
        .sandbox
        .as_ref()
        .map_err(|unavailable| ActivationError(format!("\"{label}\": {unavailable}")))?;
    let command = context.render(&config.command)?;
    if command.trim().is_empty() {
        return Err(ActivationError(format!("\"{label}\" has no command")));
    }
    let folder = context.settings.run_folder(&context.run_id);
    let work = folder.commands();
    let prepared = match folder.prepare().await {
        Ok(()) => tokio::fs::create_dir_all(&work).await,
        Err(error) => Err(error),
    };
    prepared.map_err(|error| {
        ActivationError(format!(
            "\"{label}\": cannot create {}: {error}",
            work.display()
        ))
    })?;
    let reach = crate::sandbox::Reach {
        writable: vec![work.clone()],
        ..crate::sandbox::Reach::default()
    };
    // The state as a file in its own folder: several commands of a run may
    // run at once, each with its own.
    // Named from a hash of the module id, which a document may fill with
    // anything, a path included.
    let module_hash = context
        .module
        .id
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
    let state_file = work.join(format!(
        ".patchbay-state-{module_hash:016x}-{}.json",
        context.activation
    ));
    let state = serde_json::to_vec(&context.state).unwrap_or_default();
    tokio::fs::write(&state_file, state)
        .await
        .map_err(|error| {
            ActivationError(format!(
                "\"{label}\": cannot write the run state to {}: {error}",
                state_file.display()
            ))
        })?;
    let environment = BTreeMap::from([
        ("PATCHBAY_RUN_ID".to_owned(), context.run_id.clone()),
        (
            "PATCHBAY_ATTEMPT".to_owned(),
            context.activation.to_string(),
        ),
        (
            "PATCHBAY_STATE".to_owned(),
            state_file.display().to_string(),
        ),
    ]);
    let mut confined = sandbox
        .command(
            &folder,
            &reach,
            "sh",
            &["-c".to_owned(), command.clone()],
            &environment,
            &work,
        )
        .map_err(|problem| ActivationError(format!("\"{label}\": {problem}")))?;
    let input: String = context
        .bundles_on("data_in")
        .into_iter()
        .map(|(_, bundle)| bundle.as_text())
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut child = confined
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| ActivationError(format!("\"{label}\": cannot start sh: {error}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input closes the pipe early.
        let _ = stdin.write_all(input.as_bytes()).await;
    }
    // Its timeout is the module's (the scheduler's), which drops this
    // future, and with it the process.
    let output = child.wait_with_output().await;
    let _ = tokio::fs::remove_file(&state_file).await;
    let output = output.map_err(|error| {
        ActivationError(format!("\"{label}\": the command failed to run: {error}"))
    })?;
    let stdout = tail(&output.stdout);
    let stderr = tail(&output.stderr);
    let exit_code = output.status.code();
    let passed = output.status.success();
    let text = if stderr.trim().is_empty() {
        stdout.clone()
    } else {
        format!("{stdout}\n--- stderr ---\n{stderr}")
    };
    let mut bundle = context.text_bundle(text.clone());
    bundle.meta.insert("exit_code".to_owned(), json!(exit_code));
    bundle.meta.insert("command".to_owned(), json!(command));
    context.transcript(
        wire::activation::TranscriptRole::User,
        &format!("$ {command}"),
    );
    context.transcript(wire::activation::TranscriptRole::Assistant, &text);
    Ok(ActivationOutput {
        output_text: text,
        ports: vec![
            (
                if passed { "pass_out" } else { "fail_out" }.to_owned(),
                PortValue::Bundle(bundle),
            ),
            ("signal_out".to_owned(), context.signal()),
        ],
        receipt: None,
        session_key: None,
        intent: None,
        state_set: state_markers(&stdout),
    })
}

/// Names a command may set: short, and plain enough to sit in a template.
const MAX_SET_KEYS: usize = 100;

/// The `PATCHBAY_SET:name=value` lines of a command's output, in order (a
/// name set twice keeps its last value); lines whose name is not a plain
/// name are not markers.
pub fn state_markers(stdout: &str) -> Vec<(String, String)> {
    let mut set: Vec<(String, String)> = Vec::new();
    for line in stdout.lines() {
        let Some((name, value)) = line
            .trim_end_matches('\r')
            .strip_prefix("PATCHBAY_SET:")
            .and_then(|rest| rest.split_once('='))
        else {
            continue;
        };
        let name = name.trim();
        let plain = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|character| character.is_ascii_alphanumeric() || "_-".contains(character));
        if !plain {
            continue;
        }
        set.retain(|(other, _)| other != name);
        if set.len() < MAX_SET_KEYS {
            set.push((name.to_owned(), value.to_owned()));
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_set_plain_names_and_the_last_value_wins() {
        let stdout = "building\nPATCHBAY_SET:coverage=81%\nPATCHBAY_SET: failing = 2 \nPATCHBAY_SET:bad name=x\nPATCHBAY_SET:coverage=83%\r\n  PATCHBAY_SET:indented=no\nPATCHBAY_SET:empty=";
        assert_eq!(
            state_markers(stdout),
            [
                ("failing".to_owned(), " 2 ".to_owned()),
                ("coverage".to_owned(), "83%".to_owned()),
                ("empty".to_owned(), String::new()),
            ]
        );
    }
}
