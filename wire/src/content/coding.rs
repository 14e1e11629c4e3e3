//! What a coding module says about its workspace (DOC23 §2.3): the files
//! its agents changed (`files_out`) and the last tests they ran
//! (`test_results_out`). The coding modules write them; the app's run
//! panel shows them.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Error, Value};

use crate::fields::{Fields, read_by_hand};

/// A file an agent changed, as `git diff --name-status` says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChangedFile {
    pub path: String,
    pub status: FileChange,
}

crate::status::words! {
    /// How `git` says a file changed.
    pub enum FileChange {
        Added,
        Deleted,
        Modified,
    }
}

impl ChangedFile {
    fn read(value: Value) -> Result<ChangedFile, Error> {
        let mut fields = Fields::of("changed file", value)?;
        Ok(ChangedFile {
            path: fields.text("path")?,
            status: fields.word("status", FileChange::parse, "added, deleted or modified")?,
        })
    }
}

/// A test command an agent ran, as seen in its tool calls.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TestRun {
    pub command: String,
    /// `None` when the call reported none.
    pub exit_code: Option<i64>,
    pub passed: bool,
    pub output: String,
}

/// The last test run of a coding module's agents, or the sentinel saying
/// they ran none (DOC23 §2.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestResults {
    Ran {
        /// The role of the agent that ran it.
        agent_role: String,
        run: TestRun,
    },
    NotRun,
}

impl TestResults {
    /// What the sentinel says.
    pub const NOT_RUN_MESSAGE: &'static str = "The agents ran no tests.";
}

// Written by hand: `ran` comes first and says which fields follow, and the
// sentinel's `passed` is `null`, which neither a tag nor skipping fields
// would write.
impl Serialize for TestResults {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            TestResults::Ran { agent_role, run } => {
                let mut map = serializer.serialize_map(Some(6))?;
                map.serialize_entry("ran", &true)?;
                map.serialize_entry("agent_role", agent_role)?;
                map.serialize_entry("command", &run.command)?;
                map.serialize_entry("exit_code", &run.exit_code)?;
                map.serialize_entry("passed", &run.passed)?;
                map.serialize_entry("output", &run.output)?;
                map.end()
            }
            TestResults::NotRun => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("ran", &false)?;
                map.serialize_entry("passed", &None::<bool>)?;
                map.serialize_entry("message", TestResults::NOT_RUN_MESSAGE)?;
                map.end()
            }
        }
    }
}

impl TestResults {
    /// Either shape; a field of a test run that is not there reads as
    /// nothing (a run that does not say it passed did not).
    fn read(value: Value) -> Result<TestResults, Error> {
        let mut fields = Fields::of("test results", value)?;
        if !fields.flag("ran").unwrap_or(true) {
            return Ok(TestResults::NotRun);
        }
        Ok(TestResults::Ran {
            agent_role: fields.text("agent_role").unwrap_or_default(),
            run: TestRun {
                command: fields.text("command").unwrap_or_default(),
                exit_code: fields.value("exit_code").as_i64(),
                passed: fields.flag("passed").unwrap_or_default(),
                output: fields.text("output").unwrap_or_default(),
            },
        })
    }
}

read_by_hand!(ChangedFile, TestResults);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_results_are_written_as_the_coding_module_always_wrote_them() {
        let ran = TestResults::Ran {
            agent_role: "builder".to_owned(),
            run: TestRun {
                command: "sh test.sh".to_owned(),
                exit_code: Some(1),
                passed: false,
                output: "1 test failed".to_owned(),
            },
        };
        let text = serde_json::to_string(&ran).unwrap();
        assert_eq!(
            text,
            r#"{"ran":true,"agent_role":"builder","command":"sh test.sh","exit_code":1,"passed":false,"output":"1 test failed"}"#
        );
        assert_eq!(serde_json::from_str::<TestResults>(&text).unwrap(), ran);
        let none = serde_json::to_string(&TestResults::NotRun).unwrap();
        assert_eq!(
            none,
            r#"{"ran":false,"passed":null,"message":"The agents ran no tests."}"#
        );
        assert_eq!(
            serde_json::from_str::<TestResults>(&none).unwrap(),
            TestResults::NotRun
        );
    }

    #[test]
    fn changed_files_say_their_change_in_a_word() {
        let file = ChangedFile {
            path: "hello.txt".to_owned(),
            status: FileChange::Added,
        };
        let text = serde_json::to_string(&file).unwrap();
        assert_eq!(text, r#"{"path":"hello.txt","status":"added"}"#);
        assert_eq!(serde_json::from_str::<ChangedFile>(&text).unwrap(), file);
        assert_eq!(FileChange::Deleted.to_string(), "deleted");
    }
}
