//! The ComparisonBundle (DOC23 §7.2) on a module's `comparison_out`
//! (content type `graph::experiment::COMPARISON_CONTENT_TYPE`): every
//! variant of a module with variants, in the module's order. The engine's
//! experiment writes it; a judge's `comparison_in` scores it and the app's
//! comparison shows it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Error, Value};

use crate::bundle::Receipt;
use crate::fields::{Fields, read_by_hand};
use crate::status::VariantStatus;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    /// The module whose variants these are.
    pub module_id: String,
    pub variants: Vec<VariantResult>,
}

/// One variant: what it changes, how long it took, and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VariantResult {
    pub name: String,
    /// What it changes (`its own instruction, 1 re-prompt`).
    pub summary: String,
    pub duration_ms: u64,
    /// `status` and the fields of that status, beside the ones above.
    #[serde(flatten)]
    pub outcome: VariantOutcome,
}

/// How a variant ended, told by its `status`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum VariantOutcome {
    Completed {
        /// The content of its `data_out` (`null` when it sent none).
        data_out: Value,
        /// Its merged output as text.
        text: String,
        receipt: Option<Box<Receipt>>,
        /// In US dollars; `None` when its model has no price.
        cost: Option<f64>,
        /// The sections its last reply labelled, by name (an agent task
        /// with named outputs): each variant's own.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        named_outputs: BTreeMap<String, String>,
        /// What it changed, a unified diff (a coding module's `diff_out`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
    },
    Failed {
        error: String,
    },
}

impl VariantOutcome {
    pub fn status(&self) -> VariantStatus {
        match self {
            VariantOutcome::Completed { .. } => VariantStatus::Completed,
            VariantOutcome::Failed { .. } => VariantStatus::Failed,
        }
    }
}

impl VariantResult {
    pub fn completed(&self) -> bool {
        self.outcome.status() == VariantStatus::Completed
    }

    /// Its merged output, or why it failed.
    pub fn text(&self) -> &str {
        match &self.outcome {
            VariantOutcome::Completed { text, .. } => text,
            VariantOutcome::Failed { error } => error,
        }
    }

    pub fn receipt(&self) -> Option<&Receipt> {
        match &self.outcome {
            VariantOutcome::Completed { receipt, .. } => receipt.as_deref(),
            VariantOutcome::Failed { .. } => None,
        }
    }

    pub fn cost(&self) -> Option<f64> {
        match &self.outcome {
            VariantOutcome::Completed { cost, .. } => *cost,
            VariantOutcome::Failed { .. } => None,
        }
    }

    /// Its own named outputs (none when it failed).
    pub fn named_outputs(&self) -> Option<&BTreeMap<String, String>> {
        match &self.outcome {
            VariantOutcome::Completed { named_outputs, .. } => Some(named_outputs),
            VariantOutcome::Failed { .. } => None,
        }
    }

    /// What it changed, when it is a coding variant that completed.
    pub fn diff(&self) -> Option<&str> {
        match &self.outcome {
            VariantOutcome::Completed { diff, .. } => diff.as_deref(),
            VariantOutcome::Failed { .. } => None,
        }
    }
}

impl Comparison {
    /// A comparison of a variant that completed and one that failed: what
    /// tests on both sides of the wire write and read.
    pub fn example() -> Comparison {
        Comparison {
            module_id: "m2".to_owned(),
            variants: vec![
                VariantResult {
                    name: "A".to_owned(),
                    summary: "as configured".to_owned(),
                    duration_ms: 1500,
                    outcome: VariantOutcome::Completed {
                        data_out: Value::Null,
                        text: "one\ntwo".to_owned(),
                        receipt: Some(Box::new(Receipt {
                            module_id: "m2".to_owned(),
                            activation: 1,
                            provider: "sim".to_owned(),
                            model: "sim-1".to_owned(),
                            simulated: true,
                            tokens_in: 10,
                            tokens_out: 5,
                            duration_ms: 1500,
                            cost: Some(0.0),
                            re_prompt_count: 0,
                            tools: Vec::new(),
                        })),
                        cost: Some(0.0),
                        named_outputs: BTreeMap::new(),
                        diff: None,
                    },
                },
                VariantResult {
                    name: "B".to_owned(),
                    summary: "its own instruction".to_owned(),
                    duration_ms: 20,
                    outcome: VariantOutcome::Failed {
                        error: "the provider failed".to_owned(),
                    },
                },
            ],
        }
    }

    fn read(value: Value) -> Result<Comparison, Error> {
        let mut fields = Fields::of("comparison", value)?;
        Ok(Comparison {
            module_id: fields.text("module_id")?,
            variants: fields.list("variants", VariantResult::read)?,
        })
    }
}

impl VariantResult {
    /// A variant needs its name and status; what it had besides reads as
    /// nothing when it is not there.
    fn read(value: Value) -> Result<VariantResult, Error> {
        let mut fields = Fields::of("variant", value)?;
        let name = fields.text("name")?;
        let status = fields.word("status", VariantStatus::parse, "a variant status")?;
        let outcome = match status {
            VariantStatus::Completed => VariantOutcome::Completed {
                data_out: fields.value("data_out"),
                text: fields.text("text").unwrap_or_default(),
                receipt: match fields.value("receipt") {
                    Value::Null => None,
                    receipt => Some(Box::new(Receipt::deserialize(receipt)?)),
                },
                cost: match fields.value("cost") {
                    Value::Null => None,
                    cost => Some(
                        cost.as_f64()
                            .ok_or_else(|| fields.wrong("cost", "a number"))?,
                    ),
                },
                named_outputs: match fields.value("named_outputs") {
                    Value::Null => BTreeMap::new(),
                    named => BTreeMap::deserialize(named)?,
                },
                diff: match fields.value("diff") {
                    Value::String(diff) => Some(diff),
                    Value::Null => None,
                    _ => return Err(fields.wrong("diff", "text")),
                },
            },
            VariantStatus::Failed => VariantOutcome::Failed {
                error: fields.text("error").unwrap_or_default(),
            },
        };
        Ok(VariantResult {
            name,
            summary: fields.text("summary").unwrap_or_default(),
            duration_ms: fields.number("duration_ms").unwrap_or_default(),
            outcome,
        })
    }
}

read_by_hand!(Comparison, VariantResult);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_comparison_is_written_as_the_experiment_always_wrote_it() {
        // The order the experiment's `json!` had: the variant's own fields,
        // then its status and what that status has.
        assert_eq!(
            serde_json::to_string(&Comparison::example()).unwrap(),
            concat!(
                r#"{"module_id":"m2","variants":["#,
                r#"{"name":"A","summary":"as configured","duration_ms":1500,"status":"completed","data_out":null,"text":"one\ntwo","#,
                r#""receipt":{"module_id":"m2","activation":1,"provider":"sim","model":"sim-1","simulated":true,"tokens_in":10,"tokens_out":5,"duration_ms":1500,"cost":0.0,"re_prompt_count":0},"cost":0.0},"#,
                r#"{"name":"B","summary":"its own instruction","duration_ms":20,"status":"failed","error":"the provider failed"}"#,
                "]}"
            )
        );
    }

    #[test]
    fn a_comparison_reads_back_as_written() {
        let written = serde_json::to_value(Comparison::example()).unwrap();
        assert_eq!(
            serde_json::from_value::<Comparison>(written).unwrap(),
            Comparison::example()
        );
        // A coding variant's diff and an agent task variant's named
        // outputs are each its own.
        let mut own = Comparison::example();
        if let VariantOutcome::Completed {
            named_outputs,
            diff,
            ..
        } = &mut own.variants[0].outcome
        {
            named_outputs.insert("Summary".to_owned(), "Short.".to_owned());
            *diff = Some("+added\n".to_owned());
        }
        let written = serde_json::to_value(&own).unwrap();
        assert_eq!(written["variants"][0]["named_outputs"]["Summary"], "Short.");
        let read = serde_json::from_value::<Comparison>(written).unwrap();
        assert_eq!(read, own);
        assert_eq!(read.variants[0].diff(), Some("+added\n"));
        assert_eq!(read.variants[1].named_outputs(), None);
        let unknown = json!({"name": "C", "summary": "", "duration_ms": 1, "status": "lost"});
        assert!(serde_json::from_value::<VariantResult>(unknown).is_err());
        let nameless = json!({"summary": "", "duration_ms": 1, "status": "failed", "error": "x"});
        let error = serde_json::from_value::<VariantResult>(nameless).unwrap_err();
        assert!(error.to_string().contains("name"), "{error}");
    }
}
