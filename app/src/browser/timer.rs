//! Timers and frame callbacks that live until they fire or are cleared, as
//! the browser's own do. Leptos' (0.9) are cancelled when the reactive owner
//! that set them is cleaned up: a save debounced from a field whose panel
//! re-renders on that very edit would never happen. A callback here may run
//! after the view that set it is gone (the canvas's read their signals with
//! `try_`; setting a disposed signal does nothing).

use std::time::Duration;

/// A pending `setTimeout`, to clear before it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer(i32);

impl Timer {
    /// Cancels the timer (nothing happens if it has fired).
    pub fn clear(self) {
        clear_handle(self.0);
    }
}

/// A running `setInterval`, to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeat(i32);

impl Repeat {
    /// Stops the interval.
    pub fn clear(self) {
        clear_handle(self.0);
    }
}

/// Clears a `setTimeout` or `setInterval` handle: the browser keeps both in
/// one list of timers, so either clear function clears either (HTML's
/// timer initialisation steps).
fn clear_handle(handle: i32) {
    #[cfg(feature = "hydrate")]
    if let Some(window) = web_sys::window() {
        window.clear_timeout_with_handle(handle);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = handle;
}

/// The browser takes a delay in whole milliseconds as a signed 32-bit
/// number, and clamps a longer one.
#[cfg(feature = "hydrate")]
fn milliseconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_millis()).unwrap_or(i32::MAX)
}

/// Runs `then` once, `after` from now. `None` where there is no window (on
/// the server, which never runs handlers).
pub fn run_after(then: impl FnOnce() + 'static, after: Duration) -> Option<Timer> {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        // The closure frees itself once called; a cleared timer's stays, as
        // with wasm-bindgen's every one-shot callback.
        let callback = wasm_bindgen::closure::Closure::once_into_js(then);
        web_sys::window()?
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                callback.unchecked_ref(),
                milliseconds(after),
            )
            .ok()
            .map(Timer)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (then, after);
        None
    }
}

/// Runs `then` after `after`, unless called again before: the timer kept
/// in `slot` is cleared and started anew (a save, validation or refresh a
/// moment after the last change; a layer made once the view is still).
pub fn restart_timeout(
    slot: leptos::prelude::StoredValue<Option<Timer>>,
    after: Duration,
    then: impl FnOnce() + 'static,
) {
    use leptos::prelude::{SetValue, UpdateValue};
    if let Some(previous) = slot.try_update_value(Option::take).flatten() {
        previous.clear();
    }
    slot.try_set_value(run_after(then, after));
}

/// Runs `then` before the browser paints its next frame.
pub fn next_frame(then: impl FnOnce() + 'static) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let callback = wasm_bindgen::closure::Closure::once_into_js(then);
        if let Some(window) = web_sys::window() {
            let _ = window.request_animation_frame(callback.unchecked_ref());
        }
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = then;
    }
}

/// Calls `tick` every `period` until the returned handle is cleared.
pub fn every(tick: impl Fn() + 'static, period: Duration) -> Option<Repeat> {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        // Kept for the page's life: an interval is cleared, not freed, and
        // there is one per run opened.
        let callback = wasm_bindgen::closure::Closure::<dyn Fn()>::new(tick).into_js_value();
        web_sys::window()?
            .set_interval_with_callback_and_timeout_and_arguments_0(
                callback.unchecked_ref(),
                milliseconds(period),
            )
            .ok()
            .map(Repeat)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (tick, period);
        None
    }
}
