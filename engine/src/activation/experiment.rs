//! A module with variants (DOC23 §7.2): each variant is the module's
//! configuration with its overrides and runs the whole activation — an
//! agent task's re-prompt chain in a session of its own, a coding module's
//! agents in a workspace of its own — on the same inputs,
//! at most as many at once as the run's concurrency. `comparison_out`
//! carries every variant (its merged `data_out`, receipt, cost, duration,
//! or why it failed, its named outputs and a coding variant's diff) for a
//! judge's `comparison_in`; the module's other ports and named outputs
//! carry the first variant's, the baseline. Each variant that finishes is
//! kept in the activation's record, so a resumed experiment takes it up
//! instead of running it again.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use futures::StreamExt;
use graph::experiment::{COMPARISON_CONTENT_TYPE, COMPARISON_OUT, Variant};
use graph::kinds::coding::DIFF_OUT;
use graph::ports::{DATA_OUT, NAMED_OUTPUT_PREFIX, RECEIPT_OUT};
use serde_json::Value;
use wire::activation::{FinishedVariant, TranscriptEntry, TranscriptRole};
use wire::content::meta::NamedSection;
use wire::content::{Comparison, VariantOutcome, VariantResult};
use wire::event::{RunEvent, VariantStatus};

use super::{ActivationContext, ActivationError, ActivationOutput, Tally};
use crate::bundle::{ContextBundle, PortValue, Receipt};

/// How one variant ended.
struct VariantEnd {
    variant: Variant,
    result: Result<ActivationOutput, ActivationError>,
    duration_ms: u64,
}

pub async fn experiment(
    context: &ActivationContext,
    variants: &[Variant],
    re_prompt_count: usize,
) -> Result<ActivationOutput, ActivationError> {
    let count = u32::try_from(variants.len()).unwrap_or(u32::MAX);
    let at_once = context.settings.max_concurrency.max(1);
    // Futures made first and owning their variant: a stream's closure
    // over borrowed variants is not `Send` for every lifetime.
    let runs: Vec<_> = variants
        .iter()
        .cloned()
        .enumerate()
        .map(|(index, variant)| run_variant(context, index, variant, count))
        .collect();
    let ends: Vec<VariantEnd> = futures::stream::iter(runs)
        .buffered(at_once)
        .collect()
        .await;
    let baseline_named = ends
        .first()
        .and_then(|end| end.result.as_ref().ok())
        .map(named_outputs_of)
        .unwrap_or_default();
    if let Ok(mut record) = context.record.lock() {
        record.finished_variants.clear();
        record.named_outputs = baseline_named;
    }
    if ends.iter().all(|end| end.result.is_err()) {
        let why: Vec<String> = ends
            .iter()
            .filter_map(|end| {
                let error = end.result.as_ref().err()?;
                Some(format!("{}: {error}", end.variant.name))
            })
            .collect();
        return Err(ActivationError::Failed(format!(
            "\"{}\": every variant failed ({})",
            context.module.display_label(),
            why.join("; ")
        )));
    }
    let comparison = comparison(context, &ends);
    let mut ends = ends.into_iter();
    // The first variant is the baseline the module's own ports carry.
    let first = ends.next();
    let mut output = match first.map(|end| end.result) {
        Some(Ok(output)) => output,
        _ => ActivationOutput::default(),
    };
    let mut receipts: Vec<Receipt> = output.receipt.iter().cloned().collect();
    receipts.extend(ends.filter_map(|end| end.result.ok()?.receipt));
    output.receipt = Some(total_receipt(context, re_prompt_count, &receipts));
    output.ports.retain(|(port, _)| port != RECEIPT_OUT);
    if let Some(receipt) = &output.receipt {
        output
            .ports
            .push((RECEIPT_OUT.to_owned(), PortValue::Receipt(receipt.clone())));
    }
    output
        .ports
        .push((COMPARISON_OUT.to_owned(), PortValue::Bundle(comparison)));
    // A comparison continues no one chat session. A coding agent's session
    // it names (`agent_session`, the baseline's) stays: only one taker may
    // take it up downstream.
    output.session_key = None;
    Ok(output)
}

/// One variant's activation: the module as the variant configures it.
/// Boxed, as it runs the activation this experiment is part of.
type VariantRun<'a> =
    Pin<Box<dyn Future<Output = Result<ActivationOutput, ActivationError>> + Send + 'a>>;

/// A plain function with its type written out: the activation an
/// experiment runs is the experiment's own kind of future, and an `async`
/// body could not prove it `Send` without knowing itself first.
fn activate_variant(scoped: &ActivationContext) -> VariantRun<'_> {
    Box::pin(super::activate(scoped))
}

async fn run_variant(
    context: &ActivationContext,
    index: usize,
    variant: Variant,
    count: u32,
) -> VariantEnd {
    let position = u32::try_from(index).unwrap_or(u32::MAX);
    let mut scoped = context.for_variant(position, &variant.name);
    scoped.module.config = variant.apply_to(&context.module.config);
    scoped
        .emit(RunEvent::VariantStarted {
            module_id: context.module.id.clone(),
            activation: context.activation,
            variant: variant.name.clone(),
            index: position + 1,
            count,
        })
        .await;
    let (result, duration_ms) = match take_up_finished(context, position, &variant.name) {
        Some(taken_up) => taken_up,
        None => {
            let started = Instant::now();
            let result = activate_variant(&scoped).await;
            let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            keep_finished(context, &variant.name, &result, duration_ms).await;
            (result, duration_ms)
        }
    };
    scoped
        .emit(RunEvent::VariantFinished {
            module_id: context.module.id.clone(),
            activation: context.activation,
            variant: variant.name.clone(),
            status: if result.is_ok() {
                VariantStatus::Completed
            } else {
                VariantStatus::Failed
            },
            error: result.as_ref().err().map(ToString::to_string),
            cost: result
                .as_ref()
                .ok()
                .and_then(|output| output.receipt.as_ref()?.cost),
            duration_ms,
        })
        .await;
    VariantEnd {
        variant,
        result,
        duration_ms,
    }
}

/// How a variant ended, as the record keeps it for a resume.
type KeptEnding = Result<ActivationOutput, String>;

/// Keeps a variant that finished in the activation's record, stored as a
/// checkpoint: a resume takes it up instead of running it again.
async fn keep_finished(
    context: &ActivationContext,
    name: &str,
    result: &Result<ActivationOutput, ActivationError>,
    duration_ms: u64,
) {
    let ending = match result {
        Ok(output) => serde_json::to_value(Ok::<_, String>(output)),
        Err(error) => serde_json::to_value(Err::<ActivationOutput, _>(error.to_string())),
    };
    let Ok(ending) = ending else {
        return;
    };
    if let Ok(mut record) = context.record.lock() {
        record.finished_variants.push(FinishedVariant {
            name: name.to_owned(),
            duration_ms,
            ending,
        });
    }
    context.checkpoint().await;
}

/// A variant that had finished before the run stopped, taken up from the
/// record: its ending, and its responses and transcript back in the
/// record, which a resumed activation starts empty.
fn take_up_finished(
    context: &ActivationContext,
    position: u32,
    name: &str,
) -> Option<(Result<ActivationOutput, ActivationError>, u64)> {
    let recovered = context
        .recovered
        .as_ref()?
        .finished_variant(position, name)?;
    let ending: KeptEnding = serde_json::from_value(recovered.finished.ending.clone()).ok()?;
    if let Ok(mut record) = context.record.lock() {
        record.responses.extend(recovered.responses);
        record.transcript.extend(recovered.transcript);
        record.transcript.push(TranscriptEntry {
            role: TranscriptRole::System,
            text: format!("[{name}] finished before the run stopped: taken up, not run again"),
        });
        record.finished_variants.push(recovered.finished.clone());
    }
    Some((
        ending.map_err(ActivationError::Failed),
        recovered.finished.duration_ms,
    ))
}

/// A variant's named outputs, from its `named:` ports: the sections its
/// last reply labelled (a name it did not label is absent).
fn named_outputs_of(output: &ActivationOutput) -> BTreeMap<String, String> {
    output
        .ports
        .iter()
        .filter(|(port, _)| port.starts_with(NAMED_OUTPUT_PREFIX))
        .filter_map(|(_, value)| {
            let bundle = value.as_bundle()?;
            let section: NamedSection =
                serde_json::from_value(Value::Object(bundle.meta.clone())).ok()?;
            (!section.section_missing).then(|| (section.name, bundle.as_text()))
        })
        .collect()
}

/// A coding variant's diff: its `diff_out`.
fn diff_of(output: &ActivationOutput) -> Option<String> {
    output.ports.iter().find_map(|(port, value)| {
        (port == DIFF_OUT).then(|| value.as_bundle().map(|bundle| bundle.as_text()))?
    })
}

/// The ComparisonBundle: every variant, in the module's order.
fn comparison(context: &ActivationContext, ends: &[VariantEnd]) -> ContextBundle {
    let variants = ends
        .iter()
        .map(|end| VariantResult {
            name: end.variant.name.clone(),
            summary: end.variant.summary(),
            duration_ms: end.duration_ms,
            outcome: match &end.result {
                Ok(output) => VariantOutcome::Completed {
                    data_out: output
                        .ports
                        .iter()
                        .find_map(|(port, value)| {
                            (port == DATA_OUT).then(|| value.as_bundle()).flatten()
                        })
                        .map_or(Value::Null, |bundle| bundle.content),
                    text: output.output_text.clone(),
                    receipt: output.receipt.clone().map(Box::new),
                    cost: output.receipt.as_ref().and_then(|receipt| receipt.cost),
                    named_outputs: named_outputs_of(output),
                    diff: diff_of(output),
                },
                Err(error) => VariantOutcome::Failed {
                    error: error.to_string(),
                },
            },
        })
        .collect();
    let comparison = Comparison {
        module_id: context.module.id.clone(),
        variants,
    };
    ContextBundle {
        content_type: COMPARISON_CONTENT_TYPE.to_owned(),
        ..ContextBundle::typed(&context.module.id, &comparison)
    }
}

/// The activation's receipt: every variant's tokens and cost together.
fn total_receipt(
    context: &ActivationContext,
    re_prompt_count: usize,
    receipts: &[Receipt],
) -> Receipt {
    let mut tally = Tally::default();
    for receipt in receipts {
        tally.tokens_in += receipt.tokens_in;
        tally.tokens_out += receipt.tokens_out;
        tally.cost = wire::cost::add(tally.cost, receipt.cost);
    }
    let mut models: Vec<&str> = receipts
        .iter()
        .map(|receipt| receipt.model.as_str())
        .collect();
    models.sort_unstable();
    models.dedup();
    let mut providers: Vec<&str> = receipts
        .iter()
        .map(|receipt| receipt.provider.as_str())
        .collect();
    providers.sort_unstable();
    providers.dedup();
    let info = wire::providers::ProviderInfo {
        id: providers.join(", "),
        label: String::new(),
        models: Vec::new(),
        simulated: receipts.iter().all(|receipt| receipt.simulated),
        prices: std::collections::BTreeMap::new(),
        tool_calling: true,
    };
    context.receipt(
        &info,
        &models.join(", "),
        tally,
        u32::try_from(re_prompt_count).unwrap_or(u32::MAX),
    )
}
