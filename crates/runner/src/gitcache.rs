//! git's answers kept between runs, so that a run in an unchanged repository starts no git
//! process: the code identity without a base (`code.rs`) and `HEAD`'s blob at a spec's path
//! (`committed.rs`). A git process costs milliseconds; a short run is mostly git otherwise.
//!
//! The answers must be exactly git's: a stale code identity would be a forged one. So an
//! answer is kept only together with everything it depends on, and given only when all of
//! that is unchanged:
//!
//! * **Where git looks.** The git directory is found by reading files (`.git`, a `.git` file's
//!   `gitdir:` and `commondir`), `HEAD` is resolved by reading files (a loose ref, else
//!   `packed-refs`, or a detached id). Anything unusual is not cached but asked of git: a
//!   `GIT_*` variable in the environment the process started with (`anchor.rs`) other than a
//!   few that only name people or prompts, a bare repository, a symbolic-link `HEAD` or ref, a
//!   ref outside `refs/heads/`, an unborn branch, reftable, a shallow clone, grafts or replace
//!   refs (which change what `rev-list` and `cat-file` see), a configuration file that
//!   mentions `include`, `worktree`, `attributesfile`, `orderfile`, `fsmonitor`, `refstorage`
//!   or `filter` (a clean filter is a program, which may change), a git directory or work
//!   tree owned by another user, a file system boundary on the way up, a git directory on
//!   another device than the work tree, a work tree on a file system not known to be local
//!   with ctimes set by the machine's clock (only ext2/3/4, xfs, btrfs, tmpfs, overlayfs, zfs,
//!   f2fs and bcachefs are: not nfs, fuse, sshfs, smb, 9p, msdos; and on systems other than
//!   Linux, none), a submodule in the index, more than 20,000 tracked files, a directory on
//!   the way to a tracked file that is not a directory (a symbolic link to one: the file's
//!   status would be read through it while git sees the file deleted) or is on another device
//!   than the root (a mount point, with its own clock), a diff header that is
//!   quoted or names two paths (a rename). The first time an identity is computed, git's own `rev-parse`
//!   (git directory, common directory, top level, `HEAD`) must agree with this reading, or
//!   nothing is kept; answers about specs are kept only for a `HEAD` git has confirmed so.
//! * **The environment.** `HOME`, `XDG_CONFIG_HOME`, `PATH` and the allowed `GIT_*`
//!   variables, and the status (`lstat`: device, inode, mode, owner, size, mtime and ctime to
//!   the nanosecond) of the `git` found on `PATH` (a new git may diff otherwise), of every
//!   configuration file git reads (the repository's, `config.worktree`, `~/.gitconfig`, the
//!   XDG one, `/etc/gitconfig` and `<git's prefix>/etc/gitconfig`; absent is a status too)
//!   and of the attributes files (`info/attributes`, the XDG one, `/etc/gitattributes` and
//!   `<git's prefix>/etc/gitattributes`).
//! * **The identity's inputs.** `HEAD`'s commit id, the status of `HEAD`, its ref file,
//!   `packed-refs` and the index, of every tracked file under the root outside the freeze
//!   store (`git ls-files`, asked beside the other commands the first time) and of
//!   `.gitattributes` in every directory from the top level down to each of them and to each
//!   path the diff names (`diff --git a/P b/P`: a path in `HEAD` but not in the index is not
//!   tracked, yet diffs by the work tree's attributes; a new `.gitattributes` changes how
//!   files diff). History (`rev-list`) and blobs are named by ids: unchanged
//!   while `HEAD`'s id is.
//!
//! **Why a status that has not changed means content that has not changed, when the files'
//! clocks are coarse (git's "racy clean" problem).** Every change to a file sets its ctime to
//! the clock's present, and no program can set a ctime back. Before git is started for an
//! answer, the present `T0` is taken (the earlier of the machine's clock and the ctime of a
//! file written then in the git directory, the file system's own clock). The statuses are
//! read after git has answered, and the answer is kept only if every ctime and mtime is more
//! than 2 s older than `T0`. Then no file changed from 2 s before `T0` until its status was
//! read, so git read the contents those statuses describe; and a later change gives a ctime
//! at or after `T0`, which a later lookup sees (a lookup compares for equality: a change is
//! missed only if it leaves device, inode, mode, owner, size, mtime and ctime all exactly as
//! they were). What this assumes is git's own assumption: git too takes a tracked file whose
//! status matches its index entry as unchanged, and it too needs a clock that is not set back
//! (here: by more than 2 s, to the tick) on every file system involved. That is why the work
//! tree and the git directory must share one device of a local file system: one clock sets
//! every ctime, and the file written for `T0` reads it.
//!
//! What is not checked, and where the cache could answer where git would not: an object
//! store corrupted after an answer was kept (git would fail; the kept answer is the one git
//! gave about the same contents), a system configuration or attributes file at a place git
//! was built to read other than `/etc/` and `<prefix>/etc/`, and a `git` on `PATH` that
//! is a script running another git chosen by something other than its own status.
//!
//! With a base revision nothing is cached: `origin/main` moves, and proving its resolution
//! unchanged would mean reading remote refs too; git is asked as before.
//!
//! The answers live in `<git dir>/seedledger/git-answers` (per work tree), a versioned JSON
//! file of a few entries (the newest kept), replaced atomically (a temporary file renamed; not
//! synced: it is only a cache). A file that cannot be read, is not a regular file, is too
//! large or does not parse is ignored, and a file that cannot be written is not written:
//! git is asked, never an error. `SEEDLEDGER_GIT_CACHE=0` in the environment the process
//! started with turns all of this off.

use seedledger_format::sha256_hex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The cache file's format; another version is ignored.
const VERSION: u32 = 2;
/// A larger cache file is ignored.
const MAX_BYTES: u64 = 8 << 20;
/// Entries kept of each kind, the newest first.
const MAX_IDENTITIES: usize = 4;
const MAX_SPECS: usize = 32;
const MAX_VERIFIED: usize = 8;
/// How much older than the moment git was started every file must be for an answer to be kept.
const RACY: Duration = Duration::from_secs(2);

/// `GIT_*` variables that change nothing this cache keeps (authors, prompts, editors, the
/// network).
const HARMLESS: [&str; 16] = [
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "GIT_SSL_NO_VERIFY",
    "GIT_HTTP_USER_AGENT",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_ASKPASS",
    "GIT_EDITOR",
    "GIT_PAGER",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
];

/// Words that make a configuration file too unusual to cache around (lowercase): other files
/// (`include`, `attributesFile`, `diff.orderFile`), another work tree, a file system monitor,
/// reftable, and filters (a clean filter is a program, which may change).
const UNUSUAL_CONFIG: [&str; 7] = [
    "include",
    "worktree",
    "attributesfile",
    "orderfile",
    "fsmonitor",
    "refstorage",
    "filter",
];
/// A work tree with more tracked files is not cached (its statuses would cost what git does).
const MAX_TRACKED: usize = 20_000;

/// The cache file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Answers {
    version: u32,
    /// `(environment key, HEAD id)` pairs whose reading git's `rev-parse` confirmed.
    verified: Vec<(String, String)>,
    identities: Vec<IdentityEntry>,
    specs: Vec<SpecEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct IdentityEntry {
    /// The digest of the environment key, `HEAD` and the status of its files and the index.
    key: String,
    /// The tracked files, relative to the root.
    paths: Vec<String>,
    /// The paths the diff named (relative to the top level): their directories'
    /// `.gitattributes` are probed too (a path in `HEAD` but not in the index is not tracked).
    named: Vec<String>,
    /// The digest of their status (and of the `.gitattributes` probes).
    stats: String,
    code: String,
    /// The digest of the environment key and the index's status: an entry with the same one
    /// lists the same tracked files (`ls-files` is not asked again).
    index: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct SpecEntry {
    /// The environment key and `HEAD`'s id.
    key: String,
    head: String,
    path: String,
    /// The sha256 of `HEAD`'s blob at the path; `None`: not in `HEAD`.
    blob: Option<String>,
}

/// A repository whose answers may be cached, as read from its files now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repo {
    /// The root, resolved (as git sees its directory).
    root: PathBuf,
    /// The root's device.
    root_dev: u64,
    top: PathBuf,
    gitdir: PathBuf,
    common: PathBuf,
    /// `HEAD`'s commit id.
    head: String,
    /// The digest of where git looks and with what (see the module docs).
    env_key: String,
    /// The youngest ctime or mtime among the files the environment key holds.
    env_youngest: SystemTime,
    /// `HEAD`, its ref file, `packed-refs` and the index: their status digest and youngest time.
    head_files: (String, SystemTime),
    /// The environment key and the index's status (see [`IdentityEntry`]'s `index`).
    index_key: String,
    /// The cache file as this reading found it, read once for both lookups of a run
    /// ([`Repo::load`]; a change of it is never compared).
    loaded: Loaded,
}

/// The cache file read once per [`Repo`] (and its clones): a run's two lookups, its spec's
/// and its code identity's, parse it once.
#[derive(Debug, Clone, Default)]
struct Loaded(std::sync::Arc<std::sync::OnceLock<Answers>>);

impl PartialEq for Loaded {
    fn eq(&self, _: &Loaded) -> bool {
        true
    }
}

impl Eq for Loaded {}

/// What the cache knows when it has no identity to give: the tracked files, when an entry
/// was kept with the same index, and whether git has confirmed `HEAD` as the files say it.
#[derive(Debug, Default)]
pub(crate) struct Known {
    pub(crate) paths: Option<Vec<String>>,
    pub(crate) verified: bool,
}

/// A question being asked of git for the cache: the repository as it was read before git
/// started, and that moment ([`Repo::begin`]).
#[derive(Debug)]
pub(crate) struct Pending {
    repo: Repo,
    t0: SystemTime,
}

/// A file's status as key text (see [`stat_text`]) with its youngest time; `-` and no time
/// for a file that is absent.
type Status = (String, Option<SystemTime>);

/// The [`Status`] of a file whose metadata is `m`.
fn status_of(m: &Metadata) -> Status {
    (stat_text(m), Some(youngest_time(m)))
}

/// The [`Status`] of an absent file.
fn absent_status() -> Status {
    ("-".to_string(), None)
}

/// The status of the file at `path` (not followed) as key text, with its youngest time;
/// `-` when there is none. `None`: it cannot be told.
fn status(path: &Path) -> Option<Status> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Some(status_of(&m)),
        Err(e) if absent(&e) => Some(absent_status()),
        Err(_) => None,
    }
}

fn stat_text(m: &Metadata) -> String {
    format!(
        "{} {} {:o} {} {} {}.{} {}.{}",
        m.dev(),
        m.ino(),
        m.mode(),
        m.uid(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    )
}

/// The later of a file's mtime and ctime.
fn youngest_time(m: &Metadata) -> SystemTime {
    let at = |s: i64, ns: i64| {
        let ns = u32::try_from(ns).unwrap_or(0);
        match u64::try_from(s) {
            Ok(s) => SystemTime::UNIX_EPOCH + Duration::new(s, ns),
            // Before 1970: old enough.
            Err(_) => SystemTime::UNIX_EPOCH,
        }
    };
    at(m.mtime(), m.mtime_nsec()).max(at(m.ctime(), m.ctime_nsec()))
}

/// Appends the status of each path to `key` (one line each); the youngest time seen.
fn statuses<'a>(key: &mut String, paths: impl IntoIterator<Item = &'a Path>) -> Option<SystemTime> {
    let mut youngest = SystemTime::UNIX_EPOCH;
    for path in paths {
        youngest = youngest.max(push_status(key, status(path)?));
    }
    Some(youngest)
}

/// Appends a status line as [`statuses`] does; its time (the epoch for a missing file).
fn push_status(key: &mut String, (text, time): Status) -> SystemTime {
    key.push_str(&text);
    key.push('\n');
    time.unwrap_or(SystemTime::UNIX_EPOCH)
}

/// The value of `name` in the environment the process started with.
fn start_var(name: &str) -> Option<&'static OsStr> {
    crate::anchor::start_env()
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
}

/// Whether the cache is off or the environment points git somewhere unusual.
fn environment_unusual() -> bool {
    if start_var("SEEDLEDGER_GIT_CACHE").is_some_and(|v| v == "0") {
        return true;
    }
    crate::anchor::start_env().iter().any(|(name, _)| {
        let name = name.as_encoded_bytes();
        name.starts_with(b"GIT_") && !HARMLESS.iter().any(|h| h.as_bytes() == name)
    })
}

/// The first `git` on the start environment's `PATH`, as git is started (`anchor.rs`).
fn git_binary(path: &OsStr) -> Option<(PathBuf, Metadata)> {
    for dir in std::env::split_paths(path) {
        if dir.as_os_str().is_empty() || !dir.is_absolute() {
            return None;
        }
        let candidate = dir.join("git");
        if let Ok(m) = std::fs::metadata(&candidate)
            && m.is_file()
            && m.mode() & 0o111 != 0
        {
            return Some((candidate, m));
        }
    }
    None
}

/// File systems (`statfs`'s `f_type`) that are local, with ctimes set by the machine's clock:
/// ext2/3/4, xfs, btrfs, tmpfs, overlayfs, zfs, f2fs, bcachefs.
#[cfg(target_os = "linux")]
const LOCAL_FS: [u32; 8] = [
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0x794C_7630,
    0x2FC1_2FC1,
    0xF2F5_2010,
    0xCA45_1A4E,
];

#[cfg(target_os = "linux")]
fn local_fs(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    let mut fs = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `path` is NUL-terminated and `fs` is writable memory of `statfs`'s size.
    if unsafe { libc::statfs(path.as_ptr(), fs.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: `statfs` succeeded, so it filled `fs`.
    let fs = unsafe { fs.assume_init() };
    // The magic numbers are 32-bit; `f_type`'s width and sign vary by architecture.
    #[allow(clippy::unnecessary_cast)]
    let kind = fs.f_type as u32;
    LOCAL_FS.contains(&kind)
}

/// Elsewhere file system types are not told by the same numbers: git is asked.
#[cfg(not(target_os = "linux"))]
fn local_fs(_: &Path) -> bool {
    false
}

/// A commit id as a ref file or `HEAD` holds it: 40 or 64 lowercase hex digits.
fn object_id(text: &str) -> Option<String> {
    let id = text.trim_end_matches('\n');
    ((id.len() == 40 || id.len() == 64)
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then(|| id.to_string())
}

/// Reads a regular file (never through a symbolic link).
fn read_plain(path: &Path) -> Option<Vec<u8>> {
    read_plain_io(path).ok()
}

/// [`read_plain`] telling why not: [`std::io::ErrorKind::NotFound`] (or `NotADirectory`)
/// when there is no such file, another error when there is something else there (a
/// symbolic link, which is not followed; a directory or a special file, opened without
/// waiting or becoming a terminal and let go unread; a file over [`MAX_BYTES`]) or it cannot
/// be read. One `open` (no status read by path first): a short run reads several of these
/// files.
fn read_plain_io(path: &Path) -> std::io::Result<Vec<u8>> {
    read_plain_with_status(path).map(|(bytes, _)| bytes)
}

/// [`read_plain_io`] with the file's status as it was opened (what [`status`] reads of a
/// regular file, without reading it again by path).
fn read_plain_with_status(path: &Path) -> std::io::Result<(Vec<u8>, Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let m = file.metadata()?;
    if !m.is_file() || m.len() > MAX_BYTES {
        return Err(std::io::Error::other("not a plain file"));
    }
    let bytes = seedledger_format::read_to_end_known(&mut file, m.len(), MAX_BYTES)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(std::io::Error::other("not a plain file"));
    }
    Ok((bytes, m))
}

/// The status of the git configuration file at `config` (as [`status`] gives it) when it is
/// absent, or a plain file that sets nothing that makes the cache unsafe
/// ([`UNUSUAL_CONFIG`]); `None` otherwise.
fn usual_config(config: &Path) -> Option<Status> {
    match read_plain_with_status(config) {
        Ok((bytes, m)) => {
            let lower = bytes.to_ascii_lowercase();
            let unusual = UNUSUAL_CONFIG
                .iter()
                .any(|w| lower.windows(w.len()).any(|x| x == w.as_bytes()));
            (!unusual).then(|| status_of(&m))
        }
        Err(e) if absent(&e) => Some(absent_status()),
        Err(_) => None,
    }
}

/// Whether `e` says there is no file at the path.
fn absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// The git directory, common directory and top level for the (resolved) `root`, found
/// as git does (see the module docs), and the root's status; `None` when anything is
/// unusual.
fn discover(root: &Path) -> Option<(PathBuf, PathBuf, PathBuf, Metadata)> {
    let root_status = std::fs::metadata(root).ok()?;
    let dev = root_status.dev();
    for dir in root.ancestors() {
        if dir != root && std::fs::metadata(dir).ok()?.dev() != dev {
            return None;
        }
        let dot = dir.join(".git");
        match std::fs::symlink_metadata(&dot) {
            // (Its `HEAD`, which must be a plain file, is read by `resolve_head`.)
            Ok(m) if m.is_dir() => {
                return Some((dot.clone(), dot, dir.to_path_buf(), root_status));
            }
            Ok(m) if m.is_file() => {
                let text = String::from_utf8(read_plain(&dot)?).ok()?;
                let target = text.strip_prefix("gitdir: ")?.trim_end_matches('\n');
                let gitdir = dir.join(target).canonicalize().ok()?;
                let common = match read_plain(&gitdir.join("commondir")) {
                    Some(c) => {
                        let c = String::from_utf8(c).ok()?;
                        gitdir.join(c.trim_end_matches('\n')).canonicalize().ok()?
                    }
                    None => gitdir.clone(),
                };
                return Some((gitdir, common, dir.to_path_buf(), root_status));
            }
            Ok(_) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
        // A directory that may itself be a git directory (bare, or inside one): asked.
        if ["HEAD", "objects", "refs"]
            .iter()
            .any(|n| std::fs::symlink_metadata(dir.join(n)).is_ok())
        {
            return None;
        }
    }
    None
}

/// [`read_plain`] with the file's status as [`status`] gives it (read from the file opened,
/// never through a symbolic link: what its `lstat` says): no bytes for a file that is absent
/// (its status `-`); `None` when anything else kept it from being read.
fn read_with_status(path: &Path) -> Option<(Option<Vec<u8>>, Status)> {
    match read_plain_with_status(path) {
        Ok((bytes, m)) => Some((Some(bytes), status_of(&m))),
        Err(e) if absent(&e) => Some((None, absent_status())),
        Err(_) => None,
    }
}

/// `HEAD`'s commit id, the statuses of the files it was read from (`HEAD`; for a branch, its
/// ref file and `packed-refs`), each as it was opened, and `packed-refs`' text when there is
/// one.
fn resolve_head(gitdir: &Path, common: &Path) -> Option<(String, Vec<Status>, Option<Vec<u8>>)> {
    let (head_text, head_status) = read_with_status(&gitdir.join("HEAD"))?;
    let text = String::from_utf8(head_text?).ok()?;
    let (packed_text, packed_status) = read_with_status(&common.join("packed-refs"))?;
    let Some(name) = text.strip_prefix("ref: ") else {
        return Some((object_id(&text)?, vec![head_status], packed_text));
    };
    let name = name.trim_end_matches('\n');
    if !name.starts_with("refs/heads/")
        || name
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return None;
    }
    // (Only a missing ref file sends git to `packed-refs`: another error, a component of the
    // name that is a file among them, makes git fail, so nothing is kept.)
    let (loose_text, loose_status) = match read_plain_with_status(&common.join(name)) {
        Ok((bytes, m)) => (Some(bytes), status_of(&m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, absent_status()),
        Err(_) => return None,
    };
    let id = match loose_text {
        Some(bytes) => object_id(std::str::from_utf8(&bytes).ok()?)?,
        None => {
            let packed = std::str::from_utf8(packed_text.as_deref()?).ok()?;
            packed
                .lines()
                .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
                .find_map(|l| {
                    let (id, r) = l.split_once(' ')?;
                    (r == name).then(|| object_id(id)).flatten()
                })?
        }
    };
    Some((
        id,
        vec![head_status, loose_status, packed_status],
        packed_text,
    ))
}

impl Repo {
    /// The repository holding `dir`, as its files say now, when its answers may be cached.
    pub(crate) fn open(dir: &Path) -> Option<Repo> {
        Repo::open_resolved(dir.canonicalize().ok()?)
    }

    /// [`Repo::open`] of a directory already resolved (`canonicalize`d).
    pub(crate) fn open_resolved(root: PathBuf) -> Option<Repo> {
        if environment_unusual() {
            return None;
        }
        let (gitdir, common, top, root_status) = discover(&root)?;
        // Each directory's status read once (the git directory is often the common one, the
        // top level the root).
        let mut read: Vec<(PathBuf, Metadata)> = Vec::with_capacity(4);
        read.push((root.clone(), root_status));
        let mut meta = |path: &Path| -> Option<Metadata> {
            if let Some((_, m)) = read.iter().find(|(p, _)| p == path) {
                return Some(m.clone());
            }
            let m = std::fs::metadata(path).ok()?;
            read.push((path.to_path_buf(), m.clone()));
            Some(m)
        };
        let root_dev = meta(&root)?.dev();
        for other in [&gitdir, &common] {
            if meta(other)?.dev() != root_dev {
                return None;
            }
        }
        if !local_fs(&root) {
            return None;
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        for owned in [&top, &gitdir, &common] {
            if meta(owned)?.uid() != euid {
                return None;
            }
        }
        for unusual in ["reftable", "shallow", "info/grafts", "refs/replace"] {
            if std::fs::symlink_metadata(common.join(unusual)).is_ok() {
                return None;
            }
        }
        let (head, ref_statuses, packed) = resolve_head(&gitdir, &common)?;
        if packed.is_some_and(|p| p.windows(14).any(|w| w == b" refs/replace/")) {
            return None;
        }
        let home = PathBuf::from(start_var("HOME")?);
        let xdg = match start_var("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
            Some(x) => PathBuf::from(x),
            None => home.join(".config"),
        };
        let path_var = start_var("PATH")?;
        let (git, git_followed) = git_binary(path_var)?;
        let prefix = git.canonicalize().ok()?;
        let prefix = prefix.parent()?.parent()?;
        let configs = [
            common.join("config"),
            gitdir.join("config.worktree"),
            home.join(".gitconfig"),
            xdg.join("git/config"),
            PathBuf::from("/etc/gitconfig"),
            prefix.join("etc/gitconfig"),
        ];
        // Their statuses as they were read (each line of the key as `statuses` writes it).
        let config_statuses: Vec<_> = configs
            .iter()
            .map(|c| usual_config(c))
            .collect::<Option<_>>()?;
        let mut key = format!("seedledger-git-answers-v{VERSION}\n");
        for part in [&root, &top, &gitdir, &common, &git] {
            key.push_str(part.to_str()?);
            key.push('\n');
        }
        for name in ["HOME", "XDG_CONFIG_HOME", "PATH"].iter().chain(&HARMLESS) {
            let value = start_var(name).map(|v| v.to_string_lossy().into_owned());
            key.push_str(&format!("{name}={value:?}\n"));
        }
        let mut others = vec![common.join("info/attributes")];
        if gitdir != common {
            others.push(gitdir.join("info/attributes"));
        }
        others.extend([
            xdg.join("git/attributes"),
            PathBuf::from("/etc/gitattributes"),
            prefix.join("etc/gitattributes"),
        ]);
        let configs_youngest = config_statuses
            .into_iter()
            .map(|status| push_status(&mut key, status))
            .max()
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let env_youngest = statuses(
            &mut key,
            others.iter().map(PathBuf::as_path).chain([git.as_path()]),
        )?
        .max(configs_youngest)
        .max(youngest_time(&git_followed));
        key.push_str(&stat_text(&git_followed));
        let env_key = sha256_hex(key.as_bytes());
        let mut files = format!("{env_key}\n{head}\n");
        let index = gitdir.join("index");
        let mut index_text = format!("{env_key}\n");
        let head_youngest = ref_statuses
            .into_iter()
            .map(|status| push_status(&mut files, status))
            .max()
            .unwrap_or(SystemTime::UNIX_EPOCH)
            .max(statuses(&mut index_text, [index.as_path()])?);
        files.push_str(&index_text);
        Some(Repo {
            root,
            root_dev,
            top,
            gitdir,
            common,
            head,
            env_key,
            env_youngest,
            head_files: (sha256_hex(files.as_bytes()), head_youngest),
            index_key: sha256_hex(index_text.as_bytes()),
            loaded: Loaded::default(),
        })
    }

    /// The cached code identity (without a base), when every status it depends on is as it
    /// was; else what is known towards keeping git's answer.
    pub(crate) fn identity(&self) -> Result<String, Known> {
        let answers = self.loaded();
        let entry = answers
            .identities
            .iter()
            .find(|e| e.key == self.head_files.0);
        if let Some(entry) = entry
            && let Some((stats, _)) = self.tracked_statuses(&entry.paths, &entry.named)
            && stats == entry.stats
        {
            return Ok(entry.code.clone());
        }
        Err(Known {
            paths: answers
                .identities
                .iter()
                .find(|e| e.index == self.index_key)
                .map(|e| e.paths.clone()),
            verified: self.verified(answers),
        })
    }

    /// The cached answer for `HEAD`'s blob at `rel`: `Some(Some(sha256))`, `Some(None)` (not
    /// in `HEAD`), or `None` (not known).
    pub(crate) fn spec(&self, rel: &str) -> Option<Option<String>> {
        let answers = self.loaded();
        if !self.verified(answers) {
            return None;
        }
        answers
            .specs
            .iter()
            .find(|e| e.key == self.env_key && e.head == self.head && e.path == rel)
            .map(|e| e.blob.clone())
    }

    /// Notes the present (see the module docs) before git is started for an answer to keep.
    pub(crate) fn begin(self) -> Option<Pending> {
        let before = SystemTime::now();
        let dir = self.cache_dir()?;
        let stamp = dir.join("stamp");
        write_new(&stamp, b"t0\n")?;
        let on_disk = youngest_time(&std::fs::symlink_metadata(&stamp).ok()?);
        Some(Pending {
            repo: self,
            t0: before.min(on_disk),
        })
    }

    fn verified(&self, answers: &Answers) -> bool {
        answers
            .verified
            .iter()
            .any(|(k, h)| *k == self.env_key && *h == self.head)
    }

    /// The status digest of the tracked files `paths` (relative to the root) and of the
    /// `.gitattributes` of every directory from the top level down to them and to the paths
    /// the diff `named` (relative to the top level); the youngest time. `None` also when a
    /// directory on the way to a tracked file is not a directory (a symbolic link to one:
    /// the file's status would be read through it while git sees the file deleted) or is on
    /// another device than the root, or one on the way to a named path is neither a
    /// directory nor missing.
    fn tracked_statuses(&self, paths: &[String], named: &[String]) -> Option<(String, SystemTime)> {
        let mut dirs = BTreeSet::new();
        for dir in self.root.ancestors() {
            dirs.insert(dir.to_path_buf());
            if dir == self.top {
                break;
            }
        }
        let on_the_way = directories(&self.root, paths);
        for dir in &on_the_way {
            let m = std::fs::symlink_metadata(dir).ok()?;
            if !m.is_dir() || m.dev() != self.root_dev {
                return None;
            }
        }
        let elsewhere = directories(&self.top, named);
        for dir in elsewhere.difference(&on_the_way) {
            match std::fs::symlink_metadata(dir) {
                Ok(m) if m.is_dir() => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                _ => return None,
            }
        }
        dirs.extend(on_the_way);
        dirs.extend(elsewhere);
        let mut text = String::new();
        let files: Vec<PathBuf> = paths.iter().map(|p| self.root.join(p)).collect();
        let probes: Vec<PathBuf> = dirs.iter().map(|d| d.join(".gitattributes")).collect();
        let youngest = statuses(&mut text, files.iter().chain(&probes).map(PathBuf::as_path))?;
        Some((sha256_hex(text.as_bytes()), youngest))
    }

    /// `<git dir>/seedledger`, made when missing; `None` when it is not a plain directory.
    fn cache_dir(&self) -> Option<PathBuf> {
        let dir = self.gitdir.join("seedledger");
        if std::fs::symlink_metadata(&dir).is_err() {
            let _ = std::fs::create_dir(&dir);
        }
        std::fs::symlink_metadata(&dir)
            .ok()?
            .is_dir()
            .then_some(dir)
    }

    /// The cache file as this reading first loaded it (see [`Loaded`]).
    fn loaded(&self) -> &Answers {
        self.loaded.0.get_or_init(|| self.load())
    }

    /// The cache file as it is, or empty (see the module docs).
    fn load(&self) -> Answers {
        let path = self.gitdir.join("seedledger").join("git-answers");
        let dir_is_plain =
            std::fs::symlink_metadata(path.parent().unwrap_or(&path)).is_ok_and(|m| m.is_dir());
        dir_is_plain
            .then(|| read_plain(&path))
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<Answers>(&bytes).ok())
            .filter(|a| a.version == VERSION)
            .unwrap_or_default()
    }

    /// Changes the cache file with `change` and replaces it atomically; failures are ignored.
    fn save(&self, change: impl FnOnce(&mut Answers)) {
        let mut answers = self.load();
        answers.version = VERSION;
        change(&mut answers);
        answers.identities.truncate(MAX_IDENTITIES);
        answers.specs.truncate(MAX_SPECS);
        answers.verified.truncate(MAX_VERIFIED);
        let Some(dir) = self.cache_dir() else {
            return;
        };
        let Ok(bytes) = serde_json::to_vec(&answers) else {
            return;
        };
        let tmp = dir.join(format!("git-answers.{}.tmp", std::process::id()));
        if write_new(&tmp, &bytes).is_none()
            || std::fs::rename(&tmp, dir.join("git-answers")).is_err()
        {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

impl Pending {
    /// Keeps the code identity `code` git gave (without a base) from the diff `diff`, with
    /// the tracked files `ls_files` (`git ls-files -z --stage`; `None`: those `known`) and
    /// git's own `rev-parse --absolute-git-dir --git-common-dir --show-toplevel HEAD` (`None`:
    /// confirmed before), when all is as the module docs require.
    pub(crate) fn store_identity(
        self,
        (ls_files, rev_parse): (Option<&[u8]>, Option<&[u8]>),
        known: Known,
        (code, diff): (&str, &[u8]),
    ) {
        let Some(now) = Repo::open(&self.repo.root) else {
            return;
        };
        let confirmed = match rev_parse {
            Some(rev_parse) => self.confirmed(rev_parse),
            None => now.verified(&now.load()),
        };
        if now != self.repo || !confirmed {
            return;
        }
        let paths = match (ls_files, known.paths) {
            (Some(ls_files), _) => match tracked(ls_files) {
                Some(paths) => paths,
                None => return,
            },
            (None, Some(paths)) => paths,
            (None, None) => return,
        };
        let Some(named) = diff_names(diff) else {
            return;
        };
        if paths.len() + named.len() > MAX_TRACKED {
            return;
        }
        let Some((stats, youngest)) = now.tracked_statuses(&paths, &named) else {
            return;
        };
        if !self.old_enough(youngest.max(now.env_youngest).max(now.head_files.1)) {
            return;
        }
        let entry = IdentityEntry {
            key: now.head_files.0.clone(),
            paths,
            named,
            stats,
            code: code.to_string(),
            index: now.index_key.clone(),
        };
        now.save(|a| {
            a.identities.retain(|e| e.key != entry.key);
            a.identities.insert(0, entry);
            let pair = (now.env_key.clone(), now.head.clone());
            a.verified.retain(|v| *v != pair);
            a.verified.insert(0, pair);
        });
    }

    /// Keeps `HEAD`'s blob at `rel` (its sha256, or `None`: not in `HEAD`) as git gave it,
    /// when `HEAD` has been confirmed (see the module docs) and its files did not change
    /// while git was asked.
    pub(crate) fn store_spec(self, rel: &str, blob: Option<String>) {
        let Some(now) = Repo::open(&self.repo.root) else {
            return;
        };
        if now != self.repo || !self.old_enough(now.env_youngest.max(now.head_files.1)) {
            return;
        }
        let answers = now.load();
        if !now.verified(&answers) {
            return;
        }
        now.save(|a| {
            a.specs
                .retain(|e| !(e.key == now.env_key && e.head == now.head && e.path == rel));
            a.specs.insert(
                0,
                SpecEntry {
                    key: now.env_key.clone(),
                    head: now.head.clone(),
                    path: rel.to_string(),
                    blob,
                },
            );
        });
    }

    fn old_enough(&self, youngest: SystemTime) -> bool {
        youngest + RACY < self.t0
    }

    /// Whether git's `rev-parse` says what the files said.
    fn confirmed(&self, rev_parse: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(rev_parse) else {
            return false;
        };
        let lines: Vec<&str> = text.lines().collect();
        let [gitdir, common, top, head] = lines[..] else {
            return false;
        };
        let resolved = |p: &str| self.repo.root.join(p).canonicalize().ok();
        resolved(gitdir).as_ref() == Some(&self.repo.gitdir)
            && resolved(common).as_ref() == Some(&self.repo.common)
            && resolved(top).as_ref() == Some(&self.repo.top)
            && head == self.repo.head
    }
}

/// The tracked files `git ls-files -z --stage` lists, once each; `None` when one is not UTF-8
/// or is a submodule (whose state is not in its status).
fn tracked(ls_files: &[u8]) -> Option<Vec<String>> {
    let mut paths: Vec<String> = Vec::new();
    for record in ls_files.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let (mode, path) = std::str::from_utf8(record).ok()?.split_once('\t')?;
        if mode.starts_with("160000") {
            return None;
        }
        if paths.last().is_none_or(|p| p != path) {
            paths.push(path.to_string());
        }
    }
    Some(paths)
}

/// The directories of `paths` (relative to `base`, which is one of them), once each.
fn directories(base: &Path, paths: &[String]) -> BTreeSet<PathBuf> {
    let mut dirs = BTreeSet::new();
    for path in paths {
        dirs.extend(Path::new(path).ancestors().skip(1).map(|d| base.join(d)));
    }
    dirs
}

/// The paths `git diff` names in its `diff --git a/P b/P` headers, once each; `None` when a
/// header is quoted or not of that form (a rename, other prefixes), or not UTF-8.
fn diff_names(diff: &[u8]) -> Option<Vec<String>> {
    let mut names = BTreeSet::new();
    for line in diff.split(|&b| b == b'\n') {
        let Some(rest) = line.strip_prefix(b"diff --git ") else {
            continue;
        };
        let rest = std::str::from_utf8(rest).ok()?;
        let half = rest.len().checked_sub(5)?;
        if half % 2 != 0 {
            return None;
        }
        let (a, b) = rest.split_at_checked(half / 2 + 2)?;
        let (a, b) = (a.strip_prefix("a/")?, b.strip_prefix(" b/")?);
        if a != b || a.is_empty() {
            return None;
        }
        names.insert(a.to_string());
    }
    Some(names.into_iter().collect())
}

/// Writes a new file at `path` (whatever was there removed first; never through a link).
fn write_new(path: &Path, bytes: &[u8]) -> Option<()> {
    use std::io::Write;
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .ok()?;
    file.write_all(bytes).ok()
}
