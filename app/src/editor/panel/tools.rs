//! The Tools section of an agent task (PRODUCT §3.17): the tools it may
//! call, chosen from the server's MCP servers as `GET /api/providers`
//! lists them, each with the name the model calls it by and the arguments
//! locked for it (taken out of what the model sees, merged into every
//! call), and the most calls an activation may make. Validation's
//! findings about tools show here, in the words a run would refuse with.

use graph::ModuleConfig;
use graph::tools::{DEFAULT_MAX_TOOL_CALLS, MOST_TOOL_CALLS, ToolChoice};
use leptos::prelude::*;
use serde_json::{Map, Value};
use wire::providers::{ToolInfo, ToolServerInfo};

use super::Selected;
use super::fields::{FieldProblems, NumberField, TextField};

mod approval;

/// The module's chosen tools.
pub(super) fn chosen(config: &ModuleConfig) -> Vec<ToolChoice> {
    match config {
        ModuleConfig::AgentTask(task) => task.tools.clone(),
        _ => Vec::new(),
    }
}

fn chosen_mut(config: &mut ModuleConfig) -> Option<&mut Vec<ToolChoice>> {
    match config {
        ModuleConfig::AgentTask(task) => Some(&mut task.tools),
        _ => None,
    }
}

/// The servers the editor's server offers, as last listed.
fn servers(selected: Selected) -> Signal<Vec<ToolServerInfo>> {
    let editor = selected.editor;
    Signal::derive(move || {
        editor
            .catalogue
            .with(|catalogue| {
                catalogue
                    .as_ref()
                    .map(|catalogue| catalogue.tool_servers.clone())
            })
            .unwrap_or_default()
    })
}

/// What server `server` says of tool `tool`, when it lists it.
fn info(servers: &[ToolServerInfo], server: &str, tool: &str) -> Option<ToolInfo> {
    servers
        .iter()
        .find(|known| known.id == server)?
        .tools
        .iter()
        .find(|known| known.name == tool)
        .cloned()
}

/// The arguments a tool's input schema takes, each with its type.
fn arguments_of(info: &ToolInfo) -> Vec<(String, String)> {
    info.input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, schema)| {
                    let kind = schema
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("string");
                    (name.clone(), kind.to_owned())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A locked value as typed, read as its argument's type: a number or a
/// yes/no for those, else the text itself (templates are text).
fn typed(kind: &str, text: &str) -> Value {
    let trimmed = text.trim();
    let parsed = match kind {
        "integer" => trimmed.parse::<i64>().ok().map(Value::from),
        "number" => trimmed.parse::<i64>().ok().map(Value::from).or_else(|| {
            parse_float(trimmed)
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        }),
        "boolean" => match trimmed {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    };
    parsed.unwrap_or_else(|| Value::String(text.to_owned()))
}

/// A decimal number as the browser reads it (Rust's float parser stays
/// out of the bundle); `None` for anything but a number's characters.
fn parse_float(text: &str) -> Option<f64> {
    let shaped = !text.is_empty()
        && text.bytes().any(|byte| byte.is_ascii_digit())
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || b"+-.eE".contains(&byte));
    if !shaped {
        return None;
    }
    #[cfg(target_arch = "wasm32")]
    let number = js_sys::Number::parse_float(text);
    #[cfg(not(target_arch = "wasm32"))]
    let number: f64 = text.parse().ok()?;
    number.is_finite().then_some(number)
}

/// A locked value as its field shows it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The choices of the "Add a tool" list: every listed tool not chosen yet,
/// as `server/tool` with a label.
fn addable(servers: &[ToolServerInfo], chosen: &[ToolChoice]) -> Vec<(String, String, String)> {
    let mut options = Vec::new();
    for server in servers {
        for tool in &server.tools {
            let taken = chosen
                .iter()
                .any(|choice| choice.server == server.id && choice.tool == tool.name);
            if !taken {
                let value = format!("{}/{}", server.id, tool.name);
                options.push((server.name.clone(), value, tool.name.clone()));
            }
        }
    }
    options
}

#[component]
pub fn ToolsSection(selected: Selected) -> impl IntoView {
    let servers = servers(selected);
    let tools = selected.read(chosen);
    let add = selected.act("Add tool", |config, picked: String| {
        let Some((server, tool)) = picked.split_once('/') else {
            return;
        };
        if let Some(tools) = chosen_mut(config) {
            tools.push(ToolChoice {
                server: server.to_owned(),
                tool: tool.to_owned(),
                ..ToolChoice::default()
            });
        }
    });
    let unavailable = move || {
        servers
            .get()
            .into_iter()
            .filter_map(|server| {
                server
                    .problem
                    .map(|problem| format!("{}: {problem}", server.name))
            })
            .collect::<Vec<_>>()
    };
    view! {
        <section class="tools" aria-label="Tools">
            <h3>"Tools"</h3>
            <p class="hint">"Tools the agent may call, from this server's MCP servers. It calls them as it needs within each turn; each call and its result are in the run's transcript."</p>
            <ul class="tool-list">
                <For each=move || 0..tools.get().len() key=|index| *index let:index>
                    <ChosenTool selected index servers/>
                </For>
            </ul>
            <label class="field">
                <span class="field-label">"Add a tool"</span>
                <select
                    class="add-tool"
                    disabled=move || selected.disabled().get()
                    on:change=move |event| {
                        let picked = event_target_value(&event);
                        if !picked.is_empty() {
                            add.run(picked);
                        }
                        event_target::<web_sys::HtmlSelectElement>(&event).set_value("");
                    }
                >
                    <option value="" selected=true>"Choose a tool…"</option>
                    {move || {
                        let mut groups: Vec<(String, Vec<(String, String)>)> = Vec::new();
                        for (server, value, tool) in addable(&servers.get(), &tools.get()) {
                            match groups.iter_mut().find(|(name, _)| *name == server) {
                                Some((_, group)) => group.push((value, tool)),
                                None => groups.push((server, vec![(value, tool)])),
                            }
                        }
                        groups
                            .into_iter()
                            .map(|(server, group)| view! {
                                <optgroup label=server>
                                    {group.into_iter().map(|(value, tool)| view! { <option value=value>{tool}</option> }).collect_view()}
                                </optgroup>
                            })
                            .collect_view()
                    }}
                </select>
            </label>
            {move || unavailable().into_iter().map(|problem| view! { <p class="hint tool-server-problem">{problem}</p> }).collect_view()}
            <NumberField
                label="Most tool calls per activation"
                placeholder="10"
                min=1.0
                max=f64::from(MOST_TOOL_CALLS)
                step=1.0
                value=selected.read(|config| match config {
                    ModuleConfig::AgentTask(task) => task.max_tool_calls.map(f64::from),
                    _ => None,
                })
                on_input=selected.update("Change most tool calls", "max_tool_calls", |config, value: Option<f64>| {
                    if let ModuleConfig::AgentTask(task) = config {
                        task.max_tool_calls = value.map(|value| value.round().clamp(1.0, f64::from(MOST_TOOL_CALLS)) as u32);
                    }
                })
                disabled=selected.disabled()
            />
            <p class="hint">{format!("Past this many calls ({DEFAULT_MAX_TOOL_CALLS} when empty) the activation fails with tools.limit_reached, on its error output.")}</p>
            <TextField
                label="Notify when a call waits (webhooks, by id)"
                placeholder="ops"
                value=selected.read(|config| match config {
                    ModuleConfig::AgentTask(task) => task.notify.join(", "),
                    _ => String::new(),
                })
                on_input=selected.update("Change who is notified", "notify", |config, value: String| {
                    if let ModuleConfig::AgentTask(task) = config {
                        task.notify = super::fields::ids(&value);
                    }
                })
                disabled=selected.disabled()
            />
            <FieldProblems selected codes=&[graph::Code::ToolUnknown, graph::Code::ToolInvalid, graph::Code::ToolsUnsupported]/>
        </section>
    }
}

/// One chosen tool: its name, what the model calls it, its locked
/// arguments.
#[component]
fn ChosenTool(
    selected: Selected,
    index: usize,
    servers: Signal<Vec<ToolServerInfo>>,
) -> impl IntoView {
    let choice =
        selected.read(move |config| chosen(config).get(index).cloned().unwrap_or_default());
    let info = Memo::new(move |_| {
        let choice = choice.get();
        info(&servers.get(), &choice.server, &choice.tool)
    });
    let rename = selected.update("Rename tool", "tool_as", move |config, name: String| {
        if let Some(choice) = chosen_mut(config).and_then(|tools| tools.get_mut(index)) {
            let name = name.trim().to_owned();
            choice.alias = (!name.is_empty() && name != choice.tool).then_some(name);
        }
    });
    let remove = selected.act("Remove tool", move |config, (): ()| {
        if let Some(tools) = chosen_mut(config)
            && index < tools.len()
        {
            tools.remove(index);
        }
    });
    let lock = selected.act("Lock tool argument", move |config, argument: String| {
        if let Some(choice) = chosen_mut(config).and_then(|tools| tools.get_mut(index)) {
            choice
                .arguments
                .entry(argument)
                .or_insert(Value::String(String::new()));
        }
    });
    // Memos, so that typing into a locked value does not build its field
    // again (which would lose the caret) nor the list beside it.
    let locked = Memo::new(move |_| {
        choice.with(|choice| choice.arguments.keys().cloned().collect::<Vec<_>>())
    });
    let unlockable = Memo::new(move |_| {
        let locked = locked.get();
        info.get()
            .map(|info| arguments_of(&info))
            .unwrap_or_default()
            .into_iter()
            .filter(|(name, _)| !locked.contains(name))
            .map(|(name, _)| name)
            .collect::<Vec<_>>()
    });
    let title = move || {
        let choice = choice.get();
        format!("{} · {}", choice.server, choice.tool)
    };
    view! {
        <li class="tool" data-tool=move || choice.get().name().to_owned()>
            <div class="tool-head">
                <span class="tool-title">{title}</span>
                <button type="button" aria-label=move || format!("Remove tool {}", choice.get().name()) disabled=move || selected.disabled().get() on:click=move |_| remove.run(())>"✕"</button>
            </div>
            <p class="hint">{move || info.get().map(|info| info.description).unwrap_or_else(|| "This server does not list this tool now.".to_owned())}</p>
            <label class="field">
                <span class="field-label">"The model calls it"</span>
                <input
                    type="text"
                    placeholder=move || choice.get().tool
                    prop:value=move || choice.get().alias.unwrap_or_default()
                    disabled=move || selected.disabled().get()
                    on:input=move |event| rename.run(event_target_value(&event))
                />
            </label>
            <approval::ToolApprovalField selected index servers/>
            <ul class="locked-arguments" aria-label="Locked arguments">
                <For each=move || locked.get() key=|argument| argument.clone() let:argument>
                    <LockedArgument selected index argument info/>
                </For>
            </ul>
            {move || {
                let options = unlockable.get();
                (!options.is_empty()).then(|| view! {
                    <select
                        class="lock-argument"
                        aria-label=move || format!("Lock an argument of {}", choice.get().name())
                        disabled=move || selected.disabled().get()
                        on:change=move |event| {
                            let argument = event_target_value(&event);
                            if !argument.is_empty() {
                                lock.run(argument);
                            }
                        }
                    >
                        <option value="" selected=true>"Lock an argument to a value…"</option>
                        {options.into_iter().map(|name| view! { <option value=name.clone()>{name.clone()}</option> }).collect_view()}
                    </select>
                })
            }}
        </li>
    }
}

/// A locked argument: its value ({{ }} templates allowed), never the model's.
#[component]
fn LockedArgument(
    selected: Selected,
    index: usize,
    argument: String,
    info: Memo<Option<ToolInfo>>,
) -> impl IntoView {
    let name = StoredValue::new(argument.clone());
    let value = selected.read(move |config| {
        chosen(config)
            .get(index)
            .and_then(|choice| choice.arguments.get(&name.get_value()).map(shown))
            .unwrap_or_default()
    });
    let kind = move || {
        info.get()
            .map(|info| arguments_of(&info))
            .and_then(|arguments| {
                arguments
                    .into_iter()
                    .find(|(known, _)| *known == name.get_value())
            })
            .map_or_else(|| "string".to_owned(), |(_, kind)| kind)
    };
    let set = selected.update(
        "Edit locked argument",
        "tool_argument",
        move |config, text: String| {
            let kind = kind();
            if let Some(choice) = chosen_mut(config).and_then(|tools| tools.get_mut(index)) {
                choice
                    .arguments
                    .insert(name.get_value(), typed(&kind, &text));
            }
        },
    );
    let unlock = selected.act("Unlock tool argument", move |config, (): ()| {
        if let Some(choice) = chosen_mut(config).and_then(|tools| tools.get_mut(index)) {
            let mut arguments: Map<String, Value> = std::mem::take(&mut choice.arguments);
            arguments.remove(&name.get_value());
            choice.arguments = arguments;
        }
    });
    view! {
        <li class="locked-argument">
            <label class="field">
                <span class="field-label">{format!("{argument} · locked")}</span>
                <input
                    type="text"
                    placeholder="a value, or {{ Label.output }}"
                    prop:value=move || value.get()
                    disabled=move || selected.disabled().get()
                    on:input=move |event| set.run(event_target_value(&event))
                />
            </label>
            <button type="button" aria-label=format!("Unlock {argument}") disabled=move || selected.disabled().get() on:click=move |_| unlock.run(())>"✕"</button>
        </li>
    }
}

/// Which of the module's tools re-prompt `index` may call (the seed's
/// `allowed_tools`): every one (unset), some, or none.
#[component]
pub fn RePromptTools(selected: Selected, index: usize) -> impl IntoView {
    let owner = graph::config::RePromptOwner::Module;
    // Memos, so that an edit elsewhere in the module does not build the
    // fold again (closing it).
    let names = selected.read(|config| {
        chosen(config)
            .iter()
            .map(|choice| choice.name().to_owned())
            .collect::<Vec<_>>()
    });
    let names = Memo::new(move |_| names.get());
    let any = Memo::new(move |_| !names.with(Vec::is_empty));
    let allowed = selected.read(move |config| {
        config
            .re_prompts(owner)
            .and_then(|list| list.get(index))
            .and_then(|re_prompt| re_prompt.allowed_tools.clone())
    });
    let allowed = Memo::new(move |_| allowed.get());
    let set = selected.act(
        "Change a re-prompt's tools",
        move |config, allowed: Option<Vec<String>>| {
            if let Some(re_prompt) = config
                .re_prompts_mut(owner)
                .and_then(|list| list.get_mut(index))
            {
                re_prompt.allowed_tools = allowed;
            }
        },
    );
    let summary = move || match allowed.get() {
        None => "Tools: all the module's".to_owned(),
        Some(some) if some.is_empty() => "Tools: none".to_owned(),
        Some(some) => format!("Tools: {}", some.join(", ")),
    };
    move || {
        any.get().then(|| view! {
            <details class="reprompt-tools">
                <summary>{summary}</summary>
                <label class="field field-check">
                    <input
                        type="checkbox"
                        prop:checked=move || allowed.get().is_none()
                        disabled=move || selected.disabled().get()
                        on:change=move |event| set.run(if event_target_checked(&event) { None } else { Some(names.get_untracked()) })
                    />
                    <span>"Every tool of the module"</span>
                </label>
                <For each=move || names.get() key=|name| name.clone() let:name>{{
                    let tool = StoredValue::new(name.clone());
                    view! {
                        <label class="field field-check">
                            <input
                                type="checkbox"
                                prop:checked=move || allowed.get().is_none_or(|some| some.contains(&tool.get_value()))
                                disabled=move || selected.disabled().get()
                                on:change=move |event| {
                                    let mut some = allowed.get_untracked().unwrap_or_else(|| names.get_untracked());
                                    some.retain(|known| *known != tool.get_value());
                                    if event_target_checked(&event) {
                                        some.push(tool.get_value());
                                    }
                                    // In the module's order.
                                    let order = names.get_untracked();
                                    some.sort_by_key(|known| order.iter().position(|name| name == known));
                                    set.run(Some(some));
                                }
                            />
                            <span>{name}</span>
                        </label>
                    }
                }}</For>
            </details>
        })
    }
}
