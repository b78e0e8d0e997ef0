//! Exit statuses, in one place. They keep the reference's contract so scripts
//! written against `stormlog infer analyze` keep working.

/// The statuses stormlog exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything worked.
    Ok = 0,
    /// An unexpected failure (a bug, an I/O error we did not foresee).
    Unexpected = 1,
    /// The command line was wrong.
    Usage = 2,
    /// The analysis produced findings the caller asked to be told about.
    Findings = 3,
    /// A gate or budget failed (or was not evaluable).
    GateFailed = 4,
    /// The input was invalid: nothing was changed.
    InvalidInput = 5,
    /// The project database could not be read or written (a full disk, a
    /// read-only file or directory, another process holding it, a file that
    /// is no database): nothing was changed.
    Database = 6,
    /// Interrupted by the user (Ctrl+C).
    Interrupted = 130,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}
