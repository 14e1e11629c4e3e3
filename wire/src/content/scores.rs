//! A judge's scores on its `scores_out` (DOC23 §7.3): a target's score on
//! each rubric criterion, or, fed a comparison, each variant's scores and
//! the winner. The judge writes them; the app's comparison reads a
//! variant's weighted score and the winner.

use serde::Serialize;
use serde_json::{Error, Number, Value};

use crate::fields::{Fields, read_by_hand};

/// One criterion's score and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CriterionScore {
    pub criterion: String,
    /// From 0 to the judge's `scale_max`, kept as the model wrote it.
    pub score: Number,
    pub reasoning: String,
}

impl CriterionScore {
    /// The score as a number to weigh.
    pub fn value(&self) -> f64 {
        self.score.as_f64().unwrap_or(0.0)
    }
}

/// The scores of a target: the model's, and their weighted mean on the same
/// scale from the rubric's weights.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JudgeScores {
    pub scores: Vec<CriterionScore>,
    pub summary: String,
    pub weighted_score: f64,
}

/// The scores of a comparison's variants, each in the comparison's order,
/// and the one with the best weighted score (the first of equals).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ComparisonScores {
    pub variants: Vec<VariantScores>,
    pub winner: String,
    pub summary: String,
    pub scale_max: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VariantScores {
    pub variant: String,
    pub scores: Vec<CriterionScore>,
    pub weighted_score: f64,
}

impl CriterionScore {
    fn read(value: Value) -> Result<CriterionScore, Error> {
        let mut fields = Fields::of("criterion score", value)?;
        Ok(CriterionScore {
            criterion: fields.text("criterion")?,
            score: fields.exact_number("score")?,
            reasoning: fields.text("reasoning")?,
        })
    }
}

impl VariantScores {
    fn read(value: Value) -> Result<VariantScores, Error> {
        let mut fields = Fields::of("variant scores", value)?;
        Ok(VariantScores {
            variant: fields.text("variant")?,
            scores: fields.list("scores", CriterionScore::read)?,
            weighted_score: fields.float("weighted_score")?,
        })
    }
}

impl ComparisonScores {
    fn read(value: Value) -> Result<ComparisonScores, Error> {
        let mut fields = Fields::of("comparison scores", value)?;
        Ok(ComparisonScores {
            variants: fields.list("variants", VariantScores::read)?,
            winner: fields.text("winner")?,
            summary: fields.text("summary")?,
            scale_max: fields.number("scale_max")?,
        })
    }

    /// The weighted score of the variant called `name`, if it was scored.
    pub fn weighted_score_of(&self, name: &str) -> Option<f64> {
        self.variants
            .iter()
            .find(|scored| scored.variant == name)
            .map(|scored| scored.weighted_score)
    }
}

read_by_hand!(CriterionScore, VariantScores, ComparisonScores);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn score(criterion: &str, score: u32) -> CriterionScore {
        CriterionScore {
            criterion: criterion.to_owned(),
            score: score.into(),
            reasoning: format!("Reasoning for {criterion}."),
        }
    }

    #[test]
    fn a_targets_scores_are_the_replys_fields_then_the_weighted_score() {
        let scores = JudgeScores {
            scores: vec![score("Clarity", 7)],
            summary: "Fine.".to_owned(),
            weighted_score: 7.0,
        };
        assert_eq!(
            serde_json::to_string(&scores).unwrap(),
            r#"{"scores":[{"criterion":"Clarity","score":7,"reasoning":"Reasoning for Clarity."}],"summary":"Fine.","weighted_score":7.0}"#
        );
        // A score is kept as the model wrote it.
        let fractional: CriterionScore = serde_json::from_value(
            json!({"criterion": "Depth", "score": 6.5, "reasoning": "Deep enough."}),
        )
        .unwrap();
        assert_eq!(fractional.value(), 6.5);
        assert_eq!(
            serde_json::to_value(&fractional).unwrap()["score"],
            json!(6.5)
        );
    }

    #[test]
    fn a_comparisons_scores_are_written_in_the_judges_order_and_read_back() {
        let scores = ComparisonScores {
            variants: vec![
                VariantScores {
                    variant: "A".to_owned(),
                    scores: vec![score("Clarity", 4)],
                    weighted_score: 4.0,
                },
                VariantScores {
                    variant: "B".to_owned(),
                    scores: vec![score("Clarity", 7)],
                    weighted_score: 7.0,
                },
            ],
            winner: "B".to_owned(),
            summary: "B is clearer.".to_owned(),
            scale_max: 10,
        };
        let text = serde_json::to_string(&scores).unwrap();
        assert!(
            text.starts_with(
                r#"{"variants":[{"variant":"A","scores":[{"criterion":"Clarity","score":4,"#
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                r#""weighted_score":7.0}],"winner":"B","summary":"B is clearer.","scale_max":10}"#
            ),
            "{text}"
        );
        let back: ComparisonScores = serde_json::from_str(&text).unwrap();
        assert_eq!(back, scores);
        assert_eq!(back.weighted_score_of("A"), Some(4.0));
        assert_eq!(back.weighted_score_of("C"), None);
        // A target's scores are not a comparison's.
        let target = json!({"scores": [], "summary": "", "weighted_score": 0.0});
        assert!(serde_json::from_value::<ComparisonScores>(target).is_err());
    }
}
