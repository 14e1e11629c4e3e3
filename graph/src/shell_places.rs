//! Where, to sh, each `{{ … }}` variable of a shell script stands —
//! unquoted, in single or double quotes, in a here-document or a quoted
//! one — read by a small lexer of POSIX sh. The engine quotes a value by
//! it (`engine::shell_template`), and validation refuses a variable in a
//! quoted here-document (`<<'EOF'`), where nothing is filled in, before a
//! run reaches it.

use std::collections::VecDeque;

use crate::template::Variable;

/// Where, to sh, a variable of the script stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Unquoted,
    DoubleQuoted,
    SingleQuoted,
    HereDocument,
    QuotedHereDocument,
}

/// A here-document whose operator has been read, its body not yet.
struct HereDocument {
    delimiter: String,
    quoted: bool,
    strip_tabs: bool,
}

/// Where each of `found` (in order) stands in `text`.
pub fn places(text: &str, found: &[Variable<'_>]) -> Vec<Place> {
    let bytes = text.as_bytes();
    let mut places = Vec::with_capacity(found.len());
    let mut next = found.iter().peekable();
    let mut place = Place::Unquoted;
    let mut comment = false;
    let mut pending: VecDeque<HereDocument> = VecDeque::new();
    let mut body: Option<HereDocument> = None;
    let mut index = 0;
    while index < bytes.len() {
        if let Some(document) = &body {
            // A whole line of the body, or its end.
            let line_end = text[index..]
                .find('\n')
                .map_or(bytes.len(), |at| index + at);
            let line = text[index..line_end].trim_end_matches('\r');
            let line = if document.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            let inside = if line == document.delimiter {
                Place::Unquoted
            } else if document.quoted {
                Place::QuotedHereDocument
            } else {
                Place::HereDocument
            };
            while next.next_if(|variable| variable.start < line_end).is_some() {
                places.push(inside);
            }
            if line == document.delimiter {
                body = pending.pop_front();
            }
            index = line_end + 1;
            continue;
        }
        if let Some(variable) = next.next_if(|variable| variable.start <= index) {
            places.push(if comment { Place::Unquoted } else { place });
            // Its name may hold anything, quotes included: not sh's text.
            index = index.max(variable.end);
            continue;
        }
        let byte = bytes[index];
        if byte == b'\n' {
            comment = false;
            if place != Place::SingleQuoted && place != Place::DoubleQuoted {
                body = pending.pop_front();
            }
            index += 1;
            continue;
        }
        if comment {
            index += 1;
            continue;
        }
        match (place, byte) {
            (Place::Unquoted | Place::DoubleQuoted, b'\\') => index += 2,
            (Place::Unquoted, b'\'') => {
                place = Place::SingleQuoted;
                index += 1;
            }
            (Place::Unquoted, b'"') => {
                place = Place::DoubleQuoted;
                index += 1;
            }
            (Place::SingleQuoted, b'\'') | (Place::DoubleQuoted, b'"') => {
                place = Place::Unquoted;
                index += 1;
            }
            (Place::Unquoted, b'#') if starts_word(bytes, index) => {
                comment = true;
                index += 1;
            }
            // `<<<` (bash's here-string) is no here-document.
            (Place::Unquoted, b'<') if bytes.get(index + 1) == Some(&b'<') => {
                if bytes.get(index + 2) == Some(&b'<') {
                    index += 3;
                } else {
                    let (document, after) = here_document(bytes, index + 2);
                    if !document.delimiter.is_empty() {
                        pending.push_back(document);
                    }
                    index = after;
                }
            }
            _ => index += 1,
        }
    }
    // Variables past the end (none: each starts inside the text).
    places.resize(found.len(), place);
    places
}

/// Whether the byte at `index` begins a word (where `#` starts a comment).
fn starts_word(bytes: &[u8], index: usize) -> bool {
    index == 0
        || bytes
            .get(index - 1)
            .is_some_and(|before| before.is_ascii_whitespace() || b";&|()<>".contains(before))
}

/// The here-document whose operator `<<` ends just before `index`, and
/// where its delimiter word ends. A delimiter with any quoting in it makes
/// a quoted here-document, whose body nothing expands in.
fn here_document(bytes: &[u8], mut index: usize) -> (HereDocument, usize) {
    let strip_tabs = bytes.get(index) == Some(&b'-');
    if strip_tabs {
        index += 1;
    }
    while bytes
        .get(index)
        .is_some_and(|byte| *byte == b' ' || *byte == b'\t')
    {
        index += 1;
    }
    let mut delimiter = Vec::new();
    let mut quoted = false;
    while let Some(&byte) = bytes.get(index) {
        if byte.is_ascii_whitespace() || b";&|<>()".contains(&byte) {
            break;
        }
        match byte {
            b'\'' | b'"' => {
                quoted = true;
                let close = bytes[index + 1..]
                    .iter()
                    .position(|inner| *inner == byte)
                    .map_or(bytes.len(), |at| index + 1 + at);
                delimiter.extend_from_slice(&bytes[index + 1..close]);
                index = close + 1;
            }
            b'\\' => {
                quoted = true;
                delimiter.extend(bytes.get(index + 1));
                index += 2;
            }
            _ => {
                delimiter.push(byte);
                index += 1;
            }
        }
    }
    (
        HereDocument {
            delimiter: String::from_utf8_lossy(&delimiter).into_owned(),
            quoted,
            strip_tabs,
        },
        index.min(bytes.len()),
    )
}

/// The variables of `script` that stand in a quoted here-document.
pub fn in_quoted_here_documents<'a>(script: &'a str) -> Vec<Variable<'a>> {
    let found = crate::template::variables(script);
    let places = places(script, &found);
    found
        .into_iter()
        .zip(places)
        .filter(|(_, place)| *place == Place::QuotedHereDocument)
        .map(|(variable, _)| variable)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::in_quoted_here_documents;

    #[test]
    fn only_a_variable_in_a_quoted_here_document_is_named() {
        let script = "cat <<'EOF' >a\n{{ input }}\nEOF\ncat <<EOF >b\n{{ run_id }}\nEOF\necho \"{{ Draft.output }}\"";
        let names: Vec<&str> = in_quoted_here_documents(script)
            .iter()
            .map(|variable| variable.name)
            .collect();
        assert_eq!(names, ["input"]);
        assert!(in_quoted_here_documents("echo '<<EOF' {{ input }}").is_empty());
    }
}
