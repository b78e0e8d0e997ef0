//! The comparison spec (how to compare: design, mode, gates and what may
//! differ) and the flags it is built from, checked as the reference's
//! `stormlog.infer.cli._comparison_spec` checks them.

use super::stats::GateRule;
use super::{metrics, CompareError};

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
