//! The comparison spec: how to compare (design, mode, what may differ,
//! gates and their family), its choices as enums parsed once, and the
//! `--gate`/`--fallback` flags it is built from, checked as the reference's
//! `stormlog.infer.cli._comparison_spec` and `ComparisonSpec` check them.

use super::compat::Mode;
use super::metrics::{self, fnmatch};
use super::ojson::{obj, J};
use super::stats::{GateRule, MIN_GATE_PAIRS, SIGNIFICANT};
use super::CompareError;
use crate::py::float::float_repr;

/// An enum of a spec's choices, spelled in reports as its flag spells it.
macro_rules! choice {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            /// The name as the flag and the reports spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The choice a flag's text names, if any.
            pub fn from_name(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

choice!(
    /// How runs are paired: by block when every run has one (`auto`), or not.
    Design {
        Auto => "auto",
        PairedBlocks => "paired_blocks",
        Independent => "independent",
    }
);

choice!(
    /// What a block that lost a run does to its gates.
    OnIncomplete {
        Exclude => "exclude",
        Fail => "fail",
    }
);

choice!(
    /// How the attainment gate counts: runs, or requests as Bernoulli trials.
    AttainmentModel {
        Runs => "runs",
        Bernoulli => "bernoulli",
    }
);

choice!(
    /// Gates judged each on its own, or as one family (Holm's step-down).
    Family {
        AllBudgets => "all_budgets",
        AnyRegression => "any_regression",
    }
);

/// The spec's choice `name` as `text` gives it, or the reference's refusal
/// (`comparison design 'x' is not valid`).
pub fn choice<T>(name: &str, text: &str, parse: fn(&str) -> Option<T>) -> Result<T, CompareError> {
    parse(text)
        .ok_or_else(|| CompareError::usage(format!("comparison {name} '{text}' is not valid")))
}

/// How to compare: design, mode, gates and what may differ.
#[derive(Debug, Clone)]
pub struct Spec {
    pub confidence: f64,
    pub design: Design,
    pub mode: Mode,
    pub allow: Vec<String>,
    pub allow_within_arm: Vec<String>,
    pub on_incomplete: OnIncomplete,
    pub gates: Vec<(String, GateRule)>,
    pub allow_not_evaluable: bool,
    pub min_attainment: Option<f64>,
    pub min_run_pass: f64,
    pub attainment_model: AttainmentModel,
    pub family: Family,
    pub added_observers: Vec<String>,
    pub evidence_floor: f64,
    pub cases: Option<Vec<String>>,
    pub bootstrap_min_n: usize,
    pub seed: u64,
    pub fallbacks: Vec<(String, f64, String)>,
    pub min_complete_blocks: Option<i64>,
}

fn share_ok(value: Option<f64>, low_open: bool) -> bool {
    match value {
        None => true,
        Some(v) if !v.is_finite() || v > 1.0 => false,
        Some(v) => {
            if low_open {
                v > 0.0
            } else {
                v >= 0.0
            }
        }
    }
}

impl Spec {
    /// Checks the spec's numbers as the reference does (its choices were
    /// checked as they were parsed, [`choice`]), and gives each gate the
    /// comparison's pre-registered block floor.
    pub fn validated(mut self) -> Result<Self, CompareError> {
        let checks: [(bool, &str, String); 4] = [
            (
                0.0 < self.confidence && self.confidence < 1.0,
                "confidence",
                float_repr(self.confidence),
            ),
            (
                share_ok(self.min_attainment, true),
                "min_attainment",
                self.min_attainment.map_or("None".into(), float_repr),
            ),
            (
                share_ok(Some(self.min_run_pass), true),
                "min_run_pass",
                float_repr(self.min_run_pass),
            ),
            (
                share_ok(Some(self.evidence_floor), false),
                "evidence_floor",
                float_repr(self.evidence_floor),
            ),
        ];
        for (ok, name, shown) in checks {
            if !ok {
                return Err(CompareError::usage(format!(
                    "comparison {name} {shown} is not valid"
                )));
            }
        }
        if self.family == Family::AnyRegression
            && self.gates.iter().any(|(_, r)| r.rule != SIGNIFICANT)
        {
            return Err(CompareError::usage(
                "--family any_regression gates with the significant rule",
            ));
        }
        if let Some(floor) = self.min_complete_blocks {
            for (pattern, rule) in &mut self.gates {
                if rule.min_complete_blocks.is_some_and(|m| m != floor) {
                    return Err(CompareError::usage(format!(
                        "gate {pattern} pre-registers {} complete blocks, the comparison {floor}",
                        rule.min_complete_blocks.unwrap_or(floor)
                    )));
                }
                rule.min_complete_blocks = Some(floor);
            }
        }
        Ok(self)
    }

    /// The gate on a metric: the last pattern that matches its name.
    pub fn gate_for(&self, metric: &str) -> Option<GateRule> {
        let mut found = self
            .gates
            .iter()
            .filter(|(p, _)| fnmatch(p, metric))
            .map(|(_, r)| r.clone())
            .next_back()?;
        for (pattern, budget, unit) in &self.fallbacks {
            if fnmatch(pattern, metric) {
                found.fallback_budget = Some(*budget);
                found.fallback_unit = Some(unit.clone());
            }
        }
        Some(found)
    }

    /// The fewest complete pairs a gate needs: (pre-registered value, floor, statement).
    pub fn block_floor(&self) -> (Option<i64>, usize, String) {
        let mut planned: Vec<Option<i64>> = self
            .gates
            .iter()
            .map(|(_, r)| r.min_complete_blocks)
            .collect();
        if let Some(m) = self.min_complete_blocks {
            planned.retain(Option::is_some);
            planned.push(Some(m));
        }
        planned.sort();
        planned.dedup();
        let value = if planned.len() == 1 { planned[0] } else { None };
        let statement = match value {
            None => format!("not pre-registered (floor of {MIN_GATE_PAIRS} pairs)"),
            Some(v) => format!("{v} (pre-registered)"),
        };
        (value, MIN_GATE_PAIRS, statement)
    }

    pub fn to_record(&self) -> J {
        let strings = |v: &Vec<String>| J::Arr(v.iter().map(J::from).collect());
        let (value, floor, statement) = self.block_floor();
        obj([
            ("confidence", J::Float(self.confidence)),
            ("design", J::from(self.design.as_str())),
            ("mode", J::from(self.mode.as_str())),
            ("allow", strings(&self.allow)),
            ("allow_within_arm", strings(&self.allow_within_arm)),
            ("on_incomplete", J::from(self.on_incomplete.as_str())),
            (
                "gates",
                J::Obj(
                    self.gates
                        .iter()
                        .map(|(p, r)| (p.clone(), J::Obj(r.to_record())))
                        .collect(),
                ),
            ),
            ("allow_not_evaluable", J::Bool(self.allow_not_evaluable)),
            ("min_attainment", J::from(self.min_attainment)),
            ("min_run_pass", J::Float(self.min_run_pass)),
            ("attainment_model", J::from(self.attainment_model.as_str())),
            ("family", J::from(self.family.as_str())),
            ("added_observers", strings(&self.added_observers)),
            ("evidence_floor", J::Float(self.evidence_floor)),
            ("cases", self.cases.as_ref().map_or(J::Null, strings)),
            ("seed", J::Int(self.seed as i64)),
            (
                "fallbacks",
                J::Arr(
                    self.fallbacks
                        .iter()
                        .map(|(p, b, u)| J::Arr(vec![J::from(p), J::Float(*b), J::from(u)]))
                        .collect(),
                ),
            ),
            (
                "min_complete_blocks",
                obj([
                    ("preregistered", J::from(value)),
                    ("floor", J::from(floor)),
                    ("statement", J::from(statement)),
                ]),
            ),
        ])
    }
}

/// One `--gate METRIC=RULE:BUDGET` flag, checked as the reference checks it.
pub fn gate_flag(
    text: &str,
    min_complete_blocks: Option<i64>,
) -> Result<(String, GateRule), CompareError> {
    let (metric, rest) = text.split_once('=').unwrap_or((text, ""));
    let (rule, budget) = rest.split_once(':').unwrap_or((rest, ""));
    let unit = metrics::metric_unit(metric);
    let flag = format!("--gate '{text}'");
    if metric.is_empty() || rule.is_empty() || budget.is_empty() {
        return Err(CompareError::usage(format!(
            "{flag}: use METRIC=RULE:BUDGET"
        )));
    }
    let Some(unit) = unit else {
        return Err(CompareError::usage(format!(
            "{flag}: '{metric}' names no metric, or metrics in different units"
        )));
    };
    let amount = number(budget, &flag)?;
    if let Some(vacuous) = metrics::vacuous_budget(metric, amount) {
        return Err(CompareError::usage(format!("{flag}: {vacuous}")));
    }
    Ok((
        metric.to_owned(),
        GateRule::new(rule, amount, unit, min_complete_blocks)?,
    ))
}

/// A flag's number: finite, or a usage error naming the flag.
pub fn number(text: &str, flag: &str) -> Result<f64, CompareError> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| CompareError::usage(format!("{flag}: '{text}' is not a number")))?;
    if !value.is_finite() {
        return Err(CompareError::usage(format!(
            "{flag}: '{text}' is not a finite number"
        )));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn each_choice_reads_back_as_its_flag_spells_it() {
        for d in [Design::Auto, Design::PairedBlocks, Design::Independent] {
            assert_eq!(Design::from_name(d.as_str()), Some(d));
        }
        for m in [Mode::Config, Mode::Overhead, Mode::Incremental] {
            assert_eq!(Mode::from_name(&m.to_string()), Some(m));
        }
        for o in [OnIncomplete::Exclude, OnIncomplete::Fail] {
            assert_eq!(OnIncomplete::from_name(o.as_str()), Some(o));
        }
        for a in [AttainmentModel::Runs, AttainmentModel::Bernoulli] {
            assert_eq!(AttainmentModel::from_name(a.as_str()), Some(a));
        }
        for f in [Family::AllBudgets, Family::AnyRegression] {
            assert_eq!(Family::from_name(f.as_str()), Some(f));
        }
        assert_eq!(Family::AnyRegression.as_str(), "any_regression");
        assert_eq!(Design::PairedBlocks.to_string(), "paired_blocks");
    }

    #[test]
    fn an_unknown_choice_is_refused_in_the_references_words() {
        let e = choice("design", "Paired", Design::from_name).unwrap_err();
        assert_eq!(e.to_string(), "comparison design 'Paired' is not valid");
        assert_eq!(e.exit(), crate::exit::Exit::Usage);
        let e = choice("family", "", Family::from_name).unwrap_err();
        assert_eq!(e.to_string(), "comparison family '' is not valid");
        assert!(choice("mode", "overhead", Mode::from_name).is_ok());
    }
}
