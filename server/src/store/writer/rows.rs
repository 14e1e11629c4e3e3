//! A group's writes as the rows they store, whatever the database: the
//! last version of each activation record and of each state key (a group
//! may hold several), the events in order, the statuses in order.

use std::collections::{BTreeSet, HashMap};

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

#[derive(serde::Serialize)]
pub struct StateRow<'a> {
    pub run_id: &'a str,
    pub key: &'a str,
    pub value: &'a str,
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
        let mut state: HashMap<(&str, &str), usize> = HashMap::new();
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
                        let row = StateRow { run_id, key, value };
                        match state.get(&(run_id.as_str(), key.as_str())) {
                            Some(&at) => group.state[at] = row,
                            None => {
                                state.insert((run_id, key), group.state.len());
                                group.state.push(row);
                            }
                        }
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
        assert_eq!(group.state[0].value, "b");
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
