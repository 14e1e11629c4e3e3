//! The run panel's "Run state" view (PRODUCT §3.5): every key of the run's
//! state and its value, as `GET /api/runs/{id}` has them, refreshed as the
//! run goes.

use leptos::prelude::*;

use crate::run::RunView;

/// Values longer than this are cut in the table; the cell's title has them
/// whole.
const SHOWN_CHARACTERS: usize = 300;

fn shown(value: &str) -> String {
    match value.char_indices().nth(SHOWN_CHARACTERS) {
        Some((end, _)) => format!("{}…", &value[..end]),
        None => value.to_owned(),
    }
}

#[component]
pub fn RunStateView(view_state: RunView) -> impl IntoView {
    let rows = Memo::new(move |_| {
        view_state.record.with(|record| {
            record
                .as_ref()
                .map(|record| {
                    record
                        .state
                        .iter()
                        .map(|(key, value)| (key.clone(), value.clone()))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    view! {
        <div class="run-module run-state">
            <p class="hint">
                "What every module wrote: "<code>"{{ <label>.output }}"</code>" and the other keys in a prompt read from here; "
                <code>"prev."</code>" keys are a module's attempt before its last; "<code>".set."</code>" keys are what a command printed as "<code>"PATCHBAY_SET:name=value"</code>"."
            </p>
            {move || {
                let rows = rows.get();
                if rows.is_empty() {
                    return view! { <p class="run-output">"Nothing yet."</p> }.into_any();
                }
                view! {
                    <table class="state-table" aria-label="Run state">
                        <tbody>
                            {rows
                                .into_iter()
                                .map(|(key, value)| {
                                    let short = shown(&value);
                                    view! {
                                        <tr>
                                            <th scope="row">{key}</th>
                                            <td title=value>{short}</td>
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                }
                .into_any()
            }}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_in_the_table() {
        assert_eq!(shown("short"), "short");
        let long = "é".repeat(400);
        let cut = shown(&long);
        assert_eq!(cut.chars().count(), SHOWN_CHARACTERS + 1);
        assert!(cut.ends_with('…'));
    }
}
