//! The Transcript tab of the run panel: the session as sent, turn by turn,
//! with each tool call folded together with its result (PRODUCT §3.17) —
//! its name and arguments, how it ended and how long it took in the fold's
//! line, what it gave inside. Read from the activation's record, so it is
//! the same while the run goes on (the record is read again at each tool
//! event) and after a reload.

use leptos::prelude::*;
use wire::activation::{ActivationRecord, ToolOutcome, TranscriptRole};

/// One thing the transcript shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A system prompt, a user turn or what the model said.
    Said { role: &'static str, text: String },
    /// A tool call and, once it has ended, its result.
    Call {
        /// `lookup {"key":"tides"}`.
        call: String,
        /// The result's text, without the tool's name.
        result: Option<String>,
        outcome: ToolOutcome,
        duration_ms: u64,
    },
}

/// The activation's transcript as items: each call paired with the result
/// that answers it (results come after their calls, in their order), and
/// with how it ended from the record's calls (in the same order).
pub fn items(activation: &ActivationRecord) -> Vec<Item> {
    let mut items = Vec::with_capacity(activation.transcript.len());
    // Calls without their result yet, by position in `items`.
    let mut waiting: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut calls = activation.tool_calls.iter();
    for entry in &activation.transcript {
        match entry.role {
            TranscriptRole::ToolCall => {
                let recorded = calls.next();
                waiting.push_back(items.len());
                items.push(Item::Call {
                    call: entry.text.clone(),
                    result: None,
                    outcome: recorded.map_or(ToolOutcome::Pending, |call| call.outcome),
                    duration_ms: recorded.map_or(0, |call| call.duration_ms),
                });
            }
            TranscriptRole::ToolResult => {
                let text = entry
                    .text
                    .split_once(" → ")
                    .map_or(entry.text.as_str(), |(_, result)| result)
                    .to_owned();
                match waiting.pop_front().and_then(|at| items.get_mut(at)) {
                    Some(Item::Call { result, .. }) => *result = Some(text),
                    _ => items.push(Item::Said {
                        role: "tool result",
                        text,
                    }),
                }
            }
            role => items.push(Item::Said {
                role: role.as_str(),
                text: entry.text.clone(),
            }),
        }
    }
    items
}

/// How a call ended, in a word and a mark.
fn ended(outcome: ToolOutcome) -> &'static str {
    match outcome {
        ToolOutcome::Pending => "… running",
        ToolOutcome::Ok => "✓",
        ToolOutcome::Error => "✕ failed",
        ToolOutcome::TimedOut => "⏱ timed out",
        ToolOutcome::ServerGone => "✕ server unavailable",
        ToolOutcome::Interrupted => "⚠ interrupted",
        ToolOutcome::NotRun => "⊘ not made",
        ToolOutcome::Declined => "⊘ declined",
        ToolOutcome::Waiting => "⏸ waits for you",
    }
}

#[component]
pub fn TranscriptView(activation: Memo<Option<ActivationRecord>>) -> impl IntoView {
    let shown = Memo::new(move |_| {
        activation.with(|activation| activation.as_ref().map(items).unwrap_or_default())
    });
    view! {
        <div class="run-output transcript" role="tabpanel">
            {move || shown.get().into_iter().map(|item| match item {
                Item::Said { role, text } => view! {
                    <div class="transcript-entry" data-role=role>
                        <span class="transcript-role">{role}</span>
                        <pre>{text}</pre>
                    </div>
                }.into_any(),
                Item::Call { call, result, outcome, duration_ms } => {
                    let time = (outcome != ToolOutcome::Pending).then(|| format!(" · {}", crate::canvas::model::duration_text(duration_ms as f64)));
                    view! {
                        <details class="tool-exchange" data-outcome=format!("{outcome:?}")>
                            <summary>
                                <span class="tool-mark" aria-hidden="true">"🔧 "</span>
                                <code>{call}</code>
                                <span class="tool-ended">{format!(" {}", ended(outcome))}{time}</span>
                            </summary>
                            <pre>{result.unwrap_or_else(|| "No result yet: the call is running.".to_owned())}</pre>
                        </details>
                    }.into_any()
                }
            }).collect_view()}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use wire::activation::{ToolCallRecord, TranscriptEntry};

    use super::*;

    fn entry(role: TranscriptRole, text: &str) -> TranscriptEntry {
        TranscriptEntry {
            role,
            text: text.to_owned(),
        }
    }

    fn recorded(outcome: ToolOutcome, duration_ms: u64) -> ToolCallRecord {
        ToolCallRecord {
            call_id: String::new(),
            response_index: 0,
            server: "patchbay".to_owned(),
            tool: String::new(),
            arguments: serde_json::Value::Null,
            outcome,
            result: serde_json::Value::Null,
            duration_ms,
            ..ToolCallRecord::default()
        }
    }

    #[test]
    fn each_call_is_folded_with_its_result_and_how_it_ended() {
        let mut activation = ActivationRecord::new("ask", 1, 0);
        activation.transcript = vec![
            entry(TranscriptRole::User, "How often?"),
            entry(TranscriptRole::ToolCall, "lookup {\"key\":\"tides\"}"),
            entry(TranscriptRole::ToolCall, "clock {}"),
            entry(TranscriptRole::ToolResult, "lookup → twice a day"),
            entry(TranscriptRole::ToolResult, "clock → The tool failed: no"),
            entry(TranscriptRole::Assistant, "Twice."),
            entry(TranscriptRole::ToolCall, "lookup {\"key\":\"moon\"}"),
        ];
        activation.tool_calls = vec![
            recorded(ToolOutcome::Ok, 3),
            recorded(ToolOutcome::Error, 5),
            recorded(ToolOutcome::Pending, 0),
        ];
        let items = items(&activation);
        assert_eq!(items.len(), 5);
        assert_eq!(
            items[1],
            Item::Call {
                call: "lookup {\"key\":\"tides\"}".to_owned(),
                result: Some("twice a day".to_owned()),
                outcome: ToolOutcome::Ok,
                duration_ms: 3
            }
        );
        assert!(
            matches!(&items[2], Item::Call { result: Some(result), outcome: ToolOutcome::Error, .. } if result == "The tool failed: no")
        );
        assert!(matches!(&items[3], Item::Said { role: "assistant", text } if text == "Twice."));
        // Still running: no result yet.
        assert!(matches!(
            &items[4],
            Item::Call {
                result: None,
                outcome: ToolOutcome::Pending,
                ..
            }
        ));
    }
}
