//! What each run event does to a module on the canvas: its state (queued,
//! running, done, failed, cancelled), its badge (`Re-prompt 2/3…`,
//! `builder · Re-prompt 1/2…`, `builder · round 2…`, `Round 2`), its times
//! and tokens. A pure step from one state to the next, so every badge is
//! unit-tested without a browser.

use graph::config::RePromptOwner;
use graph::{Graph, ModuleConfig};
use wire::{EventRecord, PollOutcome, RunEvent, VariantStatus};

use crate::canvas::model::{ModuleRun, ModuleRunState};

/// A re-prompt sent, a variant started or finished: the badge, and each
/// variant's line.
fn re_prompts_and_variants(run: &mut ModuleRun, event: &RunEvent) {
    match event {
        RunEvent::RepromptDispatched {
            reprompt_index,
            reprompt_count,
            variant,
            ..
        } => {
            let step = format!("Re-prompt {reprompt_index}/{reprompt_count}…");
            run.badge = Some(match variant {
                Some(variant) => {
                    run.set_variant_line(variant, step.clone());
                    variants_badge(run, Some(&format!("{variant}: {step}")))
                }
                None => step,
            });
        }
        RunEvent::VariantStarted { variant, count, .. } => {
            run.variant_count = *count;
            run.set_variant_line(variant, "started…".to_owned());
            run.badge = Some(variants_badge(run, Some(&format!("{variant}: started…"))));
        }
        RunEvent::VariantFinished {
            variant, status, ..
        } => {
            run.variants_done += 1;
            let ended = match status {
                VariantStatus::Completed => "✓ done",
                VariantStatus::Failed => "✕ failed",
            };
            run.set_variant_line(variant, ended.to_owned());
            run.badge = Some(variants_badge(run, None));
        }
        _ => {}
    }
}

/// A module taken from a recorded run: it did not run here.
fn reused(at: Option<f64>) -> ModuleRun {
    ModuleRun {
        state: ModuleRunState::Reused,
        started_ms: at,
        finished_ms: at,
        ..ModuleRun::default()
    }
}

/// The state of module `module_id` after `record`, given its state before
/// (`None`: nothing shown). `graph` is the graph the run runs: a coding
/// agent's badge counts its re-prompts there.
pub fn step(
    module_id: &str,
    before: Option<&ModuleRun>,
    record: &EventRecord,
    graph: Option<&Graph>,
) -> Option<ModuleRun> {
    let at = Some(record.ts as f64);
    let event = &record.event;
    if event.module_id().is_some_and(|about| about != module_id) {
        return before.cloned();
    }
    // A module event about a module with no state yet starts from the default.
    let mut run = before.cloned().unwrap_or_default();
    match event {
        RunEvent::RunStarted { .. } => {
            return Some(ModuleRun {
                state: ModuleRunState::NotReached,
                ..ModuleRun::default()
            });
        }
        // What was in flight starts again; until it does, it says so.
        RunEvent::RunResumed { .. } => {
            return match before {
                Some(run) if run.state == ModuleRunState::Running => Some(ModuleRun {
                    badge: Some("Resuming…".to_owned()),
                    resuming: true,
                    ..run.clone()
                }),
                other => other.cloned(),
            };
        }
        RunEvent::RunCompleted { .. }
        | RunEvent::RunFailed { .. }
        | RunEvent::RunCancelled { .. }
        | RunEvent::RunInterrupted { .. } => return run_ended(event, before, at),
        RunEvent::ModuleQueued { .. } => {
            run.state = ModuleRunState::Queued;
            run.badge = None;
        }
        RunEvent::ModuleActivated { activation, .. } => {
            run = activated(&run, *activation, graph, module_id, at);
        }
        RunEvent::RepromptDispatched { .. }
        | RunEvent::VariantStarted { .. }
        | RunEvent::VariantFinished { .. } => re_prompts_and_variants(&mut run, event),
        RunEvent::CodingRepromptDispatched { .. } | RunEvent::CodingAgentStarted { .. } => {
            run.badge = coding_badge(event, graph, module_id);
        }
        RunEvent::ModuleUsage {
            tokens_in,
            tokens_out,
            cost,
            ..
        } => {
            run.tokens += tokens_in + tokens_out;
            run.cost.add(*cost);
        }
        RunEvent::ModuleCompleted { .. } => completed(&mut run, at),
        // Taken from a recorded run: it did not run, and cost this run
        // nothing (PRODUCT §3.15).
        RunEvent::ModuleReused { .. } => run = reused(at),
        RunEvent::ModuleFailed { error, .. } => {
            run.state = ModuleRunState::Failed;
            run.badge = None;
            run.finished_ms = at;
            run.error = Some(error.clone());
        }
        RunEvent::ModuleRetrying { .. }
        | RunEvent::ModulePolled { .. }
        | RunEvent::ModuleValidating { .. }
        | RunEvent::ModuleFixDispatched { .. }
        | RunEvent::ModuleWaiting { .. }
        | RunEvent::ModuleDecided { .. }
        | RunEvent::ModuleGaveUp { .. } => control_flow(&mut run, event, at),
        // A tool called, and what came of it: the badge says what is being
        // called (`Re-prompt 2/3 · lookup…`) until it answers.
        RunEvent::ModuleToolCall { call_id, tool, .. } => {
            run.calling.push((call_id.clone(), tool.clone()));
        }
        RunEvent::ModuleToolResult { call_id, .. } => {
            run.calling.retain(|(calling, _)| calling != call_id);
        }
        // Streamed text is the panel's; these change nothing on the module.
        // The way a value went is drawn on the cables (`RunView::apply`).
        // Tokens are counted from `module.usage`, which every call has.
        RunEvent::ModuleOutputDelta { .. }
        | RunEvent::RepromptResponse { .. }
        | RunEvent::CodingRepromptResponse { .. }
        | RunEvent::CodingAgentFinished { .. }
        | RunEvent::CableTaken { .. }
        | RunEvent::CableNoneTaken { .. }
        | RunEvent::CableIgnored { .. }
        | RunEvent::ModuleValidated { .. }
        | RunEvent::ModuleIntent { .. } => return before.cloned(),
    }
    Some(run)
}

/// A module as an activation starts: a resumed activation is the same one,
/// keeping its start, its recovered turns counted again as they stream.
fn activated(
    run: &ModuleRun,
    activation: u32,
    graph: Option<&Graph>,
    module_id: &str,
    at: Option<f64>,
) -> ModuleRun {
    // A module that retries counts its attempts; another, the rounds a
    // loop brings it back.
    let attempts = graph
        .and_then(|graph| graph.module(module_id))
        .map_or(1, |module| module.config.max_attempts());
    let (started_ms, tokens, cost) = if run.resuming {
        (
            run.started_ms,
            run.tokens_before_activation,
            run.cost_before_activation,
        )
    } else {
        (at, run.tokens, run.cost)
    };
    ModuleRun {
        state: ModuleRunState::Running,
        badge: (activation > 1).then(|| {
            if attempts > 1 {
                format!("Attempt {activation}/{attempts}…")
            } else {
                format!("Round {activation}")
            }
        }),
        started_ms,
        tokens,
        tokens_before_activation: tokens,
        cost,
        cost_before_activation: cost,
        ..ModuleRun::default()
    }
}

/// What a coding module's badge says as its agents work.
fn coding_badge(event: &RunEvent, graph: Option<&Graph>, module_id: &str) -> Option<String> {
    match event {
        RunEvent::CodingRepromptDispatched {
            agent_role,
            reprompt_index,
            ..
        } => {
            let count =
                graph.and_then(|graph| coding_re_prompt_count(graph, module_id, agent_role));
            Some(match count {
                Some(count) => format!("{agent_role} · Re-prompt {reprompt_index}/{count}…"),
                None => format!("{agent_role} · Re-prompt {reprompt_index}…"),
            })
        }
        RunEvent::CodingAgentStarted {
            agent_role, round, ..
        } => Some(if *round > 1 {
            format!("{agent_role} · round {round}…")
        } else {
            format!("{agent_role} · working…")
        }),
        _ => None,
    }
}

/// A module when its activation ends: an approval ends as it was decided;
/// one that ends still waiting was decided by its timeout.
fn completed(run: &mut ModuleRun, at: Option<f64>) {
    run.state = match (run.state, run.decided) {
        (_, Some(wire::approval::Decision::Reject)) => ModuleRunState::Rejected,
        (ModuleRunState::Waiting, None) => ModuleRunState::TimedOut,
        _ => ModuleRunState::Done,
    };
    if run.decided.is_none() {
        run.badge = None;
    }
    run.finished_ms = at;
}

/// A module when its run ends: whatever was still going stopped with the
/// run; what never started shows nothing.
fn run_ended(event: &RunEvent, before: Option<&ModuleRun>, at: Option<f64>) -> Option<ModuleRun> {
    // Whatever was still going stopped with the run; what never
    // started shows nothing.
    let (stopped, badge) = match event {
        RunEvent::RunCancelled { .. } => (ModuleRunState::Cancelled, None),
        RunEvent::RunInterrupted { .. } => {
            (ModuleRunState::Cancelled, Some("interrupted".to_owned()))
        }
        // The run's budget stopped what was in flight.
        RunEvent::RunFailed { error, .. } if error.starts_with(wire::cost::BUDGET_EXCEEDED) => {
            (ModuleRunState::Cancelled, Some("budget spent".to_owned()))
        }
        // Another module's failure ended the run: what was still going was
        // stopped, and is recorded cancelled (one that finished meanwhile
        // said so with its own event first).
        _ => (ModuleRunState::Cancelled, None),
    };
    match before {
        Some(run) if matches!(run.state, ModuleRunState::Running | ModuleRunState::Waiting) => {
            Some(ModuleRun {
                state: stopped,
                badge,
                finished_ms: at,
                ..run.clone()
            })
        }
        Some(run) if run.state == ModuleRunState::NotReached => None,
        // It waited for a slot and never had one (as its record says).
        Some(run) if run.state == ModuleRunState::Queued => Some(ModuleRun {
            state: ModuleRunState::Cancelled,
            badge: Some("never started".to_owned()),
            ..run.clone()
        }),
        other => other.cloned(),
    }
}

/// A module's steps of control flow: retries, polls, checks, a person's
/// decision, giving up.
fn control_flow(run: &mut ModuleRun, event: &RunEvent, at: Option<f64>) {
    match event {
        RunEvent::ModuleRetrying {
            attempt,
            max_attempts,
            delay_seconds,
            reason,
            ..
        } => {
            run.state = ModuleRunState::Running;
            run.badge = Some(if *delay_seconds > 0 {
                format!(
                    "Retry {attempt}/{max_attempts} in {}…",
                    graph::attempts::duration_words(*delay_seconds)
                )
            } else {
                format!("Retry {attempt}/{max_attempts}…")
            });
            run.started_ms = at;
            run.finished_ms = None;
            run.error = Some(reason.clone());
        }
        RunEvent::ModulePolled {
            poll,
            outcome,
            next_in_seconds,
            ..
        } => match outcome {
            PollOutcome::Pending => {
                run.badge = Some("Polling".to_owned());
                run.waiting_until_ms = at.map(|at| at + f64::from(*next_in_seconds) * 1000.0);
            }
            PollOutcome::Skipped => {
                run.badge = Some(format!("Polling · poll {poll} still running, one skipped"));
                run.waiting_until_ms = None;
            }
            PollOutcome::Decided | PollOutcome::Failed => run.waiting_until_ms = None,
        },
        RunEvent::ModuleValidating { validator, .. } => {
            run.badge = Some(format!("Validating {validator}…"));
        }
        RunEvent::ModuleFixDispatched { fix, of, .. } => {
            run.badge = Some(format!("Fix {fix}/{of}…"));
        }
        // An approval waits for a person; their decision is shown until
        // the module completes with it.
        // An agent task's tool calls that wait name their tools.
        RunEvent::ModuleWaiting { tools, .. } => {
            run.state = ModuleRunState::Waiting;
            run.decided = None;
            run.badge = Some(if tools.is_empty() {
                "Waiting for you".to_owned()
            } else {
                format!("Waiting for you · {}", tools.join(", "))
            });
            run.started_ms = at;
            run.waiting_until_ms = None;
        }
        // A tool call decided: the task goes on when its last call is
        // (`module.activated`), and what it gives is no approval's.
        RunEvent::ModuleDecided {
            call_id: Some(_), ..
        } => {}
        RunEvent::ModuleDecided { decision, .. } => {
            run.state = ModuleRunState::Running;
            run.decided = Some(*decision);
            run.badge = Some(decided_words(*decision).to_owned());
        }
        RunEvent::ModuleGaveUp {
            attempts, reason, ..
        } => {
            run.state = ModuleRunState::Failed;
            run.badge = Some("gave up".to_owned());
            run.finished_ms = at;
            let plural = if *attempts == 1 { "" } else { "s" };
            run.error = Some(format!(
                "gave up after {attempts} attempt{plural}: {reason}"
            ));
        }
        _ => {}
    }
}

/// `Variants 1/3 done · B: Re-prompt 1/2…`: a module with variants, and
/// what the last one heard of is doing.
/// How a decision reads on its approval, live and recorded alike.
pub fn decided_words(decision: wire::approval::Decision) -> &'static str {
    match decision {
        wire::approval::Decision::Approve => "Approved",
        wire::approval::Decision::Reject => "Rejected",
        wire::approval::Decision::Revise => "Sent back",
    }
}

fn variants_badge(run: &ModuleRun, now: Option<&str>) -> String {
    let progress = format!("Variants {}/{} done", run.variants_done, run.variant_count);
    match now {
        Some(now) => format!("{progress} · {now}"),
        None => progress,
    }
}

/// The number of re-prompts of the agent with this role in a coding module.
fn coding_re_prompt_count(graph: &Graph, module: &str, role: &str) -> Option<usize> {
    let module = graph.module(module)?;
    match &module.config {
        ModuleConfig::Coding(coding) => {
            let index = coding.agents.iter().position(|agent| agent.role == role)?;
            module
                .config
                .re_prompts(RePromptOwner::Agent(index))
                .map(Vec::len)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::config::CodingAgentAssignment;
    use graph::reprompt::RePrompt;
    use graph::{Module, ModuleKind, Position};
    use wire::RunStatus;

    fn record(ts: i64, event: RunEvent) -> EventRecord {
        EventRecord {
            run_id: "r_1".to_owned(),
            seq: 1,
            ts,
            event,
        }
    }

    /// The module's state after each event in turn, from nothing.
    fn after(module_id: &str, events: Vec<RunEvent>, graph: Option<&Graph>) -> Option<ModuleRun> {
        events
            .into_iter()
            .enumerate()
            .fold(None, |state, (index, event)| {
                step(
                    module_id,
                    state.as_ref(),
                    &record(1000 + index as i64, event),
                    graph,
                )
            })
    }

    fn badge(module_id: &str, events: Vec<RunEvent>, graph: Option<&Graph>) -> Option<String> {
        after(module_id, events, graph).and_then(|run| run.badge)
    }

    fn m2() -> String {
        "m2".to_owned()
    }

    fn activated(activation: u32) -> RunEvent {
        RunEvent::ModuleActivated {
            module_id: m2(),
            activation,
        }
    }

    fn queued(activation: u32) -> RunEvent {
        RunEvent::ModuleQueued {
            module_id: m2(),
            activation,
        }
    }

    fn started() -> RunEvent {
        RunEvent::RunStarted {
            status: RunStatus::Running,
        }
    }

    fn coding_graph() -> Graph {
        let mut module = Module::new("m2", ModuleKind::Coding, Position { x: 0.0, y: 0.0 });
        if let ModuleConfig::Coding(coding) = &mut module.config {
            coding.agents = vec![CodingAgentAssignment {
                role: "builder".to_owned(),
                re_prompts: vec![RePrompt::new("check"), RePrompt::new("tidy")],
                ..CodingAgentAssignment::default()
            }];
        }
        Graph {
            modules: vec![module],
            ..Graph::default()
        }
    }

    #[test]
    fn a_started_run_has_every_module_not_reached_until_queued_or_activated() {
        let waiting = after("m3", vec![started()], None).unwrap();
        assert_eq!(waiting.state, ModuleRunState::NotReached);
        assert_eq!(waiting.badge, None);
        let waiting_for_a_slot = after("m2", vec![started(), queued(1)], None).unwrap();
        assert_eq!(waiting_for_a_slot.state, ModuleRunState::Queued);
        assert_eq!(waiting_for_a_slot.badge_text(0.0), "queued");
        let running = after("m2", vec![started(), activated(1)], None).unwrap();
        assert_eq!(running.state, ModuleRunState::Running);
        assert_eq!(running.started_ms, Some(1001.0));
        assert_eq!(running.badge, None);
        // Another module's activation leaves it not reached.
        assert_eq!(
            after("m3", vec![started(), activated(1)], None)
                .unwrap()
                .state,
            ModuleRunState::NotReached
        );
        // Queued, then activated: running.
        assert_eq!(
            after("m2", vec![started(), queued(1), activated(1)], None)
                .unwrap()
                .state,
            ModuleRunState::Running
        );
    }

    #[test]
    fn a_retry_says_which_attempt_and_when_and_giving_up_is_a_failure() {
        let mut graph = coding_graph();
        if let Some(retry) = graph.modules[0].config.retry_mut() {
            retry.max_attempts = 3;
        }
        let failed = RunEvent::ModuleFailed {
            module_id: m2(),
            activation: 1,
            error: "the provider failed".to_owned(),
        };
        let retrying = |delay_seconds| RunEvent::ModuleRetrying {
            module_id: m2(),
            activation: 1,
            attempt: 2,
            max_attempts: 3,
            delay_seconds,
            reason: "the provider failed".to_owned(),
        };
        let waiting = after(
            "m2",
            vec![started(), activated(1), failed.clone(), retrying(90)],
            Some(&graph),
        )
        .unwrap();
        assert_eq!(waiting.state, ModuleRunState::Running);
        assert_eq!(waiting.badge.as_deref(), Some("Retry 2/3 in 1 min 30 s…"));
        assert_eq!(
            badge(
                "m2",
                vec![started(), activated(1), failed.clone(), retrying(0)],
                Some(&graph)
            )
            .as_deref(),
            Some("Retry 2/3…")
        );
        assert_eq!(
            badge(
                "m2",
                vec![started(), activated(1), failed, retrying(0), activated(2)],
                Some(&graph)
            )
            .as_deref(),
            Some("Attempt 2/3…")
        );
        let gave_up = after(
            "m2",
            vec![
                started(),
                activated(3),
                RunEvent::ModuleGaveUp {
                    module_id: m2(),
                    activation: 3,
                    attempts: 3,
                    reason: "tests failed".to_owned(),
                },
            ],
            Some(&graph),
        )
        .unwrap();
        assert_eq!(gave_up.state, ModuleRunState::Failed);
        assert_eq!(gave_up.badge_text(0.0), "✕ gave up");
        assert_eq!(
            gave_up.error.as_deref(),
            Some("gave up after 3 attempts: tests failed")
        );
    }

    #[test]
    fn a_poll_between_polls_counts_down_to_the_next() {
        let polled = |outcome: PollOutcome, next_in_seconds| RunEvent::ModulePolled {
            module_id: m2(),
            activation: 1,
            poll: 2,
            outcome,
            result: String::new(),
            next_in_seconds,
        };
        let waiting = after(
            "m2",
            vec![started(), activated(1), polled(PollOutcome::Pending, 240)],
            None,
        )
        .unwrap();
        assert_eq!(waiting.state, ModuleRunState::Running);
        // The event came at 1002 ms: the next poll is due at 241 002 ms.
        assert_eq!(waiting.badge_text(1002.0), "◌ Polling · next in 4 min 0 s");
        assert_eq!(waiting.badge_text(236_002.0), "◌ Polling · next in 5.0 s");
        let running_again = after(
            "m2",
            vec![
                started(),
                activated(1),
                polled(PollOutcome::Pending, 240),
                polled(PollOutcome::Skipped, 0),
            ],
            None,
        )
        .unwrap();
        assert_eq!(running_again.waiting_until_ms, None);
        assert!(
            running_again
                .badge_text(2000.0)
                .starts_with("● Polling · poll 2 still running, one skipped")
        );
    }

    #[test]
    fn validators_and_fix_turns_show_on_the_badge() {
        let validating = RunEvent::ModuleValidating {
            module_id: m2(),
            activation: 1,
            validator: "tests".to_owned(),
        };
        let fixing = RunEvent::ModuleFixDispatched {
            module_id: m2(),
            activation: 1,
            fix: 1,
            of: 3,
            validator: "tests".to_owned(),
        };
        assert_eq!(
            badge(
                "m2",
                vec![started(), activated(1), validating.clone()],
                None
            )
            .as_deref(),
            Some("Validating tests…")
        );
        assert_eq!(
            badge(
                "m2",
                vec![started(), activated(1), validating, fixing],
                None
            )
            .as_deref(),
            Some("Fix 1/3…")
        );
    }

    #[test]
    fn an_interrupted_run_says_so_on_what_was_running() {
        let interrupted = RunEvent::RunInterrupted {
            status: RunStatus::Interrupted,
            error: "the server stopped".to_owned(),
        };
        let stopped = after(
            "m2",
            vec![started(), activated(1), interrupted.clone()],
            None,
        )
        .unwrap();
        assert_eq!(stopped.state, ModuleRunState::Cancelled);
        assert_eq!(stopped.badge_text(0.0), "■ interrupted");
        // What never started shows nothing.
        assert_eq!(after("m3", vec![started(), interrupted], None), None);
    }

    #[test]
    fn a_second_activation_shows_its_round() {
        assert_eq!(
            badge("m2", vec![started(), activated(1), activated(2)], None).as_deref(),
            Some("Round 2")
        );
    }

    #[test]
    fn a_dispatched_re_prompt_shows_its_place_in_the_chain() {
        let events = vec![
            started(),
            activated(1),
            RunEvent::RepromptDispatched {
                module_id: m2(),
                reprompt_index: 2,
                reprompt_count: 3,
                variant: None,
            },
        ];
        assert_eq!(badge("m2", events, None).as_deref(), Some("Re-prompt 2/3…"));
    }

    #[test]
    fn variants_show_how_many_are_done_and_what_the_latest_does() {
        let started_variant = |name: &str, index| RunEvent::VariantStarted {
            module_id: m2(),
            activation: 1,
            variant: name.to_owned(),
            index,
            count: 3,
        };
        let finished = |name: &str| RunEvent::VariantFinished {
            module_id: m2(),
            activation: 1,
            variant: name.to_owned(),
            status: VariantStatus::Completed,
            error: None,
            cost: Some(0.0),
            duration_ms: 10,
        };
        let re_prompt = |name: &str| RunEvent::RepromptDispatched {
            module_id: m2(),
            reprompt_index: 1,
            reprompt_count: 2,
            variant: Some(name.to_owned()),
        };
        let mut events = vec![
            started(),
            activated(1),
            started_variant("A", 1),
            started_variant("B", 2),
        ];
        assert_eq!(
            badge("m2", events.clone(), None).as_deref(),
            Some("Variants 0/3 done · B: started…")
        );
        events.extend([finished("A"), re_prompt("B")]);
        assert_eq!(
            badge("m2", events.clone(), None).as_deref(),
            Some("Variants 1/3 done · B: Re-prompt 1/2…")
        );
        // The run panel lists each variant's own progress.
        assert_eq!(
            after("m2", events.clone(), None).unwrap().variant_lines,
            [
                ("A".to_owned(), "✓ done".to_owned()),
                ("B".to_owned(), "Re-prompt 1/2…".to_owned())
            ]
        );
        events.extend([finished("B")]);
        assert_eq!(
            badge("m2", events, None).as_deref(),
            Some("Variants 2/3 done")
        );
    }

    #[test]
    fn a_coding_agent_shows_its_role_round_and_re_prompt_of_its_own_count() {
        let graph = coding_graph();
        let agent_started = |round| RunEvent::CodingAgentStarted {
            module_id: m2(),
            agent_role: "builder".to_owned(),
            agent_name: "Simulated agent".to_owned(),
            round,
        };
        assert_eq!(
            badge(
                "m2",
                vec![started(), activated(1), agent_started(1)],
                Some(&graph)
            )
            .as_deref(),
            Some("builder · working…")
        );
        assert_eq!(
            badge(
                "m2",
                vec![started(), activated(1), agent_started(2)],
                Some(&graph)
            )
            .as_deref(),
            Some("builder · round 2…")
        );
        let re_prompt = |role: &str| RunEvent::CodingRepromptDispatched {
            module_id: m2(),
            agent_role: role.to_owned(),
            reprompt_index: 1,
        };
        assert_eq!(
            badge("m2", vec![activated(1), re_prompt("builder")], Some(&graph)).as_deref(),
            Some("builder · Re-prompt 1/2…")
        );
        // An agent the graph does not name, or no graph: no count.
        assert_eq!(
            badge("m2", vec![activated(1), re_prompt("critic")], Some(&graph)).as_deref(),
            Some("critic · Re-prompt 1…")
        );
        assert_eq!(
            badge("m2", vec![activated(1), re_prompt("builder")], None).as_deref(),
            Some("builder · Re-prompt 1…")
        );
    }

    #[test]
    fn calls_add_up_their_tokens_and_cost_across_activations() {
        let response = |token_count| RunEvent::ModuleUsage {
            module_id: m2(),
            activation: 1,
            tokens_in: 0,
            tokens_out: token_count,
            cost: Some(token_count as f64 / 1000.0),
            tokens_cached: 0,
            finish_reason: None,
        };
        let run = after(
            "m2",
            vec![
                activated(1),
                response(40),
                response(2),
                activated(2),
                response(5),
            ],
            None,
        )
        .unwrap();
        assert_eq!(run.tokens, 47);
        assert!((run.cost.known - 0.047).abs() < 1e-12);
        assert_eq!(run.cost.priced, 3);
        // A call with no price is counted as such, never as free.
        let unpriced = after(
            "m2",
            vec![
                activated(1),
                RunEvent::ModuleUsage {
                    module_id: m2(),
                    activation: 1,
                    tokens_in: 10,
                    tokens_out: 5,
                    cost: None,
                    tokens_cached: 0,
                    finish_reason: None,
                },
            ],
            None,
        )
        .unwrap();
        assert_eq!(unpriced.cost.unpriced, 1);
        assert_eq!(unpriced.tokens, 15);
    }

    #[test]
    fn a_resumed_activation_keeps_its_start_and_counts_its_recovered_turns_once() {
        let response = |token_count| RunEvent::ModuleUsage {
            module_id: m2(),
            activation: 1,
            tokens_in: 0,
            tokens_out: token_count,
            cost: Some(token_count as f64 / 1000.0),
            tokens_cached: 0,
            finish_reason: None,
        };
        let resumed = RunEvent::RunResumed {
            status: RunStatus::Running,
            replayed: 1,
        };
        let before_restart = vec![
            started(),
            activated(1),
            response(7),
            activated(2),
            response(60),
            resumed.clone(),
        ];
        let waiting = after("m2", before_restart.clone(), None).unwrap();
        assert_eq!(waiting.state, ModuleRunState::Running);
        assert_eq!(waiting.badge.as_deref(), Some("Resuming…"));
        // Activation 2 started at the fourth event (ts 1003) and starts
        // again: the recovered turn streams its 60 tokens once more.
        let mut events = before_restart;
        events.extend([activated(2), response(60), response(62)]);
        let run = after("m2", events, None).unwrap();
        assert_eq!(run.started_ms, Some(1003.0));
        assert_eq!(run.tokens, 7 + 60 + 62);
        assert_eq!(run.cost.priced, 3);
        assert_eq!(run.badge.as_deref(), Some("Round 2"));
        assert!(!run.resuming);
        // A module that had ended, or never started, is as it was.
        assert_eq!(
            after("m3", vec![started(), resumed.clone()], None)
                .unwrap()
                .badge,
            None
        );
        let done = after(
            "m2",
            vec![
                activated(1),
                RunEvent::ModuleCompleted {
                    module_id: m2(),
                    activation: 1,
                },
                resumed,
            ],
            None,
        )
        .unwrap();
        assert_eq!(done.state, ModuleRunState::Done);
    }

    #[test]
    fn a_reused_module_says_so_and_counts_nothing() {
        let reused = after(
            "m2",
            vec![RunEvent::ModuleReused {
                module_id: m2(),
                activation: 1,
                from_run: "r_0123456789abcdef".to_owned(),
                from_activation: 1,
            }],
            None,
        )
        .unwrap();
        assert_eq!(reused.state, ModuleRunState::Reused);
        assert_eq!(reused.tokens, 0);
        assert_eq!(reused.badge_text(0.0), "↺ reused");
    }

    #[test]
    fn a_finished_module_is_done_or_failed_with_its_error_and_no_badge() {
        let dispatched = RunEvent::RepromptDispatched {
            module_id: m2(),
            reprompt_index: 1,
            reprompt_count: 1,
            variant: None,
        };
        let done = after(
            "m2",
            vec![
                activated(1),
                dispatched.clone(),
                RunEvent::ModuleCompleted {
                    module_id: m2(),
                    activation: 1,
                },
            ],
            None,
        )
        .unwrap();
        assert_eq!(done.state, ModuleRunState::Done);
        assert_eq!(done.badge, None);
        assert_eq!(done.finished_ms, Some(1002.0));
        let failed = after(
            "m2",
            vec![
                activated(1),
                dispatched,
                RunEvent::ModuleFailed {
                    module_id: m2(),
                    activation: 1,
                    error: "the provider failed".to_owned(),
                },
            ],
            None,
        )
        .unwrap();
        assert_eq!(failed.state, ModuleRunState::Failed);
        assert_eq!(failed.badge, None);
        assert_eq!(failed.error.as_deref(), Some("the provider failed"));
    }

    #[test]
    fn the_run_ending_stops_what_runs_and_clears_what_never_started() {
        let end = |event: RunEvent| {
            (
                after("m2", vec![started(), activated(1), event.clone()], None),
                after("m3", vec![started(), activated(1), event], None),
            )
        };
        let (running, queued) = end(RunEvent::RunCancelled {
            status: RunStatus::Cancelled,
        });
        let running = running.unwrap();
        assert_eq!(running.state, ModuleRunState::Cancelled);
        assert_eq!(running.finished_ms, Some(1002.0));
        assert_eq!(queued, None);
        // Another module's failure stopped it: cancelled, as recorded.
        let (running, _) = end(RunEvent::RunFailed {
            status: RunStatus::Failed,
            error: "x".to_owned(),
        });
        let running = running.unwrap();
        assert_eq!(running.state, ModuleRunState::Cancelled);
        assert_eq!(running.badge_text(0.0), "■ cancelled");
        // A spent budget stopped it; it did not fail.
        let (running, _) = end(RunEvent::RunFailed {
            status: RunStatus::Failed,
            error: "budget_exceeded: the run's budget of $0.0100 is spent".to_owned(),
        });
        let running = running.unwrap();
        assert_eq!(running.state, ModuleRunState::Cancelled);
        assert_eq!(running.badge_text(0.0), "■ budget spent");
        // A module that finished keeps its state.
        let done = after(
            "m2",
            vec![
                started(),
                activated(1),
                RunEvent::ModuleCompleted {
                    module_id: m2(),
                    activation: 1,
                },
                RunEvent::RunCompleted {
                    status: RunStatus::Completed,
                },
            ],
            None,
        );
        assert_eq!(done.unwrap().state, ModuleRunState::Done);
    }

    #[test]
    fn streamed_text_and_finished_agents_change_nothing_on_the_module() {
        let before = after("m2", vec![activated(1)], None);
        for event in [
            RunEvent::ModuleOutputDelta {
                module_id: m2(),
                response_index: 0,
                text: "x".to_owned(),
            },
            RunEvent::CodingRepromptResponse {
                module_id: m2(),
                agent_role: "builder".to_owned(),
                reprompt_index: 1,
            },
            RunEvent::CodingAgentFinished {
                module_id: m2(),
                agent_role: "builder".to_owned(),
                round: 1,
                files_changed: 2,
            },
        ] {
            assert_eq!(step("m2", before.as_ref(), &record(5, event), None), before);
        }
    }

    #[test]
    fn every_event_the_engine_emits_decodes_as_the_stream_carries_it() {
        for event in RunEvent::one_of_each() {
            let sent = EventRecord {
                run_id: "r_1".to_owned(),
                seq: 7,
                ts: 1_700_000_000_000,
                event,
            };
            let decoded =
                EventRecord::from_sse(7, sent.event.name(), &sent.data().to_string()).unwrap();
            assert_eq!(decoded, sent);
        }
    }
}
