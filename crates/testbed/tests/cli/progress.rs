//! `prop run`'s progress bars, through the real binary: drawn on stderr when
//! it is a terminal (a pseudo-terminal here), and nothing extra off a terminal or with
//! `--format json`. The property is the crash suite's `slow` (2 ms a trial), so that a plan
//! of a few hundred seeds runs for several progress intervals. Nothing here is timed: the
//! assertions are on what was printed.

use crate::support::Run;
use std::io::Read as _;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::process::{Command, Stdio};

const PLAN: &str = "1..=300";

fn command(root: &std::path::Path, extra: &[&str]) -> Command {
    let mut args = vec!["prop", "run", "--property", "slow", "--seeds", PLAN];
    args.extend_from_slice(extra);
    crate::support::crash_command(root, &args)
}

/// Runs `cmd` with its stderr on a fresh pseudo-terminal (100 columns) and its stdout piped:
/// (exit status, stdout, everything written to the terminal).
fn on_a_terminal(mut cmd: Command) -> (i32, String, String) {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: 30,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors into the two ints and reads `size`; the name
    // and termios pointers may be null.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nobody else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(master);
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // Linux answers EIO once every copy of the terminal's other end is closed.
        while let Ok(n) = file.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::from(slave));
    let child = cmd.spawn().unwrap();
    drop(cmd); // our copy of the terminal's other end
    let out = child.wait_with_output().unwrap();
    let terminal = reader.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        terminal,
    )
}

/// The summary line of the passing `slow` property, whatever its time.
fn assert_plain_summary(stdout: &str) {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(
        lines[0].starts_with("PASS slow  300/300 seeds  ("),
        "{stdout}"
    );
}

#[test]
fn a_terminal_shows_seeds_done_failures_rate_and_time_left_then_the_summary() {
    let root = crate::support::crash_root(&["slow"]);
    let (code, stdout, terminal) = on_a_terminal(command(root.path(), &[]));
    assert_eq!(code, 0, "{stdout}{terminal}");
    // A bar's text: seeds done of the plan, failures so far, rate and time left.
    let shown = terminal.split(['\r', '\n']).find(|l| {
        l.contains("/300 seeds  0 failed  ") && l.contains("/s  ") && l.contains(" left")
    });
    assert!(
        shown.is_some(),
        "no progress line on the terminal:\n{terminal:?}"
    );
    assert!(terminal.contains("slow  "), "{terminal:?}");
    // The summary goes to stdout, unchanged, with no drawing in it.
    assert_plain_summary(&stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
}

#[test]
fn json_format_on_a_terminal_draws_nothing() {
    let root = crate::support::crash_root(&["slow"]);
    let (code, stdout, terminal) = on_a_terminal(command(root.path(), &["--format", "json"]));
    assert_eq!(code, 0, "{stdout}{terminal}");
    assert!(!terminal.contains(" seeds "), "{terminal:?}");
    assert!(!terminal.contains('\u{1b}'), "{terminal:?}");
    let line: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(line["property_id"], "slow", "{stdout}");
}

#[test]
fn off_a_terminal_the_output_is_what_it_always_was() {
    let root = crate::support::crash_root(&["slow"]);
    for ci in [None, Some("true")] {
        let mut cmd = command(root.path(), &[]);
        if let Some(ci) = ci {
            cmd.env("CI", ci);
        }
        let run: Run = crate::support::finish(cmd);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert_plain_summary(&run.stdout);
        // Only the note that the scratch root is not a git work tree: no bar, no drawing.
        assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
        assert!(!run.stderr.contains('\r'), "{:?}", run.stderr);
        assert!(!run.stderr.contains(" seeds"), "{:?}", run.stderr);
        let other: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| !l.starts_with("note: "))
            .collect();
        assert!(other.is_empty(), "{:?}", run.stderr);
    }
}
