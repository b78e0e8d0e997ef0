//! The answers of the `slo` questions (`stormlog slo curve|frontier|binding|
//! capacity|diff`) as plain data: what `ops::slo` computes from stored runs,
//! and what the renderers and the HTML pages read. No I/O.
use serde::Serialize;
use serde_json::Value;

// ----- `slo binding` -----

/// One criterion of a case.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BindingCriterion {
    pub criterion: String,
    pub threshold_ms: f64,
    pub target: Option<f64>,
    pub attainment_lower: Option<f64>,
    pub attainment_upper: Option<f64>,
    /// The joint attainment of the policy without this criterion.
    pub joint_without_lower: Option<f64>,
    pub joint_without_upper: Option<f64>,
    /// The verdict stays the same for every threshold from this one up to
    /// the current; below it, it changes. Null: no tighter threshold
    /// changes it.
    pub holds_down_to_ms: Option<f64>,
    /// The smallest looser threshold at which the verdict changes; null
    /// when none does.
    pub changes_at_ms: Option<f64>,
    /// `threshold_ms - holds_down_to_ms`, `changes_at_ms - threshold_ms`.
    pub tighter_by_ms: Option<f64>,
    pub looser_by_ms: Option<f64>,
}

/// One case of `slo binding`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BindingCase {
    pub run_id: String,
    pub case: String,
    pub policy: String,
    pub status: String,
    pub offered: usize,
    pub joint_lower: Option<f64>,
    pub joint_upper: Option<f64>,
    pub joint_target: Option<f64>,
    /// `met`, `missed`, `undecided`, `unmeasurable` or `no target`.
    pub verdict: &'static str,
    /// The criteria with the lowest attainment (lower bound).
    pub binding: Vec<String>,
    pub criteria: Vec<BindingCriterion>,
}

// ----- `slo capacity` -----

/// Which workload field is the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    /// `arrival.rate_per_second` (open loop).
    Rate,
    /// `concurrency` (closed loop).
    Concurrency,
    /// The rate where the case has one, else the concurrency.
    Auto,
}

/// One target at one point.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TargetAt {
    pub name: String,
    pub target: f64,
    /// `met`, `missed`, `undecided` or `unmeasurable`.
    pub outcome: &'static str,
    pub attainment_lower: Option<f64>,
}

/// One case of the sweep.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LoadPoint {
    pub run_id: String,
    pub case: String,
    pub load: f64,
    pub verdict: &'static str,
    pub passed: bool,
    pub targets: Vec<TargetAt>,
}

/// A sweep and its capacity.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Sweep {
    /// `rate` or `concurrency`.
    pub load: &'static str,
    /// The cases' shared workload settings (everything but the load).
    pub workload: Value,
    /// `bracketed`, `none_pass`, `all_pass` or `not_monotone`.
    pub status: &'static str,
    /// The capacity estimate (bracketed only).
    pub capacity: Option<f64>,
    /// The target whose interpolated crossing gives the capacity.
    pub binding_target: Option<String>,
    pub last_passing: Option<LoadPoint>,
    pub first_failing: Option<LoadPoint>,
    /// Every point, by load.
    pub points: Vec<LoadPoint>,
}

// ----- `slo curve` -----

/// Joint figures at one point (with `--joint`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JointPoint {
    pub met: usize,
    pub missed: usize,
    pub unknown: usize,
    pub attainment_lower: Option<f64>,
    pub attainment_upper: Option<f64>,
}

/// One point: the `per_criterion` entry at `threshold_ms`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Point {
    pub threshold_ms: f64,
    pub pass: usize,
    pub fail: usize,
    pub unknown: usize,
    pub not_applicable: usize,
    pub attainment_lower: Option<f64>,
    pub attainment_upper: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joint: Option<JointPoint>,
}

/// One case's curve for one criterion.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Curve {
    pub run_id: String,
    pub case: String,
    pub criterion: String,
    pub offered: usize,
    /// The joint policy's name (with `--joint`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joint_policy: Option<String>,
    pub points: Vec<Point>,
}

// ----- `slo diff` -----

/// One policy's judgement of a case.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Side {
    pub policy: String,
    pub digest: String,
    pub met: u64,
    pub missed: u64,
    pub unknown: u64,
    pub attainment_lower: Option<f64>,
    pub attainment_upper: Option<f64>,
    pub verdict: &'static str,
}

/// Requests that moved from one outcome to another.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Flip {
    /// Under `--against`.
    pub from: &'static str,
    /// Under `--slo`.
    pub to: &'static str,
    pub count: usize,
    pub request_ids: Vec<String>,
}

/// One criterion both policies hold.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CriterionDiff {
    pub criterion: String,
    pub slo_ms: f64,
    pub against_ms: f64,
    /// `pass` counts among successful requests under each policy.
    pub slo_pass: usize,
    pub against_pass: usize,
    pub flips: Vec<Flip>,
}

/// One case of `slo diff`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaseDiff {
    pub run_id: String,
    pub case: String,
    pub offered: usize,
    pub slo: Side,
    pub against: Side,
    /// Joint verdict changes (`met`, `missed`, `unknown`), every request.
    pub verdict_flips: Vec<Flip>,
    pub criteria: Vec<CriterionDiff>,
    /// Criteria only one of the policies holds.
    pub only_in_slo: Vec<String>,
    pub only_in_against: Vec<String>,
}

// ----- `slo frontier` -----

/// One case and criterion.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Frontier {
    pub run_id: String,
    pub case: String,
    pub criterion: String,
    pub target: f64,
    /// `reached` or `unreachable`.
    pub status: &'static str,
    /// The smallest threshold meeting the target (null when unreachable).
    pub threshold_ms: Option<f64>,
    /// The interval's ends; null where no order statistic bounds it.
    pub lower_ms: Option<f64>,
    pub upper_ms: Option<f64>,
    pub confidence: f64,
    /// The attainment's lower bound at `threshold_ms`, or the most any
    /// threshold gives when unreachable.
    pub attainment_lower: Option<f64>,
    /// Successful requests with a value (the m of the interval).
    pub values: usize,
    /// Why the target cannot be reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
