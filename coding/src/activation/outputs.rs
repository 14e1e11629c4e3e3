//! What a finished activation of a coding module puts on its ports: the
//! agents' merged replies, the diff, the changed files, a summary, the last
//! test run when asked for, the signal and the receipt.

use std::sync::atomic::Ordering;

use engine::activation::ActivationOutput;
use engine::bundle::{ContextBundle, PortValue, Receipt, merge_responses};
use engine::provider::ProviderInfo;
use graph::kinds::coding::{DIFF_OUT, FILES_OUT, SUMMARY_OUT, TEST_RESULTS_OUT};
use graph::ports::{DATA_OUT, EXHAUSTED_OUT, RECEIPT_OUT, SIGNAL_OUT};
use wire::content::meta::{CodingReview, CodingWork};
use wire::content::{MergedResponses, TestResults, TestRun};
use wire::status::ReviewDecision;

use super::coordination::Review;
use super::prompts::{PROMPT_DIFF_CHARACTERS, cut};
use super::turns::{Phase, Work};
use crate::profile::AcpProfile;
use crate::workspace::ChangedFile;

pub(super) fn outputs(
    work: &Work<'_>,
    profiles: &[AcpProfile],
    phases: &[Phase],
    review: Option<Review>,
    diff: String,
    files: Vec<ChangedFile>,
) -> ActivationOutput {
    let context = work.context;
    let merged = merged(work, phases);
    let output_text = merged.merged_content.clone();
    // The session of the agent that holds the module's, named on
    // `data_out` for a coding agent downstream to continue.
    let handed_on = work
        .handed_on
        .lock()
        .ok()
        .and_then(|handed_on| handed_on.clone())
        .map(|reference| (format!("{}/acp", context.session_key(false)), reference));
    let mut data = ContextBundle {
        source_session_key: handed_on.as_ref().map(|(key, _)| key.clone()),
        ..ContextBundle::merged(&context.module.id, &merged)
    };
    if let Some(review) = &review {
        data.add_meta(&CodingReview {
            review_decision: if review.approved {
                ReviewDecision::Approve
            } else {
                ReviewDecision::Revise
            },
            review_rounds: review.rounds,
            review_feedback: review.feedback.clone(),
        });
    }
    let done = CodingWork {
        diff,
        files,
        summary: summary(phases),
        test_results: work
            .config
            .capture_test_results
            .then(|| test_results(phases)),
    };
    let mut ports = if review.as_ref().is_some_and(|review| !review.approved) {
        // Out of rounds (graph::ports::EXHAUSTED_OUT, the review gate's rule
        // too): the work goes out on `exhausted_out` alone, not on the ports
        // that pass approved work on: the merged replies with the review's
        // verdict, and the diff, files, summary and test results beside
        // them in its meta.
        data.add_meta(&done);
        vec![(EXHAUSTED_OUT.to_owned(), PortValue::Bundle(data))]
    } else {
        work_ports(work, data, done)
    };
    let receipt = receipt(work, profiles, phases);
    ports.push((SIGNAL_OUT.to_owned(), context.signal()));
    ports.push((RECEIPT_OUT.to_owned(), PortValue::Receipt(receipt.clone())));
    ActivationOutput {
        output_text,
        ports,
        receipt: Some(receipt),
        agent_session: handed_on,
        ..ActivationOutput::default()
    }
}

/// Every phase's header and merged responses, as `data_out` carries them.
fn merged(work: &Work<'_>, phases: &[Phase]) -> MergedResponses {
    MergedResponses {
        merged_content: phases
            .iter()
            .map(|phase| format!("{}\n{}", phase.header(), merge_responses(&phase.responses)))
            .collect::<Vec<_>>()
            .join("\n"),
        response_count: phases.iter().map(|phase| phase.responses.len()).sum(),
        has_re_prompts: work
            .config
            .agents
            .iter()
            .any(|agent| !agent.re_prompts.is_empty()),
    }
}

/// The last agent's final message, or each agent's under its header.
fn summary(phases: &[Phase]) -> String {
    match phases {
        [only] => only.summary().to_owned(),
        _ => phases
            .iter()
            .map(|phase| format!("{}\n{}", phase.header(), phase.summary()))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The last test run of any agent, its output cut as prompts cut it.
fn test_results(phases: &[Phase]) -> TestResults {
    let last = phases
        .iter()
        .rev()
        .find_map(|phase| phase.tests.last().map(|test| (phase.role.as_str(), test)));
    match last {
        Some((role, test)) => TestResults::Ran {
            agent_role: role.to_owned(),
            run: TestRun {
                output: cut(&test.output, PROMPT_DIFF_CHARACTERS),
                ..test.clone()
            },
        },
        // DOC23 §2.3: the sentinel when the agents ran no tests.
        None => TestResults::NotRun,
    }
}

/// The ports of work that may go on: the merged replies, then the diff,
/// files, summary and (when asked for) test results each on its own.
fn work_ports(work: &Work<'_>, data: ContextBundle, done: CodingWork) -> Vec<(String, PortValue)> {
    let context = work.context;
    let mut ports = vec![
        (DATA_OUT.to_owned(), PortValue::Bundle(data)),
        (
            DIFF_OUT.to_owned(),
            PortValue::Bundle(context.text_bundle(done.diff)),
        ),
        (
            FILES_OUT.to_owned(),
            PortValue::Bundle(ContextBundle::typed(&context.module.id, &done.files)),
        ),
        (
            SUMMARY_OUT.to_owned(),
            PortValue::Bundle(context.text_bundle(done.summary)),
        ),
    ];
    if let Some(results) = done.test_results {
        ports.push((
            TEST_RESULTS_OUT.to_owned(),
            PortValue::Bundle(ContextBundle::typed(&context.module.id, &results)),
        ));
    }
    ports
}

/// The activation's receipt: every agent's tokens, under the profiles'
/// provider and the agents' names.
fn receipt(work: &Work<'_>, profiles: &[AcpProfile], phases: &[Phase]) -> Receipt {
    let tally = work.tally.lock().map(|tally| *tally).unwrap_or_default();
    let provider = ProviderInfo {
        id: format!(
            "acp:{}",
            profiles
                .iter()
                .map(|profile| profile.id.as_str())
                .collect::<Vec<_>>()
                .join("+")
        ),
        label: String::new(),
        models: Vec::new(),
        simulated: profiles.iter().all(|profile| profile.simulated),
        prices: std::collections::BTreeMap::new(),
        tool_calling: true,
    };
    let model = phases
        .iter()
        .map(|phase| phase.agent_name.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(", ");
    work.context.receipt(
        &provider,
        &model,
        tally,
        work.re_prompts.load(Ordering::SeqCst),
    )
}
