//! The observations of one metric gathered by design: blocks paired by key,
//! or two independent arms, with each run's trials.

use super::*;

pub(super) struct Pairs {
    pub(super) design: &'static str,
    pub(super) baseline: Vec<(f64, f64)>,
    pub(super) candidate: Vec<(f64, f64)>,
    pub(super) attrition: Vec<J>,
    pub(super) n_baseline: usize,
    pub(super) n_candidate: usize,
    pub(super) trials: (Counts, Counts),
}

pub(super) type Run = (Option<(f64, f64)>, Option<i64>);

pub(super) fn pair(
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

pub(super) fn split(runs: &[Run]) -> (Vec<(f64, f64)>, Counts) {
    runs.iter().filter_map(|(v, m)| v.map(|v| (v, *m))).unzip()
}

pub(super) fn unpaired(first: &[Run], second: &[Run]) -> Pairs {
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

pub(super) fn paired(first: &[Run], second: &[Run], blocks: (&[String], &[String])) -> Pairs {
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

pub(super) type Case = (Vec<f64>, Vec<f64>);

/// The worst and the best case of every pair, for the metric's direction.
pub(super) fn cases(pairs: &Pairs, direction: &str) -> (Case, Case) {
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
