//! SLO policies and their judgement (docs/slo-policy.md): the `--slo KEY:MS`
//! grammar, policy files (`stormlog.infer.slo` v1 in JSON, or the same
//! document in TOML), the artifact's `infer.slo` record and which policy a
//! report uses, the digest (identical to the reference's), per-request
//! verdicts, and each case's `stormlog.infer.slo_evaluation` record with
//! attainment bounds and goodput. Pure code: no SQLite, no clap; callers
//! hand in requests, intervals, populations and joined spans.
//!
//! Flow: [`policy_from_flags`] / [`load_file`] → [`select`] (against the
//! recorded policies) → [`evaluate_case`] per case → [`case_text_line`].

use std::collections::HashMap;

use serde_json::{Map, Value};

pub mod answers;
pub mod criteria;
pub mod digest;
pub mod evaluate;
pub mod file;
pub mod flags;
pub mod judge;
pub mod policy;
pub mod select;
pub mod sweep;
pub mod targets;

#[cfg(test)]
pub(crate) mod tests;

pub use criteria::{Boundary, CriterionKey};
pub use digest::digest;
pub use evaluate::{case_text_line, evaluate_case};
pub use file::load_file;
pub use flags::{parse_flags, policy_from_cli, policy_from_flags};
pub use judge::{judge_request, measure, measure_key, measure_value, Measure, Outcome, Verdict};
pub use policy::{from_document, Criterion, Interval, Policy};
pub use select::{select, Selected};

/// Where the policy in force came from (the report's `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicySource {
    /// `--slo KEY:MS` flags.
    Flags,
    /// `--slo-file FILE`, or `--slo FILE.toml|FILE.json`.
    File,
    /// The artifact's own `infer.slo` record.
    Artifact,
}

impl PolicySource {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicySource::Flags => "flags",
            PolicySource::File => "file",
            PolicySource::Artifact => "artifact",
        }
    }
}

/// Why no policy could be had. `Display` is the reference's message without
/// the leading `Error: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SloError {
    /// A bad `--slo` value, or `--slo` with `--slo-file` (exit 2).
    #[error("{0}")]
    Usage(String),
    /// A policy file that cannot be read or is not a valid policy (exit 5).
    #[error("SLO policy {path}: {message}")]
    Policy { path: String, message: String },
    /// The artifact's recorded policy cannot be used (exit 5).
    #[error("{0}")]
    Artifact(String),
}

impl SloError {
    /// `--slo` and `--slo-file` given together.
    pub fn slo_and_slo_file() -> Self {
        SloError::Usage("use --slo or --slo-file, not both".into())
    }

    /// The exit status: usage for a bad flag, invalid input for a policy.
    pub fn exit(&self) -> crate::exit::Exit {
        match self {
            SloError::Usage(_) => crate::exit::Exit::Usage,
            SloError::Policy { .. } | SloError::Artifact(_) => crate::exit::Exit::InvalidInput,
        }
    }
}

/// A run's joined vLLM spans (docs/report.md §6.3.5), keyed by the string form
/// of `x_request_id`.
#[derive(Debug, Clone, Copy)]
pub struct Spans<'a> {
    /// Trusted span attributes per request.
    pub joined: &'a HashMap<String, Map<String, Value>>,
    /// Requests whose spans were left out, with the reason
    /// (`conflicting_spans`, `multiple_spans`).
    pub quarantined: &'a HashMap<String, String>,
}
