//! A unified diff (`git diff`, a coding module's `diff_out`) read into files
//! and lines for showing as a diff: each file's name with how many lines it
//! adds and removes, and every line marked added, removed, context, a hunk
//! header or a note. Plain Rust, so it is tested without a browser.

/// What a line of a diff is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    Added,
    Removed,
    Context,
    /// `@@ -1,3 +1,4 @@`: where the lines below are.
    Hunk,
    /// `\ No newline at end of file`, `Binary files … differ`, a mode change.
    Note,
}

impl LineKind {
    pub fn class(self) -> &'static str {
        match self {
            LineKind::Added => "diff-line added",
            LineKind::Removed => "diff-line removed",
            LineKind::Context => "diff-line",
            LineKind::Hunk => "diff-line hunk",
            LineKind::Note => "diff-line note",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    /// The line as the diff has it, its `+` or `-` included (the colour is
    /// not the only sign).
    pub text: String,
}

/// One file of a diff.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffFile {
    /// The file's path after the change (before it, for a deleted file);
    /// empty when the diff names none.
    pub path: String,
    pub added: usize,
    pub removed: usize,
    pub lines: Vec<DiffLine>,
}

/// Whether text is a unified diff rather than prose that has a `+` in it.
pub fn is_diff(text: &str) -> bool {
    let has = |prefix: &str| text.lines().any(|line| line.starts_with(prefix));
    has("diff --git ") || (has("--- ") && has("+++ ") && has("@@"))
}

/// The path a `--- a/x` or `+++ b/x` header names, if not `/dev/null`.
fn header_path(rest: &str) -> Option<String> {
    let path = rest.split('\t').next().unwrap_or(rest).trim();
    if path == "/dev/null" || path.is_empty() {
        return None;
    }
    let path = path
        .strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path);
    Some(path.to_owned())
}

/// The file a `diff --git a/x b/y` line names (`y`).
fn git_header_path(rest: &str) -> String {
    match rest.rsplit_once(" b/") {
        Some((_, path)) => path.to_owned(),
        None => rest.to_owned(),
    }
}

/// How many old and new lines a hunk header (`@@ -1,2 +1,3 @@`) says
/// follow; as many as come when it cannot be read.
fn hunk_counts(header: &str) -> (usize, usize) {
    let count = |range: Option<&str>, sign: char| -> Option<usize> {
        let range = range?.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((_, count)) => count.parse().ok(),
            None => Some(1),
        }
    };
    let mut ranges = header.trim_start_matches('@').split_whitespace();
    match (count(ranges.next(), '-'), count(ranges.next(), '+')) {
        (Some(old), Some(new)) => (old, new),
        _ => (usize::MAX, usize::MAX),
    }
}

/// The file lines go to, begun when a diff has none before its first line.
fn current(files: &mut Vec<DiffFile>) -> &mut DiffFile {
    if files.is_empty() {
        files.push(DiffFile::default());
    }
    let last = files.len() - 1;
    &mut files[last]
}

/// A line inside a hunk, counted against what its header said is left.
fn hunk_line(file: &mut DiffFile, line: &str, left: &mut (usize, usize)) -> LineKind {
    let (old, new) = left;
    if line.starts_with('+') {
        *new = new.saturating_sub(1);
        file.added += 1;
        LineKind::Added
    } else if line.starts_with('-') {
        *old = old.saturating_sub(1);
        file.removed += 1;
        LineKind::Removed
    } else if line.starts_with('\\') {
        LineKind::Note
    } else {
        *old = old.saturating_sub(1);
        *new = new.saturating_sub(1);
        LineKind::Context
    }
}

/// The files of a unified diff, in its order. The hunk headers' counts say
/// where a hunk ends, so a line `+--- x` in a file is a line, not a header.
pub fn files(text: &str) -> Vec<DiffFile> {
    let mut files: Vec<DiffFile> = Vec::new();
    // Lines left in the hunk being read (old, new).
    let mut left: Option<(usize, usize)> = None;
    // A file's header is being read (before its first hunk).
    let mut in_header = false;
    for line in text.lines() {
        if let Some(counts) = left.as_mut() {
            let file = current(&mut files);
            let kind = hunk_line(file, line, counts);
            file.lines.push(DiffLine {
                kind,
                text: line.to_owned(),
            });
            if *counts == (0, 0) {
                left = None;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.push(DiffFile {
                path: git_header_path(rest),
                ..DiffFile::default()
            });
            in_header = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("--- ") {
            // A plain unified diff starts its file here.
            if !in_header {
                files.push(DiffFile::default());
                in_header = true;
            }
            let file = current(&mut files);
            if let Some(path) = header_path(rest).filter(|_| file.path.is_empty()) {
                file.path = path;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("+++ ") {
            if let Some(path) = header_path(rest) {
                current(&mut files).path = path;
            }
            continue;
        }
        // What git says of the blobs is in the file's name and counts.
        if line.starts_with("index ") {
            continue;
        }
        let kind = if line.starts_with("@@") {
            left = Some(hunk_counts(line));
            in_header = false;
            LineKind::Hunk
        } else {
            // `new file mode …`, `Binary files … differ`, `\ No newline …`.
            LineKind::Note
        };
        current(&mut files).lines.push(DiffLine {
            kind,
            text: line.to_owned(),
        });
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIT_DIFF: &str = "diff --git a/hello.txt b/hello.txt
new file mode 100644
index 0000000..e965047
--- /dev/null
+++ b/hello.txt
@@ -0,0 +1,2 @@
+Hello from the canvas
+--- not a header
diff --git a/notes.md b/notes.md
index 1111111..2222222 100644
--- a/notes.md
+++ b/notes.md
@@ -1,2 +1,2 @@
 # Notes
-old line
+new line
\\ No newline at end of file
";

    #[test]
    fn a_git_diff_is_read_into_files_with_their_names_counts_and_marked_lines() {
        assert!(is_diff(GIT_DIFF));
        let files = files(GIT_DIFF);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, "hello.txt");
        assert_eq!((files[0].added, files[0].removed), (2, 0));
        let kinds: Vec<LineKind> = files[0].lines.iter().map(|line| line.kind).collect();
        assert_eq!(
            kinds,
            [
                LineKind::Note,
                LineKind::Hunk,
                LineKind::Added,
                LineKind::Added
            ]
        );
        assert_eq!(files[0].lines[1].text, "@@ -0,0 +1,2 @@");
        assert_eq!(files[0].lines[3].text, "+--- not a header");
        assert_eq!(files[1].path, "notes.md");
        assert_eq!((files[1].added, files[1].removed), (1, 1));
        let kinds: Vec<LineKind> = files[1].lines.iter().map(|line| line.kind).collect();
        assert_eq!(
            kinds,
            [
                LineKind::Hunk,
                LineKind::Context,
                LineKind::Removed,
                LineKind::Added,
                LineKind::Note
            ]
        );
    }

    #[test]
    fn a_plain_unified_diff_names_its_file_from_its_headers_and_a_deleted_file_keeps_its_name() {
        let plain = "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n";
        assert!(is_diff(plain));
        let files = files(plain);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "gone.txt");
        assert_eq!((files[0].added, files[0].removed), (0, 1));
    }

    #[test]
    fn a_hunk_ends_where_its_header_says_so_the_next_file_of_a_plain_diff_starts() {
        let plain = "--- a/one.txt\n+++ b/one.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/two.txt\n+++ b/two.txt\n@@ -1,0 +1 @@\n+c\n";
        let files = files(plain);
        let names: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(names, ["one.txt", "two.txt"]);
        assert_eq!((files[1].added, files[1].removed), (1, 0));
    }

    #[test]
    fn prose_with_pluses_and_dashes_is_not_a_diff() {
        assert!(!is_diff("+ one\n- two\nthree"));
        assert!(!is_diff("--- a heading ---\ntext"));
        assert!(!is_diff(""));
    }
}
