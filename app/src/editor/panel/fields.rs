//! Form controls the detail panels share. Each shows a value read from the
//! document and reports edits; the panel turns an edit into a document
//! change (so undo, validation and autosave follow).

use leptos::prelude::*;

/// The texts of the selected module that others are typing in now, each
/// with who (`graph::typing`): a field that reads exactly so shows as
/// theirs, read only, until they pause. The panel's fields do not know
/// where in the document they write; a held field reads as its holder has
/// typed it, and a field this person typed in too was given the holder's
/// text back (their own is in a notice).
#[derive(Clone, Copy)]
pub struct HeldTexts(pub Memo<Vec<(String, String)>>);

/// Who holds a field that shows `value`, if someone does: read where the
/// field is made (the panel provides the texts held).
pub(crate) fn holder(value: Signal<String>) -> Signal<Option<String>> {
    let held = use_context::<HeldTexts>();
    Signal::derive(move || {
        let held = held?;
        let text = value.get();
        held.0.with(|held| {
            held.iter()
                .find(|(value, _)| *value == text)
                .map(|(_, name)| name.clone())
        })
    })
}

/// "Ana is typing…" under a held field, outside its label: the field's
/// name stays its label (`typing_title` describes it instead).
pub(crate) fn typing_mark(held: Signal<Option<String>>) -> impl IntoView {
    move || {
        held.get().map(
            |name| view! { <span class="field-held" aria-hidden="true">{format!("{name} is typing…")}</span> },
        )
    }
}

/// A key pressed in a held field does nothing: a space or an arrow in a
/// read-only field would scroll the panel away under someone still typing.
/// Tab and Escape leave, and a shortcut (copying) still works.
pub(crate) fn ignore_typing_while_held(
    held: Signal<Option<String>>,
    event: &web_sys::KeyboardEvent,
) {
    let leaves = matches!(event.key().as_str(), "Tab" | "Escape");
    if held.get_untracked().is_some() && !leaves && !event.ctrl_key() && !event.meta_key() {
        event.prevent_default();
    }
}

/// What a held field says of itself to a screen reader or a pointer.
pub(crate) fn typing_title(held: Signal<Option<String>>) -> impl Fn() -> Option<String> {
    move || {
        held.get()
            .map(|name| format!("{name} is typing here: it is theirs until they pause"))
    }
}

#[component]
pub fn TextField(
    label: &'static str,
    #[prop(into)] value: Signal<String>,
    on_input: Callback<String>,
    #[prop(into)] disabled: Signal<bool>,
    #[prop(optional)] placeholder: &'static str,
    #[prop(optional, into)] id: Option<String>,
) -> impl IntoView {
    let held = holder(value);
    view! {
        <label class="field">
            <span class="field-label">{label}</span>
            <input
                type="text"
                id=id
                placeholder=placeholder
                prop:value=move || value.get()
                disabled=move || disabled.get()
                readonly=move || held.get().is_some()
                title=typing_title(held)
                class:held=move || held.get().is_some()
                on:keydown=move |event| ignore_typing_while_held(held, &event)
                on:input=move |event| on_input.run(event_target_value(&event))
            />
        </label>
        {typing_mark(held)}
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
    let held = holder(value);
    view! {
        <label class="field">
            <span class="field-label">{label}</span>
            <textarea
                rows=rows
                placeholder=placeholder
                prop:value=move || value.get()
                disabled=move || disabled.get()
                readonly=move || held.get().is_some()
                title=typing_title(held)
                class:held=move || held.get().is_some()
                on:keydown=move |event| ignore_typing_while_held(held, &event)
                on:input=move |event| on_input.run(event_target_value(&event))
            ></textarea>
        </label>
        {typing_mark(held)}
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

/// Ids typed into one field, apart by commas (webhooks, MCP servers).
pub fn ids(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect()
}
