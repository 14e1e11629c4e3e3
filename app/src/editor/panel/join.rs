//! How the selected module's inputs join (PRODUCT §3.1): it waits for
//! every input, or runs on the first to arrive. Only where the module has
//! inputs to join.

use graph::ModuleConfig;
use graph::join::Join;
use leptos::prelude::*;

use super::Selected;
use super::fields::SelectField;

pub fn join_field(selected: Selected) -> Option<impl IntoView> {
    let joins = selected
        .module
        .with_untracked(|module| {
            module
                .as_ref()
                .and_then(|module| module.config.kind_config()?.join())
        })
        .is_some();
    joins.then(|| {
        let options = Signal::derive(|| {
            vec![
                ("all".to_owned(), "Wait for every input".to_owned()),
                ("any".to_owned(), "Run on the first to arrive".to_owned()),
            ]
        });
        let any = selected.read(|config: &ModuleConfig| config.join() == Join::Any);
        view! {
            <SelectField
                label="Inputs"
                value=selected.read(|config: &ModuleConfig| match config.join() {
                    Join::All => "all".to_owned(),
                    Join::Any => "any".to_owned(),
                })
                options
                on_change=selected.act("Change how inputs join", |config, value: String| {
                    if let Some(join) = config.join_slot() {
                        *join = if value == "any" { Join::Any } else { Join::All };
                    }
                })
                disabled=selected.disabled()
            />
            <p class="hint">{move || {
                if any.get() {
                    "It runs on the first value to arrive; values that come on its other cables for the same run of it are ignored (the run panel lists them)."
                } else {
                    "It runs once a value has come on every cable in."
                }
            }}</p>
        }
    })
}
