//! Mounting a long list a batch per animation frame, so that what comes
//! into view is never one long frame of mounting.

use std::sync::Arc;

use leptos::prelude::*;

/// A list that follows `wanted`, dropping at once what leaves it but adding
/// at most `per_frame` new items each animation frame, or `first` before
/// the list's first frame: that is the page loading, where frames between
/// batches would only put off the moment the whole view shows, and show
/// it in pieces.
pub fn batched<T>(
    wanted: Memo<Vec<T>>,
    first: usize,
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
        budget: usize,
        per_frame: usize,
        key: fn(&T) -> Arc<str>,
    ) where
        T: Clone + PartialEq + Send + Sync + 'static,
    {
        let (next, complete) = drawn.with_untracked(|drawn| {
            wanted.with_untracked(|wanted| next_batch(wanted, drawn, budget, key))
        });
        if drawn.with_untracked(|drawn| *drawn != next) {
            drawn.set(next);
        }
        if complete {
            busy.set_value(false);
        } else {
            crate::browser::next_frame(move || {
                catch_up(wanted, drawn, busy, per_frame, per_frame, key);
            });
        }
    }
    // At first everything wanted: hydration must find what the server drew.
    let drawn = RwSignal::new(wanted.get_untracked());
    let busy = StoredValue::new(false);
    let loading = StoredValue::new(true);
    crate::browser::next_frame(move || loading.set_value(false));
    Effect::new(move |_| {
        wanted.track();
        if !busy.get_value() {
            busy.set_value(true);
            let budget = if loading.get_value() {
                first
            } else {
                per_frame
            };
            catch_up(wanted, drawn, busy, budget, per_frame, key);
        }
    });
    drawn
}

/// What is drawn after one more batch: `wanted`, in its order, but for the
/// items not yet `drawn` beyond the first `budget` of them; and whether
/// that is all of `wanted`.
fn next_batch<T: Clone>(
    wanted: &[T],
    drawn: &[T],
    mut budget: usize,
    key: fn(&T) -> Arc<str>,
) -> (Vec<T>, bool) {
    let shown: std::collections::HashSet<Arc<str>> = drawn.iter().map(key).collect();
    let mut complete = true;
    let next = wanted
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
        .collect();
    (next, complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(item: &Arc<str>) -> Arc<str> {
        Arc::clone(item)
    }

    fn items(names: &str) -> Vec<Arc<str>> {
        names.split_whitespace().map(Arc::from).collect()
    }

    #[test]
    fn a_batch_adds_at_most_its_budget_in_order_and_drops_what_left_at_once() {
        let wanted = items("a b c d e");
        let (next, complete) = next_batch(&wanted, &items("b x"), 2, key);
        assert_eq!(next, items("a b c"));
        assert!(!complete);
        let (next, complete) = next_batch(&wanted, &next, 2, key);
        assert_eq!(next, items("a b c d e"));
        assert!(complete);
    }

    #[test]
    fn an_unbounded_first_batch_draws_everything_wanted_at_once() {
        let wanted = items("a b c d e");
        assert_eq!(next_batch(&wanted, &[], usize::MAX, key), (wanted, true));
    }
}
