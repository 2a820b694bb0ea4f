//! The documentation's links and paths, checked as an ordinary test (`mdbook build book` in
//! `.ci/run` renders the book; this keeps it from pointing at nothing). Over `README.md`,
//! `ARCHITECTURE.md` and every `book/src/**/*.md`:
//!
//! * every relative link names a file that exists, and its `#anchor` a heading of that file
//!   (mdBook's and GitHub's slug: lowercase, whitespace to `-`, punctuation other than `-`
//!   and `_` dropped, a repeated heading suffixed `-1`, `-2`, ...); a link from the book
//!   stays inside `book/src/`, the only files mdBook serves;
//! * `book/src/SUMMARY.md` names every chapter file, and every file it names exists;
//! * every repository path the docs name in backticks exists: a code span that starts with
//!   `crates/`, `xtask/`, `props/`, `fixtures/`, `book/`, `.ci/` or `.github/`, or that
//!   contains `/`, ends in `.rs`, `.toml`, `.md`, `.json`, `.jsonl` or `.yml` and starts
//!   with a top-level entry of the repository (`target/` is output, never checked). A span
//!   with a placeholder (`<id>`, `*`, `…`, a segment such as `ID` or `OUT`) names no one
//!   file; `a/{b.rs, c.rs}` names both.
//!
//! Fenced code blocks are examples and transcripts: nothing in them is checked.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// Where a path the docs name in backticks must lie to be checked.
const REPO_PREFIXES: &[&str] = &[
    "crates/",
    "xtask/",
    "props/",
    "fixtures/",
    "book/",
    ".ci/",
    ".github/",
];
/// Endings that make a span with a `/` a file path.
const FILE_ENDINGS: &[&str] = &[".rs", ".toml", ".md", ".json", ".jsonl", ".yml"];
/// Path segments (before any `.`) that stand for a value, not a name.
const PLACEHOLDERS: &[&str] = &[
    "ID", "OUT", "PATCH", "ROOT", "WORK", "DIR", "FILE", "PART_DIR", "M", "N",
];
/// Paths the commands create in a workspace, named by the docs but absent from this
/// repository: the freeze store and the trust file.
const CREATED_AT_RUN_TIME: &[&str] = &["props/freezes", "props/trusted-runners.jsonl"];

/// One thing wrong, where it is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Problem {
    file: String,
    line: usize,
    what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.what)
    }
}

/// What a Markdown file holds that the checks read (fenced blocks left out).
#[derive(Debug, Default)]
struct Scanned {
    /// (line, target) of every inline link and image, and of every reference definition.
    links: Vec<(usize, String)>,
    /// (line, content) of every code span.
    spans: Vec<(usize, String)>,
    /// The anchors of the headings, in order, repeated ones suffixed.
    anchors: Vec<String>,
}

/// Every problem of the docs under `root`, sorted by file and line.
fn check(root: &Path) -> Vec<Problem> {
    let root = &root.canonicalize().unwrap();
    let mut docs = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    docs.retain(|p| p.is_file());
    let book = root.join("book/src");
    let chapters = markdown_under(&book);
    docs.extend(chapters.iter().cloned());
    let mut problems = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        let scanned = scan(&text);
        check_links(root, doc, &scanned, &mut problems);
        check_paths(root, doc, &scanned, &mut problems);
    }
    check_summary(root, &chapters, &mut problems);
    problems.sort();
    problems
}

/// Every `.md` file under `dir`, recursively, sorted.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// `base/target` with `.` and `..` resolved lexically.
fn resolve(base: &Path, target: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for component in base.join(target).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn check_links(root: &Path, doc: &Path, scanned: &Scanned, problems: &mut Vec<Problem>) {
    let file = relative(root, doc);
    let in_book = doc.starts_with(root.join("book/src"));
    for (line, target) in &scanned.links {
        let mut problem = |what: String| {
            problems.push(Problem {
                file: file.clone(),
                line: *line,
                what,
            })
        };
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            doc.to_path_buf()
        } else {
            resolve(doc.parent().unwrap(), path)
        };
        if !resolved.exists() {
            if doc.ends_with("book/src/SUMMARY.md") {
                continue; // `check_summary` names the missing chapter
            }
            problem(format!(
                "link `{target}`: `{}` does not exist",
                relative(root, &resolved)
            ));
            continue;
        }
        if in_book && !resolved.starts_with(root.join("book/src")) {
            problem(format!(
                "link `{target}` leaves book/src/, which is all mdBook serves: name the file in backticks instead"
            ));
        }
        let Some(anchor) = anchor else {
            continue;
        };
        if resolved.extension().is_none_or(|e| e != "md") {
            problem(format!(
                "link `{target}`: an anchor into a file that is not Markdown"
            ));
            continue;
        }
        let anchors = if resolved == doc {
            scanned.anchors.clone()
        } else {
            scan(&std::fs::read_to_string(&resolved).unwrap()).anchors
        };
        if !anchors.iter().any(|a| a == anchor) {
            problem(format!(
                "link `{target}`: `{}` has no heading `#{anchor}`",
                relative(root, &resolved)
            ));
        }
    }
}

fn check_paths(root: &Path, doc: &Path, scanned: &Scanned, problems: &mut Vec<Problem>) {
    let top_level: BTreeSet<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "target")
        .collect();
    for (line, span) in &scanned.spans {
        for path in expand_braces(span.trim()) {
            if !names_a_repository_path(&path, &top_level) {
                continue;
            }
            let on_disk = root.join(path.trim_end_matches('/'));
            let exists = if path.ends_with('/') {
                on_disk.is_dir()
            } else {
                on_disk.exists()
            };
            if !exists {
                problems.push(Problem {
                    file: relative(root, doc),
                    line: *line,
                    what: format!("path `{path}` does not exist"),
                });
            }
        }
    }
}

/// `a/{b.rs, c.rs}` as `a/b.rs` and `a/c.rs`; anything else as itself.
fn expand_braces(span: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (span.find('{'), span.find('}')) else {
        return vec![span.to_string()];
    };
    if close < open {
        return vec![span.to_string()];
    }
    span[open + 1..close]
        .split(',')
        .map(|part| format!("{}{}{}", &span[..open], part.trim(), &span[close + 1..]))
        .collect()
}

/// Whether a code span names one file or directory of the repository (see the module doc).
fn names_a_repository_path(span: &str, top_level: &BTreeSet<String>) -> bool {
    let placeholder_chars = [
        '<', '>', '*', '?', '…', '$', ':', '{', '}', '[', ']', '#', '=',
    ];
    if span.is_empty()
        || span.contains(char::is_whitespace)
        || span.contains(placeholder_chars)
        || span.contains("...")
    {
        return false;
    }
    let trimmed = span.trim_end_matches('/');
    if CREATED_AT_RUN_TIME
        .iter()
        .any(|p| trimmed == *p || trimmed.starts_with(&format!("{p}/")))
    {
        return false;
    }
    if trimmed
        .split('/')
        .any(|segment| PLACEHOLDERS.contains(&segment.split('.').next().unwrap_or(segment)))
    {
        return false;
    }
    if REPO_PREFIXES.iter().any(|p| span.starts_with(p)) {
        return true;
    }
    let first = span.split('/').next().unwrap_or_default();
    span.contains('/')
        && FILE_ENDINGS.iter().any(|e| span.ends_with(e))
        && top_level.contains(first)
}

fn check_summary(root: &Path, chapters: &[PathBuf], problems: &mut Vec<Problem>) {
    let book = root.join("book/src");
    let summary = book.join("SUMMARY.md");
    if chapters.is_empty() {
        return;
    }
    let Ok(text) = std::fs::read_to_string(&summary) else {
        problems.push(Problem {
            file: relative(root, &summary),
            line: 0,
            what: "the book has chapters but no SUMMARY.md".to_string(),
        });
        return;
    };
    let mut named = BTreeSet::new();
    for (line, target) in scan(&text).links {
        let path = resolve(&book, target.split('#').next().unwrap_or_default());
        if !path.is_file() {
            problems.push(Problem {
                file: relative(root, &summary),
                line,
                what: format!("names the chapter `{target}`, which does not exist"),
            });
        }
        named.insert(path);
    }
    for chapter in chapters {
        if *chapter != summary && !named.contains(chapter) {
            problems.push(Problem {
                file: relative(root, chapter),
                line: 1,
                what: "this chapter is missing from book/src/SUMMARY.md".to_string(),
            });
        }
    }
}

/// The links, code spans and heading anchors of a Markdown text, fenced blocks left out.
fn scan(text: &str) -> Scanned {
    let mut scanned = Scanned::default();
    // The prose: every line outside a fence, with its number; a fence line is blank prose.
    let mut prose = String::new();
    let mut line_of = Vec::new(); // line_of[i]: line number of prose byte i
    let mut fence: Option<String> = None;
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        let trimmed = line.trim_start();
        let marker: String = trimmed
            .chars()
            .take_while(|c| *c == '`' || *c == '~')
            .collect();
        let is_fence =
            marker.len() >= 3 && marker.chars().all(|c| c == marker.as_bytes()[0] as char);
        let mut blank = false;
        match &fence {
            Some(open) if is_fence && marker.starts_with(open.as_str()) => {
                fence = None;
                blank = true;
            }
            Some(_) => blank = true,
            None if is_fence => {
                fence = Some(marker);
                blank = true;
            }
            None => {}
        }
        if !blank {
            if let Some(heading) = heading_text(line) {
                let base = slug(&heading);
                let n = seen.entry(base.clone()).or_insert(0);
                scanned
                    .anchors
                    .push(if *n == 0 { base } else { format!("{base}-{n}") });
                *n += 1;
            }
            if let Some(target) = reference_definition(line) {
                scanned.links.push((number, target));
            }
        }
        let kept = if blank { "" } else { line };
        prose.push_str(kept);
        prose.push('\n');
        line_of.extend(std::iter::repeat_n(number, kept.len() + 1));
    }
    scan_inline(&prose, &line_of, &mut scanned);
    scanned
}

/// The text of an ATX heading (`## Text`), inline code and links reduced to their text.
fn heading_text(line: &str) -> Option<String> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
        return None;
    }
    let mut text = line[hashes..]
        .trim()
        .trim_end_matches('#')
        .trim()
        .to_string();
    // [text](target) -> text
    while let (Some(open), Some(mid)) = (text.find('['), text.find("](")) {
        let Some(close) = text[mid..].find(')').map(|c| mid + c) else {
            break;
        };
        if open > mid {
            break;
        }
        text = format!(
            "{}{}{}",
            &text[..open],
            &text[open + 1..mid],
            &text[close + 1..]
        );
    }
    Some(text.replace('`', ""))
}

/// mdBook's (and GitHub's) anchor of a heading's text.
fn slug(text: &str) -> String {
    text.chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().collect::<String>())
            } else if c.is_whitespace() {
                Some("-".to_string())
            } else {
                None
            }
        })
        .collect()
}

/// `[label]: target` at the start of a line.
fn reference_definition(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (label, after) = rest.split_once("]:")?;
    if label.is_empty() || label.contains(']') {
        return None;
    }
    let target = after.split_whitespace().next()?;
    Some(target.trim_matches(['<', '>']).to_string())
}

/// Code spans (a run of N backticks to the next run of exactly N) and inline link targets
/// (`](target)`) of the prose.
fn scan_inline(prose: &str, line_of: &[usize], scanned: &mut Scanned) {
    let bytes = prose.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if let Some((start, end)) = closing_run(prose, i + run, run) {
                let content = &prose[i + run..start];
                // A code span never crosses a blank line (a paragraph's end).
                if !content.contains("\n\n") {
                    let content = content.replace('\n', " ");
                    let trimmed = if content.starts_with(' ')
                        && content.ends_with(' ')
                        && content.len() > 1
                    {
                        content[1..content.len() - 1].to_string()
                    } else {
                        content
                    };
                    scanned.spans.push((line_of[i], trimmed));
                    i = end;
                    continue;
                }
            }
            i += run;
            continue;
        }
        if bytes[i] == b']' && bytes.get(i + 1) == Some(&b'(') {
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            while j < bytes.len() && bytes[j] != b'\n' {
                match bytes[j] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if depth == 0 {
                let inner = prose[start..j].trim();
                let target = inner.split_whitespace().next().unwrap_or_default();
                let target = target.trim_matches(['<', '>']);
                scanned.links.push((line_of[i], target.to_string()));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
}

/// The next run of exactly `n` backticks at or after `from`: (its start, its end).
fn closing_run(prose: &str, from: usize, n: usize) -> Option<(usize, usize)> {
    let bytes = prose.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if run == n {
                return Some((i, i + run));
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_link_anchor_chapter_and_path_the_docs_name_exists() {
    let problems = check(&repo());
    assert!(
        problems.is_empty(),
        "{} problem(s) in the docs:\n{}",
        problems.len(),
        problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A scratch repository with one of each mistake, and the problems `check` must report.
#[test]
fn the_checker_names_each_broken_link_anchor_chapter_and_path_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("crates/a/src/lib.rs", "//! a\n");
    write(
        "README.md",
        concat!(
            "# Title\n",
            "\n",
            "See [the guide](book/src/guide.md#running-it-fast) and\n",
            "[gone](book/src/gone.md), `crates/a/src/lib.rs` and `crates/a/src/missing.rs`.\n",
            "```sh\n",
            "cat crates/nowhere.rs   # [not a link](nowhere.md) in a fence\n",
            "```\n",
            "Spans: `props/<id>.md`, `OUT/PATCH/ID.receipt.json`, `target/x/y.json`,\n",
            "`my_crate/Cargo.toml`, `props/freezes/` and `crates/a/src/{lib.rs, nope.rs}`.\n",
            "A [wrong anchor](book/src/guide.md#walking) and [a fine one](#title).\n",
        ),
    );
    write(
        "book/src/SUMMARY.md",
        "# Summary\n\n- [Guide](guide.md)\n- [Missing](missing.md)\n",
    );
    write(
        "book/src/guide.md",
        "# Guide\n\n## Running it (`fast`)\n\nOut: [readme](../../README.md).\n",
    );
    write("book/src/orphan.md", "# Orphan\n");
    let got: Vec<String> = check(root).iter().map(ToString::to_string).collect();
    let want = [
        "README.md:10: link `book/src/guide.md#walking`: `book/src/guide.md` has no heading `#walking`",
        "README.md:4: link `book/src/gone.md`: `book/src/gone.md` does not exist",
        "README.md:4: path `crates/a/src/missing.rs` does not exist",
        "README.md:9: path `crates/a/src/nope.rs` does not exist",
        "book/src/SUMMARY.md:4: names the chapter `missing.md`, which does not exist",
        "book/src/guide.md:5: link `../../README.md` leaves book/src/, which is all mdBook serves: name the file in backticks instead",
        "book/src/orphan.md:1: this chapter is missing from book/src/SUMMARY.md",
    ];
    let mut want: Vec<String> = want.iter().map(ToString::to_string).collect();
    want.sort();
    let mut got_sorted = got.clone();
    got_sorted.sort();
    assert_eq!(got_sorted, want, "got:\n{}", got.join("\n"));
}

#[test]
fn slugs_follow_mdbook_and_github() {
    let cases = [
        ("Crash isolation (--isolate)", "crash-isolation---isolate"),
        (
            "5. The next run honours it, and still shows everything",
            "5-the-next-run-honours-it-and-still-shows-everything",
        ),
        ("Merging: gate merge", "merging-gate-merge"),
        (
            "Partitioning: --partition slice:M/N",
            "partitioning---partition-slicemn",
        ),
        ("snake_case and Ünïcode", "snake_case-and-ünïcode"),
    ];
    for (text, want) in cases {
        assert_eq!(slug(text), want, "{text}");
    }
    assert_eq!(
        heading_text("## Running a property from `cargo test`").as_deref(),
        Some("Running a property from cargo test")
    );
    assert_eq!(
        scan("# A\n## A\n### A\n").anchors,
        ["a", "a-1", "a-2"],
        "repeated headings are numbered"
    );
}
