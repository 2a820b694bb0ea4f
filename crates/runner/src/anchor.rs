//! Paths and environment fixed before the first trial. A trial runs in the process that
//! writes its evidence and may change that process's directory (`std::env::set_current_dir`)
//! or environment; a relative path opened after it would then name another file, and git
//! started after it (is the spec committed?) could be pointed at another repository. Every
//! path the runner and the command line open after a trial may have run is absolute:
//! relative ones are joined to the directory the process was in when [`start_dir`] was first
//! called, which the command line does before it parses its arguments and [`crate::check`]
//! before its first run; and git is started with the environment of that moment. Joining is
//! lexical (`std::path::absolute`: `.` components dropped, `..` and symbolic links kept), so
//! an anchored path names the file its relative spelling named at the start.

use crate::run::RunConfig;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The process's directory and environment when first asked.
struct Start {
    dir: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
}

static START: OnceLock<Start> = OnceLock::new();

fn start() -> &'static Start {
    START.get_or_init(|| Start {
        dir: std::env::current_dir().ok(),
        env: std::env::vars_os().collect(),
    })
}

/// The directory the process was in when this (or [`anchored`]) was first called (`None`
/// when it could not be told, for example because it was removed): what relative paths are
/// anchored to. The environment of that moment is kept as well, for the processes the
/// runner starts (see `start_env`).
pub fn start_dir() -> Option<&'static Path> {
    start().dir.as_deref()
}

/// The process's environment when [`start_dir`] was first called: the environment git is
/// started with, whatever a trial set since.
pub(crate) fn start_env() -> &'static [(OsString, OsString)] {
    &start().env
}

/// `git` to run in `dir` with the environment of the start ([`start_env`]), whatever a trial
/// set since: the one way the runner starts git.
pub(crate) fn git_command(dir: &Path) -> std::process::Command {
    let mut command = std::process::Command::new("git");
    command
        .current_dir(dir)
        .env_clear()
        .envs(start_env().iter().map(|(k, v)| (k, v)));
    command
}

/// `path` as an absolute path: unchanged when it is one, else joined to [`start_dir`] (the
/// empty path is the start directory itself). Unchanged when the start directory is unknown.
pub fn anchored(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let Some(start) = start_dir() else {
        return path.to_path_buf();
    };
    let joined = if path.as_os_str().is_empty() {
        start.to_path_buf()
    } else {
        start.join(path)
    };
    // An absolute path: `absolute` only drops `.` components, it reads nothing.
    std::path::absolute(&joined).unwrap_or(joined)
}

impl RunConfig {
    /// This configuration with its workspace root and output directory [`anchored`]: the
    /// configuration a process that runs trials uses (see the module docs).
    pub fn anchored(&self) -> RunConfig {
        RunConfig {
            root: anchored(&self.root),
            out_dir: anchored(&self.out_dir),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_the_start_directory_and_absolute_ones_stay() {
        let start = std::env::current_dir().unwrap();
        assert_eq!(start_dir(), Some(start.as_path()));
        assert_eq!(anchored(Path::new("")), start);
        assert_eq!(anchored(Path::new(".")), start);
        assert_eq!(
            anchored(Path::new("./target/seedledger")),
            start.join("target").join("seedledger")
        );
        assert_eq!(anchored(Path::new("../x")), start.join("..").join("x"));
        assert_eq!(anchored(Path::new("/w/out")), Path::new("/w/out"));
    }
}
