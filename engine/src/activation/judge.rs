//! The judge: scores `target_in` (optionally against `comparison_in`) on each
//! rubric criterion, as structured JSON. Fed a module's variants on
//! `comparison_in` (a ComparisonBundle, DOC23 §7.2–7.3), it scores each
//! variant instead, and the one with the best weighted score wins.

use graph::config::JudgeConfig;
use graph::experiment::COMPARISON_CONTENT_TYPE;
use graph::kinds::judge::{COMPARISON_IN, SCORES_OUT, TARGET_IN};
use graph::ports::{DATA_OUT, SIGNAL_OUT};
use serde::de::DeserializeOwned;
use wire::content::{
    Comparison, ComparisonScores, CriterionScore, JudgeScores, VariantResult, VariantScores,
};

use super::{ActivationContext, ActivationError, ActivationOutput, Tally, parse_json_reply};
use crate::bundle::{ContextBundle, PortValue, Receipt};
use crate::prompt::turn;
use crate::provider::ResponseSchema;
use crate::structured::{ComparisonReply, TargetReply, judge_comparison, judge_scores};

/// The rubric's criteria, or one when it has none.
fn criteria_of(config: &JudgeConfig) -> Vec<String> {
    if config.rubric.is_empty() {
        vec!["Overall quality".to_owned()]
    } else {
        config
            .rubric
            .iter()
            .map(|criterion| criterion.name.clone())
            .collect()
    }
}

/// The rubric as the prompt lists it.
fn rubric_lines(
    context: &ActivationContext,
    config: &JudgeConfig,
    criteria: &[String],
) -> Result<String, ActivationError> {
    let mut lines = String::new();
    for (index, name) in criteria.iter().enumerate() {
        let description = config
            .rubric
            .get(index)
            .map(|criterion| criterion.description.as_str())
            .unwrap_or_default();
        let description = context.render(description)?;
        lines.push_str(&format!(
            "- {name}{}\n",
            if description.is_empty() {
                String::new()
            } else {
                format!(": {description}")
            }
        ));
    }
    Ok(lines)
}

/// The weighted score of one set of scores, on the same scale, from the
/// rubric's weights.
fn weighted_score(config: &JudgeConfig, scores: &[CriterionScore]) -> f64 {
    let mut weighted = 0.0;
    let mut weights = 0.0;
    for entry in scores {
        let weight = config
            .rubric
            .iter()
            .find(|criterion| criterion.name == entry.criterion)
            .map_or(1.0, |criterion| {
                if criterion.weight > 0.0 {
                    criterion.weight
                } else {
                    1.0
                }
            });
        weighted += entry.value() * weight;
        weights += weight;
    }
    if weights > 0.0 {
        weighted / weights
    } else {
        0.0
    }
}

/// A score as the verdict writes it: the model's integer (a fraction reads
/// as 0, as it always has).
fn whole(score: &CriterionScore) -> i64 {
    score.score.as_i64().unwrap_or_default()
}

pub async fn judge(
    context: &ActivationContext,
    config: &JudgeConfig,
) -> Result<ActivationOutput, ActivationError> {
    if let Some(comparison) = context
        .bundles_on(COMPARISON_IN)
        .into_iter()
        .map(|(_, bundle)| bundle)
        .find(|bundle| bundle.content_type == COMPARISON_CONTENT_TYPE)
    {
        // A comparison that does not read has no variant to score.
        let variants = comparison
            .content_as::<Comparison>()
            .map(|comparison| comparison.variants)
            .unwrap_or_default();
        return compare(context, config, variants).await;
    }
    let label = context.module.display_label();
    let criteria = criteria_of(config);
    let target = context
        .bundles_on(TARGET_IN)
        .into_iter()
        .map(|(_, bundle)| bundle.as_text())
        .next()
        .ok_or_else(|| {
            ActivationError::Failed(format!("\"{label}\" has nothing on its target input"))
        })?;
    let comparison = context
        .bundles_on(COMPARISON_IN)
        .into_iter()
        .map(|(_, bundle)| bundle.as_text())
        .next();

    let mut prompt = String::new();
    if !config.instruction.trim().is_empty() {
        prompt.push_str(&context.render(&config.instruction)?);
        prompt.push_str("\n\n");
    }
    prompt.push_str(&format!(
        "Score the target from 0 to {} on each criterion:\n",
        config.scale_max
    ));
    prompt.push_str(&rubric_lines(context, config, &criteria)?);
    prompt.push_str(&format!("\n## Target\n\n{target}"));
    if let Some(comparison) = &comparison {
        prompt.push_str(&format!("\n\n## Comparison\n\n{comparison}"));
    }
    prompt.push_str("\n\nReply with JSON only.");

    let (reply, receipt): (TargetReply, Receipt) = ask(
        context,
        config,
        prompt,
        judge_scores(&criteria, config.scale_max),
    )
    .await?;

    let mut verdict = String::new();
    for entry in &reply.scores {
        verdict.push_str(&format!(
            "{}: {}/{} — {}\n",
            entry.criterion,
            whole(entry),
            config.scale_max,
            entry.reasoning
        ));
    }
    verdict.push_str(&reply.summary);
    // Weighted total on the same 0..scale_max scale, from the rubric weights.
    let scores = JudgeScores {
        weighted_score: weighted_score(config, &reply.scores),
        scores: reply.scores,
        summary: reply.summary,
    };
    Ok(verdict_output(
        context,
        ContextBundle::typed(&context.module.id, &scores),
        verdict,
        receipt,
    ))
}

/// Asks the judge's model for scores in `schema`: its reply, and the
/// receipt of the call.
async fn ask<Reply: DeserializeOwned>(
    context: &ActivationContext,
    config: &JudgeConfig,
    prompt: String,
    schema: ResponseSchema,
) -> Result<(Reply, Receipt), ActivationError> {
    let (info, provider, model) = context.provider_and_model(&config.agent_config)?;
    let system = config
        .agent_config
        .system
        .as_deref()
        .map(|system| context.render(system))
        .transpose()?;
    let mut session = context.open_session(None, &model, &info.id, system);
    context.say(&mut session, turn(None, prompt, &[]).await?);
    let reply = context
        .call(
            provider.as_ref(),
            &mut session,
            0,
            "Scores",
            Some(schema),
            &config.agent_config,
        )
        .await?;
    let mut tally = Tally::default();
    tally.add(&reply);
    let answer = parse_json_reply(&reply.text)
        .and_then(|value| Reply::deserialize(value).ok())
        .ok_or_else(|| {
            ActivationError::Failed(format!(
                "\"{}\": the scores are not the JSON asked for",
                context.module.display_label()
            ))
        })?;
    Ok((answer, context.receipt(&info, &model, tally, 0)))
}

/// The judge's outputs: the scores, the verdict as text, its signal.
fn verdict_output(
    context: &ActivationContext,
    scores: ContextBundle,
    verdict: String,
    receipt: Receipt,
) -> ActivationOutput {
    ActivationOutput {
        output_text: verdict.clone(),
        ports: vec![
            (SCORES_OUT.to_owned(), PortValue::Bundle(scores)),
            (
                DATA_OUT.to_owned(),
                PortValue::Bundle(context.text_bundle(verdict)),
            ),
            (SIGNAL_OUT.to_owned(), context.signal()),
        ],
        receipt: Some(receipt),
        ..ActivationOutput::default()
    }
}

/// Scores each variant of a ComparisonBundle; the best weighted score wins
/// (the first of equals). A variant that failed is not scored.
async fn compare(
    context: &ActivationContext,
    config: &JudgeConfig,
    variants: Vec<VariantResult>,
) -> Result<ActivationOutput, ActivationError> {
    let label = context.module.display_label();
    let criteria = criteria_of(config);
    let entries: Vec<VariantResult> = variants
        .into_iter()
        .filter(VariantResult::completed)
        .collect();
    let names: Vec<String> = entries.iter().map(|variant| variant.name.clone()).collect();
    if names.is_empty() {
        return Err(ActivationError::Failed(format!(
            "\"{label}\" has no variant to score: every one failed"
        )));
    }
    let mut prompt = String::new();
    if !config.instruction.trim().is_empty() {
        prompt.push_str(&context.render(&config.instruction)?);
        prompt.push_str("\n\n");
    }
    prompt.push_str(&format!(
        "Score each variant below from 0 to {} on each criterion:\n",
        config.scale_max
    ));
    prompt.push_str(&rubric_lines(context, config, &criteria)?);
    if let Some(target) = context
        .bundles_on(TARGET_IN)
        .into_iter()
        .map(|(_, bundle)| bundle.as_text())
        .next()
    {
        prompt.push_str(&format!("\n## What the variants answer\n\n{target}\n"));
    }
    for entry in &entries {
        prompt.push_str(&format!(
            "\n## Variant \"{}\"\n\n{}\n",
            entry.name,
            entry.text()
        ));
    }
    prompt.push_str("\nScore every variant. Reply with JSON only.");

    let (answer, receipt): (ComparisonReply, Receipt) = ask(
        context,
        config,
        prompt,
        judge_comparison(&criteria, &names, config.scale_max),
    )
    .await?;
    // Each variant in the comparison's order, with its weighted score.
    let mut scored: Vec<VariantScores> = Vec::new();
    for name in &names {
        let Some(found) = answer.variants.iter().find(|entry| &entry.variant == name) else {
            return Err(ActivationError::Failed(format!(
                "\"{label}\": the scores leave out variant \"{name}\""
            )));
        };
        scored.push(VariantScores {
            variant: name.clone(),
            scores: found.scores.clone(),
            weighted_score: weighted_score(config, &found.scores),
        });
    }
    let mut winner = 0;
    for (index, entry) in scored.iter().enumerate() {
        if entry.weighted_score > scored[winner].weighted_score {
            winner = index;
        }
    }
    let winner_name = names[winner].clone();
    let mut verdict = String::new();
    for entry in &scored {
        verdict.push_str(&format!(
            "{}: {:.1}/{}\n",
            entry.variant, entry.weighted_score, config.scale_max
        ));
        for score in &entry.scores {
            verdict.push_str(&format!(
                "  {}: {} — {}\n",
                score.criterion,
                whole(score),
                score.reasoning
            ));
        }
    }
    verdict.push_str(&format!("Winner: {winner_name}. {}", answer.summary));
    let scores = ComparisonScores {
        variants: scored,
        winner: winner_name,
        summary: answer.summary,
        scale_max: config.scale_max,
    };
    Ok(verdict_output(
        context,
        ContextBundle::typed(&context.module.id, &scores),
        verdict,
        receipt,
    ))
}
