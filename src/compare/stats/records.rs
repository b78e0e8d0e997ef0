//! The records one metric's comparison reports: run values, gate rules and
//! outcomes, estimates, claims, guards and the comparison itself.

use super::*;

/// A run's value: missing, one number, or `(lower, upper)` bounds when
/// evidence is missing (unknown SLO outcomes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunValue {
    Missing,
    Point(f64),
    Range(f64, f64),
}

impl RunValue {
    /// The value as `(lower, upper)`; a missing or non-finite one is None.
    pub fn bounds(self) -> Option<(f64, f64)> {
        let (low, high) = match self {
            RunValue::Missing => return None,
            RunValue::Point(v) => (v, v),
            RunValue::Range(a, b) => (a, b),
        };
        (low.is_finite() && high.is_finite() && low <= high).then_some((low, high))
    }

    pub(super) fn finite(self) -> bool {
        match self {
            RunValue::Missing => true,
            RunValue::Point(v) => v.is_finite(),
            RunValue::Range(a, b) => a.is_finite() && b.is_finite(),
        }
    }

    pub(super) fn positive_infinite(self) -> bool {
        match self {
            RunValue::Missing => false,
            RunValue::Point(v) => v == f64::INFINITY,
            RunValue::Range(a, b) => a == f64::INFINITY || b == f64::INFINITY,
        }
    }
}

/// A pre-registered gate on one metric, on the metric's own scale and unit.
#[derive(Debug, Clone, PartialEq)]
pub struct GateRule {
    pub rule: String,
    pub budget: f64,
    pub unit: String,
    pub min_complete_blocks: Option<i64>,
    pub fallback_budget: Option<f64>,
    pub fallback_unit: Option<String>,
}

impl GateRule {
    /// A rule, checked as the reference checks it.
    pub fn new(
        rule: &str,
        budget: f64,
        unit: &str,
        min_complete_blocks: Option<i64>,
    ) -> Result<Self, CompareError> {
        if !GATE_RULES.contains(&rule) {
            return Err(CompareError::usage(format!(
                "gate rule must be one of {}",
                GATE_RULES.join(", ")
            )));
        }
        if !budget.is_finite() || budget < 0.0 {
            return Err(CompareError::usage(
                "a gate budget must be a finite number >= 0",
            ));
        }
        if unit == FRACTION_UNIT && budget >= 1.0 {
            return Err(CompareError::usage(format!(
                "a fraction budget of {} is 1 or more: it can never fail",
                format_g(budget, 6, false)
            )));
        }
        Ok(GateRule {
            rule: rule.to_owned(),
            budget,
            unit: unit.to_owned(),
            min_complete_blocks,
            fallback_budget: None,
            fallback_unit: None,
        })
    }

    pub fn to_record(&self) -> Vec<(String, J)> {
        vec![
            ("rule".into(), J::from(&self.rule)),
            ("budget".into(), J::Float(self.budget)),
            ("unit".into(), J::from(&self.unit)),
            (
                "min_complete_blocks".into(),
                J::from(self.min_complete_blocks),
            ),
            ("fallback_budget".into(), J::from(self.fallback_budget)),
            ("fallback_unit".into(), J::from(self.fallback_unit.clone())),
        ]
    }
}

/// One interval: its method, what it estimates, and on which scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub method: String,
    pub estimand: String,
    pub effect: Option<f64>,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub df: Option<i64>,
    pub n: usize,
    pub p_worse: Option<f64>,
    pub detail: Option<String>,
}

impl Estimate {
    pub fn to_record(&self) -> J {
        obj([
            ("method", J::from(&self.method)),
            ("estimand", J::from(&self.estimand)),
            ("effect", J::from(self.effect)),
            ("lower", J::from(self.lower)),
            ("upper", J::from(self.upper)),
            ("df", J::from(self.df)),
            ("n", J::from(self.n)),
            ("p_worse", J::from(self.p_worse)),
            ("detail", J::from(self.detail.clone())),
        ])
    }
}

/// A fraction gate's run-level claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub runs_within_budget: usize,
    pub runs: usize,
    pub runs_unmeasurable: usize,
    pub run_pass_lower: f64,
    pub one_sided_confidence: f64,
    pub statement: String,
    /// The mean change in the bad direction, beside the claim: never gated.
    pub mean_change: Option<Option<f64>>,
    pub mean_exceeds_budget: bool,
}

impl Claim {
    fn to_record(&self) -> J {
        let mut record = obj([
            ("model", J::from("independent_runs")),
            ("reference", J::from("block_baseline")),
            ("runs_within_budget", J::from(self.runs_within_budget)),
            ("runs", J::from(self.runs)),
            ("runs_unmeasurable", J::from(self.runs_unmeasurable)),
            ("run_pass_lower", J::Float(self.run_pass_lower)),
            ("required_share", J::Float(RUN_PASS_SHARE)),
            ("one_sided_confidence", J::Float(self.one_sided_confidence)),
            ("statement", J::from(&self.statement)),
        ]);
        if let Some(change) = self.mean_change {
            record.set("mean_change", J::from(change));
            record.set("mean_exceeds_budget", J::Bool(self.mean_exceeds_budget));
        }
        record
    }
}

/// A gate's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct GateOutcome {
    pub status: String,
    pub reason: Option<String>,
    pub rule: GateRule,
    pub case: Option<String>,
    pub claim: Option<Claim>,
}

impl GateOutcome {
    pub fn new(status: &str, reason: Option<&str>, rule: &GateRule) -> Self {
        GateOutcome {
            status: status.to_owned(),
            reason: reason.map(str::to_owned),
            rule: rule.clone(),
            case: None,
            claim: None,
        }
    }

    pub(super) fn with_case(mut self, case: &str) -> Self {
        self.case = Some(case.to_owned());
        self
    }

    pub fn to_record(&self) -> J {
        let mut items = vec![
            ("status".to_owned(), J::from(&self.status)),
            ("reason".to_owned(), J::from(self.reason.clone())),
            ("case".to_owned(), J::from(self.case.clone())),
            (
                "claim".to_owned(),
                self.claim.as_ref().map_or(J::Null, Claim::to_record),
            ),
        ];
        items.extend(self.rule.to_record());
        J::Obj(items)
    }
}

/// The guards: reported, never certifying coverage.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Guards {
    pub skewness: Option<f64>,
    pub skew_limit: Option<f64>,
    pub skew_flagged: Option<bool>,
    pub leave_one_out: Option<[Option<f64>; 4]>,
    pub decision_flips: Option<usize>,
    pub zero_variance: bool,
}

impl Guards {
    fn to_record(&self) -> J {
        let loo = self.leave_one_out.map_or(J::Null, |[a, b, c, d]| {
            obj([
                ("lower_min", J::from(a)),
                ("lower_max", J::from(b)),
                ("upper_min", J::from(c)),
                ("upper_max", J::from(d)),
            ])
        });
        obj([
            ("skewness", J::from(self.skewness)),
            ("skew_limit", J::from(self.skew_limit)),
            ("skew_flagged", J::from(self.skew_flagged)),
            ("leave_one_out", loo),
            ("decision_flips", J::from(self.decision_flips)),
            ("zero_variance", J::Bool(self.zero_variance)),
        ])
    }
}

pub type Counts = Vec<Option<i64>>;
/// A run's value as `(lower, upper)`.
pub type Bounds = (f64, f64);

/// One metric, compared: every number a verdict or gate rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricComparison {
    pub name: String,
    pub design: String,
    pub scale: String,
    pub unit: String,
    pub direction: String,
    pub n_baseline: usize,
    pub n_candidate: usize,
    pub n_pairs: usize,
    pub values: (Vec<Bounds>, Vec<Bounds>),
    pub attrition: Vec<J>,
    pub worst: Option<Estimate>,
    pub best: Option<Estimate>,
    pub cross_check: Option<Estimate>,
    pub sensitivity: Option<Estimate>,
    pub difference: Option<Estimate>,
    pub guards: Guards,
    pub effect_size: Option<J>,
    /// `(direction, tolerance)`; None before any estimate (`{}`).
    pub verdict: Option<(String, String)>,
    pub gate: Option<GateOutcome>,
    pub reason: Option<String>,
    pub degenerate: Option<J>,
    pub pooled: Option<J>,
    pub trials: Option<(Counts, Counts)>,
}

impl MetricComparison {
    pub fn to_record(&self) -> J {
        let rec = |e: &Option<Estimate>| e.as_ref().map_or(J::Null, Estimate::to_record);
        let pairs = |v: &Vec<(f64, f64)>| {
            J::Arr(
                v.iter()
                    .map(|(a, b)| J::Arr(vec![J::Float(*a), J::Float(*b)]))
                    .collect(),
            )
        };
        let counts = |c: &Counts| J::Arr(c.iter().map(|m| J::from(*m)).collect());
        let verdict = match &self.verdict {
            None => J::Obj(vec![]),
            Some((d, t)) => obj([("direction", J::from(d)), ("tolerance", J::from(t))]),
        };
        obj([
            ("name", J::from(&self.name)),
            ("design", J::from(&self.design)),
            ("scale", J::from(&self.scale)),
            ("unit", J::from(&self.unit)),
            ("direction", J::from(&self.direction)),
            ("n_baseline", J::from(self.n_baseline)),
            ("n_candidate", J::from(self.n_candidate)),
            ("n_pairs", J::from(self.n_pairs)),
            (
                "values",
                obj([
                    ("baseline", pairs(&self.values.0)),
                    ("candidate", pairs(&self.values.1)),
                ]),
            ),
            ("attrition", J::Arr(self.attrition.clone())),
            (
                "effect",
                J::from(self.worst.as_ref().and_then(|w| w.effect)),
            ),
            (
                "interval",
                self.worst.as_ref().map_or(J::Null, |w| {
                    J::Arr(vec![J::from(w.lower), J::from(w.upper)])
                }),
            ),
            (
                "estimates",
                obj([
                    ("worst_case", rec(&self.worst)),
                    ("best_case", rec(&self.best)),
                ]),
            ),
            ("cross_check", rec(&self.cross_check)),
            ("sensitivity", rec(&self.sensitivity)),
            ("difference", rec(&self.difference)),
            ("guards", self.guards.to_record()),
            ("effect_size", self.effect_size.clone().unwrap_or(J::Null)),
            ("verdict", verdict),
            (
                "gate",
                self.gate.as_ref().map_or(J::Null, GateOutcome::to_record),
            ),
            ("reason", J::from(self.reason.clone())),
            ("degenerate", self.degenerate.clone().unwrap_or(J::Null)),
            ("pooled", self.pooled.clone().unwrap_or(J::Null)),
            (
                "trials",
                self.trials.as_ref().map_or(J::Null, |(a, b)| {
                    obj([("baseline", counts(a)), ("candidate", counts(b))])
                }),
            ),
        ])
    }

    /// The verdict's direction word, or "" before any estimate.
    pub fn direction_word(&self) -> &str {
        self.verdict.as_ref().map_or("", |(d, _)| d.as_str())
    }
}

/// A Clopper-Pearson interval, labelled with the model it assumes.
#[derive(Debug, Clone, PartialEq)]
pub struct ProportionBound {
    pub k: u64,
    pub n: u64,
    pub lower: f64,
    pub upper: f64,
    pub confidence: f64,
    pub model: &'static str,
}

impl ProportionBound {
    pub fn to_record(&self) -> J {
        obj([
            ("k", J::Int(self.k as i64)),
            ("n", J::Int(self.n as i64)),
            ("lower", J::Float(self.lower)),
            ("upper", J::Float(self.upper)),
            ("confidence", J::Float(self.confidence)),
            ("model", J::from(self.model)),
            ("model_based", J::Bool(self.model != "independent_runs")),
        ])
    }
}
