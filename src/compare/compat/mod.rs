//! Whether two runs measured the same thing, field by field (the
//! reference's `compatibility` and `config_classes`). A run's fields come
//! from its artifact: the `before` server description, the server's probe
//! answers, the workload record, the observers and the operator's
//! declarations, each with its provenance. docs/compare.md §2.
//!
//! Here the vocabulary and the comparison of two runs' fields; the classes
//! of the field names in `classes`, where the fields are read from in
//! `sources`.

mod classes;
mod sources;

pub use classes::*;
pub use sources::*;

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::compare::ojson::{obj, J};
use crate::py::json::{dumps_with, get, py_eq};

pub const COMPATIBLE: &str = "compatible";
pub const UNVERIFIED: &str = "unverified";
pub const INCOMPATIBLE: &str = "incompatible";
/// What a comparison may see differ: only allowed fields (`config`); the
/// candidate adds observers to an observer-free baseline (`overhead`); it
/// adds declared observers to shared ones (`incremental`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Config,
    Overhead,
    Incremental,
}

impl Mode {
    /// The name as `--mode` and the reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Config => "config",
            Mode::Overhead => "overhead",
            Mode::Incremental => "incremental",
        }
    }

    /// The mode a flag's text names, if any.
    pub fn from_name(text: &str) -> Option<Self> {
        [Mode::Config, Mode::Overhead, Mode::Incremental]
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The plain comparison of two runs' fields (history compares so).
pub const CONFIG: Mode = Mode::Config;
const IDENTITY: &str = "identity";
const LAUNCH: &str = "launch";
const OBSERVATION: &str = "observation";
const LABEL: &str = "label";
const UNCLASSIFIED: &str = "unclassified";
const OBSERVED: &str = "observed";
const REPORTED: &str = "reported";
const INFERRED: &str = "inferred";
const DECLARED: &str = "declared";
const VLLM_CONFIG: &str = "vllm_config";
const VLLM_ENV: &str = "vllm_env";
const SCOPE_VLLM_CONFIG: &str = "scope.vllm_config";
const SCOPE_VLLM_ENV: &str = "scope.vllm_env";
const SCOPE_ENVIRON: &str = "scope.environ";
const REQUIRED_V1: [&str; 6] = [
    "model.weights_digest",
    "engine.version",
    "gpu.name",
    "gpu.driver_version",
    "workload.spec_digest",
    VLLM_CONFIG,
];
const VERIFIED_EVIDENCE: [&str; 3] = [
    "pinned_commit_verified",
    "pinned_snapshot_verified",
    "staged_snapshot_verified",
];

/// One field of a run: its value, where it came from, and how it is known.
#[derive(Debug, Clone, PartialEq)]
pub struct RunField {
    pub value: Value,
    pub source: String,
    pub provenance: &'static str,
    /// A `null` that is a setting (vLLM's configuration), not missing evidence.
    pub null_is_value: bool,
}

fn is_redacted(v: &Value) -> bool {
    get(v, "redacted") == &Value::Bool(true)
}

impl RunField {
    fn new(value: Value, source: &str, provenance: &'static str) -> Self {
        RunField {
            value,
            source: source.to_owned(),
            provenance,
            null_is_value: false,
        }
    }

    pub fn known(&self) -> bool {
        let unavailable = self.value.is_object() && self.value.get("unavailable").is_some();
        let missing = self.value.is_null() && !self.null_is_value;
        !(missing || is_redacted(&self.value) || unavailable)
            && self.provenance != INFERRED
            && self.provenance != DECLARED
    }
}

pub type Fields = BTreeMap<String, RunField>;

/// One field on which two runs differ, or are not known to agree.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub name: String,
    pub class: &'static str,
    pub a: Value,
    pub b: Value,
    pub reason: &'static str,
}

impl Difference {
    pub fn to_record(&self) -> J {
        obj([
            ("field", J::from(&self.name)),
            ("class", J::from(self.class)),
            ("a", J::Raw(self.a.clone())),
            ("b", J::Raw(self.b.clone())),
            ("reason", J::from(self.reason)),
        ])
    }
}

/// The result of comparing two runs' fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Compatibility {
    pub status: &'static str,
    pub mode: Mode,
    pub blocking: Vec<Difference>,
    pub unverified: Vec<Difference>,
    pub allowed: Vec<Difference>,
    pub covariates: Vec<Difference>,
    pub observation: Vec<Difference>,
    pub unknown: Vec<String>,
}

impl Compatibility {
    pub fn to_record(&self) -> J {
        let list =
            |items: &Vec<Difference>| J::Arr(items.iter().map(Difference::to_record).collect());
        obj([
            ("status", J::from(self.status)),
            ("mode", J::from(self.mode.as_str())),
            ("classes", J::from("config_classes_v1")),
            ("blocking", list(&self.blocking)),
            ("unverified", list(&self.unverified)),
            ("allowed", list(&self.allowed)),
            ("covariates", list(&self.covariates)),
            ("observation", list(&self.observation)),
            (
                "unknown",
                J::Arr(self.unknown.iter().map(J::from).collect()),
            ),
        ])
    }
}

fn allowance(name: &str) -> String {
    if let Some(pointer) = table_get(ALIASES, name) {
        return format!("{VLLM_CONFIG}{pointer}");
    }
    if name.starts_with('/') {
        return format!("{VLLM_CONFIG}{name}");
    }
    name.to_owned()
}

fn covers(allowance: &str, name: &str) -> bool {
    name == allowance
        || name.starts_with(&format!("{allowance}/"))
        || name.starts_with(&format!("{allowance}."))
}

/// Whether one of the `--allow` names covers a field, as `compatible` decides it.
pub fn allowed_by(allowed: &[String], name: &str) -> bool {
    allowed.iter().any(|a| covers(&allowance(a), name))
}

fn known(item: Option<&RunField>) -> bool {
    item.is_some_and(RunField::known)
}

fn read_scope(fields: &Fields, name: &str) -> bool {
    let scope = if name.starts_with("vllm_config/") {
        Some(SCOPE_VLLM_CONFIG)
    } else if name.starts_with("vllm_env/") {
        Some(SCOPE_VLLM_ENV)
    } else if name.starts_with("environ.") {
        Some(SCOPE_ENVIRON)
    } else {
        None
    };
    scope.is_some_and(|s| known(fields.get(s)))
}

fn value_of(item: Option<&RunField>) -> Value {
    item.map_or(Value::Null, |f| f.value.clone())
}

fn one_sided(name: &str, a: &Fields, b: &Fields) -> Option<Difference> {
    let (first, second) = (a.get(name), b.get(name));
    match (first, second) {
        (None, Some(s)) if read_scope(a, name) => Some(Difference {
            name: name.into(),
            class: classify(name),
            a: Value::Null,
            b: s.value.clone(),
            reason: if s.known() {
                "only_in_b"
            } else {
                "differs_unverified"
            },
        }),
        (Some(f), None) if read_scope(b, name) => Some(Difference {
            name: name.into(),
            class: classify(name),
            a: f.value.clone(),
            b: Value::Null,
            reason: if f.known() {
                "only_in_a"
            } else {
                "differs_unverified"
            },
        }),
        _ => None,
    }
}

fn compared(
    name: &str,
    class: &'static str,
    first: Option<&RunField>,
    second: Option<&RunField>,
) -> Option<Difference> {
    let (a, b) = (value_of(first), value_of(second));
    let make = |reason| {
        Some(Difference {
            name: name.into(),
            class,
            a: a.clone(),
            b: b.clone(),
            reason,
        })
    };
    if known(first) && known(second) {
        if py_eq(&a, &b) {
            return None;
        }
        return make(if class == UNCLASSIFIED {
            "unclassified"
        } else {
            "differs"
        });
    }
    if a.is_null() && b.is_null() {
        return None;
    }
    let disagree = !a.is_null() && !b.is_null() && !py_eq(&a, &b);
    make(if disagree {
        "differs_unverified"
    } else {
        "unknown"
    })
}

fn required_known(name: &str, fields: &Fields) -> bool {
    if name == VLLM_CONFIG {
        return known(fields.get(SCOPE_VLLM_CONFIG));
    }
    known(fields.get(name))
}

/// Whether runs `a` and `b` measured the same thing.
pub fn compatible(a: &Fields, b: &Fields, allowed: &[String], mode: Mode) -> Compatibility {
    let allowances: Vec<String> = allowed.iter().map(|n| allowance(n)).collect();
    let mut c = Compatibility {
        status: COMPATIBLE,
        mode,
        blocking: vec![],
        unverified: vec![],
        allowed: vec![],
        covariates: vec![],
        observation: vec![],
        unknown: vec![],
    };
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let difference = one_sided(name, a, b)
            .or_else(|| compared(name, classify(name), a.get(name), b.get(name)));
        let Some(d) = difference else { continue };
        if d.class == LABEL {
            continue;
        }
        match d.reason {
            "unknown" if d.class == IDENTITY || d.class == UNCLASSIFIED => c.unverified.push(d),
            "unknown" => c.unknown.push(d.name),
            "differs_unverified" => c.unverified.push(d),
            _ => {
                if allowances.iter().any(|al| covers(al, &d.name)) {
                    c.allowed.push(d);
                } else if d.class == LAUNCH {
                    c.covariates.push(d);
                } else if d.class == OBSERVATION && mode != CONFIG {
                    c.observation.push(d);
                } else {
                    c.blocking.push(d);
                }
            }
        }
    }
    let shown: Vec<String> = c.unverified.iter().map(|d| d.name.clone()).collect();
    for name in REQUIRED_V1 {
        if !(shown.iter().any(|s| s == name) || required_known(name, a) && required_known(name, b))
        {
            c.unverified.push(Difference {
                name: name.into(),
                class: IDENTITY,
                a: value_of(a.get(name)),
                b: value_of(b.get(name)),
                reason: "unknown",
            });
        }
    }
    c.status = if !c.blocking.is_empty() {
        INCOMPATIBLE
    } else if !c.unverified.is_empty() {
        UNVERIFIED
    } else {
        COMPATIBLE
    };
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_longest_pointer_or_prefix() {
        assert_eq!(
            classify("vllm_config/scheduler_config/max_num_seqs"),
            IDENTITY
        );
        assert_eq!(
            classify("vllm_config/model_config/served_model_name"),
            LABEL
        );
        assert_eq!(classify("vllm_config/instance_id"), LAUNCH);
        assert_eq!(classify("vllm_config/unknown_thing"), UNCLASSIFIED);
        assert_eq!(classify("vllm_env/VLLM_PORT"), LAUNCH);
        assert_eq!(classify("environ.STORMLOG_RUN_MARK"), LABEL);
        assert_eq!(classify("environ.STORMLOG_X"), OBSERVATION);
        assert_eq!(classify("workload.realization_digest"), LAUNCH);
        assert_eq!(classify("observer.trace"), OBSERVATION);
    }

    #[test]
    fn an_allowed_alias_moves_a_difference_out_of_blocking() {
        let field = |v: Value| RunField {
            value: v,
            source: "/server_info".into(),
            provenance: REPORTED,
            null_is_value: true,
        };
        let mut a = Fields::new();
        let mut b = Fields::new();
        a.insert(
            "vllm_config/scheduler_config/max_num_seqs".into(),
            field(Value::from(256)),
        );
        b.insert(
            "vllm_config/scheduler_config/max_num_seqs".into(),
            field(Value::from(2)),
        );
        let blocked = compatible(&a, &b, &[], CONFIG);
        assert_eq!(blocked.status, INCOMPATIBLE);
        let allowed = compatible(&a, &b, &["engine.max_num_seqs".to_owned()], CONFIG);
        assert_eq!(allowed.allowed.len(), 1);
        assert_eq!(allowed.status, UNVERIFIED);
    }
}
