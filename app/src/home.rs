//! The home page at `/`: the graphs whose edit tokens this browser keeps
//! (name, last edit, last run; open, rename, duplicate, remove from this
//! browser), "New graph", and the starter examples. The server knows no
//! person, only tokens, so the list is built in the browser from the tokens
//! in local storage (`POST /api/graphs/summaries`). A self-contained link
//! (`/#graph=…`, whose graph never reaches the server) goes on to `/open`.

use graph::starter::CATALOGUE;
use leptos::prelude::*;
use serde_json::Value;
use wire::RunStatus;
use wire::graphs::{GraphSummary, HeldGraph, SummariesRequest};

use crate::api::{self, ApiError};
use crate::editor::save::discard_draft;
use crate::{browser, edit_token, link};

/// The most graphs the server summarises in one request.
const GRAPHS_PER_REQUEST: usize = 500;
const UNREACHABLE: &str = "the server could not be reached; try again";
/// The element focused after a graph leaves the list.
const LIST_HEADING: &str = "your-graphs";

/// A line of the list: a graph, or the id of one this browser holds a
/// token for that the server no longer has (or whose token no longer
/// matches).
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Available(GraphSummary),
    Unavailable(String),
}

impl Entry {
    fn graph_id(&self) -> &str {
        match self {
            Entry::Available(summary) => &summary.id,
            Entry::Unavailable(id) => id,
        }
    }

    /// Changes whenever what the line shows changes, so the line is drawn
    /// afresh then (and kept, with its focus, otherwise).
    fn key(&self) -> String {
        match self {
            Entry::Available(summary) => format!(
                "{}|{}|{}|{}|{:?}|{:?}",
                summary.id,
                summary.revision,
                summary.updated_at,
                summary.name,
                summary.last_run.as_ref().map(|run| (&run.id, &run.status)),
                summary.waiting_run
            ),
            Entry::Unavailable(id) => format!("gone|{id}"),
        }
    }
}

/// The list in the order a person looks for their work: newest edit first,
/// then the graphs that are gone.
pub fn entries(mut graphs: Vec<GraphSummary>, mut unknown: Vec<String>) -> Vec<Entry> {
    graphs.sort_by(|left, right| {
        right
            .updated_at
            .cmp(&left.updated_at)
            .then_with(|| left.id.cmp(&right.id))
    });
    unknown.sort_unstable();
    unknown.dedup();
    graphs
        .into_iter()
        .map(Entry::Available)
        .chain(unknown.into_iter().map(Entry::Unavailable))
        .collect()
}

/// A run status in the words the run panel uses.
pub fn status_words(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Queued => "Queued",
        RunStatus::Running => "Running",
        RunStatus::Waiting => "Waiting for a person",
        RunStatus::Completed => "Completed",
        RunStatus::Failed => "Failed",
        RunStatus::Cancelled => "Cancelled",
        RunStatus::Interrupted => "Interrupted",
    }
}

/// What a duplicate is called, so that it can be told from its original.
pub fn copy_name(name: &str) -> String {
    format!("{name} (copy)")
}

/// What went wrong, in the server's words when it gave some.
fn problem(error: ApiError) -> String {
    match error {
        ApiError::Unreachable(_) => UNREACHABLE.to_owned(),
        ApiError::Unreadable(error) => {
            format!("the server's answer could not be read: {error}")
        }
        ApiError::Refused { status, error } => error.map_or_else(
            || format!("the server answered {status}"),
            |error| error.message,
        ),
    }
}

/// What the home page says of a graph the server no longer has.
fn gone(error: ApiError) -> String {
    if error.status() == Some(404) {
        "the graph is no longer on the server".to_owned()
    } else {
        problem(error)
    }
}

/// The summaries of every graph `held` names, asked in batches.
async fn load_entries(held: Vec<(String, String)>) -> Result<Vec<Entry>, String> {
    let mut graphs = Vec::new();
    let mut unknown = Vec::new();
    for batch in held.chunks(GRAPHS_PER_REQUEST) {
        let request = SummariesRequest {
            graphs: batch
                .iter()
                .map(|(id, token)| HeldGraph {
                    id: id.clone(),
                    edit_token: token.clone(),
                })
                .collect(),
        };
        let reply = api::summaries(&request).await.map_err(problem)?;
        graphs.extend(reply.graphs);
        unknown.extend(reply.unknown);
    }
    Ok(entries(graphs, unknown))
}

/// Renames a graph: its document as saved, with only the name changed,
/// saved over the revision it was read at (read again if someone saved in
/// between).
async fn rename(graph_id: &str, name: &str) -> Result<(), String> {
    edit_token::authorization(graph_id)
        .ok_or("this browser no longer holds the graph's edit token")?;
    for _ in 0..3 {
        let text = api::graph_text(graph_id).await.map_err(gone)?;
        let mut document: Value = api::document_value(&text).map_err(|error| match error {
            ApiError::Unreadable(error) => format!("the graph could not be read: {error}"),
            other => problem(other),
        })?;
        let revision = document
            .get("revision")
            .and_then(Value::as_u64)
            .unwrap_or_default();
        let Some(fields) = document.as_object_mut() else {
            return Err("the server sent something that is not a graph".to_owned());
        };
        fields.insert("name".to_owned(), Value::String(name.to_owned()));
        match api::save_graph(graph_id, &document.to_string(), revision).await {
            // Saved (an answer not understood is still a save).
            Ok(_) | Err(ApiError::Unreadable(_)) => return Ok(()),
            // Saved by someone else (an open editor) since it was read.
            Err(conflict) if conflict.status() == Some(409) => continue,
            Err(refused) => return Err(problem(refused)),
        }
    }
    Err("the graph kept changing while it was being renamed; try again".to_owned())
}

/// Makes a copy this browser owns, named as a copy. Returns the copy's id,
/// and why it kept the original's name if renaming it failed.
async fn duplicate(graph_id: &str, name: &str) -> Result<(String, Option<String>), String> {
    let forked = api::fork_graph(graph_id).await.map_err(gone)?;
    edit_token::remember(&forked.id, &forked.edit_token);
    let renamed = rename(&forked.id, &copy_name(name)).await.err();
    Ok((forked.id, renamed))
}

/// Moves the focus to an element once the page has drawn it; with `select`,
/// selects a text field's text too.
fn focus_later(element_id: String, select: bool) {
    crate::browser::next_frame(move || {
        let Some(element) = web_sys::window()
            .and_then(|window| window.document())
            .and_then(|document| document.get_element_by_id(&element_id))
        else {
            return;
        };
        if select
            && let Ok(field) =
                wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(element.clone())
        {
            let _ = field.focus();
            field.select();
            return;
        }
        if let Ok(element) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element) {
            let _ = element.focus();
        }
    });
}

/// The old front door's promise: a self-contained link made for `/` still
/// opens. Says whether the page is leaving.
fn forward_self_contained_link() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let hash = window.location().hash().unwrap_or_default();
    if link::from_fragment(&hash).is_none() {
        return false;
    }
    window.location().replace(&format!("/open{hash}")).is_ok()
}

#[derive(Clone, Debug, PartialEq)]
enum Listing {
    Loading,
    Ready(Vec<Entry>),
    Failed(String),
}

/// What the lines of the list share: the list, and the page's status line.
#[derive(Clone, Copy)]
struct Home {
    listing: RwSignal<Listing>,
    notice: RwSignal<String>,
}

impl Home {
    /// Reads the list again; then focuses `focus`, if given.
    fn refresh(self, focus: Option<String>) {
        leptos::task::spawn_local(async move {
            let listing = match load_entries(edit_token::held()).await {
                Ok(entries) => Listing::Ready(entries),
                Err(message) => Listing::Failed(message),
            };
            self.listing.set(listing);
            if let Some(element_id) = focus {
                focus_later(element_id, false);
            }
        });
    }

    /// Forgets a graph in this browser and takes it off the list.
    fn forget(self, graph_id: &str, said: String) {
        edit_token::forget(graph_id);
        discard_draft(graph_id);
        self.listing.update(|listing| {
            if let Listing::Ready(entries) = listing {
                entries.retain(|entry| entry.graph_id() != graph_id);
            }
        });
        self.notice.set(said);
        focus_later(LIST_HEADING.to_owned(), false);
    }
}

#[component]
pub fn HomePage() -> impl IntoView {
    let home = Home {
        listing: RwSignal::new(Listing::Loading),
        notice: RwSignal::new(String::new()),
    };
    // In the browser, after hydration: the tokens are only there.
    Effect::new(move |_| {
        if !forward_self_contained_link() {
            home.refresh(None);
        }
    });
    // Back on the page (from the tab where a run was decided, or with the
    // back button): what waits, and what ran, may have changed.
    for event in ["focus", "pageshow"] {
        let listening =
            leptos::leptos_dom::helpers::window_event_listener_untyped(event, move |_| {
                home.refresh(None);
            });
        on_cleanup(move || listening.remove());
    }
    view! {
        <main class="home">
            <header class="home-header">
                <div>
                    <h1>"Patchbay"</h1>
                    <p class="home-tagline">"Build AI agent task graphs on a canvas, then run them and watch every step."</p>
                </div>
                <a class="home-button primary" href="/new" rel="external">"New graph"</a>
            </header>
            <p class="home-notice" role="status">{move || home.notice.get()}</p>
            <section class="home-section" aria-labelledby=LIST_HEADING>
                <h2 id=LIST_HEADING tabindex="-1">"Your graphs"</h2>
                <p class="home-hint">"The graphs this browser can edit: the ones made here and the ones whose edit link was opened here. Other browsers keep their own list."</p>
                <GraphList home/>
            </section>
            <section class="home-section" aria-labelledby="examples">
                <h2 id="examples">"Examples"</h2>
                <p class="home-hint">"Each starts a new graph of your own. They run as they are, offline, on the built-in simulated provider and coding agent (always labelled simulated)."</p>
                <ul class="home-examples">
                    {CATALOGUE
                        .iter()
                        .map(|example| {
                            let title_id = format!("example-{}", example.id);
                            view! {
                                <li class="home-example">
                                    <h3 id=title_id.clone()>{example.title}</h3>
                                    <p>{example.description}</p>
                                    <p class="home-example-size">{format!("{} modules", example.modules)}</p>
                                    <a
                                        class="home-button"
                                        href=format!("/new?example={}", example.id)
                                        rel="external"
                                        aria-describedby=title_id
                                    >
                                        "Start from this example"
                                    </a>
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
            </section>
        </main>
    }
}

/// What the list part of the page shows; the lines themselves follow the
/// listing on their own, so a change redraws only the lines it touches.
#[derive(Clone, Debug, PartialEq)]
enum Shown {
    Loading,
    Failed(String),
    Empty,
    Graphs,
}

#[component]
fn GraphList(home: Home) -> impl IntoView {
    let shown = Memo::new(move |_| match &*home.listing.read() {
        Listing::Loading => Shown::Loading,
        Listing::Failed(message) => Shown::Failed(message.clone()),
        Listing::Ready(entries) if entries.is_empty() => Shown::Empty,
        Listing::Ready(_) => Shown::Graphs,
    });
    let lines = move || match &*home.listing.read() {
        Listing::Ready(entries) => entries.clone(),
        _ => Vec::new(),
    };
    move || {
        match shown.get() {
        Shown::Loading => view! { <p class="home-hint">"Loading your graphs…"</p> }.into_any(),
        Shown::Failed(message) => view! {
            <div class="home-problem" role="alert">
                <p>{format!("Your graphs could not be listed: {message}.")}</p>
                <button type="button" on:click=move |_| home.refresh(None)>"Try again"</button>
            </div>
        }
        .into_any(),
        Shown::Empty => view! {
            <div class="home-empty">
                <p class="home-empty-title">"No graphs in this browser yet."</p>
                <p>"A graph wires modules together — agent tasks with their re-prompts, review gates, coding agents — and runs them on this server. Start a new one, or begin from one of the examples below; it will be listed here."</p>
                <a class="home-button primary" href="/new" rel="external">"Start a new graph"</a>
            </div>
        }
        .into_any(),
        Shown::Graphs => view! {
            <ul class="home-graphs">
                <For each=lines key=Entry::key let:entry>
                    {match entry {
                        Entry::Available(summary) => view! { <GraphLine summary home/> }.into_any(),
                        Entry::Unavailable(graph_id) => view! { <GoneLine graph_id home/> }.into_any(),
                    }}
                </For>
            </ul>
        }
        .into_any(),
    }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum LineMode {
    Showing,
    Renaming,
    ConfirmingRemoval,
    /// A request is on its way.
    Working,
}

/// One graph: its name (the link that opens it), last edit, last run, and
/// what can be done with it.
#[component]
fn GraphLine(summary: GraphSummary, home: Home) -> impl IntoView {
    let mode = RwSignal::new(LineMode::Showing);
    let trouble = RwSignal::new(None::<String>);
    let draft = RwSignal::new(summary.name.clone());
    let graph_id = StoredValue::new(summary.id.clone());
    let name = StoredValue::new(summary.name.clone());
    let ids = StoredValue::new(LineIds::of(&summary.id));

    let start_renaming = Callback::new(move |()| {
        draft.set(name.get_value());
        trouble.set(None);
        mode.set(LineMode::Renaming);
        focus_later(ids.with_value(|ids| ids.field.clone()), true);
    });
    let stop_renaming = Callback::new(move |()| {
        trouble.set(None);
        mode.set(LineMode::Showing);
        focus_later(ids.with_value(|ids| ids.rename.clone()), false);
    });
    let save_name = Callback::new(move |()| {
        let new_name = draft.get_untracked().trim().to_owned();
        if new_name.is_empty() {
            trouble.set(Some("A graph needs a name.".to_owned()));
            return;
        }
        if new_name == name.get_value() {
            stop_renaming.run(());
            return;
        }
        mode.set(LineMode::Working);
        leptos::task::spawn_local(async move {
            match rename(&graph_id.get_value(), &new_name).await {
                Ok(()) => {
                    home.notice.set(format!("Renamed to “{new_name}”."));
                    home.refresh(Some(ids.with_value(|ids| ids.open.clone())));
                }
                Err(message) => {
                    trouble.set(Some(format!("Not renamed: {message}.")));
                    mode.set(LineMode::Renaming);
                    focus_later(ids.with_value(|ids| ids.field.clone()), true);
                }
            }
        });
    });
    let make_copy = Callback::new(move |()| {
        mode.set(LineMode::Working);
        trouble.set(None);
        leptos::task::spawn_local(async move {
            match duplicate(&graph_id.get_value(), &name.get_value()).await {
                Ok((copy_id, kept_name)) => {
                    home.notice.set(match kept_name {
                        None => format!("Made a copy: “{}”.", copy_name(&name.get_value())),
                        Some(message) => {
                            format!("Made a copy; it kept the original's name ({message}).")
                        }
                    });
                    mode.set(LineMode::Showing);
                    home.refresh(Some(format!("open-{copy_id}")));
                }
                Err(message) => {
                    trouble.set(Some(format!("No copy was made: {message}.")));
                    mode.set(LineMode::Showing);
                }
            }
        });
    });
    let ask_removal = Callback::new(move |()| {
        trouble.set(None);
        mode.set(LineMode::ConfirmingRemoval);
        focus_later(ids.with_value(|ids| ids.confirm.clone()), false);
    });
    let keep = Callback::new(move |()| {
        mode.set(LineMode::Showing);
        focus_later(ids.with_value(|ids| ids.remove.clone()), false);
    });
    let remove = Callback::new(move |()| {
        home.forget(
            &graph_id.get_value(),
            format!(
                "Removed “{}” from this browser. It is still on the server: anyone with its link can open it.",
                name.get_value()
            ),
        );
    });
    // A name cleared in the editor would leave nothing to click.
    let label = if summary.name.trim().is_empty() {
        "Untitled graph".to_owned()
    } else {
        summary.name.clone()
    };
    // A run that waits for the person opens with the graph, its decision
    // shown, as "Waiting for you" opens it.
    let href = match &summary.waiting_run {
        Some(run_id) => format!("/g/{}?run={run_id}", summary.id),
        None => format!("/g/{}", summary.id),
    };

    view! {
        <li class="home-graph" class:busy=move || mode.get() == LineMode::Working data-graph-id=summary.id.clone()>
            <div class="home-graph-main">
                <Show
                    when=move || mode.get() == LineMode::Renaming
                    fallback=move || view! {
                        // The title shows a name too long for the line.
                        <a class="home-graph-name" id=ids.with_value(|ids| ids.open.clone()) href=href.clone() rel="external" title=label.clone()>{label.clone()}</a>
                    }
                >
                    <RenameField ids name draft save_name stop_renaming/>
                </Show>
                <GraphFacts summary=summary.clone()/>
                {move || trouble.get().map(|message| view! { <p class="home-line-problem" role="alert">{message}</p> })}
            </div>
            <Show
                when=move || mode.get() == LineMode::ConfirmingRemoval
                fallback=move || view! { <LineActions ids mode start_renaming make_copy ask_removal/> }
            >
                <RemovalConfirm ids name keep remove/>
            </Show>
        </li>
    }
}

/// The ids of one graph line's controls, so that focus can go back to
/// the one a person came from.
struct LineIds {
    open: String,
    rename: String,
    field: String,
    remove: String,
    confirm: String,
}

impl LineIds {
    fn of(graph_id: &str) -> LineIds {
        LineIds {
            open: format!("open-{graph_id}"),
            rename: format!("rename-{graph_id}"),
            field: format!("name-{graph_id}"),
            remove: format!("remove-{graph_id}"),
            confirm: format!("confirm-remove-{graph_id}"),
        }
    }
}

/// The new name being typed: Enter saves, Escape cancels.
#[component]
fn RenameField(
    ids: StoredValue<LineIds>,
    name: StoredValue<String>,
    draft: RwSignal<String>,
    save_name: Callback<()>,
    stop_renaming: Callback<()>,
) -> impl IntoView {
    view! {
        <div class="home-rename">
            <input
                id=ids.with_value(|ids| ids.field.clone())
                class="home-rename-field"
                aria-label=format!("New name for “{}”", name.get_value())
                prop:value=move || draft.get()
                on:input=move |event| draft.set(event_target_value(&event))
                on:keydown=move |event: web_sys::KeyboardEvent| match event.key().as_str() {
                    "Enter" => {
                        event.prevent_default();
                        save_name.run(());
                    }
                    "Escape" => {
                        event.prevent_default();
                        stop_renaming.run(());
                    }
                    _ => {}
                }
            />
            <button type="button" class="primary" on:click=move |_| save_name.run(())>"Save name"</button>
            <button type="button" on:click=move |_| stop_renaming.run(())>"Cancel"</button>
            <span class="home-hint">"Enter saves, Esc cancels"</span>
        </div>
    }
}

/// When it was edited and how its last run went (a run waiting for a
/// person first: that is what the person came back for).
#[component]
fn GraphFacts(summary: GraphSummary) -> impl IntoView {
    let (edited, edited_iso) = browser::local_date_time(summary.updated_at);
    let last_run = match summary.last_run.clone() {
        Some(run) => {
            let (started, started_iso) = browser::local_date_time(run.created_at);
            view! {
                <a
                    class=format!("home-run status-{}", run.status.as_str())
                    href=format!("/g/{}/runs/{}", summary.id, run.id)
                    rel="external"
                >
                    {format!("Last run {}", status_words(run.status).to_ascii_lowercase())}
                </a>
                <span class="home-run-time">
                    " · " <time datetime=started_iso>{started}</time>
                </span>
            }
            .into_any()
        }
        None => view! { <span class="home-run none">"No runs yet"</span> }.into_any(),
    };
    let waiting = summary.waiting_run.clone().map(|run_id| {
        view! {
            <a
                class="home-waiting"
                href=format!("/g/{}/runs/{run_id}", summary.id)
                rel="external"
                title="A run of this graph waits for someone to approve, reject or send back its work"
            >
                "✋ Waiting for you"
            </a>
            <span class="home-separator" aria-hidden="true">" · "</span>
        }
    });
    view! {
        <p class="home-graph-facts">
            {waiting}
            <span>"Last edit " <time datetime=edited_iso>{edited}</time></span>
            <span class="home-separator" aria-hidden="true">" · "</span>
            {last_run}
        </p>
    }
}

/// Rename, Duplicate, Remove from this browser.
#[component]
fn LineActions(
    ids: StoredValue<LineIds>,
    mode: RwSignal<LineMode>,
    start_renaming: Callback<()>,
    make_copy: Callback<()>,
    ask_removal: Callback<()>,
) -> impl IntoView {
    view! {
        <div class="home-graph-actions">
            <button
                type="button"
                id=ids.with_value(|ids| ids.rename.clone())
                disabled=move || mode.get() != LineMode::Showing
                on:click=move |_| start_renaming.run(())
            >
                "Rename"
            </button>
            <button
                type="button"
                disabled=move || mode.get() != LineMode::Showing
                title="Make a copy this browser can edit"
                on:click=move |_| make_copy.run(())
            >
                "Duplicate"
            </button>
            <button
                type="button"
                id=ids.with_value(|ids| ids.remove.clone())
                disabled=move || mode.get() == LineMode::Working
                title="Take it off this list; the graph stays on the server"
                on:click=move |_| ask_removal.run(())
            >
                "Remove from this browser"
            </button>
        </div>
    }
}

/// The question before a graph leaves this browser's list; Escape keeps it.
#[component]
fn RemovalConfirm(
    ids: StoredValue<LineIds>,
    name: StoredValue<String>,
    keep: Callback<()>,
    remove: Callback<()>,
) -> impl IntoView {
    view! {
        <div
            class="home-confirm"
            role="group"
            aria-label=format!("Remove “{}” from this browser?", name.get_value())
            on:keydown=move |event: web_sys::KeyboardEvent| {
                if event.key() == "Escape" {
                    event.prevent_default();
                    keep.run(());
                }
            }
        >
            <p>
                {format!("Remove “{}” from this browser? ", name.get_value())}
                "It stays on the server for anyone with its link, but this browser will no longer be able to edit it — unless you keep its edit link (Share → Edit link) and open it again."
            </p>
            <div class="home-graph-actions">
                <button type="button" class="danger" id=ids.with_value(|ids| ids.confirm.clone()) on:click=move |_| remove.run(())>"Remove"</button>
                <button type="button" on:click=move |_| keep.run(())>"Keep"</button>
            </div>
        </div>
    }
}

/// A graph this browser holds a token for that the server no longer shows
/// it: gone, or the token no longer matches. Only forgetting it is left.
#[component]
fn GoneLine(graph_id: String, home: Home) -> impl IntoView {
    let forget_id = graph_id.clone();
    view! {
        <li class="home-graph unavailable" data-graph-id=graph_id.clone()>
            <div class="home-graph-main">
                <span class="home-graph-name">"No longer available"</span>
                <p class="home-graph-facts">
                    {format!("{graph_id}: deleted from the server, or this browser's edit token no longer matches it.")}
                </p>
            </div>
            <div class="home-graph-actions">
                <button type="button" on:click=move |_| {
                    home.forget(&forget_id, "Removed a graph that is no longer available from this browser.".to_owned())
                }>"Remove from this browser"</button>
            </div>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::graphs::{LastRun, Summaries};

    fn summary(id: &str, updated_at: i64) -> GraphSummary {
        GraphSummary {
            id: id.to_owned(),
            name: format!("Graph {id}"),
            revision: 1,
            updated_at,
            last_run: None,
            waiting_run: None,
        }
    }

    #[test]
    fn the_newest_edit_comes_first_and_gone_graphs_last() {
        let listed = entries(
            vec![
                summary("g_old", 10),
                summary("g_new", 30),
                summary("g_mid", 20),
            ],
            vec!["g_gone".to_owned()],
        );
        let ids: Vec<&str> = listed.iter().map(Entry::graph_id).collect();
        assert_eq!(ids, ["g_new", "g_mid", "g_old", "g_gone"]);
        assert_eq!(listed[3], Entry::Unavailable("g_gone".to_owned()));
    }

    #[test]
    fn a_line_is_drawn_again_when_what_it_shows_changes() {
        let before = Entry::Available(summary("g_a", 10));
        let mut renamed = summary("g_a", 10);
        renamed.name = "Renamed".to_owned();
        assert_ne!(before.key(), Entry::Available(renamed).key());
        let mut ran = summary("g_a", 10);
        ran.last_run = Some(LastRun {
            id: "r_1".to_owned(),
            status: RunStatus::Running,
            created_at: 11,
        });
        assert_ne!(before.key(), Entry::Available(ran).key());
        let mut waiting = summary("g_a", 10);
        waiting.waiting_run = Some("r_1".to_owned());
        assert_ne!(before.key(), Entry::Available(waiting).key());
        assert_eq!(before.key(), Entry::Available(summary("g_a", 10)).key());
    }

    #[test]
    fn statuses_and_copies_read_as_words() {
        assert_eq!(status_words(RunStatus::Completed), "Completed");
        assert_eq!(status_words(RunStatus::Interrupted), "Interrupted");
        assert_eq!(copy_name("Tide tables"), "Tide tables (copy)");
    }

    #[test]
    fn the_servers_answer_is_read_as_it_is_documented() {
        let reply: Summaries = serde_json::from_str(
            r#"{"graphs": [{"id": "g_a", "name": "A", "revision": 3, "updated_at": 5,
                "last_run": {"id": "r_1", "status": "failed", "created_at": 4}},
               {"id": "g_b", "name": "B", "revision": 1, "updated_at": 6, "last_run": null}],
              "unknown": ["g_c"]}"#,
        )
        .unwrap();
        let listed = entries(reply.graphs, reply.unknown);
        assert_eq!(listed.len(), 3);
        match &listed[1] {
            Entry::Available(graph) => {
                assert_eq!(
                    graph.last_run.as_ref().map(|run| run.status.as_str()),
                    Some("failed")
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
