//! Icons drawn inline as SVG: they render on every machine, where an emoji
//! (📄, 📎) needs a font many lack and shows as an empty box. They take the
//! colour of the text around them and are hidden from screen readers (the
//! text beside them says the same). Written as markup strings: a handful
//! of bytes each in the bundle, where a view per element costs far more.

use leptos::prelude::*;

const DOCUMENT: &str = r#"<svg class="icon icon-document" viewBox="0 0 12 12" aria-hidden="true" focusable="false"><path d="M2.5 1h4.5l2.5 2.5v7.5h-7z M7 1v2.5h2.5" fill="none" stroke="currentColor" stroke-width="1.1" stroke-linejoin="round"/></svg>"#;

const PAPERCLIP: &str = r#"<svg class="icon icon-paperclip" viewBox="0 0 12 12" aria-hidden="true" focusable="false"><path d="M8.5 4.5l-3.6 3.6a1.2 1.2 0 0 1-1.7-1.7l4-4a2.2 2.2 0 0 1 3.1 3.1l-4.2 4.2a3.2 3.2 0 0 1-4.5-4.5l3.6-3.6" fill="none" stroke="currentColor" stroke-width="1.1" stroke-linecap="round"/></svg>"#;

fn icon(markup: &'static str) -> impl IntoView {
    view! { <span class="icon-box" inner_html=markup></span> }
}

/// A page with a folded corner: a response or a named output (DOC23's 📄).
pub fn document() -> impl IntoView {
    icon(DOCUMENT)
}

/// [`document`] as markup, for drawings written as markup.
pub fn document_markup() -> String {
    format!(r#"<span class="icon-box">{DOCUMENT}</span>"#)
}

/// A paper clip: attach a file (DOC23's 📎).
pub fn paperclip() -> impl IntoView {
    icon(PAPERCLIP)
}
