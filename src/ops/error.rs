//! The error every command of `ops` returns: the message for stderr and the
//! exit status it maps to (`exit`), with the conversions from the library's
//! errors. `cli` prints it as `Error: {message}` and exits with its status.
use crate::db::{self, DbError};
use crate::exit::Exit;
use crate::ingest::IngestError;

/// A command's failure, with the exit status it maps to.
#[derive(Debug)]
pub struct Error {
    pub message: String,
    pub exit: Exit,
    /// The reader of stdout went away (`stormlog report | head`): the
    /// command ends quietly.
    pub broken_pipe: bool,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A command's result.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            exit,
            broken_pipe: false,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error {
            broken_pipe: e.kind() == std::io::ErrorKind::BrokenPipe,
            message: e.to_string(),
            exit: Exit::Unexpected,
        }
    }
}

impl From<DbError> for Error {
    fn from(e: DbError) -> Self {
        match db::failure::advice(&e) {
            Some(advice) => Error::new(Exit::Database, format!("{e}: {advice}")),
            None => Error::new(e.exit(), e.to_string()),
        }
    }
}

impl From<IngestError> for Error {
    fn from(e: IngestError) -> Self {
        let exit = match e {
            IngestError::Invalid { .. } | IngestError::Conflict { .. } | IngestError::Io { .. } => {
                Exit::InvalidInput
            }
            IngestError::Db(_) => Exit::Unexpected,
        };
        Error::new(exit, e.to_string())
    }
}

impl From<crate::slo::SloError> for Error {
    fn from(e: crate::slo::SloError) -> Self {
        Error::new(e.exit(), e.to_string())
    }
}

impl From<crate::report::ReportError> for Error {
    fn from(e: crate::report::ReportError) -> Self {
        Error::new(e.exit, e.message)
    }
}

/// An output file that could not be written: an unexpected failure, named
/// by its path.
impl From<crate::output::WriteFailed> for Error {
    fn from(e: crate::output::WriteFailed) -> Self {
        Error::new(Exit::Unexpected, e.to_string())
    }
}

/// Writes a command's `-o FILE` whole (`output::write_atomic`), creating
/// its parent folders.
pub fn write_output(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    Ok(crate::output::write_atomic(
        path,
        bytes,
        crate::output::Parents::Create,
    )?)
}
