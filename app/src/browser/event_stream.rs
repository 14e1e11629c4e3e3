//! A server-sent event stream (`EventSource`) with its callbacks, closed
//! when dropped. The browser reconnects by itself after a network drop;
//! when it gives up, `on_error` hears `true` and the owner decides.

/// An open event stream and the callbacks it calls.
pub struct EventStream {
    #[cfg(feature = "hydrate")]
    source: web_sys::EventSource,
    #[cfg(feature = "hydrate")]
    _callbacks: Vec<wasm_bindgen::closure::Closure<dyn FnMut(web_sys::MessageEvent)>>,
    #[cfg(feature = "hydrate")]
    _on_error: wasm_bindgen::closure::Closure<dyn FnMut(web_sys::Event)>,
}

impl EventStream {
    /// Opens `address`; `on_event` gets each event of these `names` (an
    /// `EventSource` delivers named events only to listeners for that name)
    /// with its data. `None` where there is no browser.
    pub fn open(
        address: &str,
        names: &[&'static str],
        on_event: impl Fn(&'static str, String) + Clone + 'static,
        on_error: impl Fn(bool) + 'static,
    ) -> Option<EventStream> {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let source = web_sys::EventSource::new(address).ok()?;
            let mut callbacks = Vec::new();
            for name in names {
                let name = *name;
                let on_event = on_event.clone();
                let callback =
                    wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                        move |message: web_sys::MessageEvent| {
                            on_event(name, message.data().as_string().unwrap_or_default());
                        },
                    );
                let _ = source
                    .add_event_listener_with_callback(name, callback.as_ref().unchecked_ref());
                callbacks.push(callback);
            }
            let watched = source.clone();
            let on_error = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(
                // CLOSED (2): the browser stopped retrying.
                move |_event: web_sys::Event| on_error(watched.ready_state() == 2),
            );
            source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            Some(EventStream {
                source,
                _callbacks: callbacks,
                _on_error: on_error,
            })
        }
        #[cfg(not(feature = "hydrate"))]
        {
            let _ = (address, names, on_event, on_error);
            None
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        #[cfg(feature = "hydrate")]
        self.source.close();
    }
}
