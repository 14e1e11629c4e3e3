//! What a waiting approval shows the person (PRODUCT §3.14): each value
//! that came in, under the module and output it came from, as what it is —
//! a coding module's diff as a diff, its changed files as a list, its test
//! results as a verdict with the command and its output, anything else as
//! text. Which it is comes from the output it left by and the `wire`
//! content types, never from guessing at keys. Written as markup, every
//! text escaped, and put in the page in one piece: as views, a diff of a
//! few hundred lines is as many elements' worth of code in the page's
//! bundle (the canvas's sketches do the same for the same reason).

use std::fmt::Write;

use graph::kinds::coding::{DIFF_OUT, FILES_OUT, TEST_RESULTS_OUT};
use wire::approval::Shown;
use wire::content::{ChangedFile, TestResults};
use wire::{PortValue, RunRecord};

use crate::canvas::escape;
use crate::editor::diff::{self, DiffFile};

/// A shown value, read as what it is.
#[derive(Clone, Debug, PartialEq)]
pub enum ShownContent {
    Diff(Vec<DiffFile>),
    Files(Vec<ChangedFile>),
    Tests(TestResults),
    Text(String),
}

/// Reads a shown value: by the output it left by when that has a type,
/// else a diff when the text is one, else text.
pub fn content_of(shown: &Shown) -> ShownContent {
    let bundle = match &shown.value {
        PortValue::Bundle(bundle) => bundle,
        PortValue::Signal { .. } => {
            return ShownContent::Text("(a signal: it carries no value)".to_owned());
        }
        PortValue::Receipt(receipt) => {
            return ShownContent::Text(format!(
                "Receipt: {} · {}, {} tokens in, {} out",
                receipt.provider, receipt.model, receipt.tokens_in, receipt.tokens_out
            ));
        }
    };
    let typed = match shown.source_port.as_str() {
        FILES_OUT => bundle
            .content_as::<Vec<ChangedFile>>()
            .map(ShownContent::Files),
        TEST_RESULTS_OUT => bundle.content_as::<TestResults>().map(ShownContent::Tests),
        _ => None,
    };
    if let Some(typed) = typed {
        return typed;
    }
    let text = bundle.as_text();
    if shown.source_port == DIFF_OUT || diff::is_diff(&text) {
        ShownContent::Diff(diff::files(&text))
    } else {
        ShownContent::Text(text)
    }
}

/// "From “Build” · Diff": the module and the output a value came from.
pub fn origin(shown: &Shown, record: Option<&RunRecord>) -> String {
    let output = record
        .and_then(|record| record.graph.module(&shown.source_module))
        .and_then(|module| {
            graph::ports(module)
                .output(&shown.source_port)
                .map(|port| port.label.clone())
        });
    match output {
        Some(output) => format!("From “{}” · {output}", shown.source_label),
        None => format!("From “{}”", shown.source_label),
    }
}

/// `<tag class="…">text</tag>`, the text escaped.
fn element(tag: &str, class: &str, text: &str, markup: &mut String) {
    let _ = write!(markup, "<{tag} class=\"{class}\">");
    escape(text, markup);
    let _ = write!(markup, "</{tag}>");
}

fn diff_markup(files: &[DiffFile], markup: &mut String) {
    if files.iter().all(|file| file.lines.is_empty()) {
        element("p", "hint", "No changes.", markup);
        return;
    }
    markup.push_str("<div class=\"diff\">");
    for file in files {
        markup.push_str("<div class=\"diff-file\"><div class=\"diff-file-name\">");
        let path = if file.path.is_empty() {
            "(a file)"
        } else {
            &file.path
        };
        element("span", "diff-path", path, markup);
        let _ = write!(
            markup,
            "<span class=\"diff-count added\" title=\"lines added\">+{}</span>\
             <span class=\"diff-count removed\" title=\"lines removed\">−{}</span></div>\
             <pre class=\"diff-lines\">",
            file.added, file.removed
        );
        for line in &file.lines {
            element("span", line.kind.class(), &line.text, markup);
        }
        markup.push_str("</pre></div>");
    }
    markup.push_str("</div>");
}

fn tests_markup(results: &TestResults, markup: &mut String) {
    let TestResults::Ran { agent_role, run } = results else {
        element("p", "tests-verdict", TestResults::NOT_RUN_MESSAGE, markup);
        return;
    };
    let exit = run
        .exit_code
        .map(|code| format!(" (exit code {code})"))
        .unwrap_or_default();
    markup.push_str("<div class=\"tests\">");
    if run.passed {
        element(
            "p",
            "tests-verdict passed",
            &format!("✓ Tests passed{exit}"),
            markup,
        );
    } else {
        element(
            "p",
            "tests-verdict failed",
            &format!("✕ Tests failed{exit}"),
            markup,
        );
    }
    markup.push_str("<p class=\"tests-command\">");
    element("code", "", &format!("$ {}", run.command), markup);
    if !agent_role.is_empty() {
        escape(&format!(" · run by {agent_role}"), markup);
    }
    markup.push_str("</p>");
    if !run.output.trim().is_empty() {
        element("pre", "tests-output", &run.output, markup);
    }
    markup.push_str("</div>");
}

fn files_markup(files: &[ChangedFile], markup: &mut String) {
    if files.is_empty() {
        element("p", "hint", "No files changed.", markup);
        return;
    }
    markup.push_str("<ul class=\"changed-files\">");
    for file in files {
        let status = file.status.as_str();
        let _ = write!(markup, "<li class=\"changed-file {status}\">");
        element("span", "changed-file-status", status, markup);
        element("code", "", &file.path, markup);
        markup.push_str("</li>");
    }
    markup.push_str("</ul>");
}

/// Every value the approval shows, each in a region named by where it
/// came from, as markup.
pub fn shown_markup(shown: &[Shown], record: Option<&RunRecord>) -> String {
    let mut markup = String::new();
    if shown.is_empty() {
        element("p", "hint", "It shows no inputs.", &mut markup);
        return markup;
    }
    for value in shown {
        let heading = origin(value, record);
        markup.push_str("<section class=\"shown-value\" role=\"region\" aria-label=\"");
        escape(&heading, &mut markup);
        markup.push_str("\">");
        element("h4", "shown-origin", &heading, &mut markup);
        match content_of(value) {
            ShownContent::Diff(files) => diff_markup(&files, &mut markup),
            ShownContent::Files(files) => files_markup(&files, &mut markup),
            ShownContent::Tests(results) => tests_markup(&results, &mut markup),
            ShownContent::Text(text) => element("pre", "shown-text", &text, &mut markup),
        }
        markup.push_str("</section>");
    }
    markup
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::ContextBundle;
    use wire::content::{FileChange, TestRun};

    fn shown(source_port: &str, value: PortValue) -> Shown {
        Shown {
            port: "context_in".to_owned(),
            source_module: "build".to_owned(),
            source_label: "Build".to_owned(),
            source_port: source_port.to_owned(),
            value,
        }
    }

    #[test]
    fn a_coding_module_s_outputs_are_read_as_their_types() {
        let diff = shown(
            DIFF_OUT,
            PortValue::Bundle(ContextBundle::text(
                "build",
                "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n",
            )),
        );
        let ShownContent::Diff(files) = content_of(&diff) else {
            panic!("not read as a diff");
        };
        assert_eq!(files[0].path, "a.txt");
        let results = TestResults::Ran {
            agent_role: "builder".to_owned(),
            run: TestRun {
                command: "sh test.sh".to_owned(),
                exit_code: Some(0),
                passed: true,
                output: "ok".to_owned(),
            },
        };
        let tests = shown(
            TEST_RESULTS_OUT,
            PortValue::Bundle(ContextBundle::typed("build", &results)),
        );
        assert_eq!(content_of(&tests), ShownContent::Tests(results));
        let changed = vec![ChangedFile {
            path: "a.txt".to_owned(),
            status: FileChange::Modified,
        }];
        let files = shown(
            FILES_OUT,
            PortValue::Bundle(ContextBundle::typed("build", &changed)),
        );
        assert_eq!(content_of(&files), ShownContent::Files(changed));
    }

    #[test]
    fn the_markup_escapes_what_agents_wrote_and_marks_each_line() {
        let diff = shown(
            DIFF_OUT,
            PortValue::Bundle(ContextBundle::text(
                "build",
                "diff --git a/<b>.html b/<b>.html\n--- a/<b>.html\n+++ b/<b>.html\n@@ -1 +1 @@\n-<i>old</i>\n+<script>alert(1)</script>\n",
            )),
        );
        let markup = shown_markup(&[diff], None);
        assert!(markup.contains(r#"aria-label="From “Build”""#), "{markup}");
        assert!(
            markup.contains(r#"<span class="diff-path">&lt;b&gt;.html</span>"#),
            "{markup}"
        );
        assert!(
            markup.contains(r#"<span class="diff-line removed">-&lt;i&gt;old&lt;/i&gt;</span>"#),
            "{markup}"
        );
        assert!(
            markup.contains(
                r#"<span class="diff-line added">+&lt;script&gt;alert(1)&lt;/script&gt;</span>"#
            ),
            "{markup}"
        );
        assert!(!markup.contains("<script>"));
        let failed = TestResults::Ran {
            agent_role: String::new(),
            run: TestRun {
                command: "sh test.sh".to_owned(),
                exit_code: Some(1),
                passed: false,
                output: "1 failed".to_owned(),
            },
        };
        let tests = shown(
            TEST_RESULTS_OUT,
            PortValue::Bundle(ContextBundle::typed("build", &failed)),
        );
        let markup = shown_markup(&[tests], None);
        assert!(
            markup.contains(r#"<p class="tests-verdict failed">✕ Tests failed (exit code 1)</p>"#),
            "{markup}"
        );
        assert!(
            markup.contains(r#"<pre class="tests-output">1 failed</pre>"#),
            "{markup}"
        );
    }

    #[test]
    fn other_values_are_text_and_an_empty_diff_is_still_a_diff() {
        let text = shown(
            "data_out",
            PortValue::Bundle(ContextBundle::text("build", "All done.")),
        );
        assert_eq!(
            content_of(&text),
            ShownContent::Text("All done.".to_owned())
        );
        let empty = shown(
            DIFF_OUT,
            PortValue::Bundle(ContextBundle::text("build", "")),
        );
        assert_eq!(content_of(&empty), ShownContent::Diff(Vec::new()));
        // A record kept before the source port was: a diff is still seen.
        let unnamed = shown(
            "",
            PortValue::Bundle(ContextBundle::text(
                "build",
                "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n",
            )),
        );
        assert!(matches!(content_of(&unnamed), ShownContent::Diff(_)));
    }
}
