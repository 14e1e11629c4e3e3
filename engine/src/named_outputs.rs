//! Named outputs (DOC23 §4.2): the instruction that asks the model to label
//! its sections, and the extraction of those sections from the last response.

use std::collections::BTreeMap;

/// The naming instruction, listing each name as `📄 Name`.
pub fn instruction(names: &[String]) -> String {
    let mut text =
        "When producing your final output, label the following sections clearly:".to_owned();
    for name in names {
        text.push_str("\n- 📄 ");
        text.push_str(name);
    }
    text
}

/// `text` with the naming instruction on the next line (DOC23 §4.2).
pub fn append_instruction(text: &str, names: &[String]) -> String {
    if names.is_empty() {
        text.to_owned()
    } else {
        format!("{text}\n{}", instruction(names))
    }
}

/// Which name a line labels, if it is a section heading: `📄 Analysis`,
/// `## Analysis`, `**Analysis:**`, `Analysis:` …
fn heading<'a>(line: &str, names: &'a [String]) -> Option<&'a String> {
    let stripped = line
        .trim()
        .trim_start_matches(['#', '*', '-', ' '])
        .trim_start_matches('📄')
        .trim()
        .trim_end_matches(['*', ' '])
        .trim_end_matches(':')
        .trim_end_matches(['*', ' ']);
    names
        .iter()
        .find(|name| stripped.eq_ignore_ascii_case(name.trim()))
}

/// The labelled sections of `text`. A name the text does not label is absent.
pub fn extract(text: &str, names: &[String]) -> BTreeMap<String, String> {
    let mut sections: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut current: Option<&String> = None;
    for line in text.lines() {
        if let Some(name) = heading(line, names) {
            current = Some(name);
            sections.entry(name.clone()).or_default();
            continue;
        }
        if let Some(name) = current {
            sections.entry(name.clone()).or_default().push(line);
        }
    }
    sections
        .into_iter()
        .map(|(name, lines)| (name, lines.join("\n").trim().to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["Analysis".to_owned(), "Summary".to_owned()]
    }

    #[test]
    fn the_instruction_matches_doc23() {
        assert_eq!(
            append_instruction("Finalize.", &names()),
            "Finalize.\nWhen producing your final output, label the following sections clearly:\n- 📄 Analysis\n- 📄 Summary"
        );
        assert_eq!(append_instruction("Finalize.", &[]), "Finalize.");
    }

    #[test]
    fn sections_are_found_in_common_heading_styles() {
        let text = "Intro line\n📄 Analysis\nIt holds.\nMostly.\n## Summary:\nShort.";
        let sections = extract(text, &names());
        assert_eq!(sections["Analysis"], "It holds.\nMostly.");
        assert_eq!(sections["Summary"], "Short.");
        let bold = extract("**Analysis:**\nA\n**summary**\nB", &names());
        assert_eq!(bold["Analysis"], "A");
        assert_eq!(bold["Summary"], "B");
        assert!(extract("nothing labelled", &names()).is_empty());
    }
}
