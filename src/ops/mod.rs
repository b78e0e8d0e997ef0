//! What each command does, free of argument parsing: `cli/` turns flags into a
//! plain config and calls one function here, which returns a typed result (or
//! an error that knows its exit status) for a renderer to turn into text, JSON,
//! CSV or HTML. A second caller (compare calling analyze, a future server)
//! calls these functions, never a command.
//!
//! (The analyze pipeline and the compare glue still sit in `cli/commands.rs`
//! until they move here.)

pub mod analyze;
pub mod collect;
pub mod compare;
pub mod error;
pub mod export;
pub mod export_parquet;
pub mod history;
pub mod html;
pub mod ingest;
pub mod join;
pub mod judge;
pub mod judge_all;
pub mod report;
pub mod runs;
pub mod slo;

pub use error::{write_output, Error, Result};
