//! Whether the arms measured the same thing (the reference's
//! `stormlog.infer.compare` comparability checks): the fields of each arm's
//! runs and across the arms ([`super::compat`]), and the observer contract
//! of an overhead or incremental comparison. docs/compare.md §2.

use serde_json::Value;

use super::compat::{self, Compatibility, Mode, INCOMPATIBLE, UNVERIFIED};
use super::engine::{arm_runs, Arms, WithinArm, BASELINE, CANDIDATE};
use super::spec::Spec;
use super::summary::RunSummary;
use super::CompareError;
use crate::py::json::{get, truthy};

pub(super) type CompatOut = (
    Compatibility,
    Vec<(String, String, Vec<String>)>,
    Vec<WithinArm>,
);

pub(super) fn compatibility(usable: &Arms, spec: &Spec) -> Result<CompatOut, CompareError> {
    let mut within = Vec::new();
    for (arm, runs) in usable {
        for run in runs.iter().skip(1) {
            let result = compat::compatible(
                &runs[0].fields,
                &run.fields,
                &spec.allow_within_arm,
                Mode::Config,
            );
            if result.status == INCOMPATIBLE {
                return Err(CompareError::input(incompatible(
                    &format!("{arm} runs"),
                    &result,
                    "--allow-within-arm",
                )));
            }
            within.push((*arm, runs[0].name.clone(), run.name.clone(), result));
        }
    }
    let anywhere: Vec<String> = spec
        .allow
        .iter()
        .chain(&spec.allow_within_arm)
        .cloned()
        .collect();
    let (baseline, candidate) = (arm_runs(usable, BASELINE), arm_runs(usable, CANDIDATE));
    let mut cross: Vec<(&RunSummary, &RunSummary)> = vec![(&baseline[0], &candidate[0])];
    cross.extend(candidate.iter().skip(1).map(|r| (&baseline[0], r)));
    cross.extend(baseline.iter().skip(1).map(|r| (r, &candidate[0])));
    let mut across = Vec::new();
    for (first, second) in cross {
        let result = compat::compatible(&first.fields, &second.fields, &anywhere, spec.mode);
        if result.status == INCOMPATIBLE {
            return Err(CompareError::input(incompatible(
                "the arms", &result, "--allow",
            )));
        }
        across.push((first.name.clone(), second.name.clone(), result));
    }
    let results: Vec<(&String, &String, &Compatibility)> = within
        .iter()
        .map(|(_, a, b, r)| (a, b, r))
        .chain(across.iter().map(|(a, b, r)| (a, b, r)))
        .collect();
    let pairs: Vec<(String, String, Vec<String>)> = results
        .iter()
        .filter(|(_, _, r)| r.status == UNVERIFIED)
        .map(|(a, b, r)| {
            let mut names: Vec<String> = r.unverified.iter().map(|d| d.name.clone()).collect();
            names.sort();
            ((*a).clone(), (*b).clone(), names)
        })
        .collect();
    let mut worst = across[0].2.clone();
    if results.iter().any(|(_, _, r)| r.status == UNVERIFIED) {
        let mut names: Vec<compat::Difference> = Vec::new();
        for (_, _, r) in results.iter().filter(|(_, _, r)| r.status == UNVERIFIED) {
            for item in &r.unverified {
                if !names.iter().any(|d| d.name == item.name) {
                    names.push(item.clone());
                }
            }
        }
        worst.status = UNVERIFIED;
        worst.unverified = names;
    }
    let mut mixed = Vec::new();
    for (arm, runs) in usable {
        let mut names: Vec<String> = within
            .iter()
            .filter(|(a, ..)| a == arm)
            .flat_map(|(_, _, _, r)| r.allowed.iter().map(|d| d.name.clone()))
            .collect();
        names.sort();
        names.dedup();
        for name in names {
            let values = runs
                .iter()
                .map(|r| {
                    (
                        r.name.clone(),
                        r.fields.get(&name).map_or(Value::Null, |f| f.value.clone()),
                    )
                })
                .collect();
            mixed.push(WithinArm {
                arm: (*arm).to_owned(),
                field: name,
                values,
            });
        }
    }
    Ok((worst, pairs, mixed))
}

pub(super) fn incompatible(what: &str, result: &Compatibility, flag: &str) -> String {
    let fields: Vec<String> = result
        .blocking
        .iter()
        .take(5)
        .map(|d| {
            format!(
                "{} ({} vs {})",
                d.name,
                crate::py::json::str_form(&repr_value(&d.a)),
                crate::py::json::str_form(&repr_value(&d.b))
            )
        })
        .collect();
    let more = if result.blocking.len() > 5 {
        format!(" and {} more", result.blocking.len() - 5)
    } else {
        String::new()
    };
    let place = if flag == "--allow-within-arm" {
        "within an arm "
    } else {
        ""
    };
    format!(
        "{what} are incompatible: {}{more}; allow a difference {place}with {flag}",
        fields.join(", ")
    )
}

/// A value as Python's `repr` shows it (strings quoted).
pub(super) fn repr_value(v: &Value) -> Value {
    match crate::py::json::as_py_str(v) {
        Some(s) => Value::String(crate::py::text::repr_str(s)),
        None => v.clone(),
    }
}

pub(super) fn requested(runs: &[RunSummary]) -> Vec<String> {
    let mut names: Vec<String> = runs
        .iter()
        .flat_map(|r| {
            r.observers()
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, s)| truthy(get(s, "requested")))
                .map(|(n, _)| n.clone())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

pub(super) fn unhealthy(runs: &[RunSummary], names: &[String]) -> Vec<String> {
    let mut issues = Vec::new();
    for run in runs {
        for name in names {
            let state = get(run.observers(), name);
            if get(state, "healthy") == &Value::Bool(true) {
                continue;
            }
            let word = if truthy(get(state, "active")) && get(state, "healthy").is_null() {
                "unjudged"
            } else {
                "not active and healthy"
            };
            issues.push(format!("{name} {word} in {}", run.name));
        }
    }
    issues
}

pub(super) fn observer_contract(usable: &Arms, spec: &Spec) -> Result<Vec<String>, CompareError> {
    let (baseline, candidate) = (arm_runs(usable, BASELINE), arm_runs(usable, CANDIDATE));
    if spec.mode == Mode::Overhead {
        let present = requested(baseline);
        if !present.is_empty() {
            return Err(CompareError::input(format!(
                "an overhead comparison needs a baseline without observers; it ran {}",
                present.join(", ")
            )));
        }
        return Ok(unhealthy(candidate, &requested(candidate)));
    }
    if spec.mode == Mode::Incremental {
        let (base, cand) = (requested(baseline), requested(candidate));
        let added: Vec<String> = cand.iter().filter(|n| !base.contains(n)).cloned().collect();
        let undeclared: Vec<String> = added
            .iter()
            .filter(|n| !spec.added_observers.contains(n))
            .cloned()
            .collect();
        if !undeclared.is_empty() {
            return Err(CompareError::input(format!(
                "observers added in the candidate must be declared with --added-observers: {}",
                undeclared.join(", ")
            )));
        }
        let shared: Vec<String> = base.iter().filter(|n| cand.contains(n)).cloned().collect();
        let mut both: Vec<String> = shared.iter().chain(&added).cloned().collect();
        both.sort();
        both.dedup();
        let mut issues = unhealthy(baseline, &shared);
        issues.extend(unhealthy(candidate, &both));
        return Ok(issues);
    }
    Ok(vec![])
}
