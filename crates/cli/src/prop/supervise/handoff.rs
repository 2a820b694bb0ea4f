//! The code identity, computed by the supervisor while its worker starts.
//!
//! A run records the code identity git gives (the runner's `code.rs`), and git processes are
//! most of a short run's fixed cost; so is starting the run process. The supervisor starts
//! the identity's git processes before it starts the worker, then waits for them (before it
//! starts reading the worker's events, and reaping what ends below it) and writes the
//! outcome as one JSON line to a pipe the worker inherits (hidden `--code-fd`): `{"code": ..., "base": ..., "paths": [...]}` or `{"error": "..."}`. The
//! worker reads it where it would have asked git itself, and asks git itself when the line
//! does not come or does not read (the supervisor could not send it).

use seedledger_runner::engine::{CodeIdentity, CodeIdentityJob};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;

/// The supervisor's side: waits for `job` and writes its outcome to `to` (then closed).
/// Call it before anything reaps this process's ended children: the job waits for its own.
pub(super) fn send(job: CodeIdentityJob, to: OwnedFd) {
    let line = match job.finish() {
        Ok(code) => json!({"code": code.code, "base": code.base, "paths": code.paths}),
        Err(e) => json!({"error": e.to_string()}),
    };
    // A worker that is gone reads nothing: nothing to do about it.
    let _ = std::fs::File::from(to).write_all(format!("{line}\n").as_bytes());
}

/// The worker's side: the code identity (or why there is none, as the error reads) the
/// supervisor sent on descriptor `fd`; `None` when nothing that reads came (then the
/// worker asks git itself).
pub(crate) fn received_code(fd: i32) -> Option<Result<CodeIdentity, String>> {
    let mut text = String::new();
    std::fs::File::from(super::procs::take_inherited(fd).ok()?)
        .read_to_string(&mut text)
        .ok()?;
    decode(&text)
}

/// The outcome a line of [`send`] describes.
fn decode(text: &str) -> Option<Result<CodeIdentity, String>> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    if let Some(error) = value.get("error") {
        return Some(Err(error.as_str()?.to_string()));
    }
    let paths = value
        .get("paths")?
        .as_array()?
        .iter()
        .map(|p| p.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()?;
    let base = match value.get("base")? {
        Value::Null => None,
        base => Some(base.as_str()?.to_string()),
    };
    Some(Ok(CodeIdentity {
        code: value.get("code")?.as_str()?.to_string(),
        base,
        paths,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sent_identity_or_error_is_received_as_it_was_and_anything_else_is_not() {
        let ok = json!({"code": "diff:ab", "base": "c0ffee", "paths": ["a.rs", "b c.rs"]});
        assert_eq!(
            decode(&format!("{ok}\n")),
            Some(Ok(CodeIdentity {
                code: "diff:ab".into(),
                base: Some("c0ffee".into()),
                paths: vec!["a.rs".into(), "b c.rs".into()],
            }))
        );
        let head = json!({"code": "commit:1", "base": null, "paths": []});
        assert_eq!(
            decode(&head.to_string()),
            Some(Ok(CodeIdentity {
                code: "commit:1".into(),
                base: None,
                paths: Vec::new(),
            }))
        );
        let err = json!({"error": "`/w` is not inside a git work tree"});
        assert_eq!(
            decode(&err.to_string()),
            Some(Err("`/w` is not inside a git work tree".into()))
        );
        for bad in [
            "",
            "{",
            r#"{"code": 1, "base": null, "paths": []}"#,
            r#"{"code": "x"}"#,
        ] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }

    /// Through a real pipe, as the worker inherits it.
    #[test]
    fn the_worker_reads_what_the_supervisor_wrote() {
        let tmp = tempfile::tempdir().unwrap();
        let (read, write) = super::super::procs::pipe().unwrap();
        let job = seedledger_runner::engine::start_code_identity(tmp.path(), None);
        let expected =
            seedledger_runner::engine::code_identity(tmp.path(), None).map_err(|e| e.to_string());
        send(job, write);
        let fd = std::os::fd::IntoRawFd::into_raw_fd(read);
        assert_eq!(received_code(fd), Some(expected));
    }
}
