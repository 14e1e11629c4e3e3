//! Template variables in prompt text (PRODUCT §3.5, after Gump):
//! `{{ input }}`, `{{ run_id }}` and `{{ <label>.<key> }}` for an upstream
//! module's state key.

/// Variables every run provides.
pub const BUILT_INS: [&str; 2] = ["input", "run_id"];

/// The flat state keys every activation writes under its module's label
/// (`diff` a coding module's, `decision` an approval's).
pub const STATE_KEYS: [&str; 12] = [
    "output",
    "status",
    "attempt",
    "duration_ms",
    "tokens_in",
    "tokens_out",
    "cost",
    "session_id",
    "re_prompt_count",
    "turns",
    "diff",
    "decision",
];

/// One `{{ … }}` occurrence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable<'a> {
    /// The trimmed name between the braces, e.g. `Draft.output`.
    pub name: &'a str,
    /// Byte range of the whole `{{ … }}` in the text.
    pub start: usize,
    pub end: usize,
}

impl<'a> Variable<'a> {
    /// `("Draft", "output")` for `Draft.output`; `None` for a built-in-shaped name.
    pub fn module_reference(&self) -> Option<(&'a str, &'a str)> {
        let (label, key) = self.name.rsplit_once('.')?;
        Some((label.trim(), key.trim()))
    }
}

/// Every variable in `text`, in order. An unclosed `{{` is not a variable.
pub fn variables(text: &str) -> Vec<Variable<'_>> {
    let mut found = Vec::new();
    let mut cursor = 0;
    while let Some(open) = text[cursor..].find("{{") {
        let start = cursor + open;
        let Some(close) = text[start + 2..].find("}}") else {
            break;
        };
        let end = start + 2 + close + 2;
        found.push(Variable {
            name: text[start + 2..end - 2].trim(),
            start,
            end,
        });
        cursor = end;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_variables_and_their_module_references() {
        let text = "Use {{ input }} and {{Draft notes.output}} in run {{ run_id }}; {{ broken";
        let found = variables(text);
        let names: Vec<&str> = found.iter().map(|variable| variable.name).collect();
        assert_eq!(names, ["input", "Draft notes.output", "run_id"]);
        assert_eq!(found[1].module_reference(), Some(("Draft notes", "output")));
        assert_eq!(found[0].module_reference(), None);
        assert_eq!(&text[found[0].start..found[0].end], "{{ input }}");
    }
}
