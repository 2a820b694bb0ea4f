//! The freeze store as the command line reads it: the citation files under
//! `props/freezes/` (or `--freezes DIR`), and what is current for each — the spec's digest,
//! the fixture's pin, the work tree's code identity against the citation's own base. The
//! rules are the gate's (`authenticate_citation`, `citation_state`, `check_clock`); this
//! module only reads files, the clock and asks git.

use seedledger_format::{Citation, TrustedKeys, parse_rfc3339};
use seedledger_gate::{Authenticity, CitationState, CitedEvidence, Current, citation_state};
use seedledger_runner::engine;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The largest citation file read (a citation is a few hundred bytes).
const MAX_CITATION_BYTES: u64 = 64 * 1024;

/// One file of the store.
#[derive(Debug, Clone)]
pub struct Stored {
    pub path: PathBuf,
    /// The citation and how it stands under the trust file, or why the file may not be
    /// honoured (`invalid (<why>)`, never honoured).
    pub citation: Result<(Citation, Authenticity), String>,
    /// The `fail_id` and `pass_id` the file names, read leniently: evidence a valid or an
    /// invalid citation names is cited evidence all the same.
    pub fail_id: Option<String>,
    pub pass_id: Option<String>,
}

/// A stored citation with its state.
#[derive(Debug, Clone)]
pub struct Judged {
    pub path: PathBuf,
    pub citation: Citation,
    pub authenticity: Authenticity,
    pub state: CitationState,
}

/// The store's directory: `--freezes DIR`, else `ROOT/props/freezes`.
pub fn store_dir(root: &Path, given: Option<&Path>) -> PathBuf {
    match given {
        Some(dir) => dir.to_path_buf(),
        None => root.join(engine::FREEZE_STORE),
    }
}

/// Every `*.json` file of the store, sorted by name, each read and authenticated against
/// `keys` (the trust file, when the repository has one: `seedledger_gate::authenticate_citation`).
/// A store that does not exist is empty; one that cannot be listed is an error.
pub fn read_store(dir: &Path, keys: Option<&TrustedKeys>) -> Result<Vec<Stored>, String> {
    Ok(read_all(list_store(dir)?, keys))
}

/// The `*.json` paths of the store, sorted; none when it does not exist.
fn list_store(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot list freeze store `{}`: {e}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// [`read_stored`] of every path, in order; a big store is read and authenticated on every
/// core (an ed25519 verification costs tens of microseconds).
fn read_all(paths: Vec<PathBuf>, keys: Option<&TrustedKeys>) -> Vec<Stored> {
    const PER_THREAD: usize = 64;
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(paths.len().div_ceil(PER_THREAD));
    if threads <= 1 {
        return paths
            .into_iter()
            .map(|path| read_stored(path, keys))
            .collect();
    }
    let chunk = paths.len().div_ceil(threads);
    let mut chunks: Vec<Vec<PathBuf>> = Vec::new();
    let mut rest = paths.into_iter().peekable();
    while rest.peek().is_some() {
        chunks.push(rest.by_ref().take(chunk).collect());
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|paths| {
                scope.spawn(move || {
                    paths
                        .into_iter()
                        .map(|path| read_stored(path, keys))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// The store as `prop run` reads it: [`read_store`] under the repository's trust file, which
/// is read only when the store holds a file (a run without citations does not depend on it).
/// The files read are those of the one listing that decided it.
pub fn read_store_at(root: &Path, dir: &Path) -> Result<Vec<Stored>, String> {
    let paths = list_store(dir)?;
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let trust = super::keys::Roles::load(root).map_err(|e| format!("{e:#}"))?;
    Ok(read_all(paths, trust.keys()))
}

fn read_stored(path: PathBuf, keys: Option<&TrustedKeys>) -> Stored {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let text = read_citation_text(&path);
    let citation = text.as_deref().map_err(String::clone).and_then(|text| {
        seedledger_gate::authenticate_citation(text, name.as_deref().unwrap_or(""), keys)
    });
    // The evidence a file names: the citation's, or, for a file that is not a valid citation,
    // whatever its JSON says.
    let (fail_id, pass_id) = match (&citation, &text) {
        (Ok((c, _)), _) => (Some(c.fail_id.clone()), Some(c.pass_id.clone())),
        (Err(_), Ok(text)) => named_evidence(text.as_bytes()),
        (Err(_), Err(_)) => (None, None),
    };
    Stored {
        path,
        citation,
        fail_id,
        pass_id,
    }
}

/// The `fail_id` and `pass_id` a file's bytes name, read leniently (any JSON object with
/// those string members): what a file of the store cites, valid citation or not.
pub fn named_evidence(bytes: &[u8]) -> (Option<String>, Option<String>) {
    let value: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
    let id = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_string);
    (id("fail_id"), id("pass_id"))
}

/// Reads one citation file's text: not through a symlink, at most [`MAX_CITATION_BYTES`].
fn read_citation_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err("is a symbolic link; citations are read only from regular files".into());
    }
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() > MAX_CITATION_BYTES {
        return Err(format!(
            "is {} bytes; a citation is at most {MAX_CITATION_BYTES}",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))
}

/// The evidence every file of the store names, for `gate cite`'s one-citation-per-evidence
/// rule (`shown`: each file as printed).
pub fn cited_evidence<'a>(store: &'a [Stored], shown: &'a [String]) -> Vec<CitedEvidence<'a>> {
    store
        .iter()
        .zip(shown)
        .map(|(s, file)| CitedEvidence {
            file,
            fail_id: s.fail_id.as_deref(),
            pass_id: s.pass_id.as_deref(),
        })
        .collect()
}

/// Now, checked against the store (`seedledger_gate::check_clock`): not before 1970, not
/// before the newest citation that may be honoured was written (an invalid file cannot stop
/// the clock).
pub fn now_checked(store: &[Stored]) -> Result<i64, String> {
    let now = now();
    let written = store.iter().filter_map(|s| {
        let (c, _) = s.citation.as_ref().ok()?;
        Some((parse_rfc3339(&c.written_at)?, c.written_at.clone()))
    });
    seedledger_gate::check_clock(now, written)
        .map(|()| now)
        .map_err(|e| e.to_string())
}

/// What is current in the work tree at `root`, computed once per property and per base.
pub struct Currents {
    root: PathBuf,
    specs: HashMap<String, Option<(String, String)>>,
    codes: HashMap<Option<String>, Option<String>>,
}

impl Currents {
    pub fn new(root: &Path) -> Currents {
        Currents {
            root: root.to_path_buf(),
            specs: HashMap::new(),
            codes: HashMap::new(),
        }
    }

    /// `(digest, pin)` of `props/<id>.md` and its fixture now; `None` when either cannot be
    /// read (which retires whatever was bound to them).
    pub fn spec(&mut self, property_id: &str) -> Option<(String, String)> {
        let root = &self.root;
        self.specs
            .entry(property_id.to_string())
            .or_insert_with(|| {
                let spec = engine::load_spec(root, property_id).ok()?;
                let (_, pin) = engine::load_fixture(root, &spec).ok()?;
                Some((spec.digest, pin))
            })
            .clone()
    }

    /// The work tree's code identity against `base` (or `HEAD` without one); `None` when git
    /// cannot tell.
    pub fn code(&mut self, base: Option<&str>) -> Option<String> {
        let root = &self.root;
        self.codes
            .entry(base.map(str::to_string))
            .or_insert_with(|| {
                seedledger_runner::engine::code_identity(root, base)
                    .ok()
                    .map(|c| c.code)
            })
            .clone()
    }

    /// The state of `citation` at `now`.
    pub fn judge(&mut self, citation: &Citation, now: i64) -> CitationState {
        let spec = self.spec(&citation.property_id);
        let code = self.code(citation.code_base.as_deref());
        let current = Current {
            digest: spec.as_ref().map(|(d, _)| d.as_str()),
            pin: spec.as_ref().map(|(_, p)| p.as_str()),
            code: code.as_deref(),
        };
        citation_state(citation, now, &current)
    }
}

/// Seconds since the Unix epoch, now (negative before 1970).
pub fn now() -> i64 {
    let secs = |d: std::time::Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => secs(d),
        Err(before) => -secs(before.duration()).max(1),
    }
}

/// Why a citation is not honoured, for people: `expired at ...`, `retired (spec changed)`.
/// (An invalid file is never judged: its reason is `Stored::citation`'s error.)
pub fn why_not(judged: &Judged) -> String {
    match judged.state {
        CitationState::Expired => format!("expired at {}", judged.citation.expires_at),
        other => other.as_str().to_string(),
    }
}
