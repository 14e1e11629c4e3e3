//! Mounting a long list a batch per animation frame, so that what comes
//! into view is never one long frame of mounting.

use std::sync::Arc;

use leptos::prelude::*;

/// A list that follows `wanted`, dropping at once what leaves it but adding
/// at most `per_frame` new items each animation frame.
pub fn batched<T>(
    wanted: Memo<Vec<T>>,
    per_frame: usize,
    key: fn(&T) -> Arc<str>,
) -> RwSignal<Vec<T>>
where
    T: Clone + PartialEq + Send + Sync + 'static,
{
    fn catch_up<T>(
        wanted: Memo<Vec<T>>,
        drawn: RwSignal<Vec<T>>,
        busy: StoredValue<bool>,
        per_frame: usize,
        key: fn(&T) -> Arc<str>,
    ) where
        T: Clone + PartialEq + Send + Sync + 'static,
    {
        let shown: std::collections::HashSet<Arc<str>> =
            drawn.with_untracked(|drawn| drawn.iter().map(key).collect());
        let mut budget = per_frame;
        let mut complete = true;
        let next: Vec<T> = wanted.with_untracked(|wanted| {
            wanted
                .iter()
                .filter(|item| {
                    if shown.contains(&key(item)) {
                        return true;
                    }
                    if budget > 0 {
                        budget -= 1;
                        true
                    } else {
                        complete = false;
                        false
                    }
                })
                .cloned()
                .collect()
        });
        if drawn.with_untracked(|drawn| *drawn != next) {
            drawn.set(next);
        }
        if complete {
            busy.set_value(false);
        } else {
            crate::browser::next_frame(move || catch_up(wanted, drawn, busy, per_frame, key));
        }
    }
    // At first everything wanted: hydration must find what the server drew.
    let drawn = RwSignal::new(wanted.get_untracked());
    let busy = StoredValue::new(false);
    Effect::new(move |_| {
        wanted.track();
        if !busy.get_value() {
            busy.set_value(true);
            catch_up(wanted, drawn, busy, per_frame, key);
        }
    });
    drawn
}
