//! The exit codes every seedledger command uses, documented in one place.

use std::process::ExitCode;

/// Process exit status of every seedledger command.
///
/// | code | meaning |
/// |---|---|
/// | 0 | success: properties passed, every receipt `freeze_eligible`, a freeze admitted |
/// | 1 | "no": a property failed, a receipt is not eligible, a freeze is refused |
/// | 2 | error: unreadable input, bad arguments, an I/O failure |
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
