//! What each command does, free of argument parsing: `cli/` turns flags into a
//! plain config and calls one function here, which returns a typed result (or
//! an error that knows its exit status) for a renderer to turn into text, JSON,
//! CSV or HTML. A second caller (compare calling analyze, a future server)
//! calls these functions, never a command.
//!
//! Commands written before this layer still keep their glue in
//! `cli/commands.rs`; they move here one at a time.

pub mod export_parquet;
pub mod history;
pub mod html;
pub mod judge_all;
pub mod slo;
