//! Authenticated runner roles, command-line side: the trust file the gate reads
//! (`props/trusted-runners.jsonl`, format in `seedledger_format::TrustedKeys`), the remote
//! runner's secret key that `prop run|replay|reproduce` read from `$SEEDLEDGER_RUNNER_KEY`,
//! and `cargo xtask keys generate|list`.
//!
//! The checks themselves are `seedledger_gate::authenticate` (pure); this module reads the
//! files and the environment, and says in every decision whether roles were authenticated.

use crate::gate::read_bounded;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use seedledger_format::{
    ExitStatus, KeyRole, MAX_TRUST_FILE_BYTES, Runner, RunnerKey, TRUST_FILE, TrustedKey,
    TrustedKeys, WitnessLine, public_key_hex, write_atomic,
};
use std::path::{Path, PathBuf};

/// The environment variable that holds the remote runner's secret key (a CI secret).
pub const RUNNER_KEY_ENV: &str = "SEEDLEDGER_RUNNER_KEY";

/// Whether witness rows are authenticated, and by which keys: the repository's trust file,
/// when it has one.
#[derive(Debug)]
pub struct Roles {
    trust: Option<(PathBuf, TrustedKeys)>,
}

impl Roles {
    /// Reads `ROOT/props/trusted-runners.jsonl`. No file: roles are unauthenticated. A file
    /// that cannot be read (a link, too large, bad JSON, a bad key) is an error naming the
    /// file, the line and the field — never a silent fall back to unauthenticated.
    pub fn load(root: &Path) -> anyhow::Result<Roles> {
        let path = root.join(TRUST_FILE);
        if let Err(e) = std::fs::symlink_metadata(&path)
            && e.kind() == std::io::ErrorKind::NotFound
        {
            return Ok(Roles { trust: None });
        }
        refuse_loose(&path, "trust file", 0o022, "go-w")?;
        let bytes = read_bounded(&path, "trust file", MAX_TRUST_FILE_BYTES)?;
        let keys = TrustedKeys::parse_bytes(&bytes)
            .with_context(|| format!("trust file `{}`", path.display()))?;
        Ok(Roles {
            trust: Some((path, keys)),
        })
    }

    /// The trust file's keys, when the repository has one.
    pub fn keys(&self) -> Option<&TrustedKeys> {
        self.trust.as_ref().map(|(_, keys)| keys)
    }

    /// The line as `seedledger_gate::authenticate_line` admits it under the trust file
    /// (`text`: its bytes), in place; the line is left as it is when roles are not
    /// authenticated. (Run on the threads that read a witness file.)
    pub fn authenticate_in_place(&self, text: &[u8], line: &mut WitnessLine) {
        if let Some((_, keys)) = &self.trust {
            *line = seedledger_gate::authenticate_line(Some(text), line.clone(), keys);
        }
    }

    /// `authenticated` or `unauthenticated`: the `roles` field of the JSON output.
    pub fn label(&self) -> &'static str {
        if self.trust.is_some() {
            "authenticated"
        } else {
            "unauthenticated"
        }
    }

    /// The note every decision prints on stderr.
    pub fn note(&self) -> String {
        match &self.trust {
            Some((path, keys)) => {
                let remote: Vec<String> = keys
                    .with_role(KeyRole::Remote)
                    .map(|k| format!("`{}`", k.key_id))
                    .collect();
                format!(
                    "note: runner roles are authenticated by `{}`: a remote row counts only when signed by a declared remote key ({})",
                    path.display(),
                    if remote.is_empty() {
                        "none is declared, so no remote row counts".to_string()
                    } else {
                        remote.join(", ")
                    }
                )
            }
            None => format!(
                "note: runner roles are unauthenticated: no `{TRUST_FILE}` declares trusted runner keys, so a row's `runner` is a claim anyone can edit (`cargo xtask keys generate --role remote` sets keys up)"
            ),
        }
    }

    /// The declared key of `key`'s public half, if any.
    fn declared(&self, key: &RunnerKey) -> Option<&TrustedKey> {
        self.trust
            .as_ref()
            .and_then(|(_, keys)| keys.find(&key.public_key()))
    }
}

/// The key the rows of a run in role `role` are signed with: `$SEEDLEDGER_RUNNER_KEY` for a
/// remote run, nothing for a local one (a local run never signs). `Err` when the variable is
/// set but is not a key (the value is never printed). Warns on stderr when a remote run's rows
/// will be refused by the gate of this checkout: no key while a trust file exists, or a key
/// the trust file does not declare for `remote`.
pub fn runner_key(role: Runner, root: &Path) -> anyhow::Result<Option<RunnerKey>> {
    let text = std::env::var_os(RUNNER_KEY_ENV).filter(|v| !v.is_empty());
    if role == Runner::Local {
        if text.is_some() {
            errln!(
                "note: {RUNNER_KEY_ENV} is set, but this runner's role is local: its rows are not signed (only a remote runner signs)"
            );
        }
        return Ok(None);
    }
    // The trust file only informs the warnings here; the gate is what enforces it.
    let roles = Roles::load(root).ok();
    let Some(text) = text else {
        if let Some(Some((path, _))) = roles.as_ref().map(|r| &r.trust) {
            errln!(
                "warning: {RUNNER_KEY_ENV} is not set, so these remote rows are unsigned; `{}` declares trusted runner keys, so the gate will refuse them as malformed",
                path.display()
            );
        }
        return Ok(None);
    };
    let key = text
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("{RUNNER_KEY_ENV}: not UTF-8 text"))
        .and_then(|t| RunnerKey::parse(t).map_err(|e| anyhow::anyhow!("{RUNNER_KEY_ENV}: {e}")))?;
    if let Some(roles) = &roles
        && let Some((path, _)) = &roles.trust
    {
        match roles.declared(&key) {
            Some(k) if k.role == KeyRole::Remote => {}
            Some(k) => errln!(
                "warning: {RUNNER_KEY_ENV} is key `{}`, which `{}` declares for the `{}` role: the gate will refuse these remote rows",
                k.key_id,
                path.display(),
                k.role
            ),
            None => errln!(
                "warning: {RUNNER_KEY_ENV} (public key {}) is not declared in `{}`: the gate will refuse these remote rows",
                public_key_hex(&key.public_key()),
                path.display()
            ),
        }
    }
    Ok(Some(key))
}

/// The environment variable that holds the citer's secret key (`gate cite`).
pub const CITER_KEY_ENV: &str = "SEEDLEDGER_CITER_KEY";

/// Refuses `path` when its mode grants any of `bits` (group or others may write it, say), as
/// ssh refuses a loose key: whoever can write a trust file decides who may cite, and whoever
/// can read a key file can cite. `fix` is the `chmod` that mends it.
pub fn refuse_loose(path: &Path, what: &str, bits: u32, fix: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(()); // the read that follows names the error
    };
    if meta.file_type().is_symlink() {
        bail!(
            "{what} `{}` is a symbolic link: it is read only as a regular file (copy the file it points to in its place)",
            path.display()
        );
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & bits != 0 {
        bail!(
            "{what} `{}` has mode {mode:04o}: it must not be {} by group or others; run `chmod {fix} {}`",
            path.display(),
            if bits & 0o044 != 0 {
                "readable or writable"
            } else {
                "writable"
            },
            path.display()
        );
    }
    Ok(())
}

/// The key `gate cite` signs with, and its id in the trust file: `--key-file FILE` or else
/// `$SEEDLEDGER_CITER_KEY` (the text form of `keys generate --role citer`). With a trust
/// file, a key declared for `citer` is required; without one, citations are unauthenticated
/// and a key given is not used (said on stderr). The key's text is never printed.
pub fn citer_key(
    roles: &Roles,
    key_file: Option<&Path>,
) -> anyhow::Result<Option<(RunnerKey, String)>> {
    let (text, from) = match key_file {
        Some(file) => {
            refuse_loose(file, "key file", 0o077, "600")?;
            let bytes = read_bounded(file, "key file", 4096)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("key file `{}`: not UTF-8 text", file.display()))?;
            (Some(text), format!("key file `{}`", file.display()))
        }
        None => match std::env::var_os(CITER_KEY_ENV).filter(|v| !v.is_empty()) {
            Some(v) => (
                Some(
                    v.into_string()
                        .map_err(|_| anyhow::anyhow!("{CITER_KEY_ENV}: not UTF-8 text"))?,
                ),
                CITER_KEY_ENV.to_string(),
            ),
            None => (None, String::new()),
        },
    };
    let Some((path, keys)) = &roles.trust else {
        if text.is_some() {
            errln!(
                "note: no `{TRUST_FILE}` declares who may cite, so the citation is not signed (an unauthenticated citation); the key in {from} is not used"
            );
        }
        return Ok(None);
    };
    let Some(text) = text else {
        bail!(
            "`{}` declares who may cite: give a `citer` key in ${CITER_KEY_ENV} or with --key-file FILE (`cargo xtask keys generate --role citer` makes one)",
            path.display()
        );
    };
    let key = RunnerKey::parse(&text).map_err(|e| anyhow::anyhow!("{from}: {e}"))?;
    match keys.find(&key.public_key()) {
        Some(k) if k.role == KeyRole::Citer => Ok(Some((key, k.key_id.clone()))),
        Some(k) => bail!(
            "{from} is key `{}`, which `{}` declares for the `{}` role (line {}), not for `citer`",
            k.key_id,
            path.display(),
            k.role,
            k.line
        ),
        None => bail!(
            "{from} (public key {}) is not declared in `{}`: only a `citer` key of the trust file may cite",
            public_key_hex(&key.public_key()),
            path.display()
        ),
    }
}

/// Keys for authenticated runner roles.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate a runner key: declare its public key in the trust file, print its secret.
    ///
    /// Appends `{"key_id": ..., "role": ..., "public_key": ...}` to
    /// ROOT/props/trusted-runners.jsonl (created if missing; commit it) and prints the secret
    /// key — `seedledger-ed25519-secret:` and 64 hex digits — alone on stdout, so that it can
    /// go straight into the CI secret the remote job reads:
    ///
    ///   cargo xtask keys generate --role remote | gh secret set SEEDLEDGER_RUNNER_KEY
    ///
    /// Keep the secret nowhere else: whoever holds it can sign rows as the remote runner.
    /// Once the trust file exists, `gate decide` and `gate cite` refuse every remote row that
    /// is not signed by a key declared for `remote` (`malformed witness <id>`).
    ///
    /// `--role citer` makes a key that may sign citations: once the trust file exists, only
    /// citations signed by a declared citer key are honoured, and `gate cite` needs the key:
    ///
    ///   (umask 077; cargo xtask keys generate --role citer > ~/.seedledger-citer.key)
    ///   cargo xtask gate cite --key-file ~/.seedledger-citer.key ...
    ///
    /// Exit status: 0 generated; 2 error (no props/ directory under ROOT, a trust file that
    /// cannot be read, a key id already declared, a failed write).
    #[command(verbatim_doc_comment)]
    Generate(GenerateArgs),
    /// List the declared keys, and which one $SEEDLEDGER_RUNNER_KEY is (if set).
    ///
    /// One line per key: `<key_id> <role> <public key> (line <n>)`. Exit status: 0 listed
    /// (also when there is no trust file); 2 the trust file or the variable cannot be read.
    List(ListArgs),
}

/// What a generated key may sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyRoleArg {
    /// Witness rows of the remote runner.
    Remote,
    /// Witness rows of a local runner (which never signs; declared for completeness).
    Local,
    /// Citations (`gate cite`).
    Citer,
}

impl From<KeyRoleArg> for KeyRole {
    fn from(role: KeyRoleArg) -> KeyRole {
        match role {
            KeyRoleArg::Remote => KeyRole::Remote,
            KeyRoleArg::Local => KeyRole::Local,
            KeyRoleArg::Citer => KeyRole::Citer,
        }
    }
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What the key signs: the remote runner's rows, or citations (`citer`).
    #[arg(long, value_enum, default_value = "remote")]
    role: KeyRoleArg,
    /// A name for the key in the trust file [default: ROLE-<first 8 hex digits of the public
    /// key>].
    #[arg(long, value_name = "ID")]
    key_id: Option<String>,
    /// The repository root whose props/ holds the trust file [default: the current directory, or the nearest ancestor with props/].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// The repository root whose props/ holds the trust file [default: the current directory, or the nearest ancestor with props/].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub fn run(cmd: KeysCommand) -> ExitStatus {
    let res = match cmd {
        KeysCommand::Generate(args) => generate(&args),
        KeysCommand::List(args) => list(&args),
    };
    res.unwrap_or_else(|e| {
        errln!("error: {e:#}");
        ExitStatus::Error
    })
}

fn generate(args: &GenerateArgs) -> anyhow::Result<ExitStatus> {
    let root = args.root.clone().unwrap_or_else(crate::prop::discover_root);
    let props = root.join("props");
    if !props.is_dir() {
        bail!(
            "no props/ directory under `{}`: run this from the repository root, or pass --root",
            if root.as_os_str().is_empty() {
                Path::new(".").display()
            } else {
                root.display()
            }
        );
    }
    let path = root.join(TRUST_FILE);
    let existing = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        _ => read_bounded(&path, "trust file", MAX_TRUST_FILE_BYTES)?,
    };
    let keys = TrustedKeys::parse_bytes(&existing)
        .with_context(|| format!("trust file `{}`", path.display()))?;

    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret)
        .map_err(|e| anyhow::anyhow!("cannot get randomness from the operating system: {e}"))?;
    let key = RunnerKey::from_secret_bytes(&secret);
    let role = KeyRole::from(args.role);
    let public_hex = public_key_hex(&key.public_key());
    let key_id = args
        .key_id
        .clone()
        .unwrap_or_else(|| format!("{role}-{}", &public_hex[..8]));
    seedledger_format::check_id("key id", &key_id).map_err(|e| anyhow::anyhow!("--key-id: {e}"))?;
    if let Some(k) = keys.keys().iter().find(|k| k.key_id == key_id) {
        bail!(
            "trust file `{}`: line {}: key id `{key_id}` is already declared; pass another --key-id",
            path.display(),
            k.line
        );
    }
    let declared = TrustedKey {
        key_id: key_id.clone(),
        role,
        public_key: key.public_key(),
        line: 0,
    };
    let mut text = existing;
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    let line = text.iter().filter(|&&b| b == b'\n').count() + 1;
    text.extend_from_slice(declared.to_json_line().as_bytes());
    text.push(b'\n');
    write_atomic(&path, &text).with_context(|| format!("cannot write `{}`", path.display()))?;

    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{}", key.to_secret_text())
            .and_then(|()| out.flush())
            .is_err()
        {
            bail!(
                "could not print the secret key; the key `{key_id}` on line {line} of `{}` has no usable secret: delete that line",
                path.display()
            );
        }
    }
    errln!(
        "added key `{key_id}` (role {role}, public key {public_hex}) on line {line} of `{}`: commit it",
        path.display()
    );
    match role {
        KeyRole::Remote => errln!(
            "the secret key is on stdout: store it as the CI secret {RUNNER_KEY_ENV} of the remote job and nowhere else,\n    e.g. cargo xtask keys generate --role remote | gh secret set {RUNNER_KEY_ENV}"
        ),
        KeyRole::Local => errln!(
            "the secret key is on stdout; note that a local runner never signs its rows (local rows need no signature)"
        ),
        KeyRole::Citer => errln!(
            "the secret key is on stdout: keep it where only the maintainers who cite can read it ({CITER_KEY_ENV}, or a key file of mode 600 given to `gate cite --key-file`)"
        ),
    }
    Ok(ExitStatus::Success)
}

fn list(args: &ListArgs) -> anyhow::Result<ExitStatus> {
    let root = args.root.clone().unwrap_or_else(crate::prop::discover_root);
    let roles = Roles::load(&root)?;
    errln!("{}", roles.note());
    if let Some((_, keys)) = &roles.trust {
        for k in keys.keys() {
            outln!(
                "{} {} {} (line {})",
                k.key_id,
                k.role,
                public_key_hex(&k.public_key),
                k.line
            );
        }
    }
    if let Some(text) = std::env::var_os(RUNNER_KEY_ENV).filter(|v| !v.is_empty()) {
        let key = text
            .to_str()
            .ok_or_else(|| anyhow::anyhow!("{RUNNER_KEY_ENV}: not UTF-8 text"))
            .and_then(|t| {
                RunnerKey::parse(t).map_err(|e| anyhow::anyhow!("{RUNNER_KEY_ENV}: {e}"))
            })?;
        match roles.declared(&key) {
            Some(k) => errln!(
                "note: {RUNNER_KEY_ENV} is key `{}` ({} role)",
                k.key_id,
                k.role
            ),
            None => errln!(
                "note: {RUNNER_KEY_ENV} (public key {}) is not declared",
                public_key_hex(&key.public_key())
            ),
        }
    }
    Ok(ExitStatus::Success)
}
