//! What `stormlog history` lists: the series, each run's headline figures,
//! and the series' change points; and which earlier runs a check takes as
//! its baseline.

use super::changes::{self, Shift};
use super::series::{self, Series};
use super::Entry;
use crate::compare::metrics::fnmatch;
use crate::compare::stats::{RunValue, LOG_RATIO};

/// What to list.
#[derive(Debug, Clone)]
pub struct ListOptions {
    pub allow: Vec<String>,
    /// A series key, or the start of one (a case id, say).
    pub series: Option<String>,
    /// Metrics searched for change points (patterns; empty: the headline ones).
    pub metrics: Vec<String>,
    pub min_segment: usize,
    pub confidence: f64,
}

/// One shift of one metric in a series.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesShift {
    pub metric: String,
    /// The first run at the new level.
    pub run_id: String,
    pub shift: Shift,
}

/// A run's headline figures, in `series::HEADLINE` order.
pub type Figures = Vec<(&'static str, RunValue)>;

/// One series with its runs' figures and its change points.
#[derive(Debug, Clone)]
pub struct SeriesListing {
    pub series: Series,
    /// `(run id, started at, figures)`, oldest first.
    pub runs: Vec<(String, Option<i64>, Figures)>,
    pub shifts: Vec<SeriesShift>,
}

/// How each headline figure is compared: log ratios for latencies and rates.
fn on_log_scale(metric: &str) -> bool {
    metric != "failure_fraction" && metric != "attainment"
}

/// The scale a headline metric's change is measured on.
pub fn scale_of(metric: &str) -> &'static str {
    if on_log_scale(metric) {
        LOG_RATIO
    } else {
        "difference"
    }
}

/// Whether a series is the one `--series` names (its key, or a prefix of it).
pub fn selects(wanted: &str, key: &str) -> bool {
    key == wanted || key.starts_with(wanted)
}

/// Lists the series of `entries`.
pub fn list(entries: &[Entry], options: &ListOptions) -> Vec<SeriesListing> {
    let alpha = 1.0 - options.confidence;
    series::form(entries, &options.allow)
        .into_iter()
        .filter(|s| options.series.as_deref().is_none_or(|w| selects(w, &s.key)))
        .map(|s| {
            let runs: Vec<_> = s
                .runs
                .iter()
                .map(|&i| {
                    let e = &entries[i];
                    let figures = e.figures(&s.case_id).map(<[_]>::to_vec).unwrap_or_default();
                    (e.run_id.clone(), e.started_at_ns, figures)
                })
                .collect();
            let mut shifts = Vec::new();
            for metric in series::HEADLINE {
                if !options.metrics.is_empty()
                    && !options.metrics.iter().any(|p| fnmatch(p, metric))
                {
                    continue;
                }
                let values: Vec<Option<f64>> = runs
                    .iter()
                    .map(|(_, _, f)| {
                        f.iter()
                            .find(|(n, _)| *n == metric)
                            .and_then(|(_, v)| match v {
                                RunValue::Point(x) => Some(*x),
                                // A bounded value has no one level: the midpoint stands for it.
                                RunValue::Range(a, b) if a == b => Some(*a),
                                _ => None,
                            })
                    })
                    .collect();
                for shift in
                    changes::find(&values, on_log_scale(metric), options.min_segment, alpha)
                {
                    shifts.push(SeriesShift {
                        metric: metric.to_owned(),
                        run_id: runs[shift.index].0.clone(),
                        shift,
                    });
                }
            }
            SeriesListing {
                series: s,
                runs,
                shifts,
            }
        })
        .collect()
}

/// Which earlier runs a check compares against.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// The last N earlier runs of the series.
    Last(usize),
    /// The earlier runs of the series started at or after this time (ns).
    Since(i64),
    /// These runs (entry indexes), whatever their series.
    Runs(Vec<usize>),
}

/// The baseline of `target` in each of its cases: `(case, series key, entry indexes)`.
pub fn baselines(
    entries: &[Entry],
    target: usize,
    baseline: &Baseline,
    allow: &[String],
) -> Vec<(String, Option<String>, Vec<usize>)> {
    let all = series::form(entries, allow);
    entries[target]
        .cases
        .iter()
        .map(|(case_id, _)| {
            let found = all
                .iter()
                .find(|s| &s.case_id == case_id && s.runs.contains(&target));
            let key = found.map(|s| s.key.clone());
            let earlier: Vec<usize> = found
                .map(|s| {
                    s.runs
                        .iter()
                        .take_while(|&&i| i != target)
                        .copied()
                        .collect()
                })
                .unwrap_or_default();
            let chosen = match baseline {
                Baseline::Last(n) => earlier[earlier.len().saturating_sub(*n)..].to_vec(),
                Baseline::Since(ns) => earlier
                    .into_iter()
                    .filter(|&i| entries[i].started_at_ns.is_some_and(|t| t >= *ns))
                    .collect(),
                // A named run without the case is set aside by the check, and said so.
                Baseline::Runs(runs) => runs.clone(),
            };
            (case_id.clone(), key, chosen)
        })
        .collect()
}
