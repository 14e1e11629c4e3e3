//! Form controls the detail panels share. Each shows a value read from the
//! document and reports edits; the panel turns an edit into a document
//! change (so undo, validation and autosave follow).

use leptos::prelude::*;

#[component]
pub fn TextField(
    label: &'static str,
    #[prop(into)] value: Signal<String>,
    on_input: Callback<String>,
    #[prop(into)] disabled: Signal<bool>,
    #[prop(optional)] placeholder: &'static str,
    #[prop(optional, into)] id: Option<String>,
) -> impl IntoView {
    view! {
        <label class="field">
            <span class="field-label">{label}</span>
            <input
                type="text"
                id=id
                placeholder=placeholder
                prop:value=move || value.get()
                disabled=move || disabled.get()
                on:input=move |event| on_input.run(event_target_value(&event))
            />
        </label>
    }
}

#[component]
pub fn TextArea(
    label: &'static str,
    #[prop(into)] value: Signal<String>,
    on_input: Callback<String>,
    #[prop(into)] disabled: Signal<bool>,
    #[prop(optional)] placeholder: &'static str,
    #[prop(default = 4)] rows: u32,
) -> impl IntoView {
    view! {
        <label class="field">
            <span class="field-label">{label}</span>
            <textarea
                rows=rows
                placeholder=placeholder
                prop:value=move || value.get()
                disabled=move || disabled.get()
                on:input=move |event| on_input.run(event_target_value(&event))
            ></textarea>
        </label>
    }
}

/// A number; an empty box means "not set" (`None`).
#[component]
pub fn NumberField(
    label: &'static str,
    #[prop(into)] value: Signal<Option<f64>>,
    on_input: Callback<Option<f64>>,
    #[prop(into)] disabled: Signal<bool>,
    #[prop(optional)] placeholder: &'static str,
    min: f64,
    max: f64,
    step: f64,
) -> impl IntoView {
    view! {
        <label class="field field-number">
            <span class="field-label">{label}</span>
            <input
                type="number"
                min=min
                max=max
                step=step
                placeholder=placeholder
                prop:value=move || value.get().map(|number| number.to_string()).unwrap_or_default()
                disabled=move || disabled.get()
                on:input=move |event| {
                    // The browser has read the number already: a number
                    // field's value is empty unless it holds a valid one
                    // (and Rust's float parser stays out of the bundle).
                    let field = event_target::<web_sys::HtmlInputElement>(&event);
                    let number = field.value_as_number();
                    if field.value().trim().is_empty() {
                        on_input.run(None);
                    } else if number.is_finite() {
                        on_input.run(Some(number.clamp(min, max)));
                    }
                }
            />
        </label>
    }
}

#[component]
pub fn CheckField(
    label: &'static str,
    #[prop(into)] checked: Signal<bool>,
    on_change: Callback<bool>,
    #[prop(into)] disabled: Signal<bool>,
    #[prop(optional)] hint: &'static str,
) -> impl IntoView {
    view! {
        <label class="field field-check" title=hint>
            <input
                type="checkbox"
                prop:checked=move || checked.get()
                disabled=move || disabled.get()
                on:change=move |event| on_change.run(event_target_checked(&event))
            />
            <span>{label}</span>
        </label>
    }
}

/// A choice among (value, label) pairs.
#[component]
pub fn SelectField(
    label: &'static str,
    #[prop(into)] value: Signal<String>,
    #[prop(into)] options: Signal<Vec<(String, String)>>,
    on_change: Callback<String>,
    #[prop(into)] disabled: Signal<bool>,
) -> impl IntoView {
    view! {
        <label class="field">
            <span class="field-label">{label}</span>
            <select
                prop:value=move || value.get()
                disabled=move || disabled.get()
                on:change=move |event| on_change.run(event_target_value(&event))
            >
                {move || {
                    let current = value.get();
                    options
                        .get()
                        .into_iter()
                        .map(|(option, text)| {
                            let selected = option == current;
                            view! { <option value=option selected=selected>{text}</option> }
                        })
                        .collect_view()
                }}
            </select>
        </label>
    }
}

/// The findings of the shared `validate()` with one of `codes` about the
/// selected module (about the field whose path ends with `at`, when given),
/// where the fields they are about are edited; nothing when there are none.
#[component]
pub fn FieldProblems(
    selected: super::Selected,
    codes: &'static [graph::Code],
    #[prop(optional, into)] at: Option<String>,
) -> impl IntoView {
    let editor = selected.editor;
    let problems = Memo::new(move |_| {
        let id = selected.id();
        editor.findings.with(|findings| {
            findings
                .iter()
                .filter(|finding| {
                    finding.module_id.as_deref() == Some(id.as_str())
                        && codes.contains(&finding.code)
                        && at.as_deref().is_none_or(|at| {
                            finding
                                .path
                                .as_deref()
                                .is_some_and(|path| path.ends_with(at))
                        })
                })
                .map(|finding| finding.message.clone())
                .collect::<Vec<_>>()
        })
    });
    move || {
        let problems = problems.get();
        (!problems.is_empty()).then(|| {
            view! {
                <ul class="field-problems" role="alert">
                    {problems.into_iter().map(|problem| view! { <li>{problem}</li> }).collect_view()}
                </ul>
            }
        })
    }
}
