//! The one integration test binary: conformance against the reference's own
//! outputs (the cases under `tests/fixtures/conformance`), the project
//! database's promises (idempotence, export round trip, atomic refusal,
//! crash safety, concurrency), and the command line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cases;
mod common;
mod compare;
mod conformance;
mod database;
mod execution;
mod export_parquet;
mod firsthour;
mod fuzz;
mod history;
mod hostile;
mod html;
mod layering;
mod peers;
mod segment;
mod slo;
mod slo_questions;
mod snapshots;
