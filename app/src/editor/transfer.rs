//! Export and import of graph files (PRODUCT §5). Export writes the
//! document as it is on the page. Import hands the file to the server,
//! which reads it as any document (R3.1 migrated, limits checked) and
//! stores it as a new graph, or refuses it whole: nothing is half-imported.

use leptos::prelude::*;

use super::lazy_parts::{Part, preload};
use super::state::{EditorState, Overlay};
use crate::api::{self, ApiError};
use crate::browser;

/// A file name from the graph's name: `Research brief.patchbay.json`.
pub fn file_name(graph_name: &str) -> String {
    let cleaned: String = graph_name
        .chars()
        .map(|char| {
            if char.is_alphanumeric() || " -_.()".contains(char) {
                char
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim().trim_matches('.');
    let stem = if cleaned.is_empty() { "graph" } else { cleaned };
    format!("{stem}.patchbay.json")
}

/// Downloads the document as a JSON file.
pub fn export(editor: EditorState) {
    let (name, text) = editor.with_graph(|graph| {
        let mut document = graph.clone();
        // A file is a copy: whoever imports it gets a new graph.
        document.revision = 0;
        (
            graph.name.clone(),
            document.to_json().map(|json| indent(&json)),
        )
    });
    let Ok(text) = text else {
        editor.notify("The graph could not be written out.");
        return;
    };
    if let Err(message) = browser::download(&file_name(&name), "application/json", &text) {
        editor.notify(format!("The download did not start: {message}"));
    }
}

/// Compact JSON laid out two spaces to a level, for files people read and
/// diff. (Re-indenting the text costs far less browser code than a second
/// serializer for the whole document.)
pub fn indent(json: &str) -> String {
    let mut out = String::with_capacity(json.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = json.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(char) = chars.next() {
        if in_string {
            out.push(char);
            match (escaped, char) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match char {
            '"' => {
                in_string = true;
                out.push(char);
            }
            '{' | '[' => {
                out.push(char);
                // Empty objects and arrays stay on one line.
                if matches!(chars.peek(), Some('}' | ']')) {
                    if let Some(close) = chars.next() {
                        out.push(close);
                    }
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(char);
            }
            ',' => {
                out.push(char);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            other => out.push(other),
        }
    }
    out.push('\n');
    out
}

/// The message of an API error answer, with where in the document.
pub fn error_message(refused: &ApiError) -> String {
    match (refused.detail(), refused) {
        (Some(error), _) => format!("{} ({})", error.message, error.code),
        (None, ApiError::Unreadable(error)) => {
            format!("The server's answer was not understood: {error}.")
        }
        (None, _) => format!(
            "The server answered {}.",
            refused.status().unwrap_or_default()
        ),
    }
}

/// Imports a chosen file as a new graph this browser owns, and opens it.
pub fn import(editor: EditorState, file: web_sys::File) {
    let name = file.name();
    leptos::task::spawn_local(async move {
        let text = match browser::read_text(&file).await {
            Ok(text) => text,
            Err(message) => {
                editor.overlay.set(Overlay::Problem {
                    title: format!("“{name}” could not be read"),
                    message,
                });
                return;
            }
        };
        match api::create_graph(&text).await {
            Ok(created) => browser::navigate(&created.edit_url),
            Err(ApiError::Unreachable(_)) => {
                editor.notify("The server could not be reached; nothing was imported.")
            }
            Err(refused) => editor.overlay.set(Overlay::Problem {
                title: format!("“{name}” was not imported"),
                message: format!(
                    "{} Nothing was created; fix the file and import it again.",
                    error_message(&refused)
                ),
            }),
        }
    });
}

/// The Import button: a file chooser for `.json` graph files.
#[component]
pub fn ImportButton() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let chooser = NodeRef::<leptos::html::Input>::new();
    view! {
        <button type="button" title="Import a graph file as a new graph" on:pointerover=|_| preload(Part::Transfer) on:focus=|_| preload(Part::Transfer) on:click=move |_| {
            if let Some(input) = chooser.get_untracked() {
                input.click();
            }
        }>"Import"</button>
        <input
            type="file"
            accept=".json,application/json"
            hidden=true
            aria-label="Graph file to import"
            class="import-file"
            node_ref=chooser
            on:change=move |event| {
                let Some(input) = event
                    .target()
                    .and_then(|target| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(target).ok())
                else {
                    return;
                };
                if let Some(file) = input.files().and_then(|files| files.get(0)) {
                    super::lazy_parts::transfer(editor, super::lazy_parts::Transfer::Import(file));
                }
                input.set_value("");
            }
        />
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn file_names_come_from_the_graph_name() {
        assert_eq!(file_name("Research brief"), "Research brief.patchbay.json");
        assert_eq!(file_name("a/b:c"), "a_b_c.patchbay.json");
        assert_eq!(file_name("  "), "graph.patchbay.json");
    }

    #[test]
    fn exported_files_are_indented_and_read_back_the_same() {
        let compact = r#"{"a":[1,{"b":"x, \\\"y\\\": {z}"}],"c":{},"d":[]}"#;
        let pretty = indent(compact);
        // The string (with its escaped quotes and brackets) is left as it is.
        let value = r#""x, \\\"y\\\": {z}""#;
        let expected = format!(
            "{{\n  \"a\": [\n    1,\n    {{\n      \"b\": {value}\n    }}\n  ],\n  \"c\": {{}},\n  \"d\": []\n}}\n"
        );
        assert_eq!(pretty, expected);
        let back: Value = serde_json::from_str(&pretty).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(compact).unwrap());
        let starter = graph::starter::starter_graph();
        let text = indent(&starter.to_json().unwrap());
        assert_eq!(graph::Graph::load(&text).unwrap(), starter);
    }

    #[test]
    fn import_errors_say_what_and_where() {
        let body = r#"{"error": {"code": "document.invalid", "message": "modules[0].position.x: invalid type: string, expected f64", "details": {"path": "modules[0].position.x"}}}"#;
        assert_eq!(
            error_message(&api::refusal(400, body)),
            "modules[0].position.x: invalid type: string, expected f64 (document.invalid)"
        );
        assert_eq!(
            error_message(&api::refusal(502, "gateway")),
            "The server answered 502."
        );
    }
}
