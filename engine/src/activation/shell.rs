//! One confined shell script of a run, for a command and for each poll:
//! `sh -c` in the run's commands folder, confined (`crate::sandbox`: no
//! network, only that folder, HOME and the temporary folder writable),
//! with the module's input on stdin, the run state in the JSON file
//! `$PATCHBAY_STATE`, and keys it sets read back from its
//! `PATCHBAY_SET:name=value` lines (Gump's `clo get`/`clo set`, through the
//! sandbox: it has no database), and its `{{ … }}` values in its
//! environment, never in its text (`crate::shell_template`). Off unless the
//! server runs commands.

use std::collections::BTreeMap;

use tokio::io::AsyncWriteExt;

use super::{ActivationContext, ActivationError};
pub use crate::shell_template::Script;

/// Output kept per stream, so a chatty script cannot fill the record.
const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Keys one script may set.
const MAX_SET_KEYS: usize = 100;

fn tail(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(MAX_OUTPUT_BYTES);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

/// What a script did.
pub struct Ran {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
    pub success: bool,
    /// Its `PATCHBAY_SET:` keys.
    pub state_set: Vec<(String, String)>,
}

impl Ran {
    /// Stdout, then stderr under a line saying so.
    pub fn text(&self) -> String {
        if self.stderr.trim().is_empty() {
            self.stdout.clone()
        } else {
            format!("{}\n--- stderr ---\n{}", self.stdout, self.stderr)
        }
    }
}

/// The module's script with its variables filled, refused when empty.
pub fn script(context: &ActivationContext, template: &str) -> Result<Script, ActivationError> {
    let label = context.module.display_label();
    if !context.settings.commands_enabled {
        return Err(ActivationError::Failed(format!(
            "\"{label}\" runs commands, which are disabled on this server (start it with --enable-commands)"
        )));
    }
    let script = crate::shell_template::fill(template, &context.state)
        .map_err(|problem| ActivationError::Failed(format!("\"{label}\": {problem}")))?;
    if script.text.trim().is_empty() {
        return Err(ActivationError::Failed(format!(
            "\"{label}\" has no command"
        )));
    }
    Ok(script)
}

/// Runs `script` confined in the run's commands folder; see [`run_in`].
pub async fn run(
    context: &ActivationContext,
    script: &Script,
    environment: &[(&str, String)],
) -> Result<Ran, ActivationError> {
    run_in(context, script, environment, None).await
}

/// Runs `script` confined, in `place` (a coding module's workspace) or
/// the run's commands folder, with `environment` besides the run's own;
/// the process is killed when the returned future is dropped (a timeout, a
/// cancel, a poll that overran).
pub async fn run_in(
    context: &ActivationContext,
    script: &Script,
    environment: &[(&str, String)],
    place: Option<&std::path::Path>,
) -> Result<Ran, ActivationError> {
    let label = context.module.display_label();
    let sandbox =
        context.settings.sandbox.as_ref().map_err(|unavailable| {
            ActivationError::Failed(format!("\"{label}\": {unavailable}"))
        })?;
    let folder = context.settings.run_folder(&context.run_id);
    let work = folder.commands();
    let prepared = match folder.prepare().await {
        Ok(()) => tokio::fs::create_dir_all(&work).await,
        Err(error) => Err(error),
    };
    prepared.map_err(|error| {
        ActivationError::Failed(format!(
            "\"{label}\": cannot create {}: {error}",
            work.display()
        ))
    })?;
    let cwd = place.map_or_else(|| work.clone(), std::path::Path::to_path_buf);
    let mut writable = vec![work.clone()];
    if cwd != work {
        writable.push(cwd.clone());
    }
    let reach = crate::sandbox::Reach {
        writable,
        ..crate::sandbox::Reach::default()
    };
    // The state as a file in its own folder: several scripts of a run may
    // run at once, each with its own. Named from a hash of the module id,
    // which a document may fill with anything, a path included.
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
    let state = serde_json::to_vec(&*context.state).unwrap_or_default();
    tokio::fs::write(&state_file, state)
        .await
        .map_err(|error| {
            ActivationError::Failed(format!(
                "\"{label}\": cannot write the run state to {}: {error}",
                state_file.display()
            ))
        })?;
    let mut variables = BTreeMap::from([
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
    for (name, value) in environment {
        variables.insert((*name).to_owned(), value.clone());
    }
    variables.extend(script.environment());
    let mut confined = sandbox
        .command(
            &folder,
            &reach,
            "sh",
            &["-c".to_owned(), script.text.clone()],
            &variables,
            &cwd,
        )
        .map_err(|problem| ActivationError::Failed(format!("\"{label}\": {problem}")))?;
    let input: String = context
        .bundles_on(graph::ports::DATA_IN)
        .into_iter()
        .map(|(_, bundle)| bundle.as_text())
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut child = confined.piped().spawn().map_err(|error| {
        ActivationError::Failed(format!("\"{label}\": cannot start sh: {error}"))
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A script that does not read its input closes the pipe early.
        let _ = stdin.write_all(input.as_bytes()).await;
    }
    let output = child.wait_with_output().await;
    let _ = tokio::fs::remove_file(&state_file).await;
    let output = output.map_err(|error| {
        ActivationError::Failed(format!("\"{label}\": the command failed to run: {error}"))
    })?;
    let stdout = tail(&output.stdout);
    Ok(Ran {
        state_set: state_markers(&stdout),
        stderr: tail(&output.stderr),
        exit_code: output.status.code(),
        success: output.status.success(),
        stdout,
    })
}

/// The values of lines `<prefix><rest>` of a script's output, in order.
fn marker_lines<'a>(stdout: &'a str, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    stdout
        .lines()
        .filter_map(move |line| line.trim_end_matches('\r').strip_prefix(prefix))
}

/// The `PATCHBAY_SET:name=value` lines of a script's output, in order (a
/// name set twice keeps its last value); lines whose name is not a plain
/// name are not markers.
pub fn state_markers(stdout: &str) -> Vec<(String, String)> {
    let mut set: Vec<(String, String)> = Vec::new();
    for (name, value) in
        marker_lines(stdout, "PATCHBAY_SET:").filter_map(|rest| rest.split_once('='))
    {
        let name = name.trim();
        if !graph::kinds::poll::plain_name(name) {
            continue;
        }
        set.retain(|(other, _)| other != name);
        if set.len() < MAX_SET_KEYS {
            set.push((name.to_owned(), value.to_owned()));
        }
    }
    set
}

/// The decision a poll script reported: its last `PATCHBAY_RESULT:<name>`.
pub fn result_marker(stdout: &str) -> Option<String> {
    marker_lines(stdout, "PATCHBAY_RESULT:")
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .last()
        .map(str::to_owned)
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

    #[test]
    fn the_last_result_marker_is_the_decision() {
        assert_eq!(result_marker("waiting\n"), None);
        assert_eq!(
            result_marker("PATCHBAY_RESULT:fix\nmore\nPATCHBAY_RESULT: approved \r\n"),
            Some("approved".to_owned())
        );
        assert_eq!(result_marker("PATCHBAY_RESULT:\n"), None);
    }
}
