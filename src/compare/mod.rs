//! `stormlog infer compare`: a baseline arm of profile artifacts against a
//! candidate arm, case by case, with the reference's statistics, gates,
//! JSON and text reports and exit statuses (0, or 4 when a gate fails or
//! cannot be evaluated; 5 when the runs cannot be compared, 2 for usage).
//!
//! The command itself (flags to a spec, runs loaded and analyzed, reports
//! written) is [`crate::ops::compare`]; this module owns everything it
//! calls: run summaries and comparability
//! (`compat`), the metrics read from each case (`metrics`), one metric's
//! statistics and gate (`stats`, `dist`, `rng`), the comparison of the arms
//! (`engine`) and its reports (`report`, `text`, `ojson`). docs/compare.md
//! describes the behaviour in prose.

pub mod arms;
mod attainment;
mod cases;
mod comparability;
pub mod compat;
pub mod definitions;
pub mod dist;
pub mod engine;
mod family;
pub mod metrics;
pub mod ojson;
pub mod report;
pub mod rng;
pub mod spec;
pub mod stats;
pub mod summary;
pub mod text;

pub use spec::gate_flag;

use crate::exit::Exit;

/// Why a comparison could not run. `Display` is the message without `Error: `.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The command line was wrong (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The runs cannot be compared (exit 5).
    #[error("{0}")]
    Input(String),
    /// Any other failure, with its own exit status.
    #[error("{message}")]
    Other { message: String, exit: Exit },
}

impl CompareError {
    pub fn usage(message: impl Into<String>) -> Self {
        CompareError::Usage(message.into())
    }

    pub fn input(message: impl Into<String>) -> Self {
        CompareError::Input(message.into())
    }

    /// The exit status this error ends the command with.
    pub fn exit(&self) -> Exit {
        match self {
            CompareError::Usage(_) => Exit::Usage,
            CompareError::Input(_) => Exit::InvalidInput,
            CompareError::Other { exit, .. } => *exit,
        }
    }
}

impl From<std::io::Error> for CompareError {
    fn from(e: std::io::Error) -> Self {
        CompareError::Other {
            message: e.to_string(),
            exit: Exit::Unexpected,
        }
    }
}
