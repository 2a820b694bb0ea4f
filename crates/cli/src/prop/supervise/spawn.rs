//! Starting the run process. On Linux it is this process forked, without an exec: the
//! child is the worker the supervisor's own arguments describe (the hidden ones set), so it
//! pays no second process start (exec, dynamic loading, argument parsing). It inherits what
//! an exec'd worker inherited and nothing more: stdin from /dev/null, stdout the pipe the
//! supervisor reads, stderr, the passed descriptors and those open without close-on-exec
//! (every close-on-exec one is closed, as an exec would have), an empty signal mask and the
//! dispositions the supervisor had before it caught SIGINT and SIGTERM (it forks first), with
//! every caught signal but SIGSEGV and SIGBUS (std's stack-overflow report, which an exec'd
//! worker installs again) reset to its default and the ignored ones still ignored, the
//! same directory, umask, environment (plus what Bazel's protocol sets for the worker) and
//! process group. It is named `sl-worker` (`/proc/PID/comm`) and ends through
//! `std::process::exit` with the worker's status, or 101 when a panic escapes the worker (as
//! a panic escaping an exec'd worker's `main`): no code of the supervisor's runs in it
//! after the fork. `SEEDLEDGER_WORKER_EXEC=1`, and other systems, exec this program again
//! with the hidden `--supervised-worker PID` instead.

use super::*;

/// What the supervisor hands the run process it forks: the hidden arguments an exec'd
/// worker would have been given.
pub(crate) struct Handed {
    /// The supervisor's pid (`--supervised-worker`).
    pub(crate) supervisor: u32,
    /// `--progress-events`.
    pub(crate) progress: bool,
    /// `--events-fd`.
    pub(crate) events_fd: i32,
    /// `--pending-rows-fd`.
    pub(crate) pending_rows_fd: Option<i32>,
    /// `--code-fd`.
    pub(crate) code_fd: Option<i32>,
}

/// The worker's entry in a forked run process: runs it and gives the status to end with.
pub(crate) type WorkerEntry<'a> = &'a dyn Fn(Handed) -> u8;

/// Set (to anything but `0` or nothing): the run process is this program exec'd again.
const EXEC_ENV: &str = "SEEDLEDGER_WORKER_EXEC";

/// The forked run process's name (`/proc/PID/comm`, `pgrep -x sl-worker`).
const WORKER_NAME: &std::ffi::CStr = c"sl-worker";

/// The run process, started: its pid, its stdout and the read end of its event pipe.
pub(super) struct Started {
    pub(super) pid: i32,
    pub(super) stdout: Option<OwnedFd>,
    pub(super) events: OwnedFd,
}

/// Starts the run process, forked (Linux) or exec'd (see the module docs); the message of
/// what failed. Forked only while this process runs no other thread.
pub(super) fn start(
    progress: bool,
    (pending_fd, code_fd): (Option<i32>, Option<i32>),
    entry: WorkerEntry<'_>,
) -> Result<Started, String> {
    let (events, events_theirs) =
        procs::pipe().map_err(|e| format!("cannot create the run process's pipes: {e}"))?;
    let handed = Handed {
        supervisor: std::process::id(),
        progress,
        events_fd: events_theirs.as_raw_fd(),
        pending_rows_fd: pending_fd,
        code_fd,
    };
    let alone = threads() == Some(1);
    let started = if forks(alone) {
        forked(handed, entry)
    } else {
        exec_worker(&handed, alone)
    };
    // The kept spec answers looked up for the run process (`run.rs`) are its own now.
    seedledger_runner::engine::forget_kept_specs();
    drop(events_theirs);
    let (pid, stdout) = started?;
    Ok(Started {
        pid,
        stdout: Some(stdout),
        events,
    })
}

/// Whether the run process is this process forked (Linux, `SEEDLEDGER_WORKER_EXEC` not
/// set): only while this process runs no other thread (`alone`; a program embedding the CLI
/// may have started some), since the child would run one thread of a process built for
/// several.
fn forks(alone: bool) -> bool {
    let exec = std::env::var_os(EXEC_ENV).is_some_and(|v| !v.is_empty() && v != "0");
    cfg!(target_os = "linux") && !exec && alone
}

/// Whether a run process started now would be this process forked (see [`start`]).
pub(crate) fn forks_now() -> bool {
    forks(threads() == Some(1))
}

/// This process forked; the child runs `entry` and never returns.
fn forked(handed: Handed, entry: WorkerEntry<'_>) -> Result<(i32, OwnedFd), String> {
    let failed = |e: std::io::Error| format!("cannot start the run process: {e}");
    let (stdout, stdout_theirs) = procs::pipe().map_err(failed)?;
    let null = File::open("/dev/null").map_err(failed)?;
    // Nothing buffered is written twice (stderr is not buffered).
    let _ = std::io::stdout().flush();
    // SAFETY: this process runs one thread (`start`), so the child's memory is consistent;
    // the child ends in `become_worker` and never returns into the supervisor's code.
    match unsafe { libc::fork() } {
        -1 => Err(failed(std::io::Error::last_os_error())),
        0 => become_worker(handed, (null.as_raw_fd(), stdout_theirs.as_raw_fd()), entry),
        pid => Ok((pid, stdout)),
    }
}

/// The forked child: made what an exec'd worker was (see the module docs), then the worker.
fn become_worker(handed: Handed, (null, stdout): (i32, i32), entry: WorkerEntry<'_>) -> ! {
    // SAFETY: dup2, sigprocmask and prctl touch no memory of this process but what is
    // passed (the empty set, the name); the descriptors are open.
    unsafe {
        libc::dup2(null, 0);
        libc::dup2(stdout, 1);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &raw const none, std::ptr::null_mut());
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_NAME, WORKER_NAME.as_ptr());
    }
    reset_caught_signals();
    let passed = [
        Some(handed.events_fd),
        handed.pending_rows_fd,
        handed.code_fd,
    ];
    close_on_exec(&passed.into_iter().flatten().collect::<Vec<_>>());
    for (key, value) in crate::prop::bazel::Protocol::from_env().worker_env() {
        // SAFETY: this process runs one thread (it was forked from one that ran alone).
        unsafe { std::env::set_var(key, value) };
    }
    let status = worker_status(handed, entry);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::process::exit(status)
}

/// Runs the worker's `entry`, for the status to end with. A panic escaping it never unwinds
/// into the supervisor's code (its destructors, its `main`): the status is then the one an
/// exec'd worker whose `main` panicked ends with, 101.
fn worker_status(handed: Handed, entry: WorkerEntry<'_>) -> i32 {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| entry(handed)))
        .map_or(PANIC_STATUS, i32::from)
}

/// The status of a Rust program whose `main` panicked.
const PANIC_STATUS: i32 = 101;

/// Resets every caught signal to its default action, as an exec would have; ignored ones stay
/// ignored. SIGSEGV and SIGBUS are kept: their handler is std's stack-overflow report, which
/// an exec'd worker installs again at its start (without it a stack overflow would be a bare
/// SIGSEGV, not the report and SIGABRT an exec'd worker gives).
fn reset_caught_signals() {
    let kept = [libc::SIGKILL, libc::SIGSTOP, libc::SIGSEGV, libc::SIGBUS];
    for signal in (1..=64).filter(|s| !kept.contains(s)) {
        // SAFETY: sigaction reads and writes the structures it is given; a signal the system
        // does not know (or reserves, glibc's 32 and 33) fails and is left alone.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &raw mut old) != 0 {
                continue;
            }
            if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigemptyset(&raw mut default.sa_mask);
                libc::sigaction(signal, &raw const default, std::ptr::null_mut());
            }
        }
    }
}

/// Closes every descriptor open with close-on-exec but `keep`, as an exec would have.
fn close_on_exec(keep: &[i32]) {
    let open: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
        Err(_) => (0..4096).collect(),
    };
    for fd in open.into_iter().filter(|fd| *fd > 2 && !keep.contains(fd)) {
        // SAFETY: fcntl and close on a descriptor number touch no memory; nothing of this
        // process uses a close-on-exec descriptor after the fork (the worker opens its own).
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
                libc::close(fd);
            }
        }
    }
}

/// The threads this process runs (Linux; `None` where it cannot tell): the entries of
/// `/proc/self/task` (one per thread; listing them costs a fraction of what the kernel's
/// formatting of `/proc/self/status` does).
fn threads() -> Option<usize> {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        entry.ok()?;
        n += 1;
    }
    (n > 0).then_some(n)
}

/// Starts this program again with this process's arguments and the hidden ones: the
/// supervised worker's pid and stdout. `alone`: this process runs no other thread.
fn exec_worker(handed: &Handed, alone: bool) -> Result<(i32, OwnedFd), String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find this program to run the suite in: {e}"))?;
    let mut command = Command::new(&exe);
    command
        .args(std::env::args_os().skip(1))
        .arg("--supervised-worker")
        .arg(handed.supervisor.to_string())
        .args(handed.progress.then_some("--progress-events"))
        .arg("--events-fd")
        .arg(handed.events_fd.to_string())
        // Under `bazel test`, TMPDIR=$TEST_TMPDIR (see `prop/bazel.rs`).
        .envs(crate::prop::bazel::Protocol::from_env().worker_env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if let Some(fd) = handed.pending_rows_fd {
        command.arg("--pending-rows-fd").arg(fd.to_string());
    }
    if let Some(fd) = handed.code_fd {
        command.arg("--code-fd").arg(fd.to_string());
    }
    // The descriptors passed (close-on-exec here: the mapping's too). Alone, they are
    // inheritable for the spawn alone. With other threads, one of them could start a process meanwhile and it would inherit
    // them too: they are made inheritable in the child alone, between fork and exec.
    let passed = [
        Some(handed.events_fd),
        handed.pending_rows_fd,
        handed.code_fd,
    ];
    let passed = passed.into_iter().flatten();
    // The supervisor holds SIGINT and SIGTERM blocked while it starts the run process
    // (`supervisor.rs`), and a spawn keeps the mask: the exec'd worker starts with an empty
    // one, as a forked worker does (else it could never be stopped between trials).
    // SAFETY: sigemptyset and sigprocmask are async-signal-safe and touch only the local set.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&raw mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &raw const none, std::ptr::null_mut());
            Ok(())
        });
    }
    let spawned = if alone {
        procs::Inheritable::during(passed).and_then(|_inheritable| command.spawn())
    } else {
        passed.for_each(|fd| procs::pass_fd(&mut command, fd));
        command.spawn()
    };
    let mut child =
        spawned.map_err(|e| format!("cannot start the run process `{}`: {e}", exe.display()))?;
    let stdout = child.stdout.take().map(OwnedFd::from);
    let stdout = stdout.ok_or_else(|| "the run process has no stdout".to_string())?;
    // (Dropping the handle neither waits for nor kills the child: it is waited for by pid.)
    Ok((child.id() as i32, stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn caught(_: libc::c_int) {}

    /// The disposition of `signal` in this process.
    fn disposition(signal: i32) -> libc::sighandler_t {
        // SAFETY: sigaction writes the structure it is given.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &raw mut old);
            old.sa_sigaction
        }
    }

    /// Sets `signal`'s disposition to `handler`.
    fn set(signal: i32, handler: libc::sighandler_t) {
        // SAFETY: sigaction reads the structure it is given.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler;
            libc::sigemptyset(&raw mut new.sa_mask);
            libc::sigaction(signal, &raw const new, std::ptr::null_mut());
        }
    }

    fn handed() -> Handed {
        Handed {
            supervisor: 1,
            progress: false,
            events_fd: 3,
            pending_rows_fd: None,
            code_fd: None,
        }
    }

    #[test]
    fn a_panic_escaping_the_worker_is_status_101_and_a_status_is_passed_on() {
        assert_eq!(
            worker_status(handed(), &|_| panic!("escaping the worker")),
            101
        );
        assert_eq!(worker_status(handed(), &|_| 3), 3);
    }

    /// In a forked child (this test process keeps its own dispositions), a caught signal is
    /// reset to its default, an ignored one stays ignored and SIGSEGV keeps its handler; the
    /// child's exit status says which check failed.
    #[test]
    fn the_reset_defaults_caught_signals_and_keeps_ignored_ones_and_sigsegv() {
        // SAFETY: the child calls only sigaction, sigemptyset and _exit (async-signal-safe)
        // and allocates nothing.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "{}", std::io::Error::last_os_error());
        if pid == 0 {
            let handler = caught as extern "C" fn(libc::c_int) as libc::sighandler_t;
            set(libc::SIGUSR1, handler);
            set(libc::SIGUSR2, libc::SIG_IGN);
            set(libc::SIGSEGV, handler);
            reset_caught_signals();
            let code = if disposition(libc::SIGUSR1) != libc::SIG_DFL {
                1
            } else if disposition(libc::SIGUSR2) != libc::SIG_IGN {
                2
            } else if disposition(libc::SIGSEGV) != handler {
                3
            } else {
                0
            };
            // SAFETY: ends the child at once, running nothing of the test harness.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waitpid writes the status it is given.
        assert_eq!(unsafe { libc::waitpid(pid, &raw mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "child status {status:#x}");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "1: caught kept, 2: ignored lost, 3: SIGSEGV lost"
        );
    }
}
