use std::collections::HashMap;

use super::*;
use crate::ports::{DATA_IN, DATA_OUT};
use crate::{Cable, Endpoint, Module, ModuleKind, Position};

fn agent(id: &str) -> Module {
    let mut module = Module::new(id, ModuleKind::AgentTask, Position::default());
    module.label = id.to_uppercase();
    if let Some(instruction) = module.config.instruction_mut() {
        *instruction = format!("Do {id}");
    }
    module
}

fn cable(from: &str, to: &str) -> Cable {
    Cable::new(
        format!("{from}-{to}"),
        Endpoint::new(from, DATA_OUT),
        Endpoint::new(to, DATA_IN),
    )
}

/// a → b → c, and a → side.
fn graph() -> Graph {
    Graph {
        modules: vec![agent("a"), agent("b"), agent("c"), agent("side")],
        cables: vec![cable("a", "b"), cable("b", "c"), cable("a", "side")],
        ..Graph::default()
    }
}

fn all_completed(_: &str) -> Recorded {
    Recorded::Completed
}

fn states(pairs: &[(&str, Recorded)]) -> impl Fn(&str) -> Recorded {
    let map: HashMap<String, Recorded> = pairs
        .iter()
        .map(|(id, state)| ((*id).to_owned(), *state))
        .collect();
    move |id: &str| map.get(id).copied().unwrap_or(Recorded::Completed)
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|id| (*id).to_owned()).collect()
}

#[test]
fn everything_not_downstream_of_the_chosen_module_is_reused() {
    let mut current = graph();
    if let Some(instruction) = current.modules[2].config.instruction_mut() {
        *instruction = "Do c better".to_owned();
    }
    let plan = plan(&current, &graph(), "c", "r_1", &all_completed).unwrap();
    assert_eq!(plan.reused, ids(&["a", "b", "side"]));
    assert_eq!(plan.runs, ids(&["c"]));
}

#[test]
fn a_run_from_the_middle_runs_what_follows_it() {
    let plan = plan(&graph(), &graph(), "b", "r_1", &all_completed).unwrap();
    assert_eq!(plan.reused, ids(&["a", "side"]));
    assert_eq!(plan.runs, ids(&["b", "c"]));
}

#[test]
fn a_changed_module_upstream_is_named() {
    let mut current = graph();
    if let Some(instruction) = current.modules[0].config.instruction_mut() {
        *instruction = "Do a differently".to_owned();
    }
    let refusal = plan(&current, &graph(), "b", "r_1", &all_completed).unwrap_err();
    assert_eq!(refusal.module, "a");
    assert!(
        refusal
            .message
            .starts_with("\"A\" had its settings changed since run r_1"),
        "{}",
        refusal.message
    );
}

#[test]
fn an_added_module_a_rewired_one_and_a_renamed_one_are_refused() {
    let mut added = graph();
    added.modules.push(agent("new"));
    added.cables.push(cable("new", "b"));
    let refusal = plan(&added, &graph(), "c", "r_1", &all_completed).unwrap_err();
    assert_eq!(refusal.module, "b", "{}", refusal.message);
    assert!(refusal.message.contains("cables in changed"));
    // What the record says of a module it never saw: it did not run.
    let new_not_run = states(&[("new", Recorded::NotReached)]);
    let refusal = plan(&added, &graph(), "b", "r_1", &new_not_run).unwrap_err();
    assert_eq!(refusal.module, "new");
    assert!(refusal.message.contains("\"NEW\" was added since run r_1"));

    let mut renamed = graph();
    renamed.modules[1].label = "Bee".to_owned();
    let refusal = plan(&renamed, &graph(), "c", "r_1", &all_completed).unwrap_err();
    assert!(
        refusal
            .message
            .contains("\"Bee\" was renamed (it was \"B\")")
    );
}

#[test]
fn a_module_removed_upstream_is_named() {
    let mut current = graph();
    current.modules.remove(0);
    current.cables.clear();
    current.cables.push(cable("b", "c"));
    let refusal = plan(&current, &graph(), "c", "r_1", &all_completed).unwrap_err();
    assert_eq!(refusal.module, "a");
    assert!(refusal.message.contains("\"A\" was removed since run r_1"));
}

#[test]
fn moving_a_module_changes_nothing_that_counts() {
    let mut current = graph();
    current.modules[0].position = Position { x: 500.0, y: 80.0 };
    assert!(plan(&current, &graph(), "c", "r_1", &all_completed).is_ok());
}

#[test]
fn a_module_upstream_that_did_not_finish_is_refused_by_name() {
    for (state, why) in [
        (Recorded::Failed, "failed"),
        (Recorded::Unfinished, "did not finish"),
        (Recorded::NotReached, "did not run"),
    ] {
        let refusal = plan(&graph(), &graph(), "c", "r_1", &states(&[("b", state)])).unwrap_err();
        assert_eq!(refusal.module, "b");
        assert!(
            refusal
                .message
                .starts_with(&format!("\"B\" {why} in run r_1")),
            "{}",
            refusal.message
        );
    }
}

#[test]
fn a_side_branch_that_did_not_finish_runs_again() {
    let plan = plan(
        &graph(),
        &graph(),
        "c",
        "r_1",
        &states(&[("side", Recorded::Unfinished)]),
    )
    .unwrap();
    assert_eq!(plan.reused, ids(&["a", "b"]));
    assert_eq!(plan.runs, ids(&["c", "side"]));
}

/// A recorded run that knows when things ran: `before[m]` of module `m`'s
/// activations ended before the chosen module first started.
struct Timed {
    before: HashMap<&'static str, u32>,
}

impl RecordedRun for Timed {
    fn state(&self, _: &str) -> Recorded {
        Recorded::Completed
    }

    fn ended_before_first_start(&self, module: &str, _: &str) -> u32 {
        self.before.get(module).copied().unwrap_or(0)
    }
}

#[test]
fn a_module_on_a_loop_back_that_ran_before_the_chosen_one_is_reused_until_sent_back() {
    // a → b → c, c sends back to b (a review's revise, say); b ran once
    // before c first ran, and once more after c sent it back.
    let mut current = graph();
    current.cables.push(Cable::new(
        "c-b",
        Endpoint::new("c", DATA_OUT),
        Endpoint::new("b", crate::ports::CONTEXT_IN),
    ));
    let record = Timed {
        before: HashMap::from([("a", 1), ("b", 1)]),
    };
    let reusing = plan(&current, &current, "c", "r_1", &record).unwrap();
    assert_eq!(reusing.reused, ids(&["a", "b", "side"]));
    assert_eq!(reusing.partly, [("b".to_owned(), 1)]);
    assert_eq!(reusing.runs, ids(&["c"]));
    // Changed since, it runs: what it would give is not what was recorded.
    let mut changed = current.clone();
    if let Some(instruction) = changed.modules[1].config.instruction_mut() {
        *instruction = "Do b better".to_owned();
    }
    let running = plan(&changed, &current, "c", "r_1", &record).unwrap();
    assert_eq!(running.runs, ids(&["b", "c"]));
    assert!(running.partly.is_empty());
}

#[test]
fn a_module_in_a_loop_runs_with_the_whole_loop() {
    let mut current = graph();
    current.cables.push(Cable::new(
        "c-b",
        Endpoint::new("c", DATA_OUT),
        Endpoint::new("b", crate::ports::CONTEXT_IN),
    ));
    let plan = plan(&current, &current, "c", "r_1", &all_completed).unwrap();
    assert_eq!(plan.reused, ids(&["a", "side"]));
    assert_eq!(plan.runs, ids(&["b", "c"]));
}

#[test]
fn a_module_that_is_not_there_is_refused() {
    let refusal = plan(&graph(), &graph(), "zz", "r_1", &all_completed).unwrap_err();
    assert_eq!(refusal.module, "zz");
}
