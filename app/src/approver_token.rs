//! The approver capability of one run (PRODUCT §3.14), kept by the browser
//! that opened its approver link.
//!
//! An approver link is `/g/{id}/runs/{run_id}#approve=<token>`: the token is
//! in the fragment, which the browser never sends to the server. The run
//! page moves it into local storage (so a reload still decides) and takes it
//! out of the address bar, as the edit token's arrival does. It decides that
//! run's approvals and nothing else; the server checks that.

use crate::browser::local_storage;

const FRAGMENT_KEY: &str = "approve=";
const STORAGE_PREFIX: &str = "patchbay.approve.";

fn storage_key(run_id: &str) -> String {
    format!("{STORAGE_PREFIX}{run_id}")
}

/// The token an address fragment carries (`#approve=…`), if any.
pub fn from_fragment(fragment: &str) -> Option<&str> {
    fragment
        .trim_start_matches('#')
        .strip_prefix(FRAGMENT_KEY)
        .filter(|token| !token.is_empty())
}

/// Takes an approver token from the address bar if there is one, and says
/// whether this browser holds one for the run.
pub fn capture(run_id: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let fragment = window.location().hash().unwrap_or_default();
    let Some(token) = from_fragment(&fragment) else {
        return stored(run_id).is_some();
    };
    // Without storage the token only lives in this page: the address keeps it.
    let Some(storage) = local_storage() else {
        return true;
    };
    if storage.set_item(&storage_key(run_id), token).is_err() {
        return true;
    }
    if let Ok(history) = window.history() {
        let location = window.location();
        let address = format!(
            "{}{}",
            location.pathname().unwrap_or_default(),
            location.search().unwrap_or_default()
        );
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&address));
    }
    true
}

/// The run's approver token this browser holds: from storage, else (when
/// the browser keeps none) still in the address.
pub fn stored(run_id: &str) -> Option<String> {
    let kept = local_storage()
        .and_then(|storage| storage.get_item(&storage_key(run_id)).ok())
        .flatten();
    kept.or_else(|| {
        let fragment = web_sys::window()?.location().hash().ok()?;
        from_fragment(&fragment).map(str::to_owned)
    })
}

/// The header that lets this browser decide the run's approvals, when it
/// holds an approver token of the run.
pub fn authorization(run_id: &str) -> Option<(&'static str, String)> {
    stored(run_id).map(|token| ("Authorization", format!("Bearer {token}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_read_from_the_fragment_only_when_it_is_an_approver_link() {
        assert_eq!(from_fragment("#approve=abc"), Some("abc"));
        assert_eq!(from_fragment("approve=abc"), Some("abc"));
        assert_eq!(from_fragment("#approve="), None);
        assert_eq!(from_fragment("#edit=abc"), None);
        assert_eq!(from_fragment(""), None);
        assert_eq!(storage_key("r_1"), "patchbay.approve.r_1");
    }
}
