//! A module's menu — a right click on it, or the context-menu key (Shift+F10)
//! with it selected: what can be done to that one module. Run from here
//! (reusing the run shown, PRODUCT §3.15), its outputs, its details,
//! delete. What cannot be done now is shown disabled, saying why.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::editing::Command;
use super::run_from;
use super::state::{EditorState, Overlay};

/// One entry: its words, and what it does or why it cannot.
struct Item {
    label: &'static str,
    action: Result<Callback<()>, &'static str>,
}

fn items(editor: EditorState, module: &str) -> Vec<Item> {
    let module = module.to_owned();
    let run_from = run_from::offer(editor, &module)
        .map(|from| Callback::new(move |()| editor.overlay.set(Overlay::RunFrom(from.clone()))));
    let outputs = {
        let module = module.clone();
        let (width, height) = editor.model.pane_size.get_untracked();
        Callback::new(move |()| {
            editor.overlay.set(Overlay::Outputs {
                module: module.clone(),
                x: width / 2.0,
                y: height / 3.0,
            });
        })
    };
    let details = Callback::new(move |()| {
        editor.overlay.set(Overlay::None);
        crate::browser::focus("#module-label");
    });
    let delete = if editor.can_edit.get_untracked() {
        Ok(Callback::new(move |()| {
            editor.overlay.set(Overlay::None);
            editor.command(Command::delete_selection(&editor));
            editor.focus_canvas();
        }))
    } else {
        Err("Only the graph's editors can change it")
    };
    vec![
        Item {
            label: "▶ Run from here",
            action: run_from,
        },
        Item {
            label: "Outputs…",
            action: Ok(outputs),
        },
        Item {
            label: "Edit details",
            action: Ok(details),
        },
        Item {
            label: "Delete",
            action: delete,
        },
    ]
}

/// Arrow keys move between the enabled entries, Home and End go to the
/// first and last (the WAI-ARIA menu pattern); Escape is the editor's.
fn move_focus(event: &web_sys::KeyboardEvent) {
    let step: i32 = match event.key().as_str() {
        "ArrowDown" => 1,
        "ArrowUp" => -1,
        "Home" => i32::MIN,
        "End" => i32::MAX,
        _ => return,
    };
    event.prevent_default();
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return;
    };
    let Some(menu) = event
        .current_target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
    else {
        return;
    };
    // Each entry is the button in a list item of the menu.
    let mut entries: Vec<web_sys::HtmlElement> = Vec::new();
    let mut item = menu.first_element_child();
    while let Some(list_item) = item {
        if let Some(button) = list_item.first_element_child()
            && !button.has_attribute("disabled")
            && let Ok(button) = button.dyn_into::<web_sys::HtmlElement>()
        {
            entries.push(button);
        }
        item = list_item.next_element_sibling();
    }
    if entries.is_empty() {
        return;
    }
    let active = document.active_element();
    let current = entries
        .iter()
        .position(|entry| active.as_ref() == Some(entry.as_ref()));
    let last = entries.len() - 1;
    let next = match (step, current) {
        (i32::MIN, _) => 0,
        (i32::MAX, _) => last,
        (1, Some(at)) => (at + 1) % entries.len(),
        (-1, Some(at)) => (at + last) % entries.len(),
        (-1, None) => last,
        _ => 0,
    };
    let _ = entries[next].focus();
}

#[component]
pub fn ModuleMenu(module: String, x: f64, y: f64) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let label = editor.module_label(&module);
    let style = format!("left: {}px; top: {}px", x.max(8.0), y.max(8.0));
    // Keys act in the menu from the start: its first entry that can be
    // chosen takes focus once it is on the page.
    crate::browser::next_frame(|| {
        crate::browser::focus(".module-menu [role=menuitem]:not([disabled])");
    });
    let entries = untrack(|| items(editor, &module))
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let (action, why) = match item.action {
                Ok(action) => (Some(action), None),
                Err(why) => (None, Some(why)),
            };
            let why_id = format!("menu-why-{index}");
            view! {
                <li role="none">
                    <button
                        type="button"
                        role="menuitem"
                        disabled=action.is_none()
                        aria-describedby=why.map(|_| why_id.clone())
                        on:click=move |_| {
                            if let Some(action) = action {
                                action.run(());
                            }
                        }
                    >
                        {item.label}
                    </button>
                    {why.map(|why| view! { <span class="menu-why" id=why_id>{why}</span> })}
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="popup-backdrop" on:click=move |_| editor.overlay.set(Overlay::None) on:contextmenu=move |event: web_sys::MouseEvent| {
            event.prevent_default();
            editor.overlay.set(Overlay::None);
        }>
            <ul
                class="module-menu"
                role="menu"
                aria-label=format!("“{label}”")
                style=style
                on:click=|event| event.stop_propagation()
                on:keydown=move |event: web_sys::KeyboardEvent| move_focus(&event)
            >
                {entries}
            </ul>
        </div>
    }
}
