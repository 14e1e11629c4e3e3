//! The selection's bar, over the top left of the canvas while a person who
//! may edit has modules selected: align and spread them (each one edit,
//! `canvas::arrange`), tidy them up (`canvas::tidy`), and the switch that
//! snaps modules to the grid. A
//! part of its own (`lazy_parts::arrange_bar`): fetched at a first
//! selection, never by a view link.

use leptos::prelude::*;

use super::editing::Command;
use super::state::EditorState;
use crate::canvas::arrange::Arrangement;

/// Where this browser keeps the grid switch.
const SNAP_KEY: &str = "patchbay.snap";

/// The grid switch as this browser last left it.
pub fn remembered_snap() -> bool {
    crate::browser::local_storage()
        .and_then(|storage| storage.get_item(SNAP_KEY).ok().flatten())
        .is_some_and(|value| value == "on")
}

fn remember_snap(on: bool) {
    if let Some(storage) = crate::browser::local_storage() {
        let _ = storage.set_item(SNAP_KEY, if on { "on" } else { "off" });
    }
}

/// A button's sign; its label and keys are in its title and name. Signs,
/// not words, so that the bar stays small in a corner of the canvas.
fn sign(how: Arrangement) -> &'static str {
    match how {
        Arrangement::Left => "⇤",
        Arrangement::Centre => "⇹",
        Arrangement::Right => "⇥",
        Arrangement::Top => "⤒",
        Arrangement::Middle => "⇳",
        Arrangement::Bottom => "⤓",
        Arrangement::SpreadAcross => "↔",
        Arrangement::SpreadDown => "↕",
    }
}

#[component]
pub fn ArrangeBar() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let model = editor.model;
    let count = move || {
        model
            .nodes
            .with(|nodes| nodes.iter().filter(|node| node.selected.get()).count())
    };
    let button = move |how: Arrangement| {
        let title = format!(
            "{} ({}), for {} or more modules",
            how.label(),
            how.keys(),
            how.needs()
        );
        let needs = how.needs();
        view! {
            <button
                type="button"
                class="arrange-button"
                title=title
                aria-label=how.label()
                aria-keyshortcuts=how.keys().replace('←', "ArrowLeft").replace('→', "ArrowRight").replace('↑', "ArrowUp").replace('↓', "ArrowDown")
                disabled=move || count() < needs
                on:click=move |_| {
                    editor.command(Command::Arrange {
                        how,
                        modules: model.selected_ids(),
                    });
                }
            >
                {sign(how)}
            </button>
        }
    };
    view! {
        <div class="arrange-bar" role="toolbar" aria-label="Arrange the selected modules">
            <span class="arrange-group" role="group" aria-label="Align">
                <span aria-hidden="true">"Align"</span>
                {Arrangement::ALL[..6].iter().map(|how| button(*how)).collect_view()}
            </span>
            <span class="arrange-group" role="group" aria-label="Spread evenly">
                <span aria-hidden="true">"Spread"</span>
                {Arrangement::ALL[6..].iter().map(|how| button(*how)).collect_view()}
            </span>
            <button
                type="button"
                class="tidy-button"
                title="Lay out the selected modules left to right along their cables (Alt+Shift+T); with one selected, the whole graph"
                aria-keyshortcuts="Alt+Shift+T"
                on:click=move |_| editor.command(Command::Tidy(model.selected_ids()))
            >
                "Tidy up"
            </button>
            <label class="snap-switch" title="Modules land on the canvas's dots when dragged, moved by the arrow keys or added">
                <input
                    type="checkbox"
                    prop:checked=move || model.snap.get()
                    on:change=move |event| {
                        let on = event_target_checked(&event);
                        model.snap.set(on);
                        remember_snap(on);
                    }
                />
                "Snap to grid"
            </label>
        </div>
    }
}
