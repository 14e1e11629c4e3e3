//! What a finished activation of a coding module puts on its ports: the
//! agents' merged replies, the diff, the changed files, a summary, the last
//! test run when asked for, the signal and the receipt.

use std::sync::atomic::Ordering;

use engine::activation::ActivationOutput;
use engine::bundle::{ContextBundle, PortValue, Receipt, content_type, merge_responses};
use engine::provider::ProviderInfo;
use serde_json::json;

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
    let module_id = &context.module.id;
    let merged_content = phases
        .iter()
        .map(|phase| format!("{}\n{}", phase.header(), merge_responses(&phase.responses)))
        .collect::<Vec<_>>()
        .join("\n");
    let response_count: usize = phases.iter().map(|phase| phase.responses.len()).sum();
    let has_re_prompts = work
        .config
        .agents
        .iter()
        .any(|agent| !agent.re_prompts.is_empty());
    // The session of the agent that holds the module's, named on
    // `data_out` for a coding agent downstream to continue.
    let handed_on = work
        .handed_on
        .lock()
        .ok()
        .and_then(|handed_on| handed_on.clone())
        .map(|reference| (format!("{}/acp", context.session_key(false)), reference));
    let mut data = ContextBundle {
        content: json!({
            "merged_content": merged_content,
            "response_count": response_count,
            "has_re_prompts": has_re_prompts,
        }),
        content_type: content_type::MERGED.to_owned(),
        source_module: module_id.clone(),
        source_session_key: handed_on.as_ref().map(|(key, _)| key.clone()),
        meta: serde_json::Map::new(),
    };
    if let Some(review) = &review {
        data.meta.insert(
            "review_decision".to_owned(),
            json!(if review.approved { "approve" } else { "revise" }),
        );
        data.meta
            .insert("review_rounds".to_owned(), json!(review.rounds));
        data.meta
            .insert("review_feedback".to_owned(), json!(review.feedback));
    }
    let summary = match phases {
        [only] => only.summary().to_owned(),
        _ => phases
            .iter()
            .map(|phase| format!("{}\n{}", phase.header(), phase.summary()))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let mut ports = vec![
        ("data_out".to_owned(), PortValue::Bundle(data)),
        (
            "diff_out".to_owned(),
            PortValue::Bundle(context.text_bundle(diff)),
        ),
        (
            "files_out".to_owned(),
            PortValue::Bundle(ContextBundle::json(module_id, json!(files))),
        ),
        (
            "summary_out".to_owned(),
            PortValue::Bundle(context.text_bundle(summary)),
        ),
    ];
    if work.config.capture_test_results {
        let last = phases
            .iter()
            .rev()
            .find_map(|phase| phase.tests.last().map(|test| (phase.role.as_str(), test)));
        let results = match last {
            Some((role, test)) => json!({
                "ran": true,
                "agent_role": role,
                "command": test.command,
                "exit_code": test.exit_code,
                "passed": test.passed,
                "output": cut(&test.output, PROMPT_DIFF_CHARACTERS),
            }),
            // DOC23 §2.3: the sentinel when the agents ran no tests.
            None => json!({ "ran": false, "passed": null, "message": "The agents ran no tests." }),
        };
        ports.push((
            "test_results_out".to_owned(),
            PortValue::Bundle(ContextBundle::json(module_id, results)),
        ));
    }
    if review.as_ref().is_some_and(|review| !review.approved) {
        ports = exhausted(ports);
    }
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
    };
    let model = phases
        .iter()
        .map(|phase| phase.agent_name.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(", ");
    let receipt: Receipt = context.receipt(
        &provider,
        &model,
        tally,
        work.re_prompts.load(Ordering::SeqCst),
    );
    ports.push(("signal_out".to_owned(), context.signal()));
    ports.push((
        "receipt_out".to_owned(),
        PortValue::Receipt(receipt.clone()),
    ));
    ActivationOutput {
        output_text: merged_content,
        ports,
        receipt: Some(receipt),
        session_key: None,
        intent: None,
        state_set: Vec::new(),
        gates: Vec::new(),
        checks_failed: None,
        agent_session: handed_on,
    }
}

/// Out of rounds (graph::ports::EXHAUSTED_OUT, the review gate's rule too):
/// the work goes out on `exhausted_out` alone, not on the ports that pass
/// approved work on: the merged replies with the review's verdict, and the
/// diff, files, summary and test results beside them in its meta.
fn exhausted(ports: Vec<(String, PortValue)>) -> Vec<(String, PortValue)> {
    let mut carrier = None;
    let mut beside = serde_json::Map::new();
    for (port, value) in ports {
        match (port.as_str(), value) {
            ("data_out", PortValue::Bundle(bundle)) => carrier = Some(bundle),
            (other, PortValue::Bundle(bundle)) => {
                let name = other.strip_suffix("_out").unwrap_or(other);
                beside.insert(name.to_owned(), bundle.content);
            }
            _ => {}
        }
    }
    carrier
        .map(|mut bundle| {
            bundle.meta.extend(beside);
            vec![("exhausted_out".to_owned(), PortValue::Bundle(bundle))]
        })
        .unwrap_or_default()
}
