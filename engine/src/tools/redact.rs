//! Secrets of the tool servers' configuration — the values of their
//! environment and headers — taken out of whatever comes back from a tool
//! (its result, its error, its server's last words) before a model, a
//! record, an event or a log sees it (PRODUCT §3.17). A server that prints
//! its environment (the test server's `get-env`) gives `[secret]` instead.
//! The same for a call's locked arguments, which its model never sees,
//! even when the tool repeats them in what it gives back.

use serde_json::Value;

/// What a secret reads as once taken out.
pub const SECRET: &str = "[secret]";

/// Shorter values are not taken out: `1`, `true` or a port would replace
/// ordinary text everywhere, and are no secret.
const SHORTEST: usize = 6;

/// Shorter locked values are not taken out of what the model is told.
const SHORTEST_LOCKED: usize = 3;

/// The secrets to take out.
#[derive(Clone, Debug, Default)]
pub struct Redaction {
    secrets: Vec<String>,
    marker: &'static str,
}

impl Redaction {
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Redaction {
        Redaction::of(secrets, SHORTEST, SECRET)
    }

    /// The values of a call's locked arguments, read as locked.
    pub fn locked(values: impl IntoIterator<Item = String>) -> Redaction {
        Redaction::of(values, SHORTEST_LOCKED, graph::tools::LOCKED)
    }

    fn of(
        secrets: impl IntoIterator<Item = String>,
        shortest: usize,
        marker: &'static str,
    ) -> Redaction {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .filter(|secret| secret.chars().count() >= shortest)
            .collect();
        // The longest first: a secret that contains another goes whole.
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        secrets.dedup();
        Redaction { secrets, marker }
    }

    /// `text` with every secret replaced.
    pub fn text(&self, text: &str) -> String {
        let mut clean = text.to_owned();
        for secret in &self.secrets {
            if clean.contains(secret.as_str()) {
                clean = clean.replace(secret.as_str(), self.marker);
            }
        }
        clean
    }

    /// `value` with every secret replaced in its texts and keys.
    pub fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.text(text)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| self.value(item)).collect())
            }
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(key, item)| (self.text(key), self.value(item)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_taken_out_of_texts_and_of_every_part_of_a_value() {
        let redaction = Redaction::new([
            "sk-live-abcdef".to_owned(),
            "sk-live-abcdef-extended".to_owned(),
            "1".to_owned(),
        ]);
        assert_eq!(
            redaction.text("key=sk-live-abcdef-extended; other=sk-live-abcdef; port 1"),
            "key=[secret]; other=[secret]; port 1"
        );
        assert_eq!(
            redaction.value(
                &json!({"env": {"API_KEY": "sk-live-abcdef"}, "list": ["x sk-live-abcdef"], "n": 1})
            ),
            json!({"env": {"API_KEY": "[secret]"}, "list": ["x [secret]"], "n": 1})
        );
    }
}
