//! Whether a chosen tool's calls wait for a person (PRODUCT §3.17): the
//! module's `approval` for it, how long a call waits, and the verdict in
//! the words the run uses — the operator's word on the server and the
//! tool's read-only mark (believed only from a trusted server) taken in,
//! by the one function the run decides with.

use graph::tool_approval::{ServerPolicy, ToolApproval, verdict};
use graph::tools::ToolChoice;
use leptos::prelude::*;
use wire::providers::ToolServerInfo;

use super::{Selected, chosen, chosen_mut, info};
use crate::editor::panel::fields::NumberField;

/// The verdict on `choice`'s calls, in words; `None` while its server
/// does not list it.
pub(super) fn verdict_words(
    servers: &[ToolServerInfo],
    choice: &ToolChoice,
) -> Option<(bool, &'static str)> {
    let server = servers.iter().find(|server| server.id == choice.server)?;
    let tool = info(servers, &choice.server, &choice.tool)?;
    let policy = ServerPolicy {
        approval: server.approval,
        trusted: server.trusted,
    };
    let decided = verdict(
        choice.approval,
        policy,
        tool.annotations.read_only == Some(true),
    );
    Some((decided.waits, decided.words()))
}

/// The select's value for a module's word: empty for the server's.
fn option_value(approval: Option<ToolApproval>) -> &'static str {
    approval.map_or("", ToolApproval::as_str)
}

fn parse(value: &str) -> Option<ToolApproval> {
    match value {
        "ask" => Some(ToolApproval::Ask),
        "auto" => Some(ToolApproval::Auto),
        "by_annotation" => Some(ToolApproval::ByAnnotation),
        _ => None,
    }
}

/// The approval of chosen tool `index`.
#[component]
pub fn ToolApprovalField(
    selected: Selected,
    index: usize,
    servers: Signal<Vec<ToolServerInfo>>,
) -> impl IntoView {
    let choice =
        selected.read(move |config| chosen(config).get(index).cloned().unwrap_or_default());
    let set = selected.act("Change tool approval", move |config, value: String| {
        if let Some(choice) = chosen_mut(config).and_then(|tools| tools.get_mut(index)) {
            choice.approval = parse(&value);
        }
    });
    let set_timeout = selected.update(
        "Change tool approval timeout",
        "tool_timeout",
        move |config, value: Option<f64>| {
            if let Some(choice) = chosen_mut(config).and_then(|tools| tools.get_mut(index)) {
                choice.timeout_seconds =
                    value.map(|value| value.round().clamp(1.0, 31_536_000.0) as u32);
            }
        },
    );
    let said = Memo::new(move |_| verdict_words(&servers.get(), &choice.get()));
    let waits = move || said.get().is_some_and(|(waits, _)| waits);
    view! {
        <div class="tool-approval">
            <label class="field">
                <span class="field-label">"Asks a person before a call"</span>
                <select
                    class="tool-approval-choice"
                    aria-label=move || format!("When calls of {} wait for a person", choice.get().name())
                    disabled=move || selected.disabled().get()
                    prop:value=move || option_value(choice.get().approval)
                    on:change=move |event| set.run(event_target_value(&event))
                >
                    <option value="">"As the server says"</option>
                    <option value="ask">"Always ask"</option>
                    <option value="auto">"Never ask"</option>
                    <option value="by_annotation">"Ask unless a trusted server marks it read-only"</option>
                </select>
            </label>
            <p class="hint tool-approval-verdict" data-waits=move || waits().to_string()>
                {move || said.get().map_or("Whether calls wait shows once the server lists this tool.", |(_, words)| words)}
            </p>
            {move || waits().then(|| view! {
                <NumberField
                    label="Seconds a call waits for a decision"
                    placeholder="as long as the run"
                    min=1.0
                    max=31_536_000.0
                    step=1.0
                    value=Signal::derive(move || choice.get().timeout_seconds.map(f64::from))
                    on_input=set_timeout
                    disabled=selected.disabled()
                />
            })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::providers::{ToolHints, ToolInfo};

    fn server(trusted: bool, read_only: bool) -> Vec<ToolServerInfo> {
        vec![ToolServerInfo {
            id: "files".to_owned(),
            name: "Files".to_owned(),
            transport: "stdio".to_owned(),
            trusted,
            approval: ToolApproval::ByAnnotation,
            tools: vec![ToolInfo {
                name: "read_file".to_owned(),
                annotations: ToolHints {
                    read_only: Some(read_only),
                    ..ToolHints::default()
                },
                ..ToolInfo::default()
            }],
            problem: None,
            not_for_agents: None,
        }]
    }

    #[test]
    fn the_panel_says_what_the_run_will_do_with_each_tools_calls() {
        let mut choice = ToolChoice {
            server: "files".to_owned(),
            tool: "read_file".to_owned(),
            ..ToolChoice::default()
        };
        assert_eq!(
            verdict_words(&server(true, true), &choice),
            Some((
                false,
                "Calls run without asking: a trusted server marks it read-only"
            ))
        );
        assert_eq!(
            verdict_words(&server(false, true), &choice),
            Some((
                true,
                "Calls wait for you: it says it is read-only, but its server is not trusted"
            ))
        );
        choice.approval = Some(ToolApproval::Ask);
        assert_eq!(
            verdict_words(&server(true, true), &choice),
            Some((true, "Calls wait for you: this module asks"))
        );
        choice.tool = "gone".to_owned();
        assert_eq!(verdict_words(&server(true, true), &choice), None);
        assert_eq!(
            parse(option_value(Some(ToolApproval::Auto))),
            Some(ToolApproval::Auto)
        );
        assert_eq!(parse(option_value(None)), None);
    }
}
