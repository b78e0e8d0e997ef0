//! One metric compared between a baseline and a candidate arm of runs:
//! the paired (block) and independent designs, log-ratio and difference
//! intervals, the guards, the gates and the fraction's run-level claim.
//! docs/compare.md §3 describes the methods; this file follows the
//! reference's `comparison_stats` decision for decision.

use super::dist::{beta_ppf, t_ppf, t_sf};
use super::ojson::{obj, J};
use super::rng::{pairwise_sum, quantile_linear, Pcg64};
use super::text::{py_g, py_pct};
use super::CompareError;

pub const LOWER_IS_BETTER: &str = "lower_is_better";
pub const HIGHER_IS_BETTER: &str = "higher_is_better";
pub const LOG_RATIO: &str = "log_ratio";
pub const DIFFERENCE: &str = "difference";
pub const ABSOLUTE: &str = "absolute";
pub const PAIRED: &str = "paired_blocks";
pub const INDEPENDENT: &str = "independent";
pub const NON_INFERIORITY: &str = "non-inferiority";
pub const SIGNIFICANT: &str = "significant";
pub const DEMONSTRATED: &str = "demonstrated";
pub const GATE_RULES: [&str; 3] = [NON_INFERIORITY, SIGNIFICANT, DEMONSTRATED];
pub const RELATIVE: &str = "relative";
pub const FRACTION_UNIT: &str = "fraction";
pub const PASS: &str = "pass";
pub const FAIL: &str = "fail";
pub const NOT_EVALUABLE: &str = "not_evaluable";
pub const MIN_GATE_PAIRS: usize = 3;
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
const RUN_PASS_SHARE: f64 = 0.5;
const RUN_LEVEL: &str = "run_level";
const REQUESTS_PER_BUDGET: f64 = 3.0;
const CENSORED_WORST: &str = "candidate_censored_worst";
const BINOMIAL_FLOOR: &str = "binomial_floor: se floored at the pooled binomial se; nominal under independent requests, under-covers when failures cluster within runs";

/// The 95% quantile of |G1| under normal noise, n = 3..=30 (the reference's table).
const SKEW_Q95_NORMAL: [f64; 28] = [
    1.727, 1.852, 1.801, 1.699, 1.593, 1.509, 1.434, 1.375, 1.322, 1.275, 1.231, 1.193, 1.159,
    1.128, 1.097, 1.069, 1.043, 1.021, 0.998, 0.977, 0.957, 0.939, 0.923, 0.907, 0.889, 0.877,
    0.861, 0.848,
];

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

    fn finite(self) -> bool {
        match self {
            RunValue::Missing => true,
            RunValue::Point(v) => v.is_finite(),
            RunValue::Range(a, b) => a.is_finite() && b.is_finite(),
        }
    }

    fn positive_infinite(self) -> bool {
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
                py_g(budget, 6, false)
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

    fn with_case(mut self, case: &str) -> Self {
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

/// The exact binomial interval for k of n.
pub fn clopper_pearson(k: u64, n: u64, confidence: f64, model: &'static str) -> ProportionBound {
    let alpha = 1.0 - confidence;
    let (kf, nf) = (k as f64, n as f64);
    let lower = if k == 0 {
        0.0
    } else {
        beta_ppf(alpha / 2.0, kf, nf - kf + 1.0)
    };
    let upper = if k == n {
        1.0
    } else {
        beta_ppf(1.0 - alpha / 2.0, kf + 1.0, nf - kf)
    };
    ProportionBound {
        k,
        n,
        lower,
        upper,
        confidence,
        model,
    }
}

/// Whether at least a share q of runs meets the target (lower bound >= q).
pub fn run_pass_gate(k: u64, n: u64, q: f64, confidence: f64) -> J {
    let bound = clopper_pearson(k, n, confidence, "independent_runs");
    obj([
        ("runs_meeting", J::Int(k as i64)),
        ("runs", J::Int(n as i64)),
        ("required_share", J::Float(q)),
        ("lower_bound", J::Float(bound.lower)),
        (
            "status",
            J::from(if bound.lower >= q { PASS } else { FAIL }),
        ),
        ("model", J::from("independent_runs")),
    ])
}

/// Holm's step-down: which hypotheses are rejected at family-wise alpha.
pub fn holm(p_values: &[(String, Option<f64>)], alpha: f64) -> Vec<(String, bool)> {
    let mut known: Vec<(&String, f64)> = p_values
        .iter()
        .filter_map(|(n, p)| p.map(|p| (n, p)))
        .collect();
    known.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut rejected: Vec<(String, bool)> =
        p_values.iter().map(|(n, _)| (n.clone(), false)).collect();
    let total = known.len();
    for (rank, (name, p)) in known.into_iter().enumerate() {
        if p > alpha / (total - rank) as f64 {
            break;
        }
        if let Some(slot) = rejected.iter_mut().find(|(n, _)| n == name) {
            slot.1 = true;
        }
    }
    rejected
}

/// The t quantile the intervals use: two-sided at `confidence`.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    t_ppf(0.5 + confidence / 2.0, df)
}

// ------------------------------------------------------------------ pairs

struct Pairs {
    design: &'static str,
    baseline: Vec<(f64, f64)>,
    candidate: Vec<(f64, f64)>,
    attrition: Vec<J>,
    n_baseline: usize,
    n_candidate: usize,
    trials: (Counts, Counts),
}

type Run = (Option<(f64, f64)>, Option<i64>);

fn pair(
    baseline: &[RunValue],
    candidate: &[RunValue],
    blocks: Option<(&[String], &[String])>,
    trials: Option<&(Counts, Counts)>,
) -> Pairs {
    let count = |arm: usize, i: usize| {
        trials
            .and_then(|t| if arm == 0 { t.0.get(i) } else { t.1.get(i) })
            .copied()
            .flatten()
    };
    let first: Vec<Run> = baseline
        .iter()
        .enumerate()
        .map(|(i, v)| (v.bounds(), count(0, i)))
        .collect();
    let second: Vec<Run> = candidate
        .iter()
        .enumerate()
        .map(|(i, v)| (v.bounds(), count(1, i)))
        .collect();
    match blocks {
        None => unpaired(&first, &second),
        Some(blocks) => paired(&first, &second, blocks),
    }
}

fn split(runs: &[Run]) -> (Vec<(f64, f64)>, Counts) {
    runs.iter().filter_map(|(v, m)| v.map(|v| (v, *m))).unzip()
}

fn unpaired(first: &[Run], second: &[Run]) -> Pairs {
    let mut attrition = Vec::new();
    for (arm, runs) in [("baseline", first), ("candidate", second)] {
        for (index, (value, _)) in runs.iter().enumerate() {
            if value.is_none() {
                attrition.push(obj([
                    ("arm", J::from(arm)),
                    ("run", J::from(index)),
                    ("reason", J::from("missing_value")),
                ]));
            }
        }
    }
    let (values_a, counts_a) = split(first);
    let (values_b, counts_b) = split(second);
    Pairs {
        design: INDEPENDENT,
        baseline: values_a,
        candidate: values_b,
        attrition,
        n_baseline: first.len(),
        n_candidate: second.len(),
        trials: (counts_a, counts_b),
    }
}

fn paired(first: &[Run], second: &[Run], blocks: (&[String], &[String])) -> Pairs {
    let by_block = |labels: &[String], runs: &[Run]| -> Vec<(String, Run)> {
        let mut found: Vec<(String, Run)> = Vec::new();
        for (label, run) in labels.iter().zip(runs) {
            // compare_runs keeps one attempt per block and arm, so a label repeats only
            // when called directly; the first run stands then.
            if !found.iter().any(|(l, _)| l == label) {
                found.push((label.clone(), *run));
            }
        }
        found.retain(|(_, run)| run.0.is_some());
        found
    };
    let by_a = by_block(blocks.0, first);
    let by_b = by_block(blocks.1, second);
    let mut labels: Vec<&String> = by_a.iter().chain(by_b.iter()).map(|(l, _)| l).collect();
    labels.sort();
    labels.dedup();
    let (mut kept_a, mut kept_b, mut attrition) = (Vec::new(), Vec::new(), Vec::new());
    for block in labels {
        let a = by_a.iter().find(|(l, _)| l == block).map(|(_, r)| *r);
        let b = by_b.iter().find(|(l, _)| l == block).map(|(_, r)| *r);
        match (a, b) {
            (Some(a), Some(b)) => {
                kept_a.push(a);
                kept_b.push(b);
            }
            (a, _) => {
                let missing = if a.is_none() { "baseline" } else { "candidate" };
                attrition.push(obj([
                    ("block", J::from(block)),
                    ("reason", J::from(format!("block_incomplete:{missing}"))),
                ]));
            }
        }
    }
    let (values_a, counts_a) = split(&kept_a);
    let (values_b, counts_b) = split(&kept_b);
    Pairs {
        design: PAIRED,
        baseline: values_a,
        candidate: values_b,
        attrition,
        n_baseline: first.len(),
        n_candidate: second.len(),
        trials: (counts_a, counts_b),
    }
}

type Case = (Vec<f64>, Vec<f64>);

/// The worst and the best case of every pair, for the metric's direction.
fn cases(pairs: &Pairs, direction: &str) -> (Case, Case) {
    let a_low: Vec<f64> = pairs.baseline.iter().map(|v| v.0).collect();
    let a_high: Vec<f64> = pairs.baseline.iter().map(|v| v.1).collect();
    let b_low: Vec<f64> = pairs.candidate.iter().map(|v| v.0).collect();
    let b_high: Vec<f64> = pairs.candidate.iter().map(|v| v.1).collect();
    if direction == HIGHER_IS_BETTER {
        ((a_high, b_low), (a_low, b_high))
    } else {
        ((a_low, b_high), (a_high, b_low))
    }
}

// ---------------------------------------------------------------- methods

fn on_scale(values: &[f64], scale: &str) -> Vec<f64> {
    if scale == LOG_RATIO {
        values.iter().map(|v| v.ln()).collect()
    } else {
        values.to_vec()
    }
}

fn mean(values: &[f64]) -> f64 {
    pairwise_sum(values) / values.len() as f64
}

fn mean_sd(values: &[f64]) -> (f64, f64) {
    let m = mean(values);
    if values.len() < 2 {
        return (m, 0.0);
    }
    let squares: Vec<f64> = values.iter().map(|v| (v - m) * (v - m)).collect();
    (
        m,
        (pairwise_sum(&squares) / (values.len() - 1) as f64).sqrt(),
    )
}

fn p_positive(mean: f64, se: f64, df: f64) -> Option<f64> {
    (se != 0.0).then(|| t_sf(mean / se, df))
}

fn one_sample(
    values: &[f64],
    confidence: f64,
    method: &str,
    estimand: &str,
    sign: f64,
    floor: Option<f64>,
) -> Estimate {
    let n = values.len();
    let (m, sd) = mean_sd(values);
    let se = (sd / (n as f64).sqrt()).max(floor.unwrap_or(0.0));
    let df = n as f64 - 1.0;
    let half = t_quantile(confidence, df) * se;
    Estimate {
        method: method.to_owned(),
        estimand: estimand.to_owned(),
        effect: Some(m),
        lower: Some(m - half),
        upper: Some(m + half),
        df: Some(n as i64 - 1),
        n,
        p_worse: p_positive(sign * m, se, df),
        detail: floor.map(|_| BINOMIAL_FLOOR.to_owned()),
    }
}

fn welch(
    first: &[f64],
    second: &[f64],
    confidence: f64,
    sign: f64,
    floor: Option<f64>,
) -> Estimate {
    let (mean_a, sd_a) = mean_sd(first);
    let (mean_b, sd_b) = mean_sd(second);
    let se = (sd_a * sd_a / first.len() as f64 + sd_b * sd_b / second.len() as f64)
        .sqrt()
        .max(floor.unwrap_or(0.0));
    let df = first.len().min(second.len()) as i64 - 1;
    let half = t_quantile(confidence, df as f64) * se;
    let diff = mean_b - mean_a;
    Estimate {
        method: "welch_t_min_df".into(),
        estimand: String::new(),
        effect: Some(diff),
        lower: Some(diff - half),
        upper: Some(diff + half),
        df: Some(df),
        n: first.len() + second.len(),
        p_worse: p_positive(sign * diff, se, df as f64),
        detail: floor.map(|_| BINOMIAL_FLOOR.to_owned()),
    }
}

/// The gated interval, on the effect scale.
fn primary(
    design: &str,
    scale: &str,
    case: &Case,
    confidence: f64,
    sign: f64,
    floor: Option<f64>,
) -> Estimate {
    if scale == ABSOLUTE {
        return one_sample(&case.1, confidence, "one_sample_t", ABSOLUTE, sign, None);
    }
    let a = on_scale(&case.0, scale);
    let b = on_scale(&case.1, scale);
    let raw = if design == PAIRED {
        let diffs: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        one_sample(&diffs, confidence, "paired_t", "", sign, floor)
    } else {
        welch(&a, &b, confidence, sign, floor)
    };
    if scale == LOG_RATIO {
        return relative(raw, "geometric_ratio");
    }
    Estimate {
        estimand: DIFFERENCE.into(),
        ..raw
    }
}

/// A log-scale interval as a relative change, exp(x) - 1.
fn relative(raw: Estimate, estimand: &str) -> Estimate {
    Estimate {
        method: format!("{}_log_ratio", raw.method),
        estimand: estimand.to_owned(),
        effect: raw.effect.map(f64::exp_m1),
        lower: raw.lower.map(f64::exp_m1),
        upper: raw.upper.map(f64::exp_m1),
        detail: None,
        ..raw
    }
}

fn var_ddof1(values: &[f64]) -> f64 {
    let (_, sd) = mean_sd(values);
    if values.len() < 2 {
        return f64::NAN;
    }
    sd * sd
}

/// Fieller's interval for mean(second) / mean(first), as a relative change.
fn fieller(design: &str, case: &Case, confidence: f64) -> Estimate {
    let (a, b) = case;
    let (n_a, n_b) = (a.len(), b.len());
    let var_a = var_ddof1(a) / n_a as f64;
    let var_b = var_ddof1(b) / n_b as f64;
    let (mean_a, mean_b) = (mean(a), mean(b));
    let (cov, df) = if design == PAIRED {
        let products: Vec<f64> = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - mean_a) * (y - mean_b))
            .collect();
        (
            pairwise_sum(&products) / (n_a as f64 - 1.0) / n_a as f64,
            n_a as i64 - 1,
        )
    } else {
        (0.0, n_a.min(n_b) as i64 - 1)
    };
    let t = t_quantile(confidence, df as f64);
    let quad = mean_a * mean_a - t * t * var_a;
    let lin = -2.0 * (mean_a * mean_b - t * t * cov);
    let konst = mean_b * mean_b - t * t * var_b;
    let disc = lin * lin - 4.0 * quad * konst;
    let effect = (mean_a != 0.0).then(|| mean_b / mean_a - 1.0);
    let n = if design == PAIRED { n_a } else { n_a + n_b };
    let mut est = Estimate {
        method: "fieller".into(),
        estimand: "arithmetic_ratio".into(),
        effect,
        lower: None,
        upper: None,
        df: Some(df),
        n,
        p_worse: None,
        detail: None,
    };
    if quad <= 0.0 || disc < 0.0 {
        est.detail = Some("unbounded".into());
        return est;
    }
    let root = disc.sqrt();
    let r1 = (-lin - root) / (2.0 * quad);
    let r2 = (-lin + root) / (2.0 * quad);
    let (low, high) = if r1 <= r2 { (r1, r2) } else { (r2, r1) };
    est.lower = Some(low - 1.0);
    est.upper = Some(high - 1.0);
    est
}

/// Percentile bootstrap of the effect: blocks in pairs, or runs within arms.
fn bootstrap(design: &str, scale: &str, case: &Case, confidence: f64, seed: u64) -> Estimate {
    let mut rng = Pcg64::new(seed);
    let a = on_scale(&case.0, scale);
    let b = on_scale(&case.1, scale);
    let mut means = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let method = if design == PAIRED {
        let diffs: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let mut row = vec![0.0; diffs.len()];
        for _ in 0..BOOTSTRAP_RESAMPLES {
            for slot in row.iter_mut() {
                *slot = diffs[rng.below(diffs.len())];
            }
            means.push(mean(&row));
        }
        "block_bootstrap"
    } else {
        // numpy draws every baseline resample before any candidate one.
        let picks_a: Vec<usize> = (0..BOOTSTRAP_RESAMPLES * a.len())
            .map(|_| rng.below(a.len()))
            .collect();
        let picks_b: Vec<usize> = (0..BOOTSTRAP_RESAMPLES * b.len())
            .map(|_| rng.below(b.len()))
            .collect();
        for r in 0..BOOTSTRAP_RESAMPLES {
            let row_a: Vec<f64> = picks_a[r * a.len()..(r + 1) * a.len()]
                .iter()
                .map(|&i| a[i])
                .collect();
            let row_b: Vec<f64> = picks_b[r * b.len()..(r + 1) * b.len()]
                .iter()
                .map(|&i| b[i])
                .collect();
            means.push(mean(&row_b) - mean(&row_a));
        }
        "cluster_bootstrap"
    };
    let tail = (1.0 - confidence) / 2.0;
    let effect = mean(&means);
    let mut sorted = means;
    sorted.sort_by(f64::total_cmp);
    let low = quantile_linear(&sorted, tail);
    let high = quantile_linear(&sorted, 1.0 - tail);
    let raw = Estimate {
        method: method.into(),
        estimand: String::new(),
        effect: Some(effect),
        lower: Some(low),
        upper: Some(high),
        df: None,
        n: a.len(),
        p_worse: None,
        detail: Some(format!("seed {seed}")),
    };
    if scale == LOG_RATIO {
        return relative(raw, "geometric_ratio");
    }
    Estimate {
        estimand: DIFFERENCE.into(),
        detail: None,
        ..raw
    }
}

// ----------------------------------------------------------------- guards

/// The 95% quantile of |G1| under normal noise at n; 1.96 SE beyond 30.
pub fn skew_limit(n: usize) -> Option<f64> {
    if n < 3 {
        return None;
    }
    if n <= 30 {
        return Some(SKEW_Q95_NORMAL[n - 3]);
    }
    let nf = n as f64;
    Some(1.96 * (6.0 * nf * (nf - 1.0) / ((nf - 2.0) * (nf + 1.0) * (nf + 3.0))).sqrt())
}

fn ptp_zero(values: &[f64]) -> bool {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    max - min == 0.0
}

/// scipy's `skew(values, bias=False)`.
pub fn adjusted_skewness(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let m = mean(values);
    let d2: Vec<f64> = values.iter().map(|v| (v - m).powi(2)).collect();
    let d3: Vec<f64> = values.iter().map(|v| (v - m).powi(3)).collect();
    let m2 = pairwise_sum(&d2) / n;
    let m3 = pairwise_sum(&d3) / n;
    let g1 = m3 / m2.powf(1.5);
    ((n - 1.0) * n).sqrt() / (n - 2.0) * g1
}

fn skew(values: &[f64]) -> (Option<f64>, Option<f64>, Option<bool>) {
    let limit = skew_limit(values.len());
    if values.len() < 3 || ptp_zero(values) {
        return (None, limit, None);
    }
    let g1 = adjusted_skewness(values);
    (Some(g1), limit, Some(limit.is_some_and(|l| g1.abs() > l)))
}

fn guard_values(design: &str, scale: &str, case: &Case) -> Vec<f64> {
    let a = on_scale(&case.0, scale);
    let b = on_scale(&case.1, scale);
    if design == PAIRED && scale != ABSOLUTE {
        return a.iter().zip(&b).map(|(x, y)| y - x).collect();
    }
    b
}

// ------------------------------------------------------------------ gates

fn bad(estimate: &Estimate, direction: &str) -> Option<(f64, f64, f64)> {
    let (e, l, u) = (estimate.effect?, estimate.lower?, estimate.upper?);
    Some(if direction == LOWER_IS_BETTER {
        (e, l, u)
    } else {
        (-e, -u, -l)
    })
}

/// A gate rule's decision on an interval: `worst` for non-inferiority, `best` otherwise.
pub fn decide(
    rule: &str,
    budget: f64,
    worst: &Estimate,
    best: &Estimate,
    direction: &str,
) -> &'static str {
    let estimate = if rule == NON_INFERIORITY { worst } else { best };
    let Some((effect, lower, upper)) = bad(estimate, direction) else {
        return NOT_EVALUABLE;
    };
    let failed = match rule {
        NON_INFERIORITY => upper > budget,
        SIGNIFICANT => lower > 0.0 && effect > budget,
        _ => lower > budget,
    };
    if failed {
        FAIL
    } else {
        PASS
    }
}

/// Which way the metric moved, and whether beyond the tolerance.
pub fn verdict(
    worst: &Estimate,
    best: &Estimate,
    direction: &str,
    tolerance: f64,
) -> (String, String) {
    let (Some(bb), Some(bw)) = (bad(best, direction), bad(worst, direction)) else {
        return ("undetermined".into(), "undetermined".into());
    };
    let moved = if bb.1 > 0.0 {
        "worse"
    } else if bw.2 < 0.0 {
        "better"
    } else {
        "no_detectable_change"
    };
    let against = if -tolerance < bw.1 && bw.2 < tolerance {
        "within"
    } else if bb.1 > tolerance || bw.2 < -tolerance {
        "beyond"
    } else {
        "undetermined"
    };
    (moved.into(), against.into())
}

// ------------------------------------------------------------ the entry

/// What to compare for one metric: `compare_values`' keyword arguments.
#[derive(Debug, Clone)]
pub struct Request {
    pub name: String,
    pub direction: String,
    pub scale: String,
    pub unit: String,
    pub value_unit: Option<String>,
    pub confidence: f64,
    pub gate: Option<GateRule>,
    pub bootstrap_min_n: usize,
    pub seed: u64,
    pub unavailable: Option<String>,
    pub trials: Option<(Counts, Counts)>,
    /// Block labels of each arm's runs, for the paired design.
    pub blocks: Option<(Vec<String>, Vec<String>)>,
}

impl Request {
    fn tolerance(&self) -> f64 {
        self.gate.as_ref().map_or(0.0, |g| g.budget)
    }
    fn sign(&self) -> f64 {
        sign(&self.direction)
    }
}

fn sign(direction: &str) -> f64 {
    if direction == LOWER_IS_BETTER {
        1.0
    } else {
        -1.0
    }
}

/// Compare one metric's per-run values between the two arms.
pub fn compare_values(
    request: &Request,
    baseline: &[RunValue],
    candidate: &[RunValue],
) -> Result<MetricComparison, CompareError> {
    let mut request = request.clone();
    if request.unavailable.is_none() {
        request.unavailable =
            non_finite_reason(&request.direction, baseline, candidate).map(str::to_owned);
    }
    check(&request)?;
    let blocks = request
        .blocks
        .as_ref()
        .map(|(a, b)| (a.as_slice(), b.as_slice()));
    let pairs = pair(
        baseline,
        candidate,
        if request.scale == ABSOLUTE {
            None
        } else {
            blocks
        },
        request.trials.as_ref(),
    );
    let mut result = compare(&request, &pairs);
    if request.unit == FRACTION_UNIT {
        let outcome = run_level_gate(&request, baseline, candidate, blocks);
        let outcome = with_mean_change(&request, &result, outcome);
        result.gate = outcome;
        result.pooled = pooled(&request, &pairs);
        return Ok(result);
    }
    if request.unavailable.as_deref() == Some(CENSORED_WORST) && request.gate.is_some() {
        let mut plain = request.clone();
        plain.unavailable = None;
        result.gate = Some(censored_gate(&plain, &pairs));
    }
    Ok(result)
}

fn non_finite_reason(
    direction: &str,
    baseline: &[RunValue],
    candidate: &[RunValue],
) -> Option<&'static str> {
    if baseline.iter().chain(candidate).all(|v| v.finite()) {
        return None;
    }
    if direction == LOWER_IS_BETTER && candidate.iter().any(|v| v.positive_infinite()) {
        return Some(CENSORED_WORST);
    }
    Some("non_finite_value")
}

fn censored_gate(request: &Request, pairs: &Pairs) -> GateOutcome {
    let Some(gate) = request.gate.as_ref() else {
        unreachable_gate()
    };
    if gate.rule != NON_INFERIORITY {
        if let Some(blocker) = gate_blocker(request, pairs, &Guards::default()) {
            return GateOutcome::new(NOT_EVALUABLE, Some(&blocker), gate);
        }
    }
    GateOutcome::new(FAIL, Some(CENSORED_WORST), gate)
}

#[allow(clippy::panic)]
fn unreachable_gate() -> ! {
    // Callers check for a gate first; this documents the invariant.
    panic!("a gate decision without a gate")
}

fn check(request: &Request) -> Result<(), CompareError> {
    let name = &request.name;
    if request.direction != LOWER_IS_BETTER && request.direction != HIGHER_IS_BETTER {
        return Err(CompareError::usage(format!(
            "{name}: unknown direction '{}'",
            request.direction
        )));
    }
    if ![LOG_RATIO, DIFFERENCE, ABSOLUTE].contains(&request.scale.as_str()) {
        return Err(CompareError::usage(format!(
            "{name}: unknown scale '{}'",
            request.scale
        )));
    }
    if request.scale == LOG_RATIO && request.unit != RELATIVE {
        return Err(CompareError::usage(format!(
            "{name}: a log_ratio effect's unit is relative"
        )));
    }
    if let Some(gate) = &request.gate {
        if gate.unit != request.unit {
            return Err(CompareError::usage(format!(
                "{name}: the gate's unit '{}' is not the metric's '{}'",
                gate.unit, request.unit
            )));
        }
        if request.unit == FRACTION_UNIT && gate.rule != NON_INFERIORITY {
            return Err(CompareError::usage(format!(
                "{name}: {} is not supported for a fraction. A fraction supports only a run-level claim, gated with non-inferiority: k of n runs within the budget, which stays exact however failures cluster within a run, where no interval on the fraction does; it has no regression form in v1",
                gate.rule
            )));
        }
        if gate.fallback_budget.is_some() && gate.fallback_unit != request.value_unit {
            let shown =
                |u: &Option<String>| u.as_ref().map_or("None".to_owned(), |u| format!("'{u}'"));
            return Err(CompareError::usage(format!(
                "{name}: the fallback budget's unit {} is not the values' {}",
                shown(&gate.fallback_unit),
                shown(&request.value_unit)
            )));
        }
    }
    Ok(())
}

fn compare(request: &Request, pairs: &Pairs) -> MetricComparison {
    let mut base = shell(request, pairs);
    let mut n = if request.scale == ABSOLUTE {
        pairs.candidate.len()
    } else {
        pairs.baseline.len()
    };
    if pairs.design == INDEPENDENT && request.scale != ABSOLUTE {
        n = pairs.baseline.len().min(pairs.candidate.len());
    }
    if n < 2 {
        let reason = if pairs.design == PAIRED {
            "insufficient_blocks"
        } else {
            "insufficient_runs"
        };
        base.reason = Some(reason.into());
        base.gate = request.gate.as_ref().map(|g| {
            GateOutcome::new(
                NOT_EVALUABLE,
                Some(request.unavailable.as_deref().unwrap_or(reason)),
                g,
            )
        });
        return base;
    }
    let (worst_case, best_case) = cases(pairs, &request.direction);
    if request.scale == DIFFERENCE
        && constant(pairs).is_some()
        && floor(request, pairs, &worst_case).is_none()
    {
        return degenerate(base, request, pairs);
    }
    if request.scale == LOG_RATIO {
        if let Some(blocked) = nonpositive(request, &worst_case, &best_case) {
            return zero_rule(base, request, pairs, blocked);
        }
    }
    estimated(base, request, pairs, &worst_case, &best_case)
}

fn shell(request: &Request, pairs: &Pairs) -> MetricComparison {
    MetricComparison {
        name: request.name.clone(),
        design: if request.scale == ABSOLUTE {
            ABSOLUTE.into()
        } else {
            pairs.design.into()
        },
        scale: request.scale.clone(),
        unit: request.unit.clone(),
        direction: request.direction.clone(),
        n_baseline: pairs.n_baseline,
        n_candidate: pairs.n_candidate,
        n_pairs: if pairs.design == PAIRED {
            pairs.baseline.len()
        } else {
            0
        },
        values: (pairs.baseline.clone(), pairs.candidate.clone()),
        attrition: pairs.attrition.clone(),
        worst: None,
        best: None,
        cross_check: None,
        sensitivity: None,
        difference: None,
        guards: Guards::default(),
        effect_size: None,
        verdict: None,
        gate: None,
        reason: None,
        degenerate: None,
        pooled: None,
        trials: (request.unit == FRACTION_UNIT && request.trials.is_some())
            .then(|| pairs.trials.clone()),
    }
}

fn estimated(
    mut base: MetricComparison,
    request: &Request,
    pairs: &Pairs,
    worst_case: &Case,
    best_case: &Case,
) -> MetricComparison {
    let sign = request.sign();
    let worst = primary(
        pairs.design,
        &request.scale,
        worst_case,
        request.confidence,
        sign,
        floor(request, pairs, worst_case),
    );
    let best = primary(
        pairs.design,
        &request.scale,
        best_case,
        request.confidence,
        sign,
        floor(request, pairs, best_case),
    );
    let guards = guards(request, pairs, worst_case, &worst, &best);
    if request.scale == LOG_RATIO {
        base.cross_check = Some(fieller(pairs.design, worst_case, request.confidence));
        base.difference = Some(primary(
            pairs.design,
            DIFFERENCE,
            worst_case,
            request.confidence,
            sign,
            None,
        ));
    }
    if request.scale != ABSOLUTE
        && worst_case.0.len().min(worst_case.1.len()) >= request.bootstrap_min_n
    {
        base.sensitivity = Some(bootstrap(
            pairs.design,
            &request.scale,
            worst_case,
            request.confidence,
            request.seed,
        ));
    }
    base.effect_size = Some(effect_size(pairs));
    base.verdict = Some(verdict(
        &worst,
        &best,
        &request.direction,
        request.tolerance(),
    ));
    base.gate = gate(request, pairs, &worst, &best, &guards);
    base.guards = guards;
    base.worst = Some(worst);
    base.best = Some(best);
    base
}

fn guards(
    request: &Request,
    pairs: &Pairs,
    case: &Case,
    worst: &Estimate,
    best: &Estimate,
) -> Guards {
    let looked_at = guard_values(pairs.design, &request.scale, case);
    let (skewness, skew_limit, skew_flagged) = skew(&looked_at);
    // A fraction's gate is a claim about runs, which no single block decides.
    let (leave_one_out, decision_flips) = if request.unit == FRACTION_UNIT {
        (None, None)
    } else {
        leave_one_out(request, pairs, worst, best)
    };
    Guards {
        skewness,
        skew_limit,
        skew_flagged,
        leave_one_out,
        decision_flips,
        zero_variance: !looked_at.is_empty() && ptp_zero(&looked_at),
    }
}

type Span = [Option<f64>; 4];

fn leave_one_out(
    request: &Request,
    pairs: &Pairs,
    worst: &Estimate,
    best: &Estimate,
) -> (Option<Span>, Option<usize>) {
    let reduced = drop_one(pairs);
    if reduced.is_empty() {
        return (None, None);
    }
    let decision = rule_decision(request, worst, best);
    let sign = request.sign();
    let estimates: Vec<(Estimate, Estimate)> = reduced
        .iter()
        .map(|subset| {
            let (w, b) = cases(subset, &request.direction);
            (
                primary(
                    subset.design,
                    &request.scale,
                    &w,
                    request.confidence,
                    sign,
                    None,
                ),
                primary(
                    subset.design,
                    &request.scale,
                    &b,
                    request.confidence,
                    sign,
                    None,
                ),
            )
        })
        .collect();
    let flips = estimates
        .iter()
        .filter(|(w, b)| rule_decision(request, w, b) != decision)
        .count();
    let lowers: Vec<f64> = estimates.iter().filter_map(|(e, _)| e.lower).collect();
    let uppers: Vec<f64> = estimates.iter().filter_map(|(e, _)| e.upper).collect();
    let min = |v: &[f64]| v.iter().copied().reduce(f64::min);
    let max = |v: &[f64]| v.iter().copied().reduce(f64::max);
    let span = [min(&lowers), max(&lowers), min(&uppers), max(&uppers)];
    (Some(span), decision.map(|_| flips))
}

fn drop_one(pairs: &Pairs) -> Vec<Pairs> {
    let without = |v: &[(f64, f64)], i: usize| -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, x)| *x)
            .collect()
    };
    let make = |design, baseline, candidate| Pairs {
        design,
        baseline,
        candidate,
        attrition: Vec::new(),
        n_baseline: pairs.n_baseline,
        n_candidate: pairs.n_candidate,
        trials: (Vec::new(), Vec::new()),
    };
    if pairs.design == PAIRED {
        if pairs.baseline.len() <= MIN_GATE_PAIRS {
            return Vec::new();
        }
        return (0..pairs.baseline.len())
            .map(|i| {
                make(
                    PAIRED,
                    without(&pairs.baseline, i),
                    without(&pairs.candidate, i),
                )
            })
            .collect();
    }
    let mut subsets = Vec::new();
    if pairs.baseline.len() > MIN_GATE_PAIRS {
        for i in 0..pairs.baseline.len() {
            subsets.push(make(
                INDEPENDENT,
                without(&pairs.baseline, i),
                pairs.candidate.clone(),
            ));
        }
    }
    if pairs.candidate.len() > MIN_GATE_PAIRS {
        for i in 0..pairs.candidate.len() {
            subsets.push(make(
                INDEPENDENT,
                pairs.baseline.clone(),
                without(&pairs.candidate, i),
            ));
        }
    }
    subsets
}

fn rule_decision(request: &Request, worst: &Estimate, best: &Estimate) -> Option<&'static str> {
    let gate = request.gate.as_ref()?;
    Some(decide(
        &gate.rule,
        gate.budget,
        worst,
        best,
        &request.direction,
    ))
}

fn beats(candidate: f64, baseline: f64) -> f64 {
    if candidate == baseline {
        0.5
    } else if candidate > baseline {
        1.0
    } else {
        0.0
    }
}

fn effect_size(pairs: &Pairs) -> J {
    let first: Vec<f64> = pairs.baseline.iter().map(|(l, h)| (l + h) / 2.0).collect();
    let second: Vec<f64> = pairs.candidate.iter().map(|(l, h)| (l + h) / 2.0).collect();
    if pairs.design == PAIRED {
        let wins: f64 = first.iter().zip(&second).map(|(a, b)| beats(*b, *a)).sum();
        return obj([
            ("name", J::from("paired_superiority")),
            ("value", J::Float(wins / first.len() as f64)),
            ("count", J::from(first.len())),
        ]);
    }
    let count = first.len() * second.len();
    let total: f64 = first
        .iter()
        .flat_map(|a| second.iter().map(move |b| beats(*b, *a)))
        .sum();
    obj([
        ("name", J::from("a12")),
        (
            "value",
            if count > 0 {
                J::Float(total / count as f64)
            } else {
                J::Null
            },
        ),
        ("count", J::from(count)),
    ])
}

fn gate(
    request: &Request,
    pairs: &Pairs,
    worst: &Estimate,
    best: &Estimate,
    guards: &Guards,
) -> Option<GateOutcome> {
    let gate = request.gate.as_ref()?;
    if let Some(reason) = gate_blocker(request, pairs, guards) {
        return Some(GateOutcome::new(NOT_EVALUABLE, Some(&reason), gate));
    }
    let status = decide(&gate.rule, gate.budget, worst, best, &request.direction);
    let case = if gate.rule == NON_INFERIORITY {
        "worst_case"
    } else {
        "best_case"
    };
    let reason = match status {
        PASS => None,
        FAIL => Some("exceeds_budget"),
        _ => Some("unbounded"),
    };
    Some(GateOutcome::new(status, reason, gate).with_case(case))
}

fn gate_blocker(request: &Request, pairs: &Pairs, guards: &Guards) -> Option<String> {
    let gate = request.gate.as_ref()?;
    let complete = complete(pairs, &request.scale);
    if let Some(reason) = &request.unavailable {
        return Some(reason.clone());
    }
    if gate
        .min_complete_blocks
        .is_some_and(|m| (complete as i64) < m)
    {
        return Some("blocks_below_preregistered".into());
    }
    if complete < MIN_GATE_PAIRS {
        let reason = if pairs.design == PAIRED {
            "insufficient_blocks"
        } else {
            "insufficient_runs"
        };
        return Some(reason.into());
    }
    if guards.decision_flips.is_some_and(|f| f > 0) {
        return Some("decision_unstable".into());
    }
    None
}

fn complete(pairs: &Pairs, scale: &str) -> usize {
    if scale == ABSOLUTE {
        pairs.candidate.len()
    } else if pairs.design == PAIRED {
        pairs.baseline.len()
    } else {
        pairs.baseline.len().min(pairs.candidate.len())
    }
}

// ------------------------------------------------------------- zero rules

fn constant(pairs: &Pairs) -> Option<f64> {
    let mut seen: Vec<f64> = Vec::new();
    for (a, b) in pairs.baseline.iter().chain(&pairs.candidate) {
        for x in [*a, *b] {
            if !seen.contains(&x) {
                seen.push(x);
            }
        }
    }
    (seen.len() == 1).then(|| seen[0])
}

fn degenerate(mut base: MetricComparison, request: &Request, pairs: &Pairs) -> MetricComparison {
    let value = constant(pairs);
    let kind = if value == Some(0.0) {
        "degenerate_zero"
    } else {
        "degenerate_constant"
    };
    let alpha = 1.0 - request.confidence;
    let mut bounds = Vec::new();
    for (arm, count) in [
        ("baseline", pairs.baseline.len()),
        ("candidate", pairs.candidate.len()),
    ] {
        if count > 0 {
            bounds.push((
                arm.to_owned(),
                J::Float(1.0 - (alpha / 2.0).powf(1.0 / count as f64)),
            ));
        }
    }
    base.degenerate = Some(obj([
        ("kind", J::from(kind)),
        ("value", J::from(value)),
        ("run_departs_upper", J::Obj(bounds)),
        (
            "statement",
            J::from("every run of both arms had this value; a run departs from it with probability at most the bound shown, per arm"),
        ),
    ]));
    if let Some(rule) = &request.gate {
        let blocker = gate_blocker(request, pairs, &Guards::default());
        base.gate = Some(GateOutcome::new(
            NOT_EVALUABLE,
            Some(blocker.as_deref().unwrap_or(kind)),
            rule,
        ));
    }
    base.verdict = Some(("no_detectable_change".into(), "undetermined".into()));
    base.reason = Some(kind.into());
    base
}

fn nonpositive(request: &Request, worst_case: &Case, best_case: &Case) -> Option<&'static str> {
    if worst_case.0.iter().chain(&best_case.0).any(|v| *v <= 0.0) {
        return Some("undefined_in_arm");
    }
    if worst_case.1.iter().chain(&best_case.1).any(|v| *v <= 0.0) {
        return Some(if request.direction == HIGHER_IS_BETTER {
            "candidate_zero"
        } else {
            "undefined_in_arm"
        });
    }
    None
}

fn zero_rule(
    mut base: MetricComparison,
    request: &Request,
    pairs: &Pairs,
    blocked: &str,
) -> MetricComparison {
    let (worst_case, best_case) = cases(pairs, &request.direction);
    let sign = request.sign();
    let worst = primary(
        pairs.design,
        DIFFERENCE,
        &worst_case,
        request.confidence,
        sign,
        None,
    );
    let best = primary(
        pairs.design,
        DIFFERENCE,
        &best_case,
        request.confidence,
        sign,
        None,
    );
    base.difference = Some(worst.clone());
    base.reason = Some(blocked.to_owned());
    base.effect_size = Some(effect_size(pairs));
    let Some(rule) = request.gate.as_ref() else {
        return base;
    };
    let mut blocked = blocked;
    if blocked == "candidate_zero" {
        if let Some(outcome) = candidate_zero_gate(request, pairs, &worst_case, &best_case) {
            base.gate = Some(outcome);
            return base;
        }
        blocked = "undefined_in_arm";
    }
    let blocker = gate_blocker(request, pairs, &Guards::default());
    let Some(fallback) = rule.fallback_budget.filter(|_| blocker.is_none()) else {
        base.gate = Some(GateOutcome::new(
            NOT_EVALUABLE,
            Some(blocker.as_deref().unwrap_or(blocked)),
            rule,
        ));
        return base;
    };
    let status = decide(&rule.rule, fallback, &worst, &best, &request.direction);
    let reason = if status == PASS {
        "fallback_budget"
    } else {
        "exceeds_fallback_budget"
    };
    base.gate = Some(GateOutcome::new(status, Some(reason), rule).with_case("fallback"));
    base
}

fn candidate_zero_gate(
    request: &Request,
    pairs: &Pairs,
    worst_case: &Case,
    best_case: &Case,
) -> Option<GateOutcome> {
    let rule = request.gate.as_ref()?;
    let regression = rule.rule != NON_INFERIORITY;
    if regression {
        if let Some(blocker) = gate_blocker(request, pairs, &Guards::default()) {
            return Some(GateOutcome::new(NOT_EVALUABLE, Some(&blocker), rule));
        }
    }
    let used = if regression { best_case } else { worst_case };
    used.1
        .iter()
        .any(|v| *v <= 0.0)
        .then(|| GateOutcome::new(FAIL, Some("candidate_zero"), rule))
}

// --------------------------------------------------------------- fractions

fn counted(pairs: &Pairs) -> bool {
    let lengths_ok = pairs.trials.0.len() == pairs.baseline.len()
        && pairs.trials.1.len() == pairs.candidate.len();
    let all: Vec<&Option<i64>> = pairs.trials.0.iter().chain(&pairs.trials.1).collect();
    lengths_ok && !all.is_empty() && all.iter().all(|m| m.is_some_and(|m| m > 0))
}

fn floor(request: &Request, pairs: &Pairs, case: &Case) -> Option<f64> {
    if request.unit != FRACTION_UNIT || !counted(pairs) {
        return None;
    }
    let mut variance = 0.0;
    for (values, counts) in [(&case.0, &pairs.trials.0), (&case.1, &pairs.trials.1)] {
        let total: f64 = counts.iter().map(|m| m.unwrap_or(0) as f64).sum();
        let events: f64 = values
            .iter()
            .zip(counts)
            .map(|(v, m)| v * m.unwrap_or(0) as f64)
            .sum();
        let share = (events + 1.0) / (total + 2.0);
        variance += share * (1.0 - share) / total;
    }
    Some(variance.sqrt())
}

fn pooled(request: &Request, pairs: &Pairs) -> Option<J> {
    if !counted(pairs) {
        return None;
    }
    let (worst_case, _) = cases(pairs, &request.direction);
    let mut bounds = Vec::new();
    for (values, counts) in [
        (&worst_case.0, &pairs.trials.0),
        (&worst_case.1, &pairs.trials.1),
    ] {
        let total: i64 = counts.iter().map(|m| m.unwrap_or(0)).sum();
        let events: f64 = values
            .iter()
            .zip(counts)
            .map(|(v, m)| v * m.unwrap_or(0) as f64)
            .sum();
        let events = crate::analysis::stats::round_half_even(events).max(0.0) as u64;
        bounds.push(clopper_pearson(
            events,
            total.max(0) as u64,
            request.confidence,
            "independent_requests",
        ));
    }
    let bad = if request.direction == LOWER_IS_BETTER {
        bounds[1].upper - bounds[0].lower
    } else {
        bounds[0].upper - bounds[1].lower
    };
    let budget = request.tolerance();
    let alpha = (1.0 - request.confidence) / 2.0;
    let needed =
        (0.0 < budget && budget < 1.0).then(|| (alpha.ln() / (1.0 - budget).ln()).ceil() as i64);
    Some(obj([
        ("model", J::from("independent_requests")),
        ("baseline", bounds[0].to_record()),
        ("candidate", bounds[1].to_record()),
        ("bad_direction_bound", J::Float(bad)),
        ("n_eff_for_zero_event_bound", J::from(needed)),
        (
            "note",
            J::from("exact only if requests are independent; with correlation rho within a run the effective sample is N / (1 + (m - 1) rho)"),
        ),
    ]))
}

fn run_level_gate(
    request: &Request,
    baseline: &[RunValue],
    candidate: &[RunValue],
    blocks: Option<(&[String], &[String])>,
) -> Option<GateOutcome> {
    let rule = request.gate.as_ref()?;
    let blocks = match (
        run_level_blocker(request, baseline, candidate, blocks),
        blocks,
    ) {
        (None, Some(blocks)) => blocks,
        (blocker, _) => {
            let reason = blocker.unwrap_or_else(|| "fraction_needs_blocks".into());
            return Some(GateOutcome::new(NOT_EVALUABLE, Some(&reason), rule).with_case(RUN_LEVEL));
        }
    };
    let references = references(baseline, blocks, &request.direction);
    let within = runs_within(&request.direction, rule.budget, candidate, &references);
    let k = within.iter().filter(|ok| **ok).count();
    let n = within.len();
    let bound = clopper_pearson(k as u64, n as u64, request.confidence, "independent_runs");
    let status = if bound.lower >= RUN_PASS_SHARE {
        PASS
    } else {
        FAIL
    };
    let sided = 0.5 + request.confidence / 2.0;
    let statement = format!(
        "{k} of {n} candidate runs within {} of the block baseline; run-pass rate at least {:.3} with {} confidence",
        py_g(rule.budget, 6, false),
        bound.lower,
        py_pct(sided, 1, false)
    );
    let claim = Claim {
        runs_within_budget: k,
        runs: n,
        runs_unmeasurable: candidate.iter().filter(|v| v.bounds().is_none()).count(),
        run_pass_lower: bound.lower,
        one_sided_confidence: sided,
        statement,
        mean_change: None,
        mean_exceeds_budget: false,
    };
    let reason = (status != PASS).then_some("too_few_runs_within_budget");
    let mut outcome = GateOutcome::new(status, reason, rule).with_case(RUN_LEVEL);
    outcome.claim = Some(claim);
    Some(outcome)
}

fn with_mean_change(
    request: &Request,
    result: &MetricComparison,
    outcome: Option<GateOutcome>,
) -> Option<GateOutcome> {
    let mut outcome = outcome?;
    let (Some(claim), Some(rule)) = (outcome.claim.as_mut(), request.gate.as_ref()) else {
        return Some(outcome);
    };
    let change = result
        .worst
        .as_ref()
        .and_then(|w| w.effect)
        .map(|e| request.sign() * e);
    claim.mean_exceeds_budget = change.is_some_and(|c| c > rule.budget);
    claim.mean_change = Some(change);
    Some(outcome)
}

fn run_level_blocker(
    request: &Request,
    baseline: &[RunValue],
    candidate: &[RunValue],
    blocks: Option<(&[String], &[String])>,
) -> Option<String> {
    let rule = request.gate.as_ref()?;
    if let Some(reason) = &request.unavailable {
        return Some(reason.clone());
    }
    if blocks.is_none() {
        return Some("fraction_needs_blocks".into());
    }
    if baseline.iter().all(|v| v.bounds().is_none()) {
        return Some("baseline_unmeasured".into());
    }
    let Some(counts) = measured_counts(request.trials.as_ref(), baseline, candidate) else {
        return Some("requests_per_run_unrecorded".into());
    };
    let fewest = counts.iter().copied().min().unwrap_or(0) as f64;
    if rule.budget <= 0.0 || fewest < REQUESTS_PER_BUDGET / rule.budget {
        return Some("too_few_requests_per_run".into());
    }
    if rule
        .min_complete_blocks
        .is_some_and(|m| (candidate.len() as i64) < m)
    {
        return Some("blocks_below_preregistered".into());
    }
    // n of n runs reach the share only when (alpha / 2) ** (1 / n) >= q.
    let n = i32::try_from(candidate.len()).unwrap_or(i32::MAX);
    if (1.0 - request.confidence) / 2.0 < RUN_PASS_SHARE.powi(n) {
        return Some("too_few_runs_for_claim".into());
    }
    None
}

fn measured_counts(
    trials: Option<&(Counts, Counts)>,
    baseline: &[RunValue],
    candidate: &[RunValue],
) -> Option<Vec<i64>> {
    let trials = trials?;
    let mut counts = Vec::new();
    for (values, arm) in [(baseline, &trials.0), (candidate, &trials.1)] {
        for (value, m) in values.iter().zip(arm) {
            if value.bounds().is_none() {
                continue;
            }
            match m {
                Some(m) if *m > 0 => counts.push(*m),
                _ => return None,
            }
        }
    }
    Some(counts)
}

fn runs_within(
    direction: &str,
    budget: f64,
    candidate: &[RunValue],
    references: &[Option<f64>],
) -> Vec<bool> {
    let s = sign(direction);
    candidate
        .iter()
        .zip(references)
        .map(|(value, reference)| match (value.bounds(), reference) {
            (Some(run), Some(reference)) => {
                let worst = if direction == LOWER_IS_BETTER {
                    run.1
                } else {
                    run.0
                };
                s * (worst - reference) <= budget
            }
            _ => false,
        })
        .collect()
}

fn references(
    baseline: &[RunValue],
    blocks: (&[String], &[String]),
    direction: &str,
) -> Vec<Option<f64>> {
    let mut by_block: Vec<(&String, Option<(f64, f64)>)> = Vec::new();
    for (label, value) in blocks.0.iter().zip(baseline) {
        // A later run of a label replaces an earlier one, as a dict would.
        by_block.retain(|(l, _)| *l != label);
        by_block.push((label, value.bounds()));
    }
    blocks
        .1
        .iter()
        .map(|label| {
            let partner = by_block
                .iter()
                .find(|(l, _)| *l == label)
                .and_then(|(_, b)| *b)?;
            Some(if direction == LOWER_IS_BETTER {
                partner.0
            } else {
                partner.1
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
