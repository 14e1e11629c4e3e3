//! The Triggers dialog (PRODUCT §1.5, §6.5): what starts this graph's runs
//! while nobody watches. A schedule's cron and time zone are checked by the
//! server as they are typed (`POST /api/schedules/next`), which shows the
//! next five times, and only a schedule it can read goes into the document;
//! a webhook shows its address, and makes or rotates its secret (shown
//! once). Every change is an undoable edit of the document's `triggers`,
//! saved with the graph. The triggers are the document's JSON, edited in
//! place, so fields this build does not know are kept.

use leptos::prelude::*;
use serde_json::{Value, json};
use wire::triggers::{NextTimesRequest, TriggerSecretMade};

use super::modal::Modal;
use super::share::{LinkRow, origin};
use super::state::EditorState;
use crate::api::{self, ApiError};

/// The document's triggers as JSON, in order.
fn listed(editor: &EditorState) -> Vec<Value> {
    editor.with_graph(|graph| {
        graph
            .extra
            .get("triggers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    })
}

/// One undoable edit of the triggers; `coalesce` joins typing in one field.
fn change(
    editor: EditorState,
    label: &str,
    coalesce: Option<&str>,
    apply: impl FnOnce(&mut Vec<Value>),
) {
    let mut triggers = listed(&editor);
    apply(&mut triggers);
    editor.edit(label, coalesce, |edit| edit.set_triggers(triggers));
}

/// Sets `field` of trigger `id`.
fn set_field(editor: EditorState, id: &str, field: &str, value: Value, coalesce: bool) {
    let key = format!("{field} {id}");
    change(
        editor,
        "Edit a trigger",
        coalesce.then_some(key.as_str()),
        |triggers| {
            if let Some(trigger) = triggers
                .iter_mut()
                .find(|trigger| trigger["id"] == id)
                .and_then(Value::as_object_mut)
            {
                trigger.insert(field.to_owned(), value);
            }
        },
    );
}

/// An id no trigger of the graph has: `schedule-2`, or a webhook's with a
/// random part, since it is the address others post to.
fn new_id(editor: &EditorState, prefix: &str) -> String {
    let taken = listed(editor);
    let random = || {
        #[cfg(feature = "hydrate")]
        {
            format!("{:06x}", (js_sys::Math::random() * 16_777_216.0) as u32)
        }
        #[cfg(not(feature = "hydrate"))]
        {
            String::from("000000")
        }
    };
    (1..)
        .map(|number| {
            if prefix == "hook" {
                format!("{prefix}-{}", random())
            } else {
                format!("{prefix}-{number}")
            }
        })
        .find(|id| !taken.iter().any(|trigger| trigger["id"] == id.as_str()))
        .unwrap_or_else(|| prefix.to_owned())
}

/// The browser's time zone, which a new schedule starts in.
fn own_timezone() -> String {
    #[cfg(feature = "hydrate")]
    {
        let options = js_sys::Intl::DateTimeFormat::default().resolved_options();
        if let Some(zone) = js_sys::Reflect::get(&options, &"timeZone".into())
            .ok()
            .and_then(|zone| zone.as_string())
        {
            return zone;
        }
    }
    "UTC".to_owned()
}

#[component]
pub fn TriggersDialog() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let ids = Memo::new(move |_| {
        editor.version.track();
        listed(&editor)
            .iter()
            .map(|trigger| {
                (
                    trigger["id"].as_str().unwrap_or_default().to_owned(),
                    trigger["kind"] == "webhook",
                )
            })
            .collect::<Vec<_>>()
    });
    let add_schedule = move |_| {
        let id = new_id(&editor, "schedule");
        change(editor, "Add a schedule", None, |triggers| {
            triggers.push(json!({"id": id, "kind": "schedule", "cron": "0 9 * * MON-FRI", "timezone": own_timezone(), "catch_up": "one"}));
        });
    };
    let add_webhook = move |_| {
        let id = new_id(&editor, "hook");
        change(editor, "Add a webhook", None, |triggers| {
            triggers.push(json!({"id": id, "kind": "webhook"}));
        });
    };
    view! {
        <Modal title="Triggers".to_owned() class="triggers">
            <p class="hint">
                "Start runs of this graph on a schedule, or when a program posts to a webhook — while nobody has it open. A run starts from the saved graph; each says in the run history what started it."
            </p>
            <Show when=move || ids.with(Vec::is_empty)>
                <p class="hint triggers-none">"No triggers yet: runs start when someone presses ▶ Run or calls the API."</p>
            </Show>
            <For each=move || ids.get() key=|(id, webhook)| (id.clone(), *webhook) let((id, webhook))>
                {if webhook {
                    view! { <WebhookRow id/> }.into_any()
                } else {
                    view! { <ScheduleRow id/> }.into_any()
                }}
            </For>
            <div class="triggers-add">
                <button type="button" on:click=add_schedule>"Add a schedule"</button>
                <button type="button" on:click=add_webhook>"Add a webhook"</button>
            </div>
        </Modal>
    }
}

/// The trigger's current JSON, read again on every edit.
fn trigger_value(editor: EditorState, id: &str) -> Value {
    editor.version.track();
    listed(&editor)
        .into_iter()
        .find(|trigger| trigger["id"] == id)
        .unwrap_or_default()
}

#[component]
fn Paused(id: String) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let paused = {
        let id = id.clone();
        move || trigger_value(editor, &id)["paused"] == true
    };
    let remove = {
        let id = id.clone();
        move |_| {
            change(editor, "Remove a trigger", None, |triggers| {
                triggers.retain(|trigger| trigger["id"] != id.as_str());
            });
        }
    };
    view! {
        <div class="trigger-actions">
            <label class="trigger-paused">
                <input
                    type="checkbox"
                    prop:checked=paused
                    on:change=move |event| set_field(editor, &id, "paused", json!(event_target_checked(&event)), false)
                />
                "Paused"
            </label>
            <button type="button" class="trigger-remove" on:click=remove>"Remove"</button>
        </div>
    }
}

/// When a schedule falls next, as the server read it; or why it cannot.
#[derive(Clone, Debug, PartialEq)]
enum Reading {
    Asking,
    Times(Vec<String>),
    Wrong { field: String, message: String },
}

#[component]
fn ScheduleRow(id: String) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let stored = trigger_value(editor, &id);
    let text = |field: &str, default: &str| stored[field].as_str().unwrap_or(default).to_owned();
    let cron = RwSignal::new(text("cron", ""));
    let timezone = RwSignal::new(text("timezone", "UTC"));
    let reading = RwSignal::new(Reading::Asking);
    // Answers may come back out of order: only the latest is shown.
    let asked = StoredValue::new(0_u64);
    let check = {
        let id = id.clone();
        move |write: bool| {
            let serial = asked.get_value() + 1;
            asked.set_value(serial);
            let request = NextTimesRequest {
                cron: cron.get_untracked(),
                timezone: Some(timezone.get_untracked()),
                count: None,
            };
            let id = id.clone();
            leptos::task::spawn_local(async move {
                let answer = api::schedule_times(&request).await;
                if asked.get_value() != serial {
                    return;
                }
                match answer {
                    Ok(times) => {
                        reading.set(Reading::Times(times.local));
                        if write {
                            change(
                                editor,
                                "Edit a schedule",
                                Some(&format!("schedule {id}")),
                                |triggers| {
                                    if let Some(trigger) = triggers
                                        .iter_mut()
                                        .find(|trigger| trigger["id"] == id.as_str())
                                        .and_then(Value::as_object_mut)
                                    {
                                        trigger.insert("cron".to_owned(), json!(request.cron));
                                        trigger
                                            .insert("timezone".to_owned(), json!(request.timezone));
                                    }
                                },
                            );
                        }
                    }
                    Err(refused) => reading.set(wrong(&refused)),
                }
            });
        }
    };
    check(false);
    let catch_up = {
        let id = id.clone();
        move || trigger_value(editor, &id)["catch_up"].as_str() != Some("none")
    };
    let paused = {
        let id = id.clone();
        Memo::new(move |_| trigger_value(editor, &id)["paused"] == true)
    };
    let (check_cron, check_zone, id_for_catch_up) = (check.clone(), check, id.clone());
    let field_wrong = move |field: &'static str| move || matches!(reading.get(), Reading::Wrong { field: wrong, .. } if wrong == field);
    view! {
        <section class="trigger schedule" aria-label=format!("Schedule {id}")>
            <h3>"Schedule " <code>{id.clone()}</code></h3>
            <div class="trigger-fields">
                <label class="field">
                    <span class="field-label">"When (cron: minute hour day month weekday, seconds first if six fields)"</span>
                    <input
                        type="text"
                        name="cron"
                        spellcheck="false"
                        aria-invalid=move || field_wrong("cron")().to_string()
                        prop:value=move || cron.get()
                        on:input=move |event| {
                            cron.set(event_target_value(&event));
                            check_cron(true);
                        }
                    />
                </label>
                <label class="field">
                    <span class="field-label">"Time zone"</span>
                    <input
                        type="text"
                        name="timezone"
                        list="trigger-timezones"
                        spellcheck="false"
                        aria-invalid=move || field_wrong("timezone")().to_string()
                        prop:value=move || timezone.get()
                        on:input=move |event| {
                            timezone.set(event_target_value(&event));
                            check_zone(true);
                        }
                    />
                </label>
                <label class="field">
                    <span class="field-label">"Ticks missed while no server was up"</span>
                    <select
                        name="catch_up"
                        prop:value=move || if catch_up() { "one" } else { "none" }
                        on:change=move |event| set_field(editor, &id_for_catch_up, "catch_up", json!(event_target_value(&event)), false)
                    >
                        <option value="one">"Run once"</option>
                        <option value="none">"Skip them"</option>
                    </select>
                </label>
            </div>
            <datalist id="trigger-timezones">
                {["UTC", "Europe/London", "Europe/Paris", "Europe/Berlin", "America/New_York", "America/Chicago", "America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney"]
                    .map(|zone| view! { <option value=zone></option> })
                    .collect_view()}
            </datalist>
            {move || match reading.get() {
                Reading::Asking => view! { <p class="hint">"Working out the next times…"</p> }.into_any(),
                Reading::Times(times) => view! {
                    <div class="trigger-times">
                        <span class="field-label">
                            {move || if paused.get() { "Paused: none of these runs until it is resumed" } else { "Next times" }}
                        </span>
                        <ol>{times.into_iter().map(|time| view! { <li>{time}</li> }).collect_view()}</ol>
                    </div>
                }
                .into_any(),
                Reading::Wrong { message, .. } => view! {
                    <p class="hint warning" role="alert">{message}" The saved schedule is unchanged until this reads."</p>
                }
                .into_any(),
            }}
            <Paused id=id.clone()/>
        </section>
    }
}

fn wrong(refused: &ApiError) -> Reading {
    let detail = refused.detail();
    Reading::Wrong {
        field: detail
            .and_then(|detail| detail.details.as_ref())
            .and_then(|details| details["path"].as_str())
            .unwrap_or_default()
            .to_owned(),
        message: refused.message_or("The server could not be asked when this schedule falls."),
    }
}

#[component]
fn WebhookRow(id: String) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let address = format!("{}/hooks/{id}", origin());
    let made = RwSignal::new(None::<Result<TriggerSecretMade, String>>);
    let make = {
        let id = id.clone();
        move |_| {
            let (graph_id, id) = (editor.graph_id(), id.clone());
            editor.save_now();
            leptos::task::spawn_local(async move {
                made.set(Some(make_secret(&graph_id, &id).await));
            });
        }
    };
    view! {
        <section class="trigger webhook" aria-label=format!("Webhook {id}")>
            <h3>"Webhook " <code>{id.clone()}</code></h3>
            <LinkRow label="Address — POST a body here with the secret; the body is the run's input" name="webhook-address" url=address/>
            {move || match made.get() {
                Some(Ok(made)) => view! {
                    <LinkRow
                        label="Secret — shown this once; send it as X-Patchbay-Secret"
                        name="webhook-secret"
                        url=made.secret.clone()
                        warning="Copy it now: the server keeps only a hash. Anyone with it can start runs of this graph."
                    />
                    <LinkRow label="Try it" name="webhook-example" url=example(&made)/>
                }
                .into_any(),
                Some(Err(message)) => view! { <p class="hint warning" role="alert">{message}</p> }.into_any(),
                None => ().into_any(),
            }}
            <p class="hint">"A secret made before keeps working until a new one is made."</p>
            <button type="button" class="trigger-secret" on:click=make>
                {move || if made.with(Option::is_some) { "Make a new secret" } else { "Make a secret" }}
            </button>
            <Paused id=id.clone()/>
        </section>
    }
}

/// A delivery with `curl`, to paste into a terminal.
fn example(made: &TriggerSecretMade) -> String {
    format!(
        "curl -X POST {}{} -H \"X-Patchbay-Secret: {}\" -H \"Content-Type: application/json\" -d '{{\"text\": \"Hello\"}}'",
        origin(),
        made.url,
        made.secret
    )
}

/// Makes the webhook's secret. A trigger just added reaches the server
/// with the graph's next save: asked again a few times meanwhile.
async fn make_secret(graph_id: &str, trigger_id: &str) -> Result<TriggerSecretMade, String> {
    let mut tries = 0;
    loop {
        match api::make_trigger_secret(graph_id, trigger_id).await {
            Ok(made) => return Ok(made),
            Err(refused) if refused.status() == Some(404) && tries < 10 => {
                tries += 1;
                crate::browser::sleep(std::time::Duration::from_millis(300)).await;
            }
            Err(refused) => {
                return Err(refused.message_or("The secret could not be made; try again."));
            }
        }
    }
}
