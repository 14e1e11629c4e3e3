//! The validation panel: the findings of `graph::validate` — the same
//! function the server runs — refreshed after every edit, each one a button
//! that selects and centres what it is about.

use graph::Severity;
use leptos::prelude::*;

use super::state::EditorState;

#[component]
pub fn ValidationBadge() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let counts = Memo::new(move |_| {
        editor.findings.with(|findings| {
            let errors = findings
                .iter()
                .filter(|finding| finding.severity == Severity::Error)
                .count();
            (errors, findings.len() - errors)
        })
    });
    view! {
        <button
            type="button"
            class="validation-badge"
            class=("has-errors", move || counts.get().0 > 0)
            class=("has-warnings", move || counts.get().0 == 0 && counts.get().1 > 0)
            aria-expanded=move || editor.show_validation.get().to_string()
            title="Validation (V)"
            on:click=move |_| editor.show_validation.update(|shown| *shown = !*shown)
        >
            {move || {
                let (errors, warnings) = counts.get();
                match (errors, warnings) {
                    (0, 0) => "✓ Valid".to_owned(),
                    (0, warnings) => format!("⚠ {warnings}"),
                    (errors, 0) => format!("✕ {errors}"),
                    (errors, warnings) => format!("✕ {errors} ⚠ {warnings}"),
                }
            }}
        </button>
    }
}

#[component]
pub fn ValidationPanel() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    view! {
        <Show when=move || editor.show_validation.get()>
            <section class="validation-panel" aria-label="Validation">
                <header>
                    <h2>"Validation"</h2>
                    <button type="button" class="close" aria-label="Close validation" on:click=move |_| editor.show_validation.set(false)>"✕"</button>
                </header>
                {move || {
                    let findings = editor.findings.get();
                    if findings.is_empty() {
                        return view! { <p class="hint">"No problems: the graph can run."</p> }.into_any();
                    }
                    view! {
                        <ul>
                            {findings
                                .into_iter()
                                .map(|finding| {
                                    let severity = match finding.severity {
                                        Severity::Error => "error",
                                        Severity::Warning => "warning",
                                    };
                                    let code = finding.code.as_str();
                                    let message = finding.message.clone();
                                    view! {
                                        <li class=format!("finding {severity}") data-code=code>
                                            <button type="button" on:click=move |_| editor.focus_finding(&finding)>
                                                <span class="finding-icon">{if severity == "error" { "✕" } else { "⚠" }}</span>
                                                <span class="finding-message">{message}</span>
                                                <code class="finding-code">{code}</code>
                                            </button>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                    .into_any()
                }}
            </section>
        </Show>
    }
}
