//! Ending a run a server left unfinished when it is not resumed (the
//! operator turned automatic resume off, or the run cannot resume): it gets
//! a terminal `run.interrupted` event, so a client following it stops
//! waiting, and each activation that was in flight is kept in the record as
//! `interrupted`, with the text it had streamed — rebuilt from the event
//! log, the source of truth: a checkpoint has only the turns answered.

use std::collections::BTreeMap;

use wire::activation::{ActivationRecord, ActivationStatus, ResponseRecord};
use wire::event::{RunEvent, RunStatus};

use crate::store::{Store, StoreError, StoredEvent};

/// Why the run and its activations stopped.
pub const REASON: &str = "the server stopped while the run was in progress";

/// The activations a log shows queued or started and not ended, with what
/// they streamed, by (module, activation).
pub fn in_flight(events: &[StoredEvent]) -> Vec<ActivationRecord> {
    let mut open: BTreeMap<(String, u32), ActivationRecord> = BTreeMap::new();
    for stored in events {
        let Ok(event) = RunEvent::from_parts(
            &stored.name,
            serde_json::from_str(&stored.payload).unwrap_or_default(),
        ) else {
            continue;
        };
        match event {
            RunEvent::ModuleQueued {
                module_id,
                activation,
            }
            | RunEvent::ModuleActivated {
                module_id,
                activation,
            } => {
                let record = ActivationRecord::new(&module_id, activation, stored.ts);
                open.insert((module_id, activation), record);
            }
            RunEvent::ModuleCompleted {
                module_id,
                activation,
            }
            | RunEvent::ModuleFailed {
                module_id,
                activation,
                ..
            } => {
                open.remove(&(module_id, activation));
            }
            RunEvent::ModuleOutputDelta {
                module_id,
                response_index,
                text,
            } => {
                // Deltas name the module, not the activation: the latest
                // open one of it is streaming.
                if let Some(record) = open
                    .iter_mut()
                    .rev()
                    .find(|((id, _), _)| *id == module_id)
                    .map(|(_, record)| record)
                {
                    match record
                        .responses
                        .iter_mut()
                        .find(|response| response.index == response_index)
                    {
                        Some(response) => response.text.push_str(&text),
                        None => record.responses.push(ResponseRecord {
                            index: response_index,
                            label: if response_index == 0 {
                                "Original".to_owned()
                            } else {
                                format!("Re-prompt {response_index}")
                            },
                            text,
                            ..ResponseRecord::default()
                        }),
                    }
                }
            }
            _ => {}
        }
    }
    open.into_values()
        .map(|mut record| {
            record.status = ActivationStatus::Interrupted;
            record.error = Some(REASON.to_owned());
            record
        })
        .collect()
}

/// Ends a run nobody will resume (automatic resume is off, or the run
/// cannot resume): it is marked interrupted with `reason`, the activations
/// that were in flight are kept as interrupted with what they had
/// streamed, and its log ends with `run.interrupted`. Written as `owner`,
/// the process that claimed it: nothing is written once another holds it.
pub async fn close(store: &Store, id: &str, reason: &str, owner: &str) -> Result<(), StoreError> {
    let events = store.events_after(id, 0).await?;
    // Activations that ended keep their record; a checkpoint of one in
    // progress gives way to what the log says it streamed.
    let ended: Vec<(String, u32)> = store
        .activations(id)
        .await?
        .iter()
        .filter_map(|json| serde_json::from_str::<ActivationRecord>(json).ok())
        .filter(|record| {
            !matches!(
                record.status,
                ActivationStatus::Running | ActivationStatus::Queued | ActivationStatus::Waiting
            )
        })
        .map(|record| (record.module_id, record.activation))
        .collect();
    for mut record in in_flight(&events) {
        if ended.contains(&(record.module_id.clone(), record.activation)) {
            continue;
        }
        record.error = Some(reason.to_owned());
        super::recorder::save_record(store, id, &record, None, Some(owner)).await?;
    }
    let event = RunEvent::RunInterrupted {
        status: RunStatus::Interrupted,
        error: reason.to_owned(),
    };
    let next = events.last().map_or(1, |last| last.seq + 1);
    store
        .append_events(
            id,
            vec![StoredEvent {
                seq: next,
                name: event.name().to_owned(),
                payload: event.payload_text(),
                ts: crate::store::now_millis(),
            }],
            Some(owner),
        )
        .await?;
    // After its terminal event: a run marked ended has all its events.
    store
        .set_run_status(id, "interrupted", Some(reason), Some(owner))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(seq: i64, event: RunEvent) -> StoredEvent {
        StoredEvent {
            seq,
            name: event.name().to_owned(),
            payload: event.payload_text(),
            ts: seq * 10,
        }
    }

    #[test]
    fn only_what_started_and_never_ended_is_in_flight_with_its_streamed_text() {
        let delta = |module: &str, index: u32, text: &str| RunEvent::ModuleOutputDelta {
            module_id: module.to_owned(),
            response_index: index,
            text: text.to_owned(),
        };
        let activated = |module: &str, activation: u32| RunEvent::ModuleActivated {
            module_id: module.to_owned(),
            activation,
        };
        let events = vec![
            logged(1, activated("draft", 1)),
            logged(2, delta("draft", 0, "done")),
            logged(
                3,
                RunEvent::ModuleCompleted {
                    module_id: "draft".to_owned(),
                    activation: 1,
                },
            ),
            logged(4, activated("draft", 2)),
            logged(5, activated("review", 1)),
            logged(6, delta("draft", 0, "again")),
            logged(7, delta("draft", 1, "and more")),
            // Waiting for a slot when the server stopped: it never started.
            logged(
                8,
                RunEvent::ModuleQueued {
                    module_id: "summary".to_owned(),
                    activation: 1,
                },
            ),
        ];
        let open = in_flight(&events);
        let keys: Vec<(&str, u32)> = open
            .iter()
            .map(|record| (record.module_id.as_str(), record.activation))
            .collect();
        assert_eq!(keys, [("draft", 2), ("review", 1), ("summary", 1)]);
        assert_eq!(open[2].status, ActivationStatus::Interrupted);
        let draft = &open[0];
        assert_eq!(draft.status, ActivationStatus::Interrupted);
        assert_eq!(draft.started_at, 40);
        let texts: Vec<(&str, &str)> = draft
            .responses
            .iter()
            .map(|response| (response.label.as_str(), response.text.as_str()))
            .collect();
        assert_eq!(texts, [("Original", "again"), ("Re-prompt 1", "and more")]);
        assert!(open[1].responses.is_empty());
    }
}
