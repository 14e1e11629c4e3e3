//! Filling the `{{ … }}` variables of a shell script so that no value is
//! ever read as code. Run input and model output are anyone's text: put
//! into the script as written, `$(…)`, a quote or a `;` in them would run
//! (and a check fed a model's answer could be made to pass by that
//! answer). So a value never enters the script's text: it is passed in the
//! environment (`PATCHBAY_VALUE_1`, …) and the variable becomes a parameter
//! expansion, whose result sh never parses again.
//!
//! Where the variable stands decides the quoting that keeps its value one
//! word, exactly as written: `"${PATCHBAY_VALUE_1}"` outside quotes,
//! `${PATCHBAY_VALUE_1}` in double quotes and in a here-document,
//! `'"${PATCHBAY_VALUE_1}"'` in single quotes. Nothing expands in a quoted
//! here-document (`<<'EOF'`), so a variable there is refused with the way
//! out. Where a variable stands is read by the small lexer of POSIX sh
//! below; a mistake there can misquote a value or refuse it, never run it.

use graph::shell_places::{Place, places};
use graph::template::variables;

use crate::render::{RunState, fill as fill_text};

/// The longest value a variable can carry: Linux takes at most 128 KiB for
/// one `NAME=value` of a process's environment (`MAX_ARG_STRLEN`).
const MAX_VALUE_BYTES: usize = 128 * 1024 - 64;

/// A script ready to run: its text refers to its values, which go in the
/// environment under their references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub text: String,
    /// One per distinct variable, in the order they first appear.
    pub bindings: Vec<Binding>,
}

/// One variable of a script: the environment entry that carries its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// `PATCHBAY_VALUE_n`.
    pub reference: String,
    /// The variable's name, as in `{{ Draft.output }}`.
    pub name: String,
    pub value: String,
}

impl Script {
    /// The environment entries its text refers to.
    pub fn environment(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.bindings
            .iter()
            .map(|binding| (binding.reference.clone(), binding.value.clone()))
    }
}

/// The script as it ran, then what each of its values holds.
impl std::fmt::Display for Script {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.text)?;
        for Binding {
            reference, name, ..
        } in &self.bindings
        {
            write!(formatter, "\n# ${reference}: {{{{ {name} }}}}")?;
        }
        Ok(())
    }
}

/// `template` with its variables filled from `state` as references to
/// values passed beside it; a variable with no value fails as in
/// [`crate::render::render`].
pub fn fill(template: &str, state: &RunState) -> Result<Script, String> {
    let found = variables(template);
    let places = places(template, &found);
    let mut bindings: Vec<Binding> = Vec::new();
    let text = fill_text(template, state, |variable, value| {
        let place = found
            .iter()
            .position(|each| each.start == variable.start)
            .and_then(|index| places.get(index).copied())
            .unwrap_or(Place::Unquoted);
        let reference = match bindings
            .iter()
            .find(|binding| binding.name == variable.name)
        {
            Some(binding) => binding.reference.clone(),
            None if value.len() > MAX_VALUE_BYTES => {
                return Err(format!(
                    "{{{{ {} }}}} holds {} KiB, more than a command's environment can carry \
                     ({} KiB): read it from the run state file $PATCHBAY_STATE instead",
                    variable.name,
                    value.len().div_ceil(1024),
                    MAX_VALUE_BYTES / 1024
                ));
            }
            None => {
                let reference = format!("PATCHBAY_VALUE_{}", bindings.len() + 1);
                bindings.push(Binding {
                    reference: reference.clone(),
                    name: variable.name.to_owned(),
                    value: value.to_owned(),
                });
                reference
            }
        };
        match place {
            Place::Unquoted => Ok(format!("\"${{{reference}}}\"")),
            Place::DoubleQuoted | Place::HereDocument => Ok(format!("${{{reference}}}")),
            Place::SingleQuoted => Ok(format!("'\"${{{reference}}}\"'")),
            Place::QuotedHereDocument => Err(format!(
                "{{{{ {} }}}} is in a quoted here-document (<<'EOF'), where nothing is filled in: \
                 use an unquoted one (<<EOF), where its value goes in as written",
                variable.name
            )),
        }
    })?;
    Ok(Script { text, bindings })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> RunState {
        [
            (
                "input".to_owned(),
                "it's $(touch pwned) `id` \"x\"; exit 0".to_owned(),
            ),
            ("Draft.output".to_owned(), "two words".to_owned()),
        ]
        .into()
    }

    fn filled(template: &str) -> String {
        fill(template, &state()).unwrap().text
    }

    #[test]
    fn a_value_never_enters_the_text() {
        let script = fill("grep -q ok <<< {{ input }}; echo '{{ input }}'", &state()).unwrap();
        assert!(!script.text.contains("touch"), "{}", script.text);
        assert_eq!(
            script.bindings,
            vec![Binding {
                reference: "PATCHBAY_VALUE_1".to_owned(),
                name: "input".to_owned(),
                value: "it's $(touch pwned) `id` \"x\"; exit 0".to_owned()
            }]
        );
    }

    #[test]
    fn each_place_is_quoted_so_the_value_stays_one_word() {
        assert_eq!(filled("echo {{ input }}"), "echo \"${PATCHBAY_VALUE_1}\"");
        assert_eq!(
            filled("echo \"said: {{ Draft.output }}\""),
            "echo \"said: ${PATCHBAY_VALUE_1}\""
        );
        assert_eq!(
            filled("echo 'said: {{ Draft.output }}'"),
            "echo 'said: '\"${PATCHBAY_VALUE_1}\"''"
        );
        assert_eq!(
            filled("echo \"a\\\"{{ input }}\" {{ Draft.output }}"),
            "echo \"a\\\"${PATCHBAY_VALUE_1}\" \"${PATCHBAY_VALUE_2}\""
        );
    }

    #[test]
    fn here_documents_expand_unless_quoted() {
        assert_eq!(
            filled("cat <<EOF > out.txt\n{{ input }}\nEOF\necho {{ input }}"),
            "cat <<EOF > out.txt\n${PATCHBAY_VALUE_1}\nEOF\necho \"${PATCHBAY_VALUE_1}\""
        );
        assert_eq!(
            filled("cat <<-END\n\t{{ input }}\n\tEND\n'{{ input }}'"),
            "cat <<-END\n\t${PATCHBAY_VALUE_1}\n\tEND\n''\"${PATCHBAY_VALUE_1}\"''"
        );
        let refused = fill("cat <<'EOF'\n{{ input }}\nEOF", &state()).unwrap_err();
        assert!(refused.contains("quoted here-document"), "{refused}");
        assert!(fill("cat <<\\EOF\n{{ input }}\nEOF", &state()).is_err());
        // `<<` in quotes or a comment is no here-document.
        assert_eq!(
            filled("echo '<<EOF' # <<END\n{{ input }}"),
            "echo '<<EOF' # <<END\n\"${PATCHBAY_VALUE_1}\""
        );
    }

    /// Through Debian's sh (dash), as a run would, without the sandbox.
    #[test]
    fn sh_gets_each_value_as_written_and_runs_none_of_it() {
        let folder = std::env::temp_dir().join(format!("patchbay-shell-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let value = state()["input"].clone();
        let run = |script: &Script| {
            let output = std::process::Command::new("sh")
                .arg("-c")
                .arg(&script.text)
                .envs(script.environment())
                .current_dir(&folder)
                .output()
                .unwrap();
            String::from_utf8_lossy(&output.stdout).into_owned()
        };
        for template in [
            "printf '%s' {{ input }}",
            "printf '%s' \"{{ input }}\"",
            "printf '%s' '{{ input }}'",
            "cat <<EOF\n{{ input }}\nEOF",
        ] {
            let script = fill(template, &state()).unwrap();
            let printed = run(&script);
            assert_eq!(printed.trim_end_matches('\n'), value, "{template}");
            assert!(!folder.join("pwned").exists(), "{template}");
        }
        // The longest value taken still reaches the script whole.
        let longest: RunState = [("input".to_owned(), "x".repeat(MAX_VALUE_BYTES))].into();
        let script = fill("printf '%s' {{ input }} | wc -c", &longest).unwrap();
        assert_eq!(run(&script).trim(), MAX_VALUE_BYTES.to_string());
        // What putting the value in the text did: it ran.
        let as_text = crate::render::render("printf '%s' \"{{ input }}\"", &state()).unwrap();
        run(&Script {
            text: as_text,
            bindings: Vec::new(),
        });
        assert!(folder.join("pwned").exists());
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn a_name_with_quotes_does_not_change_the_place_after_it() {
        let state: RunState = [("it's.output".to_owned(), "v".to_owned())].into();
        let script = fill("echo {{ it's.output }} {{ it's.output }}", &state).unwrap();
        assert_eq!(
            script.text,
            "echo \"${PATCHBAY_VALUE_1}\" \"${PATCHBAY_VALUE_1}\""
        );
        assert_eq!(script.bindings.len(), 1);
    }

    #[test]
    fn a_value_too_long_for_the_environment_is_refused_saying_where_to_read_it() {
        let long: RunState = [("Build.diff".to_owned(), "+".repeat(200 * 1024))].into();
        let refused = fill("echo {{ Build.diff }}", &long).unwrap_err();
        assert!(
            refused.contains("{{ Build.diff }} holds 200 KiB")
                && refused.contains("$PATCHBAY_STATE"),
            "{refused}"
        );
        let fits: RunState = [("Build.diff".to_owned(), "+".repeat(100 * 1024))].into();
        assert!(fill("echo {{ Build.diff }}", &fits).is_ok());
    }

    #[test]
    fn a_missing_value_fails_as_in_prompts() {
        assert!(
            fill("echo {{ Review.output }}", &state())
                .unwrap_err()
                .contains("has not run")
        );
        assert_eq!(filled("no variables"), "no variables");
    }
}
