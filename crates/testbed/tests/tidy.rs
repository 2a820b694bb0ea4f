//! Tidy checks over the whole workspace's product code (every crate's `src/` except the
//! framework's own test bed and dev tooling): no function longer than [`FN_BUDGET`] lines and
//! no file longer than [`FILE_BUDGET`] lines, outside an allow-list that may only shrink (an
//! entry that now fits its budget fails the test until it is removed), and no command module
//! of the command line importing another.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Longest a product function may be, in lines from its `fn` line to its closing brace.
const FN_BUDGET: usize = 120;
/// Longest a product file may be, in lines (its unit tests included).
const FILE_BUDGET: usize = 1000;

/// Functions over budget today, as `path::name` with the most lines they may have. Only
/// ever shrink this list: split a function and remove its line.
const FN_ALLOWED: &[(&str, usize)] = &[];

/// Files over budget today, with the most lines they may have. Only ever shrink this list.
const FILE_ALLOWED: &[(&str, usize)] = &[];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every product source file, as (path relative to the workspace, text).
fn product_files() -> Vec<(String, String)> {
    let root = workspace();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            !matches!(
                p.file_name().and_then(|n| n.to_str()),
                Some("testbed" | "devtools")
            )
        })
        .map(|p| p.join("src"))
        .collect();
    dirs.push(root.join("xtask/src"));
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let tests = test_modules(&files);
    files.retain(|(path, _)| !tests.contains(path));
    files.sort();
    assert!(files.len() > 50, "found only {} product files", files.len());
    files
}

/// Files that are unit tests: declared `#[cfg(test)] mod name;` by their parent.
fn test_modules(files: &[(String, String)]) -> Vec<String> {
    let mut tests = Vec::new();
    for (path, text) in files {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let dir = match path.strip_suffix(".rs") {
            Some(p) if p.ends_with("/lib") || p.ends_with("/main") || p.ends_with("/mod") => p
                .rsplit_once('/')
                .map_or(String::new(), |(d, _)| d.to_string()),
            Some(p) => p.to_string(),
            None => continue,
        };
        for pair in lines.windows(2) {
            let declared = pair[1]
                .strip_prefix("mod ")
                .and_then(|m| m.strip_suffix(';'));
            if let (true, Some(name)) = (pair[0] == "#[cfg(test)]", declared) {
                tests.push(format!("{dir}/{name}.rs"));
                tests.push(format!("{dir}/{name}/mod.rs"));
            }
        }
    }
    tests
}

/// The text with `#[cfg(test)] mod name { .. }` blocks blanked: unit tests are not product.
fn without_inline_tests(code: &[u8]) -> Vec<u8> {
    let mut out = code.to_vec();
    let text = String::from_utf8_lossy(code).into_owned();
    let mut from = 0;
    while let Some(p) = text[from..].find("#[cfg(test)]") {
        let at = from + p;
        let rest = text[at + 12..].trim_start();
        from = at + 12;
        if !rest.starts_with("mod ") {
            continue;
        }
        let Some(open) = text[at..].find(['{', ';']).map(|o| at + o) else {
            break;
        };
        if text.as_bytes()[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut end = text.len();
        for (i, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        for c in &mut out[at..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    out
}

/// The text with string, char and comment contents blanked (newlines kept), so that braces
/// and keywords are only the code's.
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                let start = i;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                blank(&mut out, start, i);
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let body = i + 2 + hashes;
                let end = b[body..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| body + p + close.len());
                blank(&mut out, body, end);
                i = end;
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, start, i.min(b.len()));
                i += 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}', '{') or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    let end = b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map_or(b.len(), |p| i + 3 + p);
                    blank(&mut out, i + 1, end - 1);
                    i = end;
                } else if b.get(i + 2) == Some(&b'\'') {
                    blank(&mut out, i + 1, i + 2);
                    i += 3;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// Every function in `text` with its length in lines (`fn` line to closing brace).
fn functions(text: &str) -> Vec<(String, usize)> {
    let code = without_inline_tests(&code_only(text));
    let code = String::from_utf8_lossy(&code);
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(at) = find_fn(line) else { continue };
        let name: String = line[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body opens at the first `{` after the signature; a `;` first means no body.
        let mut depth = 0usize;
        let mut brackets = 0usize;
        let mut opened = false;
        let mut end = None;
        'scan: for (n, l) in lines.iter().enumerate().skip(start) {
            let from = if n == start { at } else { 0 };
            for c in l[from..].chars() {
                match c {
                    // `[u8; 4]` in a signature is no end of a declaration.
                    '[' | '(' if !opened => brackets += 1,
                    ']' | ')' if !opened => brackets = brackets.saturating_sub(1),
                    ';' if !opened && depth == 0 && brackets == 0 => break 'scan,
                    '{' => {
                        opened = true;
                        depth += 1;
                    }
                    '}' => {
                        depth = depth.saturating_sub(1);
                        if opened && depth == 0 {
                            end = Some(n);
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(end) = end {
            found.push((name, end - start + 1));
        }
    }
    found
}

/// Where `fn ` starts on a line as a keyword (not inside an identifier), if it does.
fn find_fn(line: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = line[from..].find("fn ") {
        let at = from + p;
        let before = line[..at].chars().next_back();
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
            return Some(at);
        }
        from = at + 3;
    }
    None
}

fn over_budget(
    measured: BTreeMap<String, usize>,
    allowed: &[(&str, usize)],
    budget: usize,
    what: &str,
) {
    let allowed: BTreeMap<&str, usize> = allowed.iter().copied().collect();
    let mut problems = Vec::new();
    for (name, &lines) in &measured {
        match allowed.get(name.as_str()) {
            None if lines > budget => problems.push(format!(
                "{what} {name} is {lines} lines (budget {budget}): split it by its jobs"
            )),
            Some(&most) if lines > most => problems.push(format!(
                "{what} {name} grew to {lines} lines (allowed {most}, budget {budget})"
            )),
            _ => {}
        }
    }
    for (name, most) in &allowed {
        match measured.get(*name) {
            None => problems.push(format!(
                "allowed {what} {name} no longer exists: remove it from the list"
            )),
            Some(&lines) if lines <= budget => problems.push(format!(
                "{what} {name} now fits its budget ({lines} lines): remove it from the list"
            )),
            Some(&lines) if lines < *most => problems.push(format!(
                "{what} {name} shrank to {lines} lines: lower its allowance from {most}"
            )),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_product_function_is_over_its_budget() {
    let mut measured = BTreeMap::new();
    for (path, text) in product_files() {
        for (name, lines) in functions(&text) {
            let key = format!("{path}::{name}");
            let longest = measured.entry(key).or_insert(0);
            *longest = (*longest).max(lines);
        }
    }
    over_budget(measured, FN_ALLOWED, FN_BUDGET, "function");
}

#[test]
fn no_product_file_is_over_its_budget() {
    let measured = product_files()
        .into_iter()
        .map(|(path, text)| (path, text.lines().count()))
        .collect();
    over_budget(measured, FILE_ALLOWED, FILE_BUDGET, "file");
}

#[test]
fn the_function_scanner_sees_bodies_past_strings_chars_and_comments() {
    let text = "fn a() {\n    let s = \"}}\";\n    let c = '}';\n    // }\n    let r = r#\"}\"#;\n}\nfn b<'x>(v: &'x str) -> &'x str { v }\ntrait T { fn c(&self); }\n";
    assert_eq!(
        functions(text),
        vec![("a".to_string(), 6), ("b".to_string(), 1)]
    );
}

/// The command line's command modules: each may use `common` and the crates, never another.
const COMMANDS: &[&str] = &["prop", "gate", "ci"];

#[test]
fn no_command_module_of_the_command_line_imports_another() {
    let src = workspace().join("crates/cli/src");
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let top = rel.split(['/', '.']).next().unwrap_or_default().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            for (line, other) in command_imports(&rel, &text) {
                problems.push(format!(
                    "crates/cli/src/{rel}:{line}: the `{top}` module imports the `{other}` command module; move what both need into `common`",
                ));
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "checked only {checked} files");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The items `lib.rs` re-exports from a command module (`pub use prop::Isolated;`), which
/// another command module could reach as `crate::Isolated`.
fn root_reexports() -> Vec<(String, &'static str)> {
    let lib = std::fs::read_to_string(workspace().join("crates/cli/src/lib.rs")).unwrap();
    let mut found = Vec::new();
    for statement in lib.split(';') {
        let statement: String = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        for command in COMMANDS {
            if let Some(rest) = statement.split(&format!("pub use {command}::")).nth(1) {
                for name in rest.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                    if !name.is_empty() {
                        found.push((name.to_string(), *command));
                    }
                }
            }
        }
    }
    found
}

/// Every place in the file at `rel` (under `crates/cli/src`) that names a command module
/// other than its own: `crate::other`, `use crate::{.., other::..}` over any number of
/// lines, `super::` chains that climb to the crate root, and the root's re-exports of
/// another command's items; as (line, the command named).
fn command_imports(rel: &str, text: &str) -> Vec<(usize, &'static str)> {
    let code = String::from_utf8(code_only(text)).unwrap();
    let segments: Vec<&str> = rel
        .trim_end_matches(".rs")
        .split('/')
        .filter(|s| *s != "mod")
        .collect();
    let top = segments[0];
    let reexports = root_reexports();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let flag = |at: usize, name: &str, found: &mut Vec<(usize, &'static str)>| {
        if let Some(command) = COMMANDS.iter().find(|c| **c == name && **c != top) {
            found.push((line_of(at), *command));
        }
        if let Some((_, command)) = reexports.iter().find(|(n, c)| n == name && *c != top) {
            found.push((line_of(at), *command));
        }
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            // Every first segment of the group, however it is laid out.
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for part in group.split(',') {
                let name = part.trim().split("::").next().unwrap_or_default().trim();
                flag(at, name, &mut found);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            flag(at, &name, &mut found);
        }
    }
    for (at, _) in code.match_indices("super::") {
        if at >= 7 && &code[at - 7..at] == "super::" {
            continue;
        }
        let mut rest = &code[at..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        // A file `a/b.rs` is module `a::b`: climbing all its segments reaches the root.
        if climbs >= segments.len() {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            flag(at, &name, &mut found);
        }
    }
    found
}

#[test]
fn the_import_rule_sees_every_way_of_naming_another_command() {
    let multi_line = "use crate::{\n    common::Format,\n    gate::GateCommand,\n};\n";
    assert_eq!(
        command_imports("prop/clean.rs", multi_line),
        vec![(1, "gate")]
    );
    let climbing = "use super::super::gate::GateCommand;\n";
    assert_eq!(
        command_imports("prop/clean.rs", climbing),
        vec![(1, "gate")]
    );
    assert!(command_imports("prop/supervise/crash.rs", climbing).is_empty());
    let reexport = "fn f() { let _ = crate::Isolated::this_program(None); }\n";
    assert_eq!(command_imports("gate/cite.rs", reexport), vec![(1, "prop")]);
    assert!(command_imports("prop/run.rs", reexport).is_empty());
    let commented = "// crate::gate::x\nlet s = \"crate::ci::y\";\n";
    assert!(command_imports("prop/run.rs", commented).is_empty());
}

#[test]
fn every_command_module_exists() {
    let src = workspace().join("crates/cli/src");
    for command in COMMANDS {
        assert!(src.join(format!("{command}.rs")).is_file(), "{command}.rs");
    }
    assert!(src.join("common.rs").is_file());
}
