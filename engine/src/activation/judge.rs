//! The judge: scores `target_in` (optionally against `comparison_in`) on each
//! rubric criterion, as structured JSON. Fed a module's variants on
//! `comparison_in` (a ComparisonBundle, DOC23 §7.2–7.3), it scores each
//! variant instead, and the one with the best weighted score wins.

use graph::config::JudgeConfig;
use serde_json::{Value, json};

use super::{ActivationContext, ActivationError, ActivationOutput, Tally, parse_json_reply};
use crate::bundle::{ContextBundle, PortValue};
use crate::prompt::turn;
use crate::provider::ResponseSchema;

fn schema(criteria: &[String], scale_max: u32) -> ResponseSchema {
    ResponseSchema {
        name: "judge_scores".to_owned(),
        schema: json!({
            "type": "object",
            "properties": {
                "scores": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "criterion": {"type": "string", "enum": criteria},
                            "score": {"type": "integer", "minimum": 0, "maximum": scale_max},
                            "reasoning": {"type": "string"}
                        },
                        "required": ["criterion", "score", "reasoning"],
                        "additionalProperties": false
                    }
                },
                "summary": {"type": "string"}
            },
            "required": ["scores", "summary"],
            "additionalProperties": false
        }),
    }
}

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

/// The weighted score of one set of `{criterion, score}` entries, on the
/// same scale, from the rubric's weights.
fn weighted_score(config: &JudgeConfig, scores: &Value) -> f64 {
    let mut weighted = 0.0;
    let mut weights = 0.0;
    for entry in scores.as_array().into_iter().flatten() {
        let name = entry
            .get("criterion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let score = entry.get("score").and_then(Value::as_f64).unwrap_or(0.0);
        let weight = config
            .rubric
            .iter()
            .find(|criterion| criterion.name == name)
            .map_or(1.0, |criterion| {
                if criterion.weight > 0.0 {
                    criterion.weight
                } else {
                    1.0
                }
            });
        weighted += score * weight;
        weights += weight;
    }
    if weights > 0.0 {
        weighted / weights
    } else {
        0.0
    }
}

pub async fn judge(
    context: &ActivationContext,
    config: &JudgeConfig,
) -> Result<ActivationOutput, ActivationError> {
    if let Some(comparison) = context
        .bundles_on("comparison_in")
        .into_iter()
        .map(|(_, bundle)| bundle)
        .find(|bundle| bundle.content_type == graph::experiment::COMPARISON_CONTENT_TYPE)
    {
        return compare(context, config, &comparison.content).await;
    }
    let label = context.module.display_label();
    let criteria = criteria_of(config);
    let target = context
        .bundles_on("target_in")
        .into_iter()
        .map(|(_, bundle)| bundle.as_text())
        .next()
        .ok_or_else(|| ActivationError(format!("\"{label}\" has nothing on its target input")))?;
    let comparison = context
        .bundles_on("comparison_in")
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

    let (mut scores, receipt) = ask(
        context,
        config,
        prompt,
        schema(&criteria, config.scale_max),
        "scores",
    )
    .await?;

    // Weighted total on the same 0..scale_max scale, from the rubric weights.
    scores["weighted_score"] = json!(weighted_score(config, &scores["scores"]));

    let mut verdict = String::new();
    for entry in scores["scores"].as_array().into_iter().flatten() {
        verdict.push_str(&format!(
            "{}: {}/{} — {}\n",
            entry
                .get("criterion")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            entry
                .get("score")
                .and_then(Value::as_i64)
                .unwrap_or_default(),
            config.scale_max,
            entry
                .get("reasoning")
                .and_then(Value::as_str)
                .unwrap_or_default()
        ));
    }
    verdict.push_str(
        scores
            .get("summary")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    );
    Ok(verdict_output(context, scores, verdict, receipt))
}

/// Asks the judge's model for scores in `schema`: its JSON reply, which
/// must have the array `field`, and the receipt of the call.
async fn ask(
    context: &ActivationContext,
    config: &JudgeConfig,
    prompt: String,
    schema: ResponseSchema,
    field: &str,
) -> Result<(Value, crate::bundle::Receipt), ActivationError> {
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
        .filter(|value| value.get(field).is_some_and(Value::is_array))
        .ok_or_else(|| {
            ActivationError(format!(
                "\"{}\": the scores are not the JSON asked for",
                context.module.display_label()
            ))
        })?;
    Ok((answer, context.receipt(&info, &model, tally, 0)))
}

/// The judge's outputs: the scores, the verdict as text, its signal.
fn verdict_output(
    context: &ActivationContext,
    scores: Value,
    verdict: String,
    receipt: crate::bundle::Receipt,
) -> ActivationOutput {
    ActivationOutput {
        output_text: verdict.clone(),
        ports: vec![
            (
                "scores_out".to_owned(),
                PortValue::Bundle(ContextBundle::json(&context.module.id, scores)),
            ),
            (
                "data_out".to_owned(),
                PortValue::Bundle(context.text_bundle(verdict)),
            ),
            ("signal_out".to_owned(), context.signal()),
        ],
        receipt: Some(receipt),
        ..ActivationOutput::default()
    }
}

fn comparison_schema(criteria: &[String], variants: &[String], scale_max: u32) -> ResponseSchema {
    ResponseSchema {
        name: COMPARISON_SCHEMA.to_owned(),
        schema: json!({
            "type": "object",
            "properties": {
                "variants": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "variant": {"type": "string", "enum": variants},
                            "scores": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "criterion": {"type": "string", "enum": criteria},
                                        "score": {"type": "integer", "minimum": 0, "maximum": scale_max},
                                        "reasoning": {"type": "string"}
                                    },
                                    "required": ["criterion", "score", "reasoning"],
                                    "additionalProperties": false
                                }
                            }
                        },
                        "required": ["variant", "scores"],
                        "additionalProperties": false
                    }
                },
                "summary": {"type": "string"}
            },
            "required": ["variants", "summary"],
            "additionalProperties": false
        }),
    }
}

/// The schema name of a comparison's scores (the simulated provider
/// answers it too).
pub const COMPARISON_SCHEMA: &str = "judge_comparison";

/// Scores each variant of a ComparisonBundle; the best weighted score wins
/// (the first of equals). A variant that failed is not scored.
async fn compare(
    context: &ActivationContext,
    config: &JudgeConfig,
    comparison: &Value,
) -> Result<ActivationOutput, ActivationError> {
    let label = context.module.display_label();
    let criteria = criteria_of(config);
    let entries: Vec<&Value> = comparison["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|variant| variant["status"] == "completed")
        .collect();
    let names: Vec<String> = entries
        .iter()
        .filter_map(|variant| variant["name"].as_str().map(str::to_owned))
        .collect();
    if names.is_empty() {
        return Err(ActivationError(format!(
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
        .bundles_on("target_in")
        .into_iter()
        .map(|(_, bundle)| bundle.as_text())
        .next()
    {
        prompt.push_str(&format!("\n## What the variants answer\n\n{target}\n"));
    }
    for entry in &entries {
        prompt.push_str(&format!(
            "\n## Variant \"{}\"\n\n{}\n",
            entry["name"].as_str().unwrap_or_default(),
            entry["text"].as_str().unwrap_or_default()
        ));
    }
    prompt.push_str("\nScore every variant. Reply with JSON only.");

    let (answer, receipt) = ask(
        context,
        config,
        prompt,
        comparison_schema(&criteria, &names, config.scale_max),
        "variants",
    )
    .await?;
    // Each variant in the comparison's order, with its weighted score.
    let mut scored: Vec<Value> = Vec::new();
    for name in &names {
        let Some(found) = answer["variants"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|entry| entry["variant"].as_str() == Some(name.as_str()))
        else {
            return Err(ActivationError(format!(
                "\"{label}\": the scores leave out variant \"{name}\""
            )));
        };
        scored.push(json!({
            "variant": name,
            "scores": found["scores"],
            "weighted_score": weighted_score(config, &found["scores"]),
        }));
    }
    let mut winner = 0;
    for (index, entry) in scored.iter().enumerate() {
        if entry["weighted_score"].as_f64() > scored[winner]["weighted_score"].as_f64() {
            winner = index;
        }
    }
    let winner_name = names[winner].clone();
    let summary = answer["summary"].as_str().unwrap_or_default().to_owned();
    let mut verdict = String::new();
    for entry in &scored {
        verdict.push_str(&format!(
            "{}: {:.1}/{}\n",
            entry["variant"].as_str().unwrap_or_default(),
            entry["weighted_score"].as_f64().unwrap_or_default(),
            config.scale_max
        ));
        for score in entry["scores"].as_array().into_iter().flatten() {
            verdict.push_str(&format!(
                "  {}: {} — {}\n",
                score["criterion"].as_str().unwrap_or_default(),
                score["score"].as_i64().unwrap_or_default(),
                score["reasoning"].as_str().unwrap_or_default()
            ));
        }
    }
    verdict.push_str(&format!("Winner: {winner_name}. {summary}"));
    let scores = json!({
        "variants": scored,
        "winner": winner_name,
        "summary": summary,
        "scale_max": config.scale_max,
    });
    Ok(verdict_output(context, scores, verdict, receipt))
}
