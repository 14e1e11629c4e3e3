//! The judge: scores `target_in` (optionally against `comparison_in`) on each
//! rubric criterion, as structured JSON.

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

pub async fn judge(
    context: &ActivationContext,
    config: &JudgeConfig,
) -> Result<ActivationOutput, ActivationError> {
    let label = context.module.display_label();
    let criteria: Vec<String> = if config.rubric.is_empty() {
        vec!["Overall quality".to_owned()]
    } else {
        config
            .rubric
            .iter()
            .map(|criterion| criterion.name.clone())
            .collect()
    };
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
    for (index, name) in criteria.iter().enumerate() {
        let description = config
            .rubric
            .get(index)
            .map(|criterion| criterion.description.as_str())
            .unwrap_or_default();
        let description = context.render(description)?;
        prompt.push_str(&format!(
            "- {name}{}\n",
            if description.is_empty() {
                String::new()
            } else {
                format!(": {description}")
            }
        ));
    }
    prompt.push_str(&format!("\n## Target\n\n{target}"));
    if let Some(comparison) = &comparison {
        prompt.push_str(&format!("\n\n## Comparison\n\n{comparison}"));
    }
    prompt.push_str("\n\nReply with JSON only.");

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
            Some(schema(&criteria, config.scale_max)),
            &config.agent_config,
        )
        .await?;
    let mut tally = Tally::default();
    tally.add(&reply);
    let mut scores = parse_json_reply(&reply.text)
        .filter(|value| value.get("scores").is_some_and(Value::is_array))
        .ok_or_else(|| {
            ActivationError(format!(
                "\"{label}\": the scores are not the JSON asked for"
            ))
        })?;

    // Weighted total on the same 0..scale_max scale, from the rubric weights.
    let mut weighted = 0.0;
    let mut weights = 0.0;
    for entry in scores["scores"].as_array().into_iter().flatten() {
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
    scores["weighted_score"] = json!(if weights > 0.0 {
        weighted / weights
    } else {
        0.0
    });

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
    let receipt = context.receipt(&info, &model, tally, 0);
    Ok(ActivationOutput {
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
        session_key: None,
        intent: None,
        state_set: Vec::new(),
        gates: Vec::new(),
        checks_failed: None,
    })
}
