//! One metric compared between a baseline and a candidate arm of runs:
//! the paired (block) and independent designs, log-ratio and difference
//! intervals, the guards, the gates and the fraction's run-level claim.
//! docs/compare.md §3 describes the methods; this file follows the
//! reference's `comparison_stats` decision for decision.
//!
//! Its parts: the records a comparison reports (`records`), exact bounds and
//! Holm (`bounds`), and, in the order a comparison runs them, `pairs`,
//! `methods`, `guards`, `gates`, `zero`, `fractions`, from the entry
//! `compare_values` (`entry`).

mod bounds;
mod entry;
mod fractions;
mod gates;
mod guards;
mod methods;
mod pairs;
mod records;
mod zero;

pub use bounds::*;
pub use entry::*;
use fractions::*;
pub use gates::*;
pub use guards::*;
use methods::*;
use pairs::*;
pub use records::*;
use zero::*;

use crate::compare::dist::{beta_ppf, t_ppf, t_sf};
use crate::compare::ojson::{obj, J};
use crate::compare::rng::{pairwise_sum, quantile_linear, Pcg64};
use crate::compare::CompareError;
use crate::py::float::{format_g, percent};

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
pub(super) const RUN_PASS_SHARE: f64 = 0.5;
pub(super) const RUN_LEVEL: &str = "run_level";
pub(super) const REQUESTS_PER_BUDGET: f64 = 3.0;
pub(super) const CENSORED_WORST: &str = "candidate_censored_worst";
pub(super) const BINOMIAL_FLOOR: &str = "binomial_floor: se floored at the pooled binomial se; nominal under independent requests, under-covers when failures cluster within runs";

/// The 95% quantile of |G1| under normal noise, n = 3..=30 (the reference's table).
pub(super) const SKEW_Q95_NORMAL: [f64; 28] = [
    1.727, 1.852, 1.801, 1.699, 1.593, 1.509, 1.434, 1.375, 1.322, 1.275, 1.231, 1.193, 1.159,
    1.128, 1.097, 1.069, 1.043, 1.021, 0.998, 0.977, 0.957, 0.939, 0.923, 0.907, 0.889, 0.877,
    0.861, 0.848,
];

#[cfg(test)]
mod tests;
