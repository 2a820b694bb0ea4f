//! The freeze store as the command line reads it: the citation files under
//! `props/freezes/` (or `--freezes DIR`), and what is current for each — the spec's digest,
//! the fixture's pin, the work tree's code identity against the citation's own base. The
//! comparisons are the gate's (`citation_state`); this module only reads files and asks git.

use seedledger_format::{Citation, sha256_hex};
use seedledger_gate::{CitationState, Current, citation_state};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The largest citation file read (a citation is a few hundred bytes).
const MAX_CITATION_BYTES: u64 = 64 * 1024;

/// One file of the store.
#[derive(Debug, Clone)]
pub struct Stored {
    pub path: PathBuf,
    /// The citation, or why the file is not one (never honoured).
    pub citation: Result<Citation, String>,
}

/// A stored citation with its state.
#[derive(Debug, Clone)]
pub struct Judged {
    pub path: PathBuf,
    pub citation: Citation,
    pub state: CitationState,
}

/// The store's directory: `--freezes DIR`, else `ROOT/props/freezes`.
pub fn store_dir(root: &Path, given: Option<&Path>) -> PathBuf {
    match given {
        Some(dir) => dir.to_path_buf(),
        None => root.join(seedledger_runner::FREEZE_STORE),
    }
}

/// Every `*.json` file of the store, sorted by name. A store that does not exist is empty;
/// one that cannot be listed is an error.
pub fn read_store(dir: &Path) -> Result<Vec<Stored>, String> {
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
    Ok(paths
        .into_iter()
        .map(|path| {
            let citation = read_citation(&path);
            Stored { path, citation }
        })
        .collect())
}

/// Reads one citation file: not through a symlink, at most [`MAX_CITATION_BYTES`], strictly.
pub fn read_citation(path: &Path) -> Result<Citation, String> {
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
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    Citation::parse(&text).map_err(|e| e.to_string())
}

/// The file name a new citation gets in the store: `<property>.<written_at>.<8 hex>.json`,
/// so that citations of one property sort by age and never collide.
pub fn file_name(citation: &Citation, text: &str) -> String {
    let stamp: String = citation
        .written_at
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    format!(
        "{}.{stamp}.{}.json",
        citation.property_id,
        &sha256_hex(text.as_bytes())[..8]
    )
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
                let spec = seedledger_runner::load_spec(root, property_id).ok()?;
                let (_, pin) = seedledger_runner::load_fixture(root, &spec).ok()?;
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
                seedledger_runner::code_identity(root, base)
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

/// Seconds since the Unix epoch, now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Why a citation is not honoured, for people: `expired at ...`, `retired (spec changed)`.
pub fn why_not(judged: &Judged) -> String {
    match judged.state {
        CitationState::Expired => format!("expired at {}", judged.citation.expires_at),
        other => other.as_str().to_string(),
    }
}
