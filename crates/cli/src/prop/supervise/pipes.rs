//! Reading the run process: its stdout (passed through) and its event pipe (one event per
//! line), interleaved in the order written, until it has ended.

use super::*;

/// What the worker sent: output of its stdout to pass through, or one event line; or that
/// `signals` is readable (a signal to pass on to the worker came).
pub(super) enum Chunk<'a> {
    Output(&'a [u8]),
    Event(&'a [u8]),
    Signals,
}

/// Reads the worker's stdout and its event pipe, in the order written (output that came
/// before an event is passed on before it), until `ended` is readable (the worker has ended:
/// its pidfd, or a pipe closed then); then only what the two pipes already hold. Until then,
/// a readable `signals` is said too. Meanwhile, at least once a second, it reaps the orphans
/// this process adopted that have ended (never `worker`): a property that starts a
/// short-lived background process per trial leaves no zombies behind.
pub(super) fn read_worker(
    stdout: Option<OwnedFd>,
    events: OwnedFd,
    (ended, worker, signals): (&OwnedFd, i32, i32),
    mut on: impl FnMut(Chunk<'_>),
) {
    let mut output = stdout.map(File::from);
    let mut events = Some(File::from(events));
    let (mut out_buf, mut event_buf) = (Vec::new(), Vec::new());
    let mut chunk = vec![0u8; 64 * 1024];
    let raw = |f: &Option<File>| f.as_ref().map_or(-1, AsRawFd::as_raw_fd);
    // Reads one chunk of `file` into `buf`; at its end (or an error) the file is dropped.
    let mut read_into = |file: &mut Option<File>, buf: &mut Vec<u8>| {
        let Some(f) = file else { return };
        match f.read(&mut chunk) {
            Ok(0) | Err(_) => *file = None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let mut worker_ended = false;
    // After the worker's end, a bound on the rounds: a process left behind may write on.
    let mut rounds_left = 256;
    loop {
        procs::reap_ended_except(worker);
        let (timeout, ended_fd, signals_fd) = match worker_ended {
            true => (0, -1, -1),
            false => (1000, ended.as_raw_fd(), signals),
        };
        let Ok([out_ready, event_ready, end_ready, signalled]) =
            procs::poll_ready([raw(&output), raw(&events), ended_fd, signals_fd], timeout)
        else {
            break;
        };
        if signalled {
            on(Chunk::Signals);
        }
        if out_ready {
            read_into(&mut output, &mut out_buf);
            if let Some(end) = out_buf.iter().rposition(|&b| b == b'\n') {
                on(Chunk::Output(&out_buf[..=end]));
                out_buf.drain(..=end);
            }
        } else if event_ready {
            // Only once the output written before it is passed on, whole lines or not.
            if !out_buf.is_empty() {
                on(Chunk::Output(&out_buf));
                out_buf.clear();
            }
            read_into(&mut events, &mut event_buf);
            let mut start = 0;
            while let Some(end) = event_buf[start..].iter().position(|&b| b == b'\n') {
                on(Chunk::Event(&event_buf[start..=start + end]));
                start += end + 1;
            }
            event_buf.drain(..start);
        }
        worker_ended |= end_ready;
        if output.is_none() && events.is_none() {
            // Both pipes are closed: the worker is ending; wait for it alone.
            while !worker_ended {
                match procs::poll_ready([ended.as_raw_fd(), signals], -1) {
                    Ok([end_ready, signalled]) => {
                        if signalled {
                            on(Chunk::Signals);
                        }
                        worker_ended = end_ready;
                    }
                    Err(_) => break,
                }
            }
            break;
        }
        if worker_ended && ((!out_ready && !event_ready) || rounds_left == 0) {
            break;
        }
        if worker_ended {
            rounds_left -= 1;
        }
    }
    if !out_buf.is_empty() {
        on(Chunk::Output(&out_buf));
    }
    if !event_buf.is_empty() {
        on(Chunk::Event(&event_buf));
    }
}
