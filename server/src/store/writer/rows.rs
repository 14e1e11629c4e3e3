//! A group's writes as the rows they store, whatever the database: the
//! last version of each activation record (a group may hold several), the
//! state keys each run changes as one object for each part, the events and
//! the statuses in order.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{ActivationWrite, FINISHED, Write};

#[derive(serde::Serialize)]
pub struct EventRow<'a> {
    pub run_id: &'a str,
    pub seq: i64,
    pub name: &'a str,
    pub payload: &'a str,
    pub ts: i64,
}

#[derive(serde::Serialize)]
pub struct ActivationRow<'a> {
    pub run_id: &'a str,
    pub module_id: &'a str,
    pub activation: i64,
    pub status: &'a str,
    pub record: &'a str,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    /// `None` keeps the ending stored before.
    pub ending: Option<&'a str>,
}

/// The keys of one part of a run's state the group changes, as the JSON
/// object merged into the stored one.
#[derive(serde::Serialize)]
pub struct StateRow<'a> {
    pub run_id: &'a str,
    pub part: &'a str,
    pub state: String,
}

/// Which part of a run's stored state a key is kept in: its module's (the
/// label before the first dot, after `prev.` for the module's keys from
/// before it ran again), so that no part grows with the number of
/// modules; keys without a dot (`input`, `run_id`) in part ''. Any split
/// would do, so long as it is always the same: a label with a dot in it
/// only shares its part with another label.
pub fn state_part(key: &str) -> &str {
    let after = if key.starts_with("prev.") { 5 } else { 0 };
    match key.get(after..).and_then(|rest| rest.find('.')) {
        Some(at) => key.get(..after + at).unwrap_or(""),
        None => "",
    }
}

/// A run moved to a status; a finished run stays as it finished.
#[derive(serde::Serialize)]
pub struct StatusRow<'a> {
    pub run_id: &'a str,
    pub status: &'a str,
    pub error: Option<&'a str>,
    pub at: i64,
    pub finished: bool,
}

#[derive(Default)]
pub struct Group<'a> {
    pub events: Vec<EventRow<'a>>,
    /// The runs with new events, each once.
    pub runs_with_events: Vec<&'a str>,
    pub activations: Vec<ActivationRow<'a>>,
    pub state: Vec<StateRow<'a>>,
    pub statuses: Vec<StatusRow<'a>>,
}

impl<'a> Group<'a> {
    pub fn of(writes: &[&'a Write]) -> Group<'a> {
        let mut group = Group::default();
        let mut runs_with_events = BTreeSet::new();
        let mut activations: HashMap<(&str, &str, i64), usize> = HashMap::new();
        let mut state: BTreeMap<(&str, &str), BTreeMap<&str, &str>> = BTreeMap::new();
        for write in writes {
            match write {
                Write::Run(_) => {}
                Write::Events { run_id, events, .. } => {
                    runs_with_events.insert(run_id.as_str());
                    group.events.extend(events.iter().map(|event| EventRow {
                        run_id,
                        seq: event.seq,
                        name: &event.name,
                        payload: &event.payload,
                        ts: event.ts,
                    }));
                }
                Write::Activation(activation) => group.add_activation(&mut activations, activation),
                Write::State {
                    run_id, changes, ..
                } => {
                    for (key, value) in changes {
                        state
                            .entry((run_id, state_part(key)))
                            .or_default()
                            .insert(key, value);
                    }
                }
                Write::Status {
                    run_id,
                    status,
                    error,
                    at,
                    ..
                } => group.statuses.push(StatusRow {
                    run_id,
                    status,
                    error: error.as_deref(),
                    at: *at,
                    finished: FINISHED.contains(&status.as_str()),
                }),
            }
        }
        group.runs_with_events = runs_with_events.into_iter().collect();
        group.state = state
            .into_iter()
            .map(|((run_id, part), keys)| StateRow {
                run_id,
                part,
                // A map of strings always serializes.
                state: serde_json::to_string(&keys).unwrap_or_default(),
            })
            .collect();
        group
    }

    /// The statuses in rounds: each run's first status in the group in the
    /// first round, its second in the second, and so on. A round is one
    /// statement, and a run's statuses still follow each other as they
    /// were written.
    pub fn status_rounds(&self) -> Vec<Vec<&StatusRow<'a>>> {
        let mut rounds: Vec<Vec<&StatusRow>> = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for row in &self.statuses {
            let round = seen.entry(row.run_id).or_insert(0);
            if rounds.len() <= *round {
                rounds.push(Vec::new());
            }
            rounds[*round].push(row);
            *round += 1;
        }
        rounds
    }

    /// The last record of an activation is kept, with the last ending
    /// given (as saving them one by one keeps it).
    fn add_activation(
        &mut self,
        index: &mut HashMap<(&'a str, &'a str, i64), usize>,
        activation: &'a ActivationWrite,
    ) {
        let key = (
            activation.run_id.as_str(),
            activation.module_id.as_str(),
            activation.activation,
        );
        let mut row = ActivationRow {
            run_id: &activation.run_id,
            module_id: &activation.module_id,
            activation: activation.activation,
            status: &activation.status,
            record: &activation.record,
            started_at: activation.started_at,
            finished_at: activation.finished_at,
            ending: activation.ending.as_deref(),
        };
        match index.get(&key) {
            Some(&at) => {
                row.ending = row.ending.or(self.activations[at].ending);
                self.activations[at] = row;
            }
            None => {
                index.insert(key, self.activations.len());
                self.activations.push(row);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoredEvent;

    fn activation(record: &str, ending: Option<&str>) -> Write {
        Write::Activation(ActivationWrite {
            run_id: "r1".to_owned(),
            module_id: "m1".to_owned(),
            activation: 1,
            status: "running".to_owned(),
            record: record.to_owned(),
            started_at: 1,
            finished_at: None,
            ending: ending.map(str::to_owned),
            fence: None,
        })
    }

    #[test]
    fn a_state_key_is_kept_in_its_modules_part() {
        assert_eq!(state_part("Draft.output"), "Draft");
        assert_eq!(state_part("Draft.set.topic"), "Draft");
        assert_eq!(state_part("prev.Draft.output"), "prev.Draft");
        assert_eq!(state_part("input"), "");
        assert_eq!(state_part("run_id"), "");
        assert_eq!(state_part("prev.input"), "");
        assert_eq!(state_part("Étape 2.status"), "Étape 2");
    }

    #[test]
    fn a_group_keeps_the_last_record_and_state_value_and_every_event_and_status() {
        let state = |value: &str| Write::State {
            run_id: "r1".to_owned(),
            changes: vec![("Draft.output".to_owned(), value.to_owned())],
            fence: None,
        };
        let status = |status: &str| Write::Status {
            run_id: "r1".to_owned(),
            status: status.to_owned(),
            error: None,
            at: 5,
            fence: None,
        };
        let events = Write::Events {
            run_id: "r1".to_owned(),
            events: vec![
                StoredEvent {
                    seq: 1,
                    name: "run.started".to_owned(),
                    payload: "{}".to_owned(),
                    ts: 1,
                },
                StoredEvent {
                    seq: 2,
                    name: "module.activated".to_owned(),
                    payload: "{}".to_owned(),
                    ts: 2,
                },
            ],
            fence: None,
        };
        let writes = [
            events,
            status("running"),
            activation("first", Some("ended")),
            state("a"),
            activation("second", None),
            state("b"),
            status("completed"),
        ];
        let group = Group::of(&writes.iter().collect::<Vec<_>>());
        assert_eq!(group.events.len(), 2);
        assert_eq!(group.runs_with_events, vec!["r1"]);
        assert_eq!(group.activations.len(), 1);
        assert_eq!(group.activations[0].record, "second");
        assert_eq!(group.activations[0].ending, Some("ended"));
        assert_eq!(group.state.len(), 1);
        assert_eq!(group.state[0].part, "Draft");
        assert_eq!(group.state[0].state, r#"{"Draft.output":"b"}"#);
        let statuses: Vec<(&str, bool)> = group
            .statuses
            .iter()
            .map(|row| (row.status, row.finished))
            .collect();
        assert_eq!(statuses, vec![("running", false), ("completed", true)]);
        let rounds: Vec<Vec<&str>> = group
            .status_rounds()
            .iter()
            .map(|round| round.iter().map(|row| row.status).collect())
            .collect();
        assert_eq!(rounds, vec![vec!["running"], vec!["completed"]]);
    }
}
