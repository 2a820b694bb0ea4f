//! The exit codes seedledger commands use, documented in one place.

use std::process::ExitCode;

/// Process exit status of every seedledger command: the decisions' three outcomes.
///
/// | code | meaning |
/// |---|---|
/// | 0 | success: properties passed, every receipt `freeze_eligible`, a freeze admitted |
/// | 1 | "no": a property failed, a receipt is not eligible, a freeze is refused |
/// | 2 | error: unreadable input, bad arguments, an I/O failure |
/// | 130, 143 | `prop run` interrupted by SIGINT or SIGTERM (128 + the signal, as a shell reports it; its receipts stay open) |
///
/// The last row is no variant: an interrupted run exits with 128 + the signal number
/// directly (the command line's `prop` supervisor), so that shells and CI see the signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
    /// Success: properties passed, every receipt `freeze_eligible`, a freeze admitted.
    Success = 0,
    /// "No": a property failed, a receipt is not eligible, a freeze is refused.
    No = 1,
    /// Error: unreadable input, bad arguments, an I/O failure.
    Error = 2,
}

impl ExitStatus {
    /// The process exit code (0, 1 or 2).
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        ExitCode::from(status.code())
    }
}
