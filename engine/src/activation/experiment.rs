//! A module with variants (DOC23 §7.2): each variant is the module's
//! configuration with its overrides and runs the whole activation — an
//! agent task's re-prompt chain in a session of its own, a coding module's
//! agents in a workspace of its own — on the same inputs,
//! at most as many at once as the run's concurrency. `comparison_out`
//! carries every variant (its merged `data_out`, receipt, cost, duration,
//! or why it failed) for a judge's `comparison_in`; the module's other
//! ports carry the first variant's, the baseline.

use std::time::Instant;

use std::future::Future;
use std::pin::Pin;

use futures::StreamExt;
use graph::experiment::{COMPARISON_CONTENT_TYPE, COMPARISON_OUT, Variant};
use graph::ports::{DATA_OUT, RECEIPT_OUT};
use serde_json::Value;
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
    if ends.iter().all(|end| end.result.is_err()) {
        let why: Vec<String> = ends
            .iter()
            .filter_map(|end| {
                let error = end.result.as_ref().err()?;
                Some(format!("{}: {error}", end.variant.name))
            })
            .collect();
        return Err(ActivationError(format!(
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
    scoped.emit(RunEvent::VariantStarted {
        module_id: context.module.id.clone(),
        activation: context.activation,
        variant: variant.name.clone(),
        index: position + 1,
        count,
    });
    let started = Instant::now();
    let result = activate_variant(&scoped).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    scoped.emit(RunEvent::VariantFinished {
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
    });
    VariantEnd {
        variant,
        result,
        duration_ms,
    }
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
    };
    context.receipt(
        &info,
        &models.join(", "),
        tally,
        u32::try_from(re_prompt_count).unwrap_or(u32::MAX),
    )
}
