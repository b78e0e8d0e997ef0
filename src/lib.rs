//! stormlog: an analytics engine for LLM inference profiling runs.
//!
//! Data flow:
//!
//! ```text
//!  artifact.jsonl ─┐                                    ┌─> analysis, slo, join, vllm (pure passes) ─> report (JSON / txt / html)
//!  telemetry.jsonl ┼─> ingest ─> db (SQLite project) ───┼─> export (JSONL back out, Parquet), sql, history
//!  spans.jsonl  ───┤   (one transaction per file)       └─> compare (arms of analysed runs, gates)
//!  other tools ────┘ (import)
//!  live server ──> collector (process and GPU samples) ─> telemetry JSONL, or db through a sink
//! ```
//!
//! `cli` parses arguments into plain configs and calls `ops`, one function
//! per command; `ingest` decodes files into `model` records and writes them
//! through `db`; `ops` loads a run from `db`, runs the `analysis`, `slo`,
//! `join` and `vllm` passes and has `report` render the result; `compare`
//! and `history` work on analysed runs; `collector` samples a live server.
//! `model`, `analysis`, `slo` and `join` never touch SQLite, clap or sysinfo
//! (docs/architecture.md has the module map and the rules, which
//! tests/it/layering.rs checks).

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
pub mod report;
pub mod slo;
pub mod sql;
pub mod sqlcmd;
pub mod util;
pub mod vllm;
