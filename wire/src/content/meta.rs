//! What a bundle's `meta` says, each writer's entries declared once: a
//! writer adds its entries with [`ContextBundle::add_meta`], after the
//! ones the bundle already has (an entry it had keeps its place and takes
//! the new value). Nothing reads them but people, in the run record.

use graph::intent::Intent;
use serde::{Deserialize, Serialize};

use crate::bundle::ContextBundle;
use crate::content::coding::{ChangedFile, TestResults};
use crate::status::ReviewDecision;

impl ContextBundle {
    /// Adds a writer's entries to the bundle's `meta`.
    pub fn add_meta(&mut self, meta: &impl Serialize) {
        if let Ok(serde_json::Value::Object(entries)) = serde_json::to_value(meta) {
            self.meta.extend(entries);
        }
    }
}

fn is_false(flag: &bool) -> bool {
    !*flag
}

/// The run input's text: the names of the files given with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InputFiles {
    pub files: Vec<String>,
}

/// A command's output: how it exited and the script as it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CommandRan {
    /// `None` when a signal ended it.
    pub exit_code: Option<i32>,
    pub command: String,
}

/// A poll's decision or failure: how many polls it took, and the result
/// it reported, if any.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Polled {
    pub polls: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub result: String,
}

/// What a review gate sends on: its decision in which round, and with the
/// reviewed work (approved or out of rounds) the feedback; on `revise_out`
/// the feedback is the bundle's text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Reviewed {
    pub decision: ReviewDecision,
    pub round: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

/// A named output (`named:<name>`): its name, and whether the last
/// response lacked its section, so that the whole response went instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NamedSection {
    #[serde(default, skip_serializing_if = "is_false")]
    pub section_missing: bool,
    pub name: String,
}

/// Every bundle of an activation whose intent gate chose an intent that
/// leaves the module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChosenIntent {
    pub intent: Intent,
}

/// The bundle on an intent's port: the reply the intent was read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IntentReply {
    pub reply: String,
}

/// A coding module's `data_out` after a review chain: the reviewer's last
/// decision, the rounds it took and its last feedback.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CodingReview {
    pub review_decision: ReviewDecision,
    pub review_rounds: u32,
    pub review_feedback: String,
}

/// A coding module's work beside its merged replies: what `diff_out`,
/// `files_out`, `summary_out` and `test_results_out` carry. When its review
/// chain ran out of rounds it all goes out on `exhausted_out` alone, these
/// in the meta of the merged replies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CodingWork {
    pub diff: String,
    pub files: Vec<ChangedFile>,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<serde_json::Value>"))]
    pub test_results: Option<TestResults>,
}

/// A failure sent on `error_out` (or `timeout_out`) rather than failing
/// the run: that it is one, and whether a timeout ended it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Failure {
    pub error: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub timeout: bool,
}

impl Failure {
    pub fn new(timed_out: bool) -> Failure {
        Failure {
            error: true,
            timeout: timed_out,
        }
    }
}

/// A value an approval sends on (PRODUCT §3.14): the decision, who took
/// it, and on a rejection the value that was rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Decided {
    pub decision: crate::approval::Decision,
    pub decided_by: crate::approval::Decider,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// The value of an approval nobody decided on in time, on `timeout_out`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WaitedOut {
    pub timeout: bool,
}

/// The bundle on `give_up_out`: that the module gave up, after how many
/// attempts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GaveUp {
    pub give_up: bool,
    pub attempts: u32,
}

impl GaveUp {
    pub fn after(attempts: u32) -> GaveUp {
        GaveUp {
            give_up: true,
            attempts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::coding::{FileChange, TestRun};

    fn meta_text(bundle: &ContextBundle) -> String {
        serde_json::to_string(&bundle.meta).unwrap()
    }

    #[test]
    fn entries_follow_the_ones_a_bundle_has_and_replace_their_own() {
        let mut bundle = ContextBundle::text("m1", "the work");
        bundle.add_meta(&InputFiles {
            files: vec!["notes.md".to_owned()],
        });
        bundle.add_meta(&Reviewed {
            decision: ReviewDecision::Revise,
            round: 1,
            feedback: None,
        });
        assert_eq!(
            meta_text(&bundle),
            r#"{"files":["notes.md"],"decision":"revise","round":1}"#
        );
        // A second review of the same work: its entries where the first's were.
        bundle.add_meta(&Reviewed {
            decision: ReviewDecision::Approve,
            round: 2,
            feedback: Some("Good.".to_owned()),
        });
        assert_eq!(
            meta_text(&bundle),
            r#"{"files":["notes.md"],"decision":"approve","round":2,"feedback":"Good."}"#
        );
    }

    #[test]
    fn each_writers_entries_are_spelled_as_they_always_were() {
        fn written(meta: &impl Serialize) -> String {
            let mut bundle = ContextBundle::text("m1", "");
            bundle.add_meta(meta);
            meta_text(&bundle)
        }
        assert_eq!(
            written(&CommandRan {
                exit_code: None,
                command: "sh check.sh".to_owned()
            }),
            r#"{"exit_code":null,"command":"sh check.sh"}"#
        );
        assert_eq!(
            written(&Polled {
                polls: 3,
                result: String::new()
            }),
            r#"{"polls":3}"#
        );
        assert_eq!(
            written(&Polled {
                polls: 1,
                result: "ready".to_owned()
            }),
            r#"{"polls":1,"result":"ready"}"#
        );
        assert_eq!(
            written(&NamedSection {
                section_missing: true,
                name: "Summary".to_owned()
            }),
            r#"{"section_missing":true,"name":"Summary"}"#
        );
        assert_eq!(
            written(&NamedSection {
                section_missing: false,
                name: "Summary".to_owned()
            }),
            r#"{"name":"Summary"}"#
        );
        assert_eq!(
            written(&ChosenIntent {
                intent: Intent::Escalate
            }),
            r#"{"intent":"escalate"}"#
        );
        assert_eq!(
            written(&IntentReply {
                reply: "{}".to_owned()
            }),
            r#"{"reply":"{}"}"#
        );
        assert_eq!(
            written(&CodingReview {
                review_decision: ReviewDecision::Approve,
                review_rounds: 2,
                review_feedback: "Done.".to_owned()
            }),
            r#"{"review_decision":"approve","review_rounds":2,"review_feedback":"Done."}"#
        );
        assert_eq!(
            written(&CodingWork {
                diff: "+x".to_owned(),
                files: vec![ChangedFile {
                    path: "x".to_owned(),
                    status: FileChange::Modified
                }],
                summary: "Changed x.".to_owned(),
                test_results: Some(TestResults::Ran {
                    agent_role: "builder".to_owned(),
                    run: TestRun::default()
                }),
            }),
            concat!(
                r#"{"diff":"+x","files":[{"path":"x","status":"modified"}],"summary":"Changed x.","#,
                r#""test_results":{"ran":true,"agent_role":"builder","command":"","exit_code":null,"passed":false,"output":""}}"#
            )
        );
        assert_eq!(
            written(&Failure::new(true)),
            r#"{"error":true,"timeout":true}"#
        );
        assert_eq!(written(&Failure::new(false)), r#"{"error":true}"#);
        assert_eq!(
            written(&GaveUp::after(3)),
            r#"{"give_up":true,"attempts":3}"#
        );
    }
}
