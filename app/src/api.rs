//! The Patchbay API as the browser calls it (PRODUCT §6): each endpoint once,
//! with its method, its address, the credentials it takes and the `wire`
//! types it sends and answers. Callers only decide what an answer means to
//! the person; no other file builds an API address or reads an answer body.

use graph::Attachment;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wire::ActivationRecord;
use wire::approval::{ApproverLink, DecisionRequest};
use wire::error::ErrorDetail;
use wire::graphs::{GraphCreated, GraphSaved, Summaries, SummariesRequest};
use wire::providers::Catalogue;
use wire::run::{RunList, RunRecord, RunStarted, StartRun};

use crate::browser;
use crate::{approver_token, edit_token};

/// Why a call did not give what it asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum ApiError {
    /// No answer: the network or the server is down.
    Unreachable(String),
    /// An error status, with the server's error body when it sent one.
    Refused {
        status: u16,
        error: Option<ErrorDetail>,
    },
    /// A success status with a body that is not what the endpoint answers.
    Unreadable(String),
}

impl ApiError {
    /// The HTTP status of a refusal.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Refused { status, .. } => Some(*status),
            ApiError::Unreachable(_) | ApiError::Unreadable(_) => None,
        }
    }

    /// The server's error body, when it refused with one.
    pub fn detail(&self) -> Option<&ErrorDetail> {
        match self {
            ApiError::Refused { error, .. } => error.as_ref(),
            ApiError::Unreachable(_) | ApiError::Unreadable(_) => None,
        }
    }

    /// The server's own words, else `fallback`.
    pub fn message_or(&self, fallback: &str) -> String {
        self.detail()
            .map_or_else(|| fallback.to_owned(), |error| error.message.clone())
    }
}

pub type Answer<T> = Result<T, ApiError>;

type Header = (&'static str, String);

fn json_content() -> Header {
    ("Content-Type", "application/json".to_owned())
}

/// The graph's edit token, when this browser holds it; the server decides
/// what it allows.
fn credentials(graph_id: &str) -> Option<Header> {
    edit_token::authorization(graph_id)
}

/// Any 2xx is the endpoint's answer; anything else is a refusal.
fn answer_of(reply: Result<(u16, String), String>) -> Answer<String> {
    match reply {
        Err(message) => Err(ApiError::Unreachable(message)),
        Ok((status, text)) if (200..300).contains(&status) => Ok(text),
        Ok((status, text)) => Err(refusal(status, &text)),
    }
}

/// An error status and the body that came with it.
pub fn refusal(status: u16, body: &str) -> ApiError {
    ApiError::Refused {
        status,
        error: browser::api_error(body),
    }
}

async fn send(method: &str, url: &str, body: Option<&str>, headers: &[Header]) -> Answer<String> {
    answer_of(browser::fetch(method, url, body, headers).await)
}

fn read<T: DeserializeOwned>(text: &str) -> Answer<T> {
    serde_json::from_str(text).map_err(|error| ApiError::Unreadable(error.to_string()))
}

/// The address of a run's event stream (SSE), which the browser's
/// `EventSource` reads rather than `fetch`.
pub fn events_address(run_id: &str) -> String {
    format!("/api/runs/{run_id}/events")
}

/// The address of a graph's room stream (SSE, PRODUCT §3.16), starting
/// after the revision the page has.
pub fn room_address(graph_id: &str, since: i64) -> String {
    format!("/api/graphs/{graph_id}/room?since={since}")
}

/// `POST /api/graphs/{id}/changes`, with the edit token.
pub async fn send_changes(
    graph_id: &str,
    request: &wire::room::ChangeRequest,
) -> Answer<wire::room::ChangeAccepted> {
    let body = serde_json::to_string(request).map_err(|error| {
        ApiError::Unreadable(format!("the change could not be written: {error}"))
    })?;
    let mut headers = vec![json_content()];
    headers.extend(credentials(graph_id));
    let url = format!("/api/graphs/{graph_id}/changes");
    read(&send("POST", &url, Some(&body), &headers).await?)
}

/// `POST /api/graphs/{id}/presence`: with the edit token when this browser
/// holds it (the person shows as an editor).
pub async fn say_presence(graph_id: &str, update: &wire::room::PresenceUpdate) -> Answer<()> {
    let body = serde_json::to_string(update).map_err(|error| {
        ApiError::Unreadable(format!("the presence could not be written: {error}"))
    })?;
    let mut headers = vec![json_content()];
    headers.extend(credentials(graph_id));
    let url = format!("/api/graphs/{graph_id}/presence");
    send("POST", &url, Some(&body), &headers).await.map(|_| ())
}

/// Where an attachment is downloaded from.
pub fn attachment_address(attachment_id: &str) -> String {
    format!("/api/attachments/{attachment_id}")
}

/// `GET /api/providers`: the providers and coding agents the server offers.
pub async fn providers() -> Answer<Catalogue> {
    read(&send("GET", "/api/providers", None, &[]).await?)
}

/// `GET /api/graphs/{id}`: the document as saved, as text (the caller
/// migrates it as it loads it).
pub async fn graph_text(graph_id: &str) -> Answer<String> {
    send("GET", &format!("/api/graphs/{graph_id}"), None, &[]).await
}

/// `POST /api/graphs`: a new graph from a document; the reply carries its
/// edit token, once.
pub async fn create_graph(document: &str) -> Answer<GraphCreated> {
    read(&send("POST", "/api/graphs", Some(document), &[json_content()]).await?)
}

/// `PUT /api/graphs/{id}` over `revision` (`If-Match`), with the edit token.
pub async fn save_graph(graph_id: &str, document: &str, revision: u64) -> Answer<GraphSaved> {
    let mut headers = vec![json_content(), ("If-Match", format!("\"{revision}\""))];
    headers.extend(credentials(graph_id));
    let url = format!("/api/graphs/{graph_id}");
    read(&send("PUT", &url, Some(document), &headers).await?)
}

/// `POST /api/graphs/{id}/fork`: a copy with its own edit token.
pub async fn fork_graph(graph_id: &str) -> Answer<GraphCreated> {
    read(&send("POST", &format!("/api/graphs/{graph_id}/fork"), None, &[]).await?)
}

/// `POST /api/graphs/summaries`: what the home page shows of held graphs.
pub async fn summaries(request: &SummariesRequest) -> Answer<Summaries> {
    let body = serde_json::to_string(request).map_err(|error| {
        ApiError::Unreadable(format!("the request could not be written: {error}"))
    })?;
    read(
        &send(
            "POST",
            "/api/graphs/summaries",
            Some(&body),
            &[json_content()],
        )
        .await?,
    )
}

/// `POST /api/graphs/{id}/attachments`: a file for a module's prompt.
pub async fn attach(graph_id: &str, file: &web_sys::File) -> Answer<Attachment> {
    let media_type = if file.type_().is_empty() {
        "application/octet-stream".to_owned()
    } else {
        file.type_()
    };
    let mut headers = vec![
        ("Content-Type", media_type),
        (
            "X-Filename",
            js_sys::encode_uri_component(&file.name()).into(),
        ),
    ];
    headers.extend(credentials(graph_id));
    let url = format!("/api/graphs/{graph_id}/attachments");
    read(&answer_of(browser::upload(&url, file, &headers).await)?)
}

/// `POST /api/graphs/{id}/runs`: starts a run of the saved graph.
pub async fn start_run(graph_id: &str, start: &StartRun) -> Answer<RunStarted> {
    let body = serde_json::to_string(start).map_err(|error| {
        ApiError::Unreadable(format!("the request could not be written: {error}"))
    })?;
    let mut headers = vec![json_content()];
    headers.extend(credentials(graph_id));
    let url = format!("/api/graphs/{graph_id}/runs");
    read(&send("POST", &url, Some(&body), &headers).await?)
}

/// `GET /api/graphs/{id}/runs`: the graph's run history, for its editors.
pub async fn runs_of_graph(graph_id: &str) -> Answer<RunList> {
    read(&graph_runs(graph_id).await?)
}

/// The same list with how each run started, for the run history (its
/// own function so that only the history's part reads `started_by`).
pub async fn run_history(
    graph_id: &str,
) -> Answer<RunList<wire::run::WithStartedBy<wire::RunSummary>>> {
    read(&graph_runs(graph_id).await?)
}

async fn graph_runs(graph_id: &str) -> Answer<String> {
    let headers: Vec<Header> = credentials(graph_id).into_iter().collect();
    send(
        "GET",
        &format!("/api/graphs/{graph_id}/runs"),
        None,
        &headers,
    )
    .await
}

/// `GET /api/graphs/{id}/revisions`: a page of the graph's history, newest
/// first (those before `before`), for its editors.
pub async fn revisions(graph_id: &str, before: Option<i64>) -> Answer<wire::graphs::RevisionList> {
    let headers: Vec<Header> = credentials(graph_id).into_iter().collect();
    let page = before.map_or_else(String::new, |before| format!("?before={before}"));
    read(
        &send(
            "GET",
            &format!("/api/graphs/{graph_id}/revisions{page}"),
            None,
            &headers,
        )
        .await?,
    )
}

/// `GET /api/graphs/{id}/revisions/{revision}`: that revision's document,
/// as text, for its editors.
pub async fn revision(graph_id: &str, revision: i64) -> Answer<String> {
    let headers: Vec<Header> = credentials(graph_id).into_iter().collect();
    send(
        "GET",
        &format!("/api/graphs/{graph_id}/revisions/{revision}"),
        None,
        &headers,
    )
    .await
}

/// `GET /api/graphs/{id}/estimate`: what a run may cost, from past runs.
pub async fn estimate(graph_id: &str) -> Answer<wire::cost::Estimate> {
    let headers: Vec<Header> = credentials(graph_id).into_iter().collect();
    read(
        &send(
            "GET",
            &format!("/api/graphs/{graph_id}/estimate"),
            None,
            &headers,
        )
        .await?,
    )
}

/// `GET /api/runs/{id}`: a run's whole record.
pub async fn run(run_id: &str) -> Answer<RunRecord> {
    read(&send("GET", &format!("/api/runs/{run_id}"), None, &[]).await?)
}

/// `POST /api/runs/{id}/cancel`, with the edit token of the run's graph.
pub async fn cancel_run(graph_id: &str, run_id: &str) -> Answer<()> {
    let mut headers = vec![json_content()];
    headers.extend(credentials(graph_id));
    let url = format!("/api/runs/{run_id}/cancel");
    send("POST", &url, Some("{}"), &headers).await.map(drop)
}

/// Who may decide on a run's approvals from this browser: the graph's
/// editor (its edit token), else an approver link of the run.
fn decision_credentials(graph_id: Option<&str>, run_id: &str) -> Option<Header> {
    graph_id
        .and_then(credentials)
        .or_else(|| approver_token::authorization(run_id))
}

/// `POST /api/runs/{id}/modules/{module_id}/decision`: a person's decision
/// on a waiting approval; the answer is the activation as decided.
pub async fn decide(
    graph_id: Option<&str>,
    run_id: &str,
    module_id: &str,
    decision: &DecisionRequest,
) -> Answer<ActivationRecord> {
    let body = serde_json::to_string(decision).map_err(|error| {
        ApiError::Unreadable(format!("the request could not be written: {error}"))
    })?;
    let mut headers = vec![json_content()];
    headers.extend(decision_credentials(graph_id, run_id));
    let url = format!("/api/runs/{run_id}/modules/{module_id}/decision");
    read(&send("POST", &url, Some(&body), &headers).await?)
}

/// `POST /api/runs/{id}/approver-links`, with the edit token of the run's
/// graph: a link that decides the run's approvals and nothing else.
pub async fn make_approver_link(graph_id: &str, run_id: &str) -> Answer<ApproverLink> {
    let mut headers = vec![json_content()];
    headers.extend(credentials(graph_id));
    let url = format!("/api/runs/{run_id}/approver-links");
    read(&send("POST", &url, Some("{}"), &headers).await?)
}

/// `POST /api/graphs/{id}/triggers/{trigger_id}/secret`, with the edit
/// token: a webhook's new secret, shown this once.
pub async fn make_trigger_secret(
    graph_id: &str,
    trigger_id: &str,
) -> Answer<wire::triggers::TriggerSecretMade> {
    let mut headers = vec![json_content()];
    headers.extend(credentials(graph_id));
    let url = format!("/api/graphs/{graph_id}/triggers/{trigger_id}/secret");
    read(&send("POST", &url, Some("{}"), &headers).await?)
}

/// `POST /api/schedules/next`: when a schedule would fall, or which of its
/// fields the server cannot read.
pub async fn schedule_times(
    request: &wire::triggers::NextTimesRequest,
) -> Answer<wire::triggers::NextTimes> {
    let body = serde_json::to_string(request).map_err(|error| {
        ApiError::Unreadable(format!("the request could not be written: {error}"))
    })?;
    read(
        &send(
            "POST",
            "/api/schedules/next",
            Some(&body),
            &[json_content()],
        )
        .await?,
    )
}

/// The value of a JSON answer read loosely (a graph document to edit one
/// field of, keeping every other as the server has it).
pub fn document_value(text: &str) -> Answer<Value> {
    read(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_success_status_is_the_answer_and_an_error_status_a_refusal_with_the_servers_words() {
        assert_eq!(answer_of(Ok((201, "{}".to_owned()))), Ok("{}".to_owned()));
        let refused = answer_of(Ok((
            409,
            r#"{"error":{"code":"revision_conflict","message":"Saved meanwhile","details":{"current_revision":4}}}"#
                .to_owned(),
        )))
        .unwrap_err();
        assert_eq!(refused.status(), Some(409));
        assert_eq!(refused.message_or("fallback"), "Saved meanwhile");
        let detail = refused.detail().unwrap();
        assert_eq!(detail.code, "revision_conflict");
        let bare = answer_of(Ok((502, "Bad gateway".to_owned()))).unwrap_err();
        assert_eq!(bare.status(), Some(502));
        assert_eq!(bare.message_or("the server refused"), "the server refused");
        let down = answer_of(Err("offline".to_owned())).unwrap_err();
        assert_eq!(down, ApiError::Unreachable("offline".to_owned()));
        assert_eq!(down.status(), None);
    }

    #[test]
    fn an_answer_that_is_not_the_endpoints_type_is_unreadable() {
        assert!(matches!(
            read::<RunStarted>(r#"{"nothing": true}"#),
            Err(ApiError::Unreadable(_))
        ));
    }
}
