//! A note's Markdown as markup (PRODUCT §1.6): headings, paragraphs, lists,
//! quotes, rules, fenced code, and inline code, emphasis, strong, struck
//! text and links. What a person wrote is always text: every character
//! they typed is escaped, no HTML of theirs passes through, and a link
//! goes only to `http:`, `https:` or `mailto:`, in a new tab without
//! access to the page that opened it. Anything else reads as typed.
//!
//! Written here rather than taken from a Markdown crate: the browser draws
//! notes on a view link's first load, where every kilobyte counts, and a
//! note needs only this much of Markdown. The same function draws a note
//! in the page the server sends and in the browser, so hydration finds
//! what the server wrote.

/// The markup of a note's text.
pub fn to_markup(text: &str) -> String {
    let mut markup = String::with_capacity(text.len() + text.len() / 2 + 16);
    let lines: Vec<&str> = text.lines().collect();
    let mut at = 0;
    while at < lines.len() {
        at = block(&lines, at, &mut markup);
    }
    markup
}

/// Writes the block starting at line `at`; returns the line after it.
fn block(lines: &[&str], at: usize, markup: &mut String) -> usize {
    let line = lines[at];
    let trimmed = line.trim_start();
    if trimmed.is_empty() {
        return at + 1;
    }
    if let Some(fence) = fence(trimmed) {
        return code_block(lines, at, fence, markup);
    }
    if let Some((level, heading)) = heading(trimmed) {
        // Levels 1–3 of a note sit under the page's own headings.
        let tag = ["h3", "h4", "h5"][(level - 1).min(2)];
        markup.push_str(&format!("<{tag}>"));
        inline(heading, markup);
        markup.push_str(&format!("</{tag}>"));
        return at + 1;
    }
    if is_rule(trimmed) {
        markup.push_str("<hr>");
        return at + 1;
    }
    if trimmed.starts_with('>') {
        return quote(lines, at, markup);
    }
    if let Some((ordered, _)) = list_item(trimmed) {
        return list(lines, at, ordered, markup);
    }
    paragraph(lines, at, markup)
}

fn fence(line: &str) -> Option<&str> {
    ["```", "~~~"]
        .into_iter()
        .find(|fence| line.starts_with(fence))
}

fn code_block(lines: &[&str], at: usize, fence: &str, markup: &mut String) -> usize {
    markup.push_str("<pre><code>");
    let mut next = at + 1;
    let mut first = true;
    while next < lines.len() && !lines[next].trim_start().starts_with(fence) {
        if !first {
            markup.push('\n');
        }
        escape(lines[next], markup);
        first = false;
        next += 1;
    }
    markup.push_str("</code></pre>");
    // Past the closing fence; an unclosed block runs to the end.
    (next + 1).min(lines.len())
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|byte| *byte == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if rest.is_empty() {
        return Some((level, ""));
    }
    let text = rest.strip_prefix(' ')?.trim();
    // A closing run of #s, after a space, is not part of the heading.
    let without_closing = text.trim_end_matches('#');
    let text = if without_closing.is_empty() || without_closing.ends_with(' ') {
        without_closing.trim_end()
    } else {
        text
    };
    Some((level, text))
}

fn is_rule(line: &str) -> bool {
    let line = line.trim_end();
    ['-', '*', '_'].into_iter().any(|mark| {
        line.chars().filter(|character| *character == mark).count() >= 3
            && line
                .chars()
                .all(|character| character == mark || character == ' ')
    })
}

/// `- item`, `* item`, `+ item`, `1. item` or `1) item`: whether it is
/// numbered, and the item's text.
fn list_item(line: &str) -> Option<(bool, &str)> {
    for bullet in ["- ", "* ", "+ "] {
        if let Some(text) = line.strip_prefix(bullet) {
            return Some((false, text));
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let rest = &line[digits..];
        for mark in [". ", ") "] {
            if let Some(text) = rest.strip_prefix(mark) {
                return Some((true, text));
            }
        }
    }
    None
}

fn list(lines: &[&str], at: usize, ordered: bool, markup: &mut String) -> usize {
    let tag = if ordered { "ol" } else { "ul" };
    markup.push_str(&format!("<{tag}>"));
    let mut next = at;
    while next < lines.len() {
        let trimmed = lines[next].trim_start();
        match list_item(trimmed) {
            Some((numbered, text)) if numbered == ordered => {
                markup.push_str("<li>");
                inline(text.trim(), markup);
                markup.push_str("</li>");
                next += 1;
            }
            _ => break,
        }
    }
    markup.push_str(&format!("</{tag}>"));
    next
}

fn quote(lines: &[&str], at: usize, markup: &mut String) -> usize {
    let mut next = at;
    let mut quoted = Vec::new();
    while next < lines.len() {
        let Some(rest) = lines[next].trim_start().strip_prefix('>') else {
            break;
        };
        quoted.push(rest.strip_prefix(' ').unwrap_or(rest));
        next += 1;
    }
    markup.push_str("<blockquote>");
    let mut inner = 0;
    while inner < quoted.len() {
        inner = block(&quoted, inner, markup);
    }
    markup.push_str("</blockquote>");
    next
}

/// Lines up to a blank one or another kind of block; a line ending in two
/// spaces or a backslash breaks there.
fn paragraph(lines: &[&str], at: usize, markup: &mut String) -> usize {
    markup.push_str("<p>");
    let mut next = at;
    while next < lines.len() {
        let line = lines[next];
        let trimmed = line.trim_start();
        let starts_block = trimmed.is_empty()
            || fence(trimmed).is_some()
            || heading(trimmed).is_some()
            || trimmed.starts_with('>')
            || list_item(trimmed).is_some()
            || (next > at && is_rule(trimmed));
        if starts_block && next > at || trimmed.is_empty() {
            break;
        }
        if next > at {
            let previous = lines[next - 1];
            if previous.ends_with("  ") || previous.ends_with('\\') {
                markup.push_str("<br>");
            } else {
                markup.push(' ');
            }
        }
        let text = trimmed.trim_end();
        inline(text.strip_suffix('\\').unwrap_or(text), markup);
        next += 1;
    }
    markup.push_str("</p>");
    next
}

/// Inline Markdown in `text`, escaped.
fn inline(text: &str, markup: &mut String) {
    let mut rest = text;
    while let Some(character) = rest.chars().next() {
        let consumed = match character {
            '\\' => escaped_character(rest, markup),
            '`' => code_span(rest, markup),
            '[' => link(rest, markup),
            '<' => angle_link(rest, markup),
            '*' | '_' | '~' => emphasis(rest, markup),
            'h' => bare_link(rest, markup),
            _ => None,
        };
        let consumed = consumed.unwrap_or_else(|| {
            escape_character(character, markup);
            character.len_utf8()
        });
        rest = &rest[consumed..];
    }
}

fn escaped_character(text: &str, markup: &mut String) -> Option<usize> {
    let next = text[1..].chars().next()?;
    if !next.is_ascii_punctuation() {
        return None;
    }
    escape_character(next, markup);
    Some(1 + next.len_utf8())
}

fn code_span(text: &str, markup: &mut String) -> Option<usize> {
    let ticks = text.bytes().take_while(|byte| *byte == b'`').count();
    let fence = &text[..ticks];
    let end = text[ticks..].find(fence)?;
    let code = &text[ticks..ticks + end];
    markup.push_str("<code>");
    escape(
        code.strip_prefix(' ')
            .and_then(|code| code.strip_suffix(' '))
            .unwrap_or(code),
        markup,
    );
    markup.push_str("</code>");
    Some(ticks + end + ticks)
}

/// `[words](address)`.
fn link(text: &str, markup: &mut String) -> Option<usize> {
    let close = matching(text, '[', ']')?;
    let address_part = text[close + 1..].strip_prefix('(')?;
    let address_end = address_part.find(')')?;
    let address = address_part[..address_end].trim();
    let address = address
        .split_once(' ')
        .map_or(address, |(address, _)| address);
    if !allowed_address(address) {
        return None;
    }
    let words = &text[1..close];
    open_link(address, markup);
    inline(if words.is_empty() { address } else { words }, markup);
    markup.push_str("</a>");
    Some(close + 2 + address_end + 1)
}

/// Where the bracket closing the one `text` starts with is, counting
/// nested pairs.
fn matching(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    let mut escaped = false;
    for (index, character) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if character == '\\' {
            escaped = true;
        } else if character == open {
            depth += 1;
        } else if character == close {
            depth -= 1;
            if depth == 0 {
                return Some(index);
            }
        }
    }
    None
}

/// `<https://…>`.
fn angle_link(text: &str, markup: &mut String) -> Option<usize> {
    let end = text.find('>')?;
    let address = &text[1..end];
    if address.contains(char::is_whitespace) || !allowed_address(address) {
        return None;
    }
    open_link(address, markup);
    escape(address, markup);
    markup.push_str("</a>");
    Some(end + 1)
}

/// An address written out, `https://example.com/x`, up to a space; a
/// sentence's last full stop or bracket is not part of it.
fn bare_link(text: &str, markup: &mut String) -> Option<usize> {
    if !(text.starts_with("https://") || text.starts_with("http://")) {
        return None;
    }
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    let address = text[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'', '"']);
    if address.len() <= "https://".len() {
        return None;
    }
    open_link(address, markup);
    escape(address, markup);
    markup.push_str("</a>");
    Some(address.len())
}

fn allowed_address(address: &str) -> bool {
    let lower = address.to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with("mailto:"))
        && !address.contains(['"', '<', '>', '`'])
        && !address.chars().any(char::is_control)
}

fn open_link(address: &str, markup: &mut String) {
    markup.push_str(r#"<a href=""#);
    escape(address, markup);
    markup.push_str(r#"" target="_blank" rel="noopener noreferrer">"#);
}

/// `*em*`, `_em_`, `**strong**`, `__strong__`, `~~struck~~`.
fn emphasis(text: &str, markup: &mut String) -> Option<usize> {
    let mark = text.chars().next()?;
    let run = text
        .chars()
        .take_while(|character| *character == mark)
        .count();
    let (width, tag) = match (mark, run) {
        ('~', 2..) => (2, "del"),
        ('~', _) => return None,
        (_, 2..) => (2, "strong"),
        _ => (1, "em"),
    };
    let delimiter = &text[..width];
    let inner_start = width;
    let inner = &text[inner_start..];
    if inner.starts_with(char::is_whitespace) || inner.is_empty() {
        return None;
    }
    let end = closing(inner, delimiter, mark)?;
    markup.push_str(&format!("<{tag}>"));
    inline(&inner[..end], markup);
    markup.push_str(&format!("</{tag}>"));
    Some(inner_start + end + width)
}

/// Where `delimiter` closes in `text`: not after a space, not inside a
/// code span, and for `_` not inside a word.
fn closing(text: &str, delimiter: &str, mark: char) -> Option<usize> {
    let mut search = 0;
    while search < text.len() {
        let rest = &text[search..];
        let found = rest.find([mark, '`'])?;
        let at = search + found;
        if text[at..].starts_with('`') {
            let ticks = text[at..].bytes().take_while(|byte| *byte == b'`').count();
            let fence = &text[at..at + ticks];
            search = text[at + ticks..]
                .find(fence)
                .map_or(at + ticks, |end| at + ticks + end + ticks);
            continue;
        }
        let run = text[at..]
            .chars()
            .take_while(|character| *character == mark)
            .count();
        let before = text[..at].chars().next_back();
        let after = text[at + run..].chars().next();
        let fits = if delimiter.len() == 1 {
            run == 1
        } else {
            run >= 2
        };
        let closes = fits
            && before.is_some_and(|character| !character.is_whitespace())
            && !(mark == '_' && after.is_some_and(char::is_alphanumeric));
        if closes && at > 0 {
            return Some(at);
        }
        search = at + run;
    }
    None
}

fn escape(text: &str, markup: &mut String) {
    for character in text.chars() {
        escape_character(character, markup);
    }
}

fn escape_character(character: char, markup: &mut String) {
    match character {
        '&' => markup.push_str("&amp;"),
        '<' => markup.push_str("&lt;"),
        '>' => markup.push_str("&gt;"),
        '"' => markup.push_str("&quot;"),
        '\'' => markup.push_str("&#39;"),
        other => markup.push(other),
    }
}

#[cfg(test)]
mod tests {
    use super::to_markup;

    #[test]
    fn headings_paragraphs_and_rules() {
        assert_eq!(
            to_markup("# Review\n\nTwo lines\nof one paragraph.\n\n---\n### Small"),
            "<h3>Review</h3><p>Two lines of one paragraph.</p><hr><h5>Small</h5>"
        );
    }

    #[test]
    fn lists_numbered_and_not() {
        assert_eq!(
            to_markup("- one\n- **two**\n\n1. first\n2) second"),
            "<ul><li>one</li><li><strong>two</strong></li></ul><ol><li>first</li><li>second</li></ol>"
        );
    }

    #[test]
    fn emphasis_strong_struck_and_code() {
        assert_eq!(
            to_markup("*a* _b_ **c** __d__ ~~e~~ `f*g*`"),
            "<p><em>a</em> <em>b</em> <strong>c</strong> <strong>d</strong> <del>e</del> <code>f*g*</code></p>"
        );
        assert_eq!(to_markup("snake_case_name"), "<p>snake_case_name</p>");
        assert_eq!(to_markup("2 * 3 * 4"), "<p>2 * 3 * 4</p>");
        assert_eq!(to_markup("**unclosed"), "<p>**unclosed</p>");
    }

    #[test]
    fn fenced_code_keeps_its_lines_and_its_markup_as_text() {
        assert_eq!(
            to_markup("```\nlet a = <b>;\n  *not em*\n```\nafter"),
            "<pre><code>let a = &lt;b&gt;;\n  *not em*</code></pre><p>after</p>"
        );
    }

    #[test]
    fn links_open_in_a_new_tab_without_the_opener() {
        assert_eq!(
            to_markup(
                "See [the docs](https://example.com/a?b=1&c=2) or <https://x.org>, https://y.org/p."
            ),
            concat!(
                r#"<p>See <a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">the docs</a>"#,
                r#" or <a href="https://x.org" target="_blank" rel="noopener noreferrer">https://x.org</a>, "#,
                r#"<a href="https://y.org/p" target="_blank" rel="noopener noreferrer">https://y.org/p</a>.</p>"#
            )
        );
    }

    #[test]
    fn a_script_or_html_stays_text() {
        assert_eq!(
            to_markup("<script>alert('x')</script>\n<img src=x onerror=alert(1)>"),
            "<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt;</p>"
        );
    }

    #[test]
    fn a_link_elsewhere_than_the_web_or_mail_is_text() {
        let markup =
            to_markup("[click](javascript:alert(1)) [x](data:text/html,hi) [y](\"onmouseover=\"x)");
        assert!(!markup.contains("<a"), "{markup}");
        assert!(!markup.contains("href"), "{markup}");
        let markup = to_markup("[mail](mailto:team@example.com)");
        assert!(
            markup.contains(r#"href="mailto:team@example.com""#),
            "{markup}"
        );
    }

    #[test]
    fn a_quote_holds_blocks_and_escapes_mark_what_they_are() {
        assert_eq!(
            to_markup("> quoted **text**\n> - item\n\n\\*not em\\*"),
            "<blockquote><p>quoted <strong>text</strong></p><ul><li>item</li></ul></blockquote><p>*not em*</p>"
        );
    }

    #[test]
    fn hard_breaks_and_an_empty_note() {
        assert_eq!(
            to_markup("one  \ntwo\\\nthree"),
            "<p>one<br>two<br>three</p>"
        );
        assert_eq!(to_markup(""), "");
        assert_eq!(to_markup("\n\n"), "");
    }

    #[test]
    fn every_input_gives_markup_with_no_tag_of_its_own() {
        // Whatever is typed, the only tags are those this renderer writes.
        let allowed = [
            "h3",
            "h4",
            "h5",
            "p",
            "br",
            "hr",
            "ul",
            "ol",
            "li",
            "blockquote",
            "pre",
            "code",
            "em",
            "strong",
            "del",
            "a",
        ];
        let samples = [
            "<b>x</b>",
            "[<b>](https://a)",
            "*<i>*",
            "`<x>`",
            "> <y>",
            "- <z>",
            "# <h1>",
            "<https://a<b>",
            "[a](https://a\"onclick=\"x)",
            "***x***",
            "~~<s>~~",
            "\\<x>",
            "_<u>_",
            "](<x>)",
        ];
        for sample in samples {
            let markup = to_markup(sample);
            for tag in markup.split('<').skip(1) {
                let name: String = tag
                    .trim_start_matches('/')
                    .chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .collect();
                assert!(
                    allowed.contains(&name.as_str()),
                    "{sample:?} gave {markup:?}"
                );
            }
        }
    }
}
