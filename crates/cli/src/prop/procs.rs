//! The descriptors and processes below a supervising process: protocol channels a
//! property's printed output can never reach, output read without waiting for an end of
//! file that a process left behind holds back, and those processes found, named and killed.
//!
//! A protocol channel is a pipe or a socket pair created close-on-exec and kept open only
//! across the one `exec` of the worker it is meant for ([`pass_fd`]; [`Inheritable`] for
//! the supervisor's one spawn of its run process); the worker makes its
//! end close-on-exec again at once ([`take_inherited`]), so no program a property starts
//! inherits it, and no other worker does either. What a property prints, on stdout or
//! stderr, however crafted, therefore never reaches a channel. A property runs in the
//! worker's own process, though: code that guesses the channel's descriptor number and
//! writes to it directly (or a `fork` without `exec`) can still reach it; the channel keeps
//! honest output and printed text apart from the protocol, it is not a sandbox.
//!
//! Processes left behind: on Linux a supervising process adopts the orphans among its
//! descendants ([`adopt_orphans`], `PR_SET_CHILD_SUBREAPER`), so every process a trial
//! leaves behind is, once its parent is gone, a child of a process that looks for them
//! ([`kill_leftovers`]: each live child named, killed and reaped until none is left).
//! [`group_members`] lists a process group (a trial worker's, which a property's children
//! share unless they leave it). Elsewhere these find nothing; worker groups are still killed.

use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;
use std::thread::JoinHandle;

/// A process left behind, as found: its pid and command name (`/proc/PID/comm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Leftover {
    pub(crate) pid: i32,
    pub(crate) command: String,
}

/// A pipe `(read end, write end)`, both close-on-exec.
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    // SAFETY: pipe writes two descriptors into the array it is given.
    let made = unsafe { libc::pipe(fds.as_mut_ptr()) };
    if made < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let ends = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    set_cloexec(ends.0.as_raw_fd())?;
    set_cloexec(ends.1.as_raw_fd())?;
    Ok(ends)
}

/// A connected pair of stream sockets, both close-on-exec: a two-way channel.
pub(crate) fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    let kind = libc::SOCK_STREAM;
    // SAFETY: socketpair writes two descriptors into the array it is given.
    if unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let ends = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    set_cloexec(ends.0.as_raw_fd())?;
    set_cloexec(ends.1.as_raw_fd())?;
    Ok(ends)
}

fn set_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor number touches no memory.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Keeps `fd` (close-on-exec in this process) open across `command`'s exec, under the same
/// number: the worker learns the number from its arguments.
pub(crate) fn pass_fd(command: &mut Command, fd: RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only fcntl(2), which is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Descriptors made inheritable (close-on-exec cleared) for as long as it lives, then
/// close-on-exec again: a [`pass_fd`] for a spawn with no code of its own between fork and
/// exec, which the system can then make without copying this process (posix_spawn). Only
/// where no other thread of this process starts a process meanwhile: that one would inherit
/// them too (the supervisor's spawn of its run process while it runs no other thread; not
/// the trial workers, which several threads may start at once).
pub(crate) struct Inheritable(Vec<RawFd>);

impl Inheritable {
    pub(crate) fn during(fds: impl IntoIterator<Item = RawFd>) -> io::Result<Inheritable> {
        let mut made = Inheritable(Vec::new());
        for fd in fds {
            // SAFETY: fcntl on a descriptor number touches no memory.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } < 0 {
                return Err(io::Error::last_os_error());
            }
            made.0.push(fd);
        }
        Ok(made)
    }
}

impl Drop for Inheritable {
    fn drop(&mut self) {
        for &fd in &self.0 {
            let _ = set_cloexec(fd);
        }
    }
}

/// The worker's side of [`pass_fd`]: takes the inherited descriptor `fd` and makes it
/// close-on-exec, so that nothing this process starts inherits it.
pub(crate) fn take_inherited(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_GETFD on a descriptor number touches no memory; it fails on a closed one.
    if fd < 3 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(io::Error::other(format!("descriptor {fd} is not open")));
    }
    set_cloexec(fd)?;
    // SAFETY: the descriptor is open and was passed to this process for it alone to own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A thread reading a descriptor until its end of file, until the process it watches has
/// ended (Linux, through a pidfd), or until [`Pump::stop`]; in the last two cases it reads
/// what the descriptor already holds and no more.
pub(crate) struct Pump {
    stop: Option<OwnedFd>,
    thread: Option<JoinHandle<()>>,
}

impl Pump {
    /// Reads `fd` on a new thread, handing each chunk read to `on_bytes`, until end of file,
    /// the end of child `writer` (where the system can watch it), or [`Pump::stop`].
    pub(crate) fn start(
        fd: OwnedFd,
        writer: i32,
        mut on_bytes: impl FnMut(&[u8]) + Send + 'static,
    ) -> io::Result<Pump> {
        let (stop_read, stop_write) = pipe()?;
        let exited = pidfd(writer);
        let thread = std::thread::Builder::new()
            .name("seedledger-pump".into())
            .spawn(move || pump(&fd, &stop_read, exited.as_ref(), &mut on_bytes))?;
        Ok(Pump {
            stop: Some(stop_write),
            thread: Some(thread),
        })
    }

    /// Reads what the descriptor already holds, without waiting for more (or for an end of
    /// file a process left behind may hold back), and ends the thread. Call it once the
    /// writer is known to be gone: everything it wrote is then read.
    pub(crate) fn stop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Pump {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A descriptor that becomes readable when child `pid` ends (Linux 5.3 and later), without
/// reaping it.
pub(crate) fn pidfd(pid: i32) -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let fd = RawFd::try_from(fd).ok().filter(|fd| *fd >= 0)?;
        // SAFETY: the descriptor was just created (close-on-exec) and is owned by nothing else.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

fn pump(fd: &OwnedFd, stop: &OwnedFd, exited: Option<&OwnedFd>, on_bytes: &mut dyn FnMut(&[u8])) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut file = std::fs::File::from(match fd.try_clone() {
        Ok(fd) => fd,
        Err(_) => return,
    });
    let exited = exited.map_or(-1, AsRawFd::as_raw_fd);
    loop {
        match poll_ready([fd.as_raw_fd(), stop.as_raw_fd(), exited], -1) {
            Ok([true, _, _]) => match file.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => on_bytes(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            },
            Ok([false, true, _] | [false, _, true]) => {
                // Stopped, or the writer has ended: what is already there, then no more.
                // (A bound: a process left behind may write on and on.)
                for _ in 0..256 {
                    if !matches!(poll_ready([fd.as_raw_fd()], 0), Ok([true])) {
                        return;
                    }
                    match file.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => on_bytes(&buf[..n]),
                    }
                }
                return;
            }
            Ok([false, false, false]) => {}
            Err(_) => return,
        }
    }
}

/// Polls `fds` (a negative descriptor is left out) for input, end of file or error;
/// `timeout_ms` -1 waits. Which of them are ready.
pub(crate) fn poll_ready<const N: usize>(
    fds: [RawFd; N],
    timeout_ms: i32,
) -> io::Result<[bool; N]> {
    let mut polled = fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    loop {
        // SAFETY: poll reads and writes the N entries of the array it is given.
        let n = unsafe { libc::poll(polled.as_mut_ptr(), N as libc::nfds_t, timeout_ms) };
        if n >= 0 {
            return Ok(polled.map(|p| p.fd >= 0 && p.revents != 0));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Waits until child `pid` has ended, without reaping it: its pid (and process group id)
/// stay reserved until the caller reaps it, so signalling them is safe meanwhile.
pub(crate) fn wait_ended(pid: i32) {
    loop {
        // SAFETY: waitid writes only the siginfo it is given.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Makes this process adopt the orphans among its descendants (Linux; elsewhere nothing).
pub(crate) fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_CHILD_SUBREAPER takes a flag and touches no memory of this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong);
    }
}

/// Whether this process has any child (alive or not yet reaped): one system call.
pub(crate) fn has_children() -> bool {
    loop {
        // SAFETY: waitid writes only the siginfo it is given.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_ALL,
                0,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return true;
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            _ => return false,
        }
    }
}

/// Kills every child of this process and reaps it, and then the children it leaves to this
/// process (when it adopts orphans), until none is left: the live ones, named. Children
/// that had already ended are reaped without a name. Call it only where every child is a
/// leftover (a trial worker after its trial, the supervisor after its run process).
pub(crate) fn kill_leftovers() -> Vec<Leftover> {
    let mut named: Vec<Leftover> = Vec::new();
    // Each round kills one generation; a bound keeps a fork bomb from holding the run.
    for _ in 0..64 {
        reap_ended();
        let live = live_children();
        if live.is_empty() {
            break;
        }
        for leftover in live {
            // SAFETY: kill(2) and waitpid(2) on our own unreaped child touch no memory.
            unsafe {
                libc::kill(leftover.pid, libc::SIGKILL);
                let mut status = 0;
                while libc::waitpid(leftover.pid, &mut status, 0) < 0
                    && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                {
                }
            }
            if !named.iter().any(|n| n.pid == leftover.pid) {
                named.push(leftover);
            }
        }
    }
    named
}

/// Reaps the children that have ended, other than `keep` (left unreaped, its pid reserved):
/// as long as the next ended child is not `keep` (Linux; elsewhere nothing is adopted, so
/// nothing is done).
pub(crate) fn reap_ended_except(keep: i32) {
    #[cfg(target_os = "linux")]
    loop {
        // SAFETY: waitid writes only the siginfo it is given; si_pid reads a field of it.
        let pid = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let r = libc::waitid(
                libc::P_ALL,
                0,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            if r != 0 {
                return;
            }
            info.si_pid()
        };
        if pid == 0 || pid == keep {
            return;
        }
        let mut status = 0;
        // SAFETY: waitpid on our own ended child writes only the status it is given.
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } <= 0 {
            return;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = keep;
}

/// Reaps every child that has ended.
fn reap_ended() {
    let mut status = 0;
    // SAFETY: waitpid writes only the status it is given.
    while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
}

/// This process's children that are alive (not zombies), from `/proc/self/task/*/children`.
fn live_children() -> Vec<Leftover> {
    #[cfg(target_os = "linux")]
    {
        let mut found = Vec::new();
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return found;
        };
        for task in tasks.flatten() {
            let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for pid in text
                .split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok())
            {
                if let Some((state, command)) = stat_of(pid)
                    && state != 'Z'
                {
                    found.push(Leftover { pid, command });
                }
            }
        }
        found
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// The live members of process group `pgid` other than `pgid` itself (Linux: a scan of
/// `/proc`; elsewhere none).
pub(crate) fn group_members(pgid: i32) -> Vec<Leftover> {
    #[cfg(target_os = "linux")]
    {
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == pgid {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid pgrp ...`: the command may hold spaces and parentheses.
            let Some(close) = stat.rfind(')') else {
                continue;
            };
            let mut rest = stat[close + 1..].split_whitespace();
            let state = rest.next().and_then(|s| s.chars().next());
            let group = rest.nth(1).and_then(|g| g.parse::<i32>().ok());
            if group == Some(pgid) && state != Some('Z') {
                let command = stat
                    .find('(')
                    .map_or("", |open| &stat[open + 1..close])
                    .to_string();
                found.push(Leftover { pid, command });
            }
        }
        found
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pgid;
        Vec::new()
    }
}

/// Kills process group `pgid` (its leader an unreaped child of this process, so the id
/// cannot name another group).
pub(crate) fn kill_group(pgid: i32) {
    // SAFETY: kill(2) touches no memory.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

#[cfg(target_os = "linux")]
fn stat_of(pid: i32) -> Option<(char, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let state = stat[close + 1..]
        .split_whitespace()
        .next()?
        .chars()
        .next()?;
    Some((state, stat[open + 1..close].to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_stopped_pump_reads_what_was_written_and_does_not_wait_for_a_writer_still_open() {
        let (read, write) = pipe().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut pump = {
            let seen = std::sync::Arc::clone(&seen);
            let me = std::process::id() as i32;
            Pump::start(read, me, move |b| seen.lock().unwrap().extend_from_slice(b)).unwrap()
        };
        let mut writer = std::fs::File::from(write.try_clone().unwrap());
        writer.write_all(b"written before the stop\n").unwrap();
        // `write` stays open (as a process left behind would hold it): stop must not wait.
        pump.stop();
        assert_eq!(&seen.lock().unwrap()[..], b"written before the stop\n");
        drop(write);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pump_ends_when_its_writer_ends_though_another_process_holds_the_pipe() {
        let (read, write) = pipe().unwrap();
        let mut child = Command::new("true").spawn().unwrap();
        let (send, ended) = std::sync::mpsc::channel::<()>();
        let _pump = Pump::start(read, child.id() as i32, move |_| {
            let _ = &send;
        })
        .unwrap();
        // `write` stays open: only the end of the writer ends the pump (the thread drops
        // `send`). 20 s is a guard against a hang, not a measure of speed.
        let outcome = ended.recv_timeout(std::time::Duration::from_secs(20));
        assert_eq!(
            outcome,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        );
        child.wait().unwrap();
        drop(write);
    }

    #[test]
    fn channels_are_close_on_exec_and_an_inherited_one_is_made_so() {
        let (a, b) = socket_pair().unwrap();
        let (c, d) = pipe().unwrap();
        for fd in [&a, &b, &c, &d] {
            // SAFETY: F_GETFD touches no memory.
            let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
            assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        }
        // SAFETY: clearing the flag of our own descriptor, as `pass_fd` does in a child.
        unsafe { libc::fcntl(d.as_raw_fd(), libc::F_SETFD, 0) };
        let raw = d.as_raw_fd();
        std::mem::forget(d);
        let taken = take_inherited(raw).unwrap();
        // SAFETY: F_GETFD touches no memory.
        let flags = unsafe { libc::fcntl(taken.as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        assert!(take_inherited(1 << 20).is_err());
    }
}
