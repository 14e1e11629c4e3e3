//! Filling `{{ … }}` template variables at run time from the run's state
//! (PRODUCT §3.5). A variable that cannot be filled fails the activation;
//! it never becomes an empty string.

use std::collections::BTreeMap;

use graph::template::{BUILT_INS, Variable, variables};

/// The run's flat state: `input`, `run_id`, `<label>.output`, `<label>.status` …
pub type RunState = BTreeMap<String, String>;

pub fn render(text: &str, state: &RunState) -> Result<String, String> {
    fill(text, state, |_, value| Ok(value.to_owned()))
}

/// `text` with each variable replaced by what `put` makes of it and its
/// value (a shell script puts a reference to the value instead: see
/// `shell_template`), the value looked up as [`render`] says.
pub fn fill(
    text: &str,
    state: &RunState,
    mut put: impl FnMut(&Variable<'_>, &str) -> Result<String, String>,
) -> Result<String, String> {
    let found = variables(text);
    if found.is_empty() {
        return Ok(text.to_owned());
    }
    let mut rendered = String::with_capacity(text.len());
    let mut cursor = 0;
    for variable in found {
        rendered.push_str(&text[cursor..variable.start]);
        let key = match variable.module_reference() {
            Some((label, key)) => format!("{label}.{key}"),
            None => variable.name.to_owned(),
        };
        match state.get(&key) {
            Some(value) => rendered.push_str(&put(&variable, value)?),
            None if variable.name.contains(".set.") => {
                return Err(format!(
                    "{{{{ {} }}}} has no value: the command it names has not run, or did not print PATCHBAY_SET:{}=…",
                    variable.name,
                    variable
                        .name
                        .split_once(".set.")
                        .map_or("", |(_, name)| name.trim())
                ));
            }
            None if variable.name.contains(".tools.") => {
                let (label, tool) = variable
                    .name
                    .split_once(".tools.")
                    .map_or(("", ""), |(label, tool)| (label.trim(), tool.trim()));
                return Err(format!(
                    "{{{{ {} }}}} has no value: \"{label}\" has not run in this run, or its model did not call {tool}",
                    variable.name
                ));
            }
            None if BUILT_INS.contains(&variable.name) => {
                return Err(format!(
                    "{{{{ {} }}}} has no value in this run",
                    variable.name
                ));
            }
            None => {
                return Err(format!(
                    "{{{{ {} }}}} has no value yet: the module it names has not run in this run",
                    variable.name
                ));
            }
        }
        cursor = variable.end;
    }
    rendered.push_str(&text[cursor..]);
    Ok(rendered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_not_called_says_so() {
        let state: RunState = [("Look.output".to_owned(), "done".to_owned())].into();
        let error = render("{{ Look.tools.lookup }}", &state).unwrap_err();
        assert!(
            error.contains("\"Look\" has not run in this run, or its model did not call lookup"),
            "{error}"
        );
    }

    #[test]
    fn fills_built_ins_and_module_keys() {
        let state: RunState = [
            ("input".to_owned(), "tides".to_owned()),
            ("Draft.output".to_owned(), "A draft".to_owned()),
        ]
        .into();
        assert_eq!(
            render("On {{ input }}: {{Draft.output}}!", &state).unwrap(),
            "On tides: A draft!"
        );
        assert!(
            render("{{ Review.output }}", &state)
                .unwrap_err()
                .contains("has not run")
        );
        assert_eq!(render("no variables", &state).unwrap(), "no variables");
    }
}
