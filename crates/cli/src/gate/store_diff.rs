//! What a patch changes about freezing (`gate freezes --base REV`, a step of `ci gate`): the
//! citations of the freeze store and the lines of the trust file that the work tree adds,
//! edits or removes against the base revision, each added citation authenticated against the
//! *base's* trust file (a patch cannot vouch for its own citation by adding a key). An edited
//! or removed citation, an added one that does not verify or names evidence another file
//! names, or an unchanged one the base refuses and the patch's trust file would honour, fails
//! the job: a citation is never edited, one piece of evidence backs one citation, and only the
//! gate, holding a citer key the base trusts, mints one.

use anyhow::{Context, bail};
use seedledger_format::{ExitStatus, TRUST_FILE, TrustedKeys};
use seedledger_gate::Authenticity;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// One change to the freeze store or the trust file, as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The line printed (`citation added: ...`, `trust file: line added: ...`).
    pub line: String,
    /// Whether this change fails the job.
    pub fails: bool,
}

/// `gate freezes --base REV`: prints every change of the store (`store`, relative to `root`)
/// and of the trust file against `base`; exit 1 when one fails the job, 0 otherwise, 2 when
/// git or a file cannot be read.
pub fn run(root: &Path, store: &Path, base: &str) -> ExitStatus {
    match changes(root, store, base) {
        Ok(changes) => {
            if changes.is_empty() {
                outln!("the patch changes no citation and no trust-file line against `{base}`");
            }
            for c in &changes {
                outln!("{}", c.line);
            }
            let failing = changes.iter().filter(|c| c.fails).count();
            if failing > 0 {
                outln!(
                    "{failing} change(s) to the freeze store fail this job: a citation is never edited or removed by a patch, and only one signed by a citer key of the base's trust file may be added"
                );
                ExitStatus::No
            } else {
                ExitStatus::Success
            }
        }
        Err(e) => {
            errln!("error: {e:#}");
            ExitStatus::Error
        }
    }
}

/// The changes, citations first (by file name), then the trust file's lines.
pub fn changes(root: &Path, store: &Path, base: &str) -> anyhow::Result<Vec<Change>> {
    let rel = store.strip_prefix(root).unwrap_or(store);
    if rel.is_absolute() {
        bail!(
            "the freeze store `{}` is not under the workspace root `{}`: git cannot tell what the patch changed in it",
            store.display(),
            root.display()
        );
    }
    let base_commit = git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{base}^{{commit}}"),
        ],
    )
    .ok()
    .map(|out| String::from_utf8_lossy(&out).trim().to_string())
    .filter(|c| !c.is_empty())
    .with_context(|| {
        format!(
            "--base `{base}` is not a commit of the repository at `{}`",
            root.display()
        )
    })?;
    let base_trust = base_file(root, &base_commit, Path::new(TRUST_FILE))?;
    let head_trust = match std::fs::read(root.join(TRUST_FILE)) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read `{TRUST_FILE}`")),
    };
    let keys = |bytes: &Option<Vec<u8>>, whose: &str| -> anyhow::Result<Option<TrustedKeys>> {
        bytes
            .as_deref()
            .map(|b| TrustedKeys::parse_bytes(b).with_context(|| format!("{whose} `{TRUST_FILE}`")))
            .transpose()
    };
    let trusts = Trusts {
        base: keys(&base_trust, &format!("the base's ({base})"))?,
        head: keys(&head_trust, "the work tree's")?,
    };
    let before = base_citations(root, &base_commit, rel)?;
    let after = tree_citations(store)?;
    let mut out = citation_changes(rel, &before, &after, &trusts);
    out.extend(trust_lines(base_trust.as_deref(), head_trust.as_deref()));
    Ok(out)
}

/// The keys of the base's trust file and of the work tree's (`None`: no trust file).
struct Trusts {
    base: Option<TrustedKeys>,
    head: Option<TrustedKeys>,
}

/// Citations added, edited or removed; and unchanged ones the base's trust file refuses but
/// the work tree's honours (a key put back, a trust file removed): a patch does not bring back
/// a citation its base refuses.
fn citation_changes(
    rel: &Path,
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Result<Vec<u8>, String>>,
    trusts: &Trusts,
) -> Vec<Change> {
    let shown = |name: &str| rel.join(name).display().to_string();
    let evidence: Vec<(String, Evidence)> = after
        .iter()
        .map(|(name, text)| {
            let named = text
                .as_deref()
                .map_or((None, None), crate::common::store::named_evidence);
            (name.clone(), named)
        })
        .collect();
    let mut out = Vec::new();
    for (name, text) in after {
        match (before.get(name), text) {
            (Some(old), Ok(now)) if old == now => {
                let text = String::from_utf8_lossy(now);
                let judge = |keys: Option<&TrustedKeys>| {
                    seedledger_gate::authenticate_citation(&text, name, keys)
                };
                if let (Err(why), Ok(_)) = (judge(trusts.base.as_ref()), judge(trusts.head.as_ref())) {
                    out.push(Change {
                        line: format!(
                            "citation revived: {}: the base's trust file refuses it ({why}), the patch's would honour it",
                            shown(name)
                        ),
                        fails: true,
                    });
                }
            }
            (Some(_), _) => out.push(Change {
                line: format!(
                    "citation edited: {}: a citation is never edited (a new one needs new evidence)",
                    shown(name)
                ),
                fails: true,
            }),
            (None, _) => {
                let mut change = added(&shown(name), name, text, trusts.base.as_ref());
                if let Some((other, id)) = cited_elsewhere(name, &evidence) {
                    change.line.push_str(&format!(
                        "; and witness `{id}` is already cited by {}: one piece of evidence backs one citation",
                        shown(&other)
                    ));
                    change.fails = true;
                }
                out.push(change);
            }
        }
    }
    for name in before.keys().filter(|n| !after.contains_key(*n)) {
        out.push(Change {
            line: format!(
                "citation removed: {}: a patch does not remove citations (an expired or retired one is no longer honoured anyway)",
                shown(name)
            ),
            fails: true,
        });
    }
    out
}

/// Another file of the store naming a `fail_id` or `pass_id` that file `name` names, with
/// the id (`evidence`: every file of the work tree's store and what it names, read leniently,
/// valid or not, as `gate cite` counts them).
fn cited_elsewhere(name: &str, evidence: &[(String, Evidence)]) -> Option<(String, String)> {
    let (fail_id, pass_id) = &evidence.iter().find(|(n, _)| n == name)?.1;
    let others: Vec<seedledger_gate::CitedEvidence<'_>> = evidence
        .iter()
        .filter(|(other, _)| other != name)
        .map(|(file, (f, p))| seedledger_gate::CitedEvidence {
            file,
            fail_id: f.as_deref(),
            pass_id: p.as_deref(),
        })
        .collect();
    // An id this file does not name matches nothing (an empty id is no witness id).
    let id = |id: &Option<String>| id.clone().unwrap_or_default();
    seedledger_gate::already_cited(&others, &id(fail_id), &id(pass_id))
        .filter(|(_, id)| !id.is_empty())
        .map(|(file, id)| (file.to_string(), id))
}

/// The `fail_id` and `pass_id` a file names.
type Evidence = (Option<String>, Option<String>);

/// An added citation, authenticated against the base's trust file.
fn added(
    shown: &str,
    name: &str,
    text: &Result<Vec<u8>, String>,
    base_keys: Option<&TrustedKeys>,
) -> Change {
    let text = match text {
        Ok(bytes) => String::from_utf8_lossy(bytes),
        Err(why) => {
            return Change {
                line: format!("citation added: {shown}: does not verify: {why}"),
                fails: true,
            };
        }
    };
    match seedledger_gate::authenticate_citation(&text, name, base_keys) {
        Ok((_, Authenticity::Signed { key_id })) => Change {
            line: format!(
                "citation added: {shown}: verifies (signed by citer key `{key_id}` of the base's trust file)"
            ),
            fails: false,
        },
        Ok((_, Authenticity::Unauthenticated)) => Change {
            line: format!(
                "citation added: {shown}: unauthenticated citation (the base has no `{TRUST_FILE}`: nothing says who may cite)"
            ),
            fails: false,
        },
        Err(why) => Change {
            line: format!("citation added: {shown}: does not verify: {why}"),
            fails: true,
        },
    }
}

/// The trust file's lines the patch adds or removes (blank lines left out).
fn trust_lines(before: Option<&[u8]>, after: Option<&[u8]>) -> Vec<Change> {
    let lines = |bytes: Option<&[u8]>| -> Vec<String> {
        String::from_utf8_lossy(bytes.unwrap_or_default())
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (old, new) = (lines(before), lines(after));
    let mut out = Vec::new();
    match (before.is_some(), after.is_some()) {
        (false, true) => out.push(Change {
            line: format!("trust file added: `{TRUST_FILE}`: from now on only signed citations and signed remote rows count"),
            fails: false,
        }),
        (true, false) => out.push(Change {
            line: format!("trust file removed: `{TRUST_FILE}`: citations and runner roles become unauthenticated"),
            fails: false,
        }),
        _ => {}
    }
    for l in new.iter().filter(|l| !old.contains(l)) {
        let citer = serde_json::from_str::<serde_json::Value>(l)
            .is_ok_and(|v| v.get("role").and_then(|r| r.as_str()) == Some("citer"));
        out.push(Change {
            line: format!(
                "trust file: line added: {l}{}",
                if citer {
                    "  (widens who may cite: review it as code; citations it signs count once it is in the base)"
                } else {
                    ""
                }
            ),
            fails: false,
        });
    }
    for l in old.iter().filter(|l| !new.contains(l)) {
        out.push(Change {
            line: format!("trust file: line removed: {l}"),
            fails: false,
        });
    }
    out
}

/// `*.json` files of the store in the work tree, by name (lossy for a name that is not UTF-8,
/// which then never matches a citation's): the bytes of a regular file, or why the file is
/// never honoured (a symbolic link, not a regular file), as `prop run` reads the store.
fn tree_citations(store: &Path) -> anyhow::Result<BTreeMap<String, Result<Vec<u8>, String>>> {
    let mut out = BTreeMap::new();
    let entries = match std::fs::read_dir(store) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).with_context(|| format!("cannot list `{}`", store.display())),
    };
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let meta = std::fs::symlink_metadata(&path)
            .with_context(|| format!("cannot read `{}`", path.display()))?;
        let read =
            if meta.file_type().is_symlink() {
                Err("a symbolic link, never honoured".to_string())
            } else if !meta.is_file() {
                Err("not a regular file, never honoured".to_string())
            } else {
                Ok(std::fs::read(&path)
                    .with_context(|| format!("cannot read `{}`", path.display()))?)
            };
        out.insert(name, read);
    }
    Ok(out)
}

/// `*.json` files directly under `rel` in the base commit, by name, read in one `git cat-file
/// --batch`.
fn base_citations(
    root: &Path,
    commit: &str,
    rel: &Path,
) -> anyhow::Result<BTreeMap<String, Vec<u8>>> {
    let mut dir = rel.display().to_string();
    if !dir.ends_with('/') {
        dir.push('/');
    }
    let listing = git(root, &["ls-tree", "-z", commit, "--", &dir])?;
    let mut blobs = Vec::new();
    for entry in listing.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        let mut meta = meta.split(' ');
        let (_, kind, id) = (meta.next(), meta.next(), meta.next());
        let name = path.rsplit('/').next().unwrap_or(path);
        if kind == Some("blob") && name.ends_with(".json") {
            blobs.push((name.to_string(), id.unwrap_or_default().to_string()));
        }
    }
    let texts = cat_blobs(root, blobs.iter().map(|(_, id)| id.as_str()))?;
    Ok(blobs.into_iter().map(|(n, _)| n).zip(texts).collect())
}

/// One file of the base commit, or `None` when the base has none.
fn base_file(root: &Path, commit: &str, rel: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    // `./`: the path is relative to the workspace root (`-C root`), which may lie below the
    // repository's top (`<rev>:<path>` alone is read from the top).
    let spec = format!("{commit}:./{}", rel.display());
    match git(root, &["cat-file", "-e", &spec]) {
        Ok(_) => git(root, &["cat-file", "blob", &spec]).map(Some),
        Err(_) => Ok(None),
    }
}

/// The bytes of each blob, in order, through one `git cat-file --batch`.
fn cat_blobs<'a>(root: &Path, ids: impl Iterator<Item = &'a str>) -> anyhow::Result<Vec<Vec<u8>>> {
    let ids: Vec<&str> = ids.collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot run git")?;
    let mut stdin = child.stdin.take().context("git's stdin")?;
    let request: String = ids.iter().map(|id| format!("{id}\n")).collect();
    // The request is written from a thread: git answers while it reads.
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let mut out = BufReader::new(child.stdout.take().context("git's stdout")?);
    let mut texts = Vec::with_capacity(ids.len());
    for id in &ids {
        let mut header = String::new();
        out.read_line(&mut header)?;
        let size: usize = header
            .split(' ')
            .nth(2)
            .and_then(|s| s.trim().parse().ok())
            .with_context(|| format!("git cat-file could not read blob {id}: {}", header.trim()))?;
        let mut bytes = vec![0; size + 1];
        out.read_exact(&mut bytes)?;
        bytes.pop();
        texts.push(bytes);
    }
    let _ = writer.join();
    let _ = child.wait();
    Ok(texts)
}

fn git(root: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}
