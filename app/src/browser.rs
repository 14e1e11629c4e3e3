//! Small wrappers over the browser APIs the pages use: fetch, navigation and
//! local storage. On the server (which renders pages but never runs their
//! handlers) they answer "not in a browser".

mod event_stream;
mod timer;
pub use event_stream::EventStream;
pub use timer::{Repeat, Timer, every, next_frame, restart_timeout, run_after};

/// An API error answer (`{"error": {code, message, details}}`), if the
/// body is one.
pub fn api_error(body: &str) -> Option<wire::error::ErrorDetail> {
    serde_json::from_str::<wire::error::ErrorBody>(body)
        .ok()
        .map(|body| body.error)
}

/// The `error.message` of an API error answer, if the body is one.
pub fn error_message(body: &str) -> Option<String> {
    api_error(body).map(|error| error.message)
}

/// Sends a request and returns the status and body text. A network failure
/// is an `Err`; an HTTP error status is not.
pub async fn fetch(
    method: &str,
    url: &str,
    body: Option<&str>,
    headers: &[(&str, String)],
) -> Result<(u16, String), String> {
    #[cfg(feature = "hydrate")]
    {
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

        let window = web_sys::window().ok_or("no window")?;
        let init = web_sys::RequestInit::new();
        init.set_method(method);
        let request_headers = web_sys::Headers::new().map_err(describe)?;
        for (name, value) in headers {
            request_headers.set(name, value).map_err(describe)?;
        }
        init.set_headers(&request_headers);
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
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (method, url, body, headers);
        Err("not in a browser".to_owned())
    }
}

/// Uploads bytes (a file) with a content type; returns status and body.
pub async fn upload(
    url: &str,
    file: &web_sys::File,
    headers: &[(&str, String)],
) -> Result<(u16, String), String> {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        use wasm_bindgen_futures::JsFuture;

        let describe = |error: wasm_bindgen::JsValue| {
            error
                .as_string()
                .unwrap_or_else(|| "the upload failed".to_owned())
        };
        let window = web_sys::window().ok_or("no window")?;
        let init = web_sys::RequestInit::new();
        init.set_method("POST");
        let request_headers = web_sys::Headers::new().map_err(describe)?;
        for (name, value) in headers {
            request_headers.set(name, value).map_err(describe)?;
        }
        init.set_headers(&request_headers);
        init.set_body(file);
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
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (url, file, headers);
        Err("not in a browser".to_owned())
    }
}

pub fn local_storage() -> Option<web_sys::Storage> {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()?.local_storage().ok()?
    }
    #[cfg(not(feature = "hydrate"))]
    {
        None
    }
}

/// Gives the keyboard focus to the first element matching `selector`, if
/// there is one.
pub fn focus(selector: &str) {
    if let Some(element) = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.query_selector(selector).ok().flatten())
        .and_then(|element| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element).ok())
    {
        let _ = element.focus();
    }
}

/// Goes to another page.
pub fn navigate(url: &str) {
    if let Some(window) = web_sys::window() {
        let _ = window.location().assign(url);
    }
}

/// Awaits a JS promise (in the browser; elsewhere it fails).
pub async fn await_promise(
    promise: js_sys::Promise,
) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
    #[cfg(feature = "hydrate")]
    {
        wasm_bindgen_futures::JsFuture::from(promise).await
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = promise;
        Err(wasm_bindgen::JsValue::NULL)
    }
}

/// The text of a chosen file.
pub async fn read_text(file: &web_sys::File) -> Result<String, String> {
    let text = await_promise(file.text())
        .await
        .map_err(|_| "the browser could not read the file".to_owned())?;
    text.as_string()
        .ok_or_else(|| "the file is not text".to_owned())
}

/// The files chosen in the file input an event came from, and that input
/// (to clear it, so that choosing the same file again is a change).
pub fn chosen_files(
    event: &web_sys::Event,
) -> Option<(web_sys::HtmlInputElement, Vec<web_sys::File>)> {
    use wasm_bindgen::JsCast;
    let input = event
        .target()?
        .dyn_into::<web_sys::HtmlInputElement>()
        .ok()?;
    let list = input.files()?;
    let files = (0..list.length())
        .filter_map(|position| list.get(position))
        .collect();
    Some((input, files))
}

/// Text in lower case, as the browser lowers it (Unicode-aware): in the
/// browser through JavaScript, which spares the bundle Rust's case tables.
pub fn lowercase(text: &str) -> String {
    #[cfg(feature = "hydrate")]
    {
        String::from(js_sys::JsString::from(text).to_lower_case())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        text.to_lowercase()
    }
}

/// The bytes of a chosen file.
pub async fn read_bytes(file: &web_sys::File) -> Result<Vec<u8>, String> {
    let buffer = await_promise(file.array_buffer())
        .await
        .map_err(|_| "the browser could not read the file".to_owned())?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Offers text as a file download.
pub fn download(file_name: &str, media_type: &str, text: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;

    let describe = |_| "the browser refused".to_owned();
    let document = web_sys::window()
        .and_then(|window| window.document())
        .ok_or("no document")?;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(media_type);
    let blob =
        web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).map_err(describe)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(describe)?;
    let anchor: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(describe)?
        .dyn_into()
        .map_err(|_| "no link element".to_owned())?;
    anchor.set_href(&url);
    anchor.set_download(file_name);
    anchor.click();
    // The download has its own copy once it started.
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// A Unix-milliseconds instant as this person reads a date and time
/// ("22 Nov 2026, 21:10" or "Nov 22, 2026, 9:10 PM", by their browser's
/// language and time zone), and as an ISO 8601 instant for `<time>`.
pub fn local_date_time(milliseconds: i64) -> (String, String) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsValue;
        // Beyond what a JS Date holds, `toISOString` throws.
        if milliseconds.unsigned_abs() > 8_640_000_000_000_000 {
            return ("an unknown time".to_owned(), String::new());
        }
        let date = js_sys::Date::new(&JsValue::from_f64(milliseconds as f64));
        let options = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&options, &"dateStyle".into(), &"medium".into());
        let _ = js_sys::Reflect::set(&options, &"timeStyle".into(), &"short".into());
        let language = web_sys::window()
            .and_then(|window| window.navigator().language())
            .unwrap_or_else(|| "en".to_owned());
        (
            String::from(date.to_locale_string(&language, &options)),
            String::from(date.to_iso_string()),
        )
    }
    #[cfg(not(feature = "hydrate"))]
    {
        (milliseconds.to_string(), String::new())
    }
}

/// A pause in the browser (on the server it returns at once).
pub async fn sleep(duration: std::time::Duration) {
    let (sender, receiver) = futures_channel::oneshot::channel::<()>();
    run_after(
        move || {
            let _ = sender.send(());
        },
        duration,
    );
    let _ = receiver.await;
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_api_error_gives_its_message_and_anything_else_none() {
        assert_eq!(
            super::error_message(
                r#"{"error": {"code": "graph.too_large", "message": "Too big."}}"#
            )
            .as_deref(),
            Some("Too big.")
        );
        assert_eq!(super::error_message("<html>502</html>"), None);
        assert_eq!(super::error_message(r#"{"id": "r_1"}"#), None);
    }
}
