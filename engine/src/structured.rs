//! The structured replies the engine asks models for — a review gate's
//! decision, a judge's scores of a target or of variants, a claim
//! extractor's claims: each one's JSON Schema and its type. The activation
//! reads the reply as that type; the simulated provider answers with it.

use graph::json_schema::Schema;
use serde::{Deserialize, Serialize};
use wire::content::CriterionScore;
use wire::status::ReviewDecision;

use crate::provider::ResponseSchema;

/// The schema names, which the simulated provider answers by.
pub const REVIEW_DECISION: &str = "review_decision";
pub const JUDGE_SCORES: &str = "judge_scores";
pub const JUDGE_COMPARISON: &str = "judge_comparison";
pub const CLAIMS: &str = "claims";

fn response_schema(name: &str, schema: &Schema) -> ResponseSchema {
    ResponseSchema {
        name: name.to_owned(),
        schema: schema.to_value(),
    }
}

/// A reviewer's decision: approve, or revise with feedback.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewReply {
    pub decision: ReviewDecision,
    #[serde(default)]
    pub feedback: String,
}

pub fn review_decision() -> ResponseSchema {
    response_schema(
        REVIEW_DECISION,
        &Schema::object([
            (
                "decision",
                Schema::one_of(
                    [ReviewDecision::Approve, ReviewDecision::Revise].map(ReviewDecision::as_str),
                ),
            ),
            ("feedback", Schema::string()),
        ]),
    )
}

/// A judge's scores of its target, one per criterion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetReply {
    pub scores: Vec<CriterionScore>,
    #[serde(default)]
    pub summary: String,
}

/// A criterion's score: the criterion named, an integer on the scale, why.
fn criterion_scores(criteria: &[String], scale_max: u32) -> Schema {
    Schema::array(Schema::object([
        ("criterion", Schema::one_of(criteria)),
        ("score", Schema::integer(0, scale_max)),
        ("reasoning", Schema::string()),
    ]))
}

pub fn judge_scores(criteria: &[String], scale_max: u32) -> ResponseSchema {
    response_schema(
        JUDGE_SCORES,
        &Schema::object([
            ("scores", criterion_scores(criteria, scale_max)),
            ("summary", Schema::string()),
        ]),
    )
}

/// A judge's scores of each variant of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonReply {
    pub variants: Vec<VariantReply>,
    #[serde(default)]
    pub summary: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantReply {
    pub variant: String,
    pub scores: Vec<CriterionScore>,
}

pub fn judge_comparison(
    criteria: &[String],
    variants: &[String],
    scale_max: u32,
) -> ResponseSchema {
    response_schema(
        JUDGE_COMPARISON,
        &Schema::object([
            (
                "variants",
                Schema::array(Schema::object([
                    ("variant", Schema::one_of(variants)),
                    ("scores", criterion_scores(criteria, scale_max)),
                ])),
            ),
            ("summary", Schema::string()),
        ]),
    )
}

/// The factual claims of a text, each one sentence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimsReply {
    pub claims: Vec<String>,
}

pub fn claims() -> ResponseSchema {
    response_schema(
        CLAIMS,
        &Schema::object([("claims", Schema::array(Schema::string()))]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The schemas as the activations wrote them with `json!` before, key
    /// for key and in order (providers are sent the text).
    #[test]
    fn the_schemas_are_the_ones_providers_have_always_been_sent() {
        let text = |schema: ResponseSchema| serde_json::to_string(&schema.schema).unwrap();
        assert_eq!(
            text(review_decision()),
            json!({
                "type": "object",
                "properties": {
                    "decision": {"type": "string", "enum": ["approve", "revise"]},
                    "feedback": {"type": "string"}
                },
                "required": ["decision", "feedback"],
                "additionalProperties": false
            })
            .to_string()
        );
        let criteria = ["Clarity".to_owned(), "Depth".to_owned()];
        let criterion = json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "criterion": {"type": "string", "enum": criteria},
                    "score": {"type": "integer", "minimum": 0, "maximum": 10},
                    "reasoning": {"type": "string"}
                },
                "required": ["criterion", "score", "reasoning"],
                "additionalProperties": false
            }
        });
        assert_eq!(
            text(judge_scores(&criteria, 10)),
            json!({
                "type": "object",
                "properties": {"scores": criterion, "summary": {"type": "string"}},
                "required": ["scores", "summary"],
                "additionalProperties": false
            })
            .to_string()
        );
        let variants = ["A".to_owned(), "B".to_owned()];
        assert_eq!(
            text(judge_comparison(&criteria, &variants, 10)),
            json!({
                "type": "object",
                "properties": {
                    "variants": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "variant": {"type": "string", "enum": variants},
                                "scores": criterion
                            },
                            "required": ["variant", "scores"],
                            "additionalProperties": false
                        }
                    },
                    "summary": {"type": "string"}
                },
                "required": ["variants", "summary"],
                "additionalProperties": false
            })
            .to_string()
        );
        assert_eq!(
            text(claims()),
            json!({
                "type": "object",
                "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
                "required": ["claims"],
                "additionalProperties": false
            })
            .to_string()
        );
    }

    #[test]
    fn replies_read_as_models_write_them() {
        let decision: ReviewReply =
            serde_json::from_value(json!({"decision": "revise", "feedback": "Cite a source."}))
                .unwrap();
        assert_eq!(decision.decision, ReviewDecision::Revise);
        assert_eq!(
            serde_json::to_string(&decision).unwrap(),
            r#"{"decision":"revise","feedback":"Cite a source."}"#
        );
        let scores: TargetReply = serde_json::from_value(json!({
            "scores": [{"criterion": "Clarity", "score": 7, "reasoning": "Clear."}],
            "summary": "Good."
        }))
        .unwrap();
        assert_eq!(scores.scores[0].value(), 7.0);
        assert!(serde_json::from_value::<ClaimsReply>(json!({"claims": "one"})).is_err());
    }
}
