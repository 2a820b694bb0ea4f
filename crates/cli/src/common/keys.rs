//! Authenticated roles, command-line side: the trust file the gate reads
//! (`props/trusted-runners.jsonl`, format in `seedledger_format::TrustedKeys`), the remote
//! runner's secret key that `prop run|replay|reproduce` read from `$SEEDLEDGER_RUNNER_KEY`,
//! and the citer's key `gate cite` signs with.
//!
//! The checks themselves are `seedledger_gate::authenticate` (pure); this module reads the
//! files and the environment, and says in every decision whether roles were authenticated.

use crate::common::read_bounded;
use anyhow::{Context, bail};
use seedledger_format::{
    KeyRole, MAX_TRUST_FILE_BYTES, Runner, RunnerKey, TRUST_FILE, TrustedKey, TrustedKeys,
    WitnessLine, public_key_hex,
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
    pub fn declared(&self, key: &RunnerKey) -> Option<&TrustedKey> {
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
