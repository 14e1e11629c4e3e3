//! How a module's inputs join (PRODUCT §3.1, Cloche's `collect all` and
//! `collect any`): it waits for a value on every cable in, or it runs on
//! the first value to arrive and ignores the others of that round.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Join {
    /// Every cable in brings a value before the module runs.
    #[default]
    All,
    /// The first value to arrive runs the module; values that arrive on
    /// other cables for the same activation are recorded and ignored.
    Any,
}

impl Join {
    pub fn is_all(&self) -> bool {
        *self == Join::All
    }
}

#[cfg(test)]
mod tests {
    use crate::ModuleConfig;

    use super::*;

    #[test]
    fn a_document_says_any_or_nothing() {
        let any =
            ModuleConfig::from_kind_and_value("step.output", serde_json::json!({"join": "any"}))
                .unwrap();
        assert_eq!(any.join(), Join::Any);
        let all = ModuleConfig::from_kind_and_value("step.output", serde_json::json!({})).unwrap();
        assert_eq!(all.join(), Join::All);
        // The default is not written, so documents stay as they were.
        assert_eq!(serde_json::to_value(&all).unwrap().get("join"), None);
        let wrong =
            ModuleConfig::from_kind_and_value("step.output", serde_json::json!({"join": "some"}))
                .unwrap_err();
        assert_eq!(wrong.path, "join");
        // A module with no inputs has nothing to join.
        let input = ModuleConfig::from_kind_and_value("step.input", serde_json::json!({})).unwrap();
        assert!(input.kind_config().unwrap().join().is_none());
    }
}
