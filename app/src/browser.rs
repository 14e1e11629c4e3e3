//! Small wrappers over the browser APIs the pages use: fetch and local
//! storage. Compiled for the browser only.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

fn describe(error: wasm_bindgen::JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            error
                .dyn_ref::<js_sys::Error>()
                .map(|error| String::from(error.message()))
        })
        .unwrap_or_else(|| "the request failed".to_owned())
}

/// Sends a request and returns the status and body text. A network failure
/// is an `Err`; an HTTP error status is not.
pub async fn fetch_text(
    method: &str,
    url: &str,
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let window = web_sys::window().ok_or("no window")?;
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    if let Some(body) = body {
        init.set_body(&wasm_bindgen::JsValue::from_str(body));
    }
    let request = web_sys::Request::new_with_str_and_init(url, &init).map_err(describe)?;
    let response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(describe)?;
    let response: web_sys::Response = response.dyn_into().map_err(describe)?;
    let text = JsFuture::from(response.text().map_err(describe)?)
        .await
        .map_err(describe)?;
    Ok((response.status(), text.as_string().unwrap_or_default()))
}

pub fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}
