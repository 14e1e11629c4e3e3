//! The edit capability of a graph, kept by the browser that created it.
//!
//! The server returns the token once; `/new` hands it over in the redirect's
//! fragment (`/g/{id}#edit=…`), which never reaches a server log. The page
//! moves it into local storage and removes it from the address bar. The
//! tokens kept are this browser's list of its graphs (the home page).

use crate::browser::local_storage;

const FRAGMENT_KEY: &str = "edit=";
const STORAGE_PREFIX: &str = "patchbay.edit.";
/// Added to the fragment by "Fork and run": open the run dialog on arrival.
pub const RUN_ON_ARRIVAL: &str = "&run";

fn storage_key(graph_id: &str) -> String {
    format!("{STORAGE_PREFIX}{graph_id}")
}

/// The graph a storage key keeps the token of, if it is one.
fn graph_of_key(key: &str) -> Option<&str> {
    key.strip_prefix(STORAGE_PREFIX)
        .filter(|graph_id| !graph_id.is_empty())
}

/// What the address bar brought: whether this browser can edit the graph,
/// and whether it came to run it ("Fork and run").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    pub can_edit: bool,
    pub run: bool,
}

/// Takes a token from the address bar if there is one, and says whether this
/// browser can edit the graph.
pub fn capture(graph_id: &str) -> Arrival {
    let Some(window) = web_sys::window() else {
        return Arrival::default();
    };
    let fragment = window.location().hash().unwrap_or_default();
    let fragment = fragment.trim_start_matches('#');
    let (fragment, run) = match fragment.strip_suffix(RUN_ON_ARRIVAL) {
        Some(rest) => (rest, true),
        None => (fragment, false),
    };
    if let Some(token) = fragment.strip_prefix(FRAGMENT_KEY)
        && !token.is_empty()
    {
        // Without storage the token only lives in this page.
        if let Some(storage) = local_storage() {
            let _ = storage.set_item(&storage_key(graph_id), token);
        }
        if let Ok(history) = window.history() {
            // The query stays (`?run=…`: the run this page follows).
            let location = window.location();
            let address = format!(
                "{}{}",
                location.pathname().unwrap_or_default(),
                location.search().unwrap_or_default()
            );
            let _ =
                history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&address));
        }
        return Arrival {
            can_edit: true,
            run,
        };
    }
    Arrival {
        can_edit: stored(graph_id).is_some(),
        run: false,
    }
}

pub fn stored(graph_id: &str) -> Option<String> {
    local_storage()?
        .get_item(&storage_key(graph_id))
        .ok()
        .flatten()
}

/// Keeps the token of a graph this browser just made (a duplicate).
pub fn remember(graph_id: &str, token: &str) {
    if let Some(storage) = local_storage() {
        let _ = storage.set_item(&storage_key(graph_id), token);
    }
}

/// Every graph this browser holds the edit token of: (graph id, token).
pub fn held() -> Vec<(String, String)> {
    let Some(storage) = local_storage() else {
        return Vec::new();
    };
    let count = storage.length().unwrap_or(0);
    (0..count)
        .filter_map(|index| storage.key(index).ok().flatten())
        .filter_map(|key| {
            let graph_id = graph_of_key(&key)?.to_owned();
            let token = storage.get_item(&key).ok().flatten()?;
            Some((graph_id, token))
        })
        .collect()
}

/// Forgets a graph's token: this browser can no longer edit it (the graph
/// stays on the server).
pub fn forget(graph_id: &str) {
    if let Some(storage) = local_storage() {
        let _ = storage.remove_item(&storage_key(graph_id));
    }
}

/// The header that proves this browser edits the graph (saving, uploading,
/// starting, cancelling and listing runs), when it does.
pub fn authorization(graph_id: &str) -> Option<(&'static str, String)> {
    stored(graph_id).map(|token| ("Authorization", format!("Bearer {token}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_stored_per_graph() {
        assert_eq!(super::storage_key("g_abc"), "patchbay.edit.g_abc");
        assert_eq!(super::graph_of_key("patchbay.edit.g_abc"), Some("g_abc"));
        assert_eq!(super::graph_of_key("patchbay.draft.g_abc"), None);
        assert_eq!(super::graph_of_key("patchbay.edit."), None);
    }
}
