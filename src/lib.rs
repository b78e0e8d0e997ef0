//! stormlog: an analytics engine for LLM inference profiling runs.
//!
//! Data flow:
//!
//! ```text
//!  artifact.jsonl ─┐                      ┌─> analysis (pure passes, rayon) ─> report (JSON / txt)
//!  telemetry.jsonl ┼─> ingest ─> db (SQLite project database) ─┤
//!  spans.jsonl  ───┘     (one transaction per file)            └─> export (JSONL back out), sql
//! ```
//!
//! `cli` parses arguments and dispatches; `ingest` decodes files into `model`
//! records and writes them through `db`; `report` loads a run from `db`,
//! runs the `analysis`, `slo` and `join` passes and renders the result.
//! `model`, `analysis`, `slo` and `join` never touch SQLite, clap or sysinfo.

pub mod analysis;
pub mod cli;
pub mod collector;
pub mod columnar;
pub mod compare;
pub mod db;
pub mod exit;
pub mod history;
pub mod html;
pub mod import;
pub mod ingest;
pub mod join;
pub mod model;
pub mod ops;
pub mod output;
pub mod py;
pub mod pyjson;
pub mod report;
pub mod slo;
pub mod sql;
pub mod sqlcmd;
pub mod util;
pub mod vllm;
