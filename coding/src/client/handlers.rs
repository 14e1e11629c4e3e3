//! The agent's requests to the client: its file reads and writes, confined
//! to the workspace, and its permission requests, answered by the profile's
//! policy. Each leaves a note in the turn in flight.

use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    PermissionOptionKind, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, ToolKind,
    WriteTextFileRequest, WriteTextFileResponse,
};
use serde_json::Value;
use tokio::sync::mpsc;

use super::turn::TurnEvent;
use crate::confine::{Confinement, FileProblem};
use crate::profile::PermissionPolicy;

/// Where the notes of the builder's handlers go: the turn in flight.
pub(super) type NoteSink = Arc<Mutex<Option<mpsc::UnboundedSender<TurnEvent>>>>;

pub(super) fn note(sink: &NoteSink, text: String) {
    if let Ok(sink) = sink.lock()
        && let Some(sender) = sink.as_ref()
    {
        let _ = sender.send(TurnEvent::Note(text));
    }
}

pub(super) fn answer_permission(
    request: RequestPermissionRequest,
    responder: Responder<RequestPermissionResponse>,
    policy: PermissionPolicy,
    commands_enabled: bool,
    confinement: &Confinement,
    sink: &NoteSink,
) -> Result<(), agent_client_protocol::Error> {
    let (outcome, said) = decide_permission(policy, commands_enabled, &request, confinement);
    note(sink, said);
    responder.respond(RequestPermissionResponse::new(outcome))
}

pub(super) async fn read_text_file(
    request: ReadTextFileRequest,
    responder: Responder<ReadTextFileResponse>,
    confinement: &Confinement,
    sink: &NoteSink,
) -> Result<(), agent_client_protocol::Error> {
    match confinement.read(&request.path).await {
        Ok(text) => {
            let text = slice_lines(&text, request.line, request.limit);
            note(sink, format!("read {}", request.path.display()));
            responder.respond(ReadTextFileResponse::new(text))
        }
        // ACP's own code for a missing file, so an agent can tell
        // "create it" from "cannot read it".
        Err(FileProblem::NotFound(_)) => responder.respond_with_error(
            agent_client_protocol::v1::schema::Error::resource_not_found(Some(
                request.path.display().to_string(),
            ))
            .into(),
        ),
        Err(problem) => {
            let reason = problem.to_string();
            note(sink, format!("refused to read: {reason}"));
            responder.respond_with_error(
                agent_client_protocol::Error::invalid_params().data(Value::String(reason)),
            )
        }
    }
}

pub(super) async fn write_text_file(
    request: WriteTextFileRequest,
    responder: Responder<WriteTextFileResponse>,
    confinement: &Confinement,
    sink: &NoteSink,
) -> Result<(), agent_client_protocol::Error> {
    match confinement.write(&request.path, &request.content).await {
        Ok(()) => {
            note(sink, format!("wrote {}", request.path.display()));
            responder.respond(WriteTextFileResponse::new())
        }
        Err(problem) => {
            let reason = problem.to_string();
            note(sink, format!("refused to write: {reason}"));
            responder.respond_with_error(
                agent_client_protocol::Error::invalid_params().data(Value::String(reason)),
            )
        }
    }
}

/// `line` is 1-based; `limit` counts lines.
fn slice_lines(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return text.to_owned();
    }
    let skip = line.map_or(0, |line| line.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |limit| limit as usize);
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

/// The profile's answer to a permission request, and a line saying it.
/// Executing something needs the operator's switch as well as the policy.
fn decide_permission(
    policy: PermissionPolicy,
    commands_enabled: bool,
    request: &RequestPermissionRequest,
    confinement: &Confinement,
) -> (RequestPermissionOutcome, String) {
    let fields = &request.tool_call.fields;
    let kind = fields.kind.unwrap_or_default();
    let title = fields
        .title
        .clone()
        .unwrap_or_else(|| "a tool call".to_owned());
    // The same test as the file methods: `..`, other folders and links out
    // of the workspace are all outside.
    let inside = fields.locations.as_ref().is_none_or(|locations| {
        locations
            .iter()
            .all(|location| confinement.resolve(&location.path).is_ok())
    });
    let operator_refuses = kind == ToolKind::Execute && !commands_enabled;
    let allowed = !operator_refuses
        && match policy {
            PermissionPolicy::RejectAll => false,
            PermissionPolicy::AllowAll => true,
            PermissionPolicy::WorkspaceEdits => {
                matches!(
                    kind,
                    ToolKind::Edit | ToolKind::Read | ToolKind::Search | ToolKind::Think
                ) && inside
            }
            PermissionPolicy::WorkspaceEditsAndCommands => {
                matches!(
                    kind,
                    ToolKind::Edit
                        | ToolKind::Read
                        | ToolKind::Search
                        | ToolKind::Think
                        | ToolKind::Execute
                ) && inside
            }
        };
    let wanted: &[PermissionOptionKind] = if allowed {
        &[
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    let option = wanted.iter().find_map(|wanted| {
        request
            .options
            .iter()
            .find(|option| option.kind == *wanted)
            .map(|option| option.option_id.clone())
    });
    let verdict = match (allowed, operator_refuses) {
        (true, _) => "allowed",
        (false, true) => "refused (this server does not run commands)",
        (false, false) => "refused",
    };
    match option {
        Some(option) => (
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option)),
            format!("permission {verdict}: {title}"),
        ),
        None => (
            RequestPermissionOutcome::Cancelled,
            format!("permission {verdict} (no matching option, so cancelled): {title}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use agent_client_protocol::v1::schema::{
        PermissionOption, ToolCallLocation, ToolCallUpdate, ToolCallUpdateFields,
    };

    /// Whether the default policy allows an edit of `path`.
    fn edit_allowed(confinement: &Confinement, path: &Path) -> bool {
        let request = RequestPermissionRequest::new(
            "s",
            ToolCallUpdate::new(
                "t",
                ToolCallUpdateFields::new()
                    .kind(ToolKind::Edit)
                    .title("Write".to_owned())
                    .locations(vec![ToolCallLocation::new(path)]),
            ),
            vec![
                PermissionOption::new("yes", "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new("no", "Reject", PermissionOptionKind::RejectOnce),
            ],
        );
        let (outcome, _) = decide_permission(
            PermissionPolicy::WorkspaceEdits,
            false,
            &request,
            confinement,
        );
        match outcome {
            RequestPermissionOutcome::Selected(selected) => selected.option_id.to_string() == "yes",
            _ => false,
        }
    }

    #[test]
    fn edits_are_allowed_inside_the_workspace_only_links_included() {
        let workspace = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), workspace.path().join("out")).unwrap();
        let confinement = Confinement::new(workspace.path()).unwrap();
        assert!(edit_allowed(&confinement, Path::new("src/main.rs")));
        assert!(edit_allowed(
            &confinement,
            &workspace.path().join("README.md")
        ));
        assert!(!edit_allowed(&confinement, Path::new("../x")));
        assert!(!edit_allowed(&confinement, &elsewhere.path().join("x")));
        // Lexically inside, really outside.
        assert!(!edit_allowed(&confinement, Path::new("out/x.txt")));
    }

    #[test]
    fn line_slices_follow_the_acp_meaning() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(slice_lines(text, None, None), text);
        assert_eq!(slice_lines(text, Some(2), None), "two\nthree\n");
        assert_eq!(slice_lines(text, Some(1), Some(1)), "one\n");
    }
}
