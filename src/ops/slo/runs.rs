//! Each `slo` command over the selected stored runs: a plain request in, the
//! typed results out (what `cli::slo` renders, and what another caller such
//! as the HTML report calls).

use super::{binding, capacity, curve, diff, each_run, frontier, policy_for};
use super::{Result, RunView, Selection, SloOpsError};
use crate::model::RunData;
use crate::slo::{CriterionKey, Policy, PolicySource};

/// A policy given on the command line, or None for each run's recorded one.
pub type Given = Option<(Policy, PolicySource)>;

/// The policy for one run, or a usage error naming the run without one.
pub fn required(data: &RunData, given: &Given) -> Result<(Policy, PolicySource)> {
    policy_for(data, given.as_ref())?.ok_or_else(|| {
        SloOpsError::usage(format!(
            "run {} has no recorded SLO policy; give one on the command line (KEY:MS or a policy file)",
            data.run_id
        ))
    })
}

/// `slo curve`: `joint` is Some (the policy given, or None for the
/// recorded one) with `--joint`.
pub fn curves(
    sel: &Selection,
    criteria: &[CriterionKey],
    thresholds: Option<&curve::Thresholds>,
    joint: Option<&Given>,
) -> Result<Vec<curve::Curve>> {
    let mut out = Vec::new();
    each_run(sel, |data, spans| {
        let cfg = curve::CurveConfig {
            criteria: criteria.to_vec(),
            thresholds: thresholds.cloned(),
            joint: joint.map(|g| required(data, g)).transpose()?,
        };
        let view = RunView::new(data, spans, sel.case.as_deref());
        out.extend(curve::curves(&view, &cfg));
        Ok(())
    })?;
    Ok(out)
}

/// `slo frontier`: no criteria means every one the run has values for.
pub fn frontiers(
    sel: &Selection,
    target: f64,
    criteria: &[CriterionKey],
    confidence: f64,
) -> Result<Vec<frontier::Frontier>> {
    if !(target > 0.0 && target <= 1.0) {
        return Err(SloOpsError::usage(format!(
            "--target {target}: expected a share in (0, 1], such as 0.99"
        )));
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(SloOpsError::usage(format!(
            "--confidence {confidence}: expected a share in (0, 1), such as 0.95"
        )));
    }
    let mut out = Vec::new();
    each_run(sel, |data, spans| {
        let view = RunView::new(data, spans, sel.case.as_deref());
        let cfg = frontier::FrontierConfig {
            target,
            criteria: if criteria.is_empty() {
                frontier::measured_criteria(&view)
            } else {
                criteria.to_vec()
            },
            confidence,
        };
        out.extend(frontier::frontiers(&view, &cfg));
        Ok(())
    })?;
    Ok(out)
}

/// `slo binding`.
pub fn bindings(sel: &Selection, given: &Given) -> Result<Vec<binding::BindingCase>> {
    let mut out = Vec::new();
    each_run(sel, |data, spans| {
        let (policy, source) = required(data, given)?;
        let view = RunView::new(data, spans, sel.case.as_deref());
        out.extend(binding::bindings(&view, &policy, source));
        Ok(())
    })?;
    Ok(out)
}

/// `slo capacity`: every run's cases, grouped into sweeps.
pub fn capacities(
    sel: &Selection,
    given: &Given,
    load: capacity::Load,
) -> Result<Vec<capacity::Sweep>> {
    let mut points = Vec::new();
    each_run(sel, |data, spans| {
        let (policy, source) = required(data, given)?;
        let targets = policy.attainment_target.is_some()
            || policy
                .criteria
                .iter()
                .any(|c| c.attainment_target.is_some());
        if !targets {
            return Err(SloOpsError::usage(format!(
                "policy {} sets no attainment target, so no load can meet or miss it; give one \
                 in a policy file (attainment_target = 0.99)",
                policy.name
            )));
        }
        let view = RunView::new(data, spans, sel.case.as_deref());
        points.extend(capacity::points(&view, &policy, source, load));
        Ok(())
    })?;
    Ok(capacity::sweeps(points))
}

/// `slo diff`: either policy None is each run's recorded one (not both).
pub fn diffs(sel: &Selection, slo: &Given, against: &Given) -> Result<Vec<diff::CaseDiff>> {
    if slo.is_none() && against.is_none() {
        return Err(SloOpsError::usage(
            "slo diff compares two policies: give --slo, --against or both (the one left out is \
             each run's recorded policy)",
        ));
    }
    let mut out = Vec::new();
    each_run(sel, |data, spans| {
        let (slo, against) = (required(data, slo)?, required(data, against)?);
        let view = RunView::new(data, spans, sel.case.as_deref());
        out.extend(diff::diffs(&view, &slo, &against));
        Ok(())
    })?;
    Ok(out)
}
