//! Who may use this server at all. On loopback it is open, as a desktop
//! tool is. Anywhere else the operator sets an access key (or explicitly
//! serves it open): then every request that changes something — creating,
//! importing or forking a graph, `/new`, saving, uploading, starting and
//! cancelling runs — needs the key, while reading a shared graph or run by
//! its link, or listing the graphs whose edit tokens one holds, does not.
//! Edit tokens still decide which graph a request may change; the key only
//! decides who may change anything.
//!
//! Browsers get the key the way Jupyter hands out its token: the operator
//! shares `/?key=…` once, the server answers with a cookie (a hash of the
//! key, `HttpOnly`, `SameSite=Strict`) and the same address without the
//! key. Programs send `X-Patchbay-Access-Key`.

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::capability::{hash_token, token_matches};
use crate::error::ApiError;
use crate::settings::Settings;
use crate::state::AppState;

/// The header programs send the key in.
pub const KEY_HEADER: &str = "x-patchbay-access-key";
const COOKIE_NAME: &str = "patchbay_access";
/// Shorter keys could be guessed.
pub const MIN_KEY_CHARACTERS: usize = 16;

/// Refuses settings that would expose the server to strangers by accident:
/// an address beyond loopback with no key, unless the operator said so.
pub fn check_exposure(settings: &Settings) -> Result<(), String> {
    if let Some(key) = &settings.access.key
        && key.chars().count() < MIN_KEY_CHARACTERS
    {
        return Err(format!(
            "the access key must have at least {MIN_KEY_CHARACTERS} characters (e.g. `openssl rand -hex 16`)"
        ));
    }
    if !settings.addr.ip().is_loopback() && settings.access.key.is_none() && !settings.access.open {
        return Err(format!(
            "refusing to serve on {}, beyond this machine, without an access key: anyone who reaches it could create graphs and start runs. Set PATCHBAY_ACCESS_KEY (or --access-key), or pass --open-access to serve it open on purpose",
            settings.addr
        ));
    }
    Ok(())
}

/// Posted, yet changing nothing: checking a document, and listing the
/// graphs whose edit tokens the caller holds (the home page).
const POSTED_READS: [&str; 3] = [
    "/api/validate",
    "/api/graphs/summaries",
    "/api/schedules/next",
];

/// Whether `request` changes something (and so needs the key).
fn changes_something(method: &Method, path: &str) -> bool {
    if path == "/new" {
        return true;
    }
    let reads = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let posted_read = *method == Method::POST && POSTED_READS.contains(&path);
    let own_capability =
        is_decision(path) || is_invoke(path) || is_hook(path) || path == CHAT_COMPLETIONS;
    !reads && !posted_read && !own_capability && !is_presence(path)
}

/// A graph called as an OpenAI-compatible model (PRODUCT §6.4), with a
/// run token as its API key, as `invoke` is.
const CHAT_COMPLETIONS: &str = "/v1/chat/completions";

/// Invoking a graph (`/api/graphs/{id}/invoke`) carries its own
/// capability, a run token its editors gave a program that has nothing
/// else of this server; it starts runs of that one graph only.
fn is_invoke(path: &str) -> bool {
    path.strip_prefix("/api/graphs/")
        .and_then(|rest| rest.strip_suffix("/invoke"))
        .is_some_and(|id| !id.contains('/'))
}

/// A webhook delivery (`/hooks/{trigger_id}`) carries its own capability,
/// the trigger's secret, which a sender outside knows and nothing else.
fn is_hook(path: &str) -> bool {
    path.strip_prefix("/hooks/")
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// Where a person is in a graph's room (`/api/graphs/{id}/presence`)
/// changes nothing stored: a visitor with the view link shows as a viewer.
fn is_presence(path: &str) -> bool {
    path.strip_prefix("/api/graphs/")
        .and_then(|rest| rest.strip_suffix("/presence"))
        .is_some_and(|id| !id.contains('/'))
}

/// A decision on an approval (`/api/runs/{id}/modules/{module}/decision`)
/// carries its own capability, an approver link given to someone who may
/// have nothing else of this server, and starts nothing new: the run it
/// continues was started with the key.
fn is_decision(path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/api/runs/") else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    matches!(parts.as_slice(), [_, "modules", _, "decision"])
}

/// The key's hash in the request's cookie, or the key in its header,
/// checked against the configured key. `None` when it carries neither.
fn presented(request: &Request, key: &str) -> Option<bool> {
    if let Some(sent) = request
        .headers()
        .get(KEY_HEADER)
        .and_then(|value| value.to_str().ok())
    {
        return Some(token_matches(sent.trim(), &hash_token(key)));
    }
    let cookie = request
        .headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == COOKIE_NAME).then(|| value.to_owned())
        })?;
    // The cookie holds the key's hash; compare hashes of both sides so the
    // comparison takes the same time whatever was sent.
    Some(token_matches(&cookie, &hash_token(&hash_token(key))))
}

/// A small page the server writes itself, in the app's colours: `text` is
/// HTML, written by this server, never taken from a request.
pub(crate) fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} · Patchbay</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <style>body {{ background: #16181d; color: #e4e6eb; font-family: system-ui, sans-serif; \
         max-width: 40em; margin: 4em auto; padding: 0 1em; line-height: 1.5 }} \
         code {{ background: #262a33; padding: 0 0.3em; border-radius: 3px }} a {{ color: #7aa2ff }}</style></head>\
         <body><h1>{title}</h1><p>{text}</p></body></html>\n"
    );
    (
        status,
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// `uri` without its `key` parameter.
fn without_key(uri: &Uri, query: &[(String, String)]) -> String {
    let rest: Vec<String> = query
        .iter()
        .filter(|(name, _)| name != "key")
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect();
    if rest.is_empty() {
        uri.path().to_owned()
    } else {
        format!("{}?{}", uri.path(), rest.join("&"))
    }
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// A page address carrying `?key=…`: the cookie, and the address without
/// the key (so it leaves the address bar and the history).
fn landing(request: &Request, key: &str) -> Option<Response> {
    if request.method() != Method::GET || request.uri().path().starts_with("/api/") {
        return None;
    }
    let Query(query) = Query::<Vec<(String, String)>>::try_from_uri(request.uri()).ok()?;
    let (_, sent) = query.iter().find(|(name, _)| name == "key")?;
    if !token_matches(sent, &hash_token(key)) {
        return Some(page(
            StatusCode::FORBIDDEN,
            "Wrong access key",
            "This link's access key is not this server's. Ask its operator for the current link.",
        ));
    }
    let cookie = format!(
        "{COOKIE_NAME}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000",
        hash_token(key)
    );
    Some(
        (
            StatusCode::SEE_OTHER,
            [
                (LOCATION, without_key(request.uri(), &query)),
                (SET_COOKIE, cookie),
                (CACHE_CONTROL, "no-store".to_owned()),
            ],
            Body::empty(),
        )
            .into_response(),
    )
}

/// The middleware in front of every route.
pub async fn require_key(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(key) = state.settings.access.key.as_deref() else {
        return next.run(request).await;
    };
    if let Some(response) = landing(&request, key) {
        return response;
    }
    if !changes_something(request.method(), request.uri().path()) {
        return next.run(request).await;
    }
    let verdict = presented(&request, key);
    if verdict == Some(true) {
        return next.run(request).await;
    }
    if request.uri().path().starts_with("/api/") {
        return match verdict {
            None => ApiError::AccessKeyRequired,
            Some(_) => ApiError::AccessKeyInvalid,
        }
        .into_response();
    }
    page(
        StatusCode::UNAUTHORIZED,
        "This server needs its access key",
        "Anyone may look at graphs and runs shared with them here, but creating a graph needs the access key. Open the link with <code>?key=…</code> that this server's operator gave you; this browser keeps it from then on.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_never_needs_the_key_and_changing_always_does() {
        assert!(!changes_something(&Method::GET, "/g/g_x"));
        assert!(!changes_something(&Method::GET, "/api/runs/r_x/events"));
        assert!(!changes_something(&Method::POST, "/api/validate"));
        assert!(changes_something(&Method::GET, "/new"));
        assert!(changes_something(&Method::POST, "/api/graphs"));
        assert!(changes_something(&Method::PUT, "/api/graphs/g_x"));
        assert!(changes_something(&Method::POST, "/api/runs/r_x/cancel"));
        // A run token is its own capability; making one needs the key.
        assert!(!changes_something(&Method::POST, "/api/graphs/g_x/invoke"));
        assert!(!changes_something(&Method::POST, "/v1/chat/completions"));
        assert!(changes_something(
            &Method::POST,
            "/api/graphs/g_x/run-tokens"
        ));
        assert!(changes_something(&Method::POST, "/api/graphs/g_x/y/invoke"));
        // So is a webhook's secret; making one needs the key.
        assert!(!changes_something(&Method::POST, "/hooks/daily"));
        assert!(changes_something(&Method::POST, "/hooks/daily/x"));
        assert!(changes_something(
            &Method::POST,
            "/api/graphs/g_x/triggers/daily/secret"
        ));
        assert!(!changes_something(&Method::POST, "/api/schedules/next"));
    }

    #[test]
    fn listing_the_graphs_a_browser_holds_needs_no_key() {
        assert!(!changes_something(&Method::POST, "/api/graphs/summaries"));
        assert!(!changes_something(&Method::GET, "/"));
        assert!(!changes_something(
            &Method::POST,
            "/api/runs/r_x/modules/approve/decision"
        ));
        assert!(changes_something(
            &Method::POST,
            "/api/runs/r_x/approver-links"
        ));
        assert!(changes_something(&Method::POST, "/api/runs/r_x/cancel"));
        // Neighbours that do change something still need it.
        assert!(changes_something(&Method::POST, "/api/graphs"));
        assert!(changes_something(&Method::POST, "/api/graphs/g_x/fork"));
        assert!(changes_something(&Method::PUT, "/api/graphs/summaries"));
    }

    #[test]
    fn exposure_beyond_loopback_needs_a_key_or_an_explicit_choice() {
        let mut settings = Settings::for_database("sqlite::memory:");
        assert!(check_exposure(&settings).is_ok(), "loopback stays open");
        settings.addr = "0.0.0.0:3000".parse().unwrap();
        let refusal = check_exposure(&settings).unwrap_err();
        assert!(refusal.contains("PATCHBAY_ACCESS_KEY"), "{refusal}");
        settings.access.open = true;
        assert!(check_exposure(&settings).is_ok());
        settings.access.open = false;
        settings.access.key = Some("short".to_owned());
        assert!(check_exposure(&settings).unwrap_err().contains("16"));
        settings.access.key = Some("a-long-enough-access-key".to_owned());
        assert!(check_exposure(&settings).is_ok());
    }

    #[test]
    fn the_key_leaves_the_address_and_the_rest_stays() {
        let uri: Uri = "/g/g_x?key=abc&run=r_1".parse().unwrap();
        let query = vec![
            ("key".to_owned(), "abc".to_owned()),
            ("run".to_owned(), "r_1".to_owned()),
        ];
        assert_eq!(without_key(&uri, &query), "/g/g_x?run=r_1");
    }
}
