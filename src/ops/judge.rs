//! Judging stored runs under an SLO policy, and the `--check` gate: a run's
//! judgements (under the given policy, else its recorded one) and the exit
//! status a set of judgements gives.
use std::io::Write;

use serde_json::Value;

use super::Result;
use crate::exit::Exit;
use crate::model::RunData;
use crate::report::judge::CaseJudgement;
use crate::slo::{Policy, PolicySource};

/// The judgements of one run under the given policy, or its recorded one.
pub fn judgements(
    data: &RunData,
    policy: Option<(Policy, PolicySource)>,
    spans: &[Value],
) -> Result<Vec<CaseJudgement>> {
    let (policy, source) = match policy {
        Some(p) => p,
        None => {
            let recorded: Vec<&Value> = data.of_type("infer.slo").collect();
            let selected = crate::slo::select(None, &recorded)?;
            match selected.policy.zip(selected.source) {
                Some(p) => p,
                None => return Ok(vec![]),
            }
        }
    };
    Ok(crate::report::judge::judge_run(
        data, &policy, source, spans,
    ))
}

/// `--check`: exit 4 unless every target of every judged case was met, and
/// also when nothing could be judged: no case, a run without a policy
/// (`unjudged`), or a policy without targets. A gate that cannot fail
/// would pass every build.
pub fn gate(judged: &[CaseJudgement], unjudged: &[String], err: &mut dyn Write) -> Result<Exit> {
    let mut failed = false;
    for id in unjudged {
        writeln!(
            err,
            "check failed: run {id}: no SLO policy to judge it by; pass --slo KEY:MS@TARGET or --slo-file FILE"
        )?;
        failed = true;
    }
    if judged.is_empty() && unjudged.is_empty() {
        writeln!(err, "check failed: nothing to judge (no run, or no case)")?;
        failed = true;
    }
    for j in judged {
        match j.verdict() {
            "met" => {}
            "no target" => {
                writeln!(
                    err,
                    "check failed: run {} case {}: no target; the policy sets no attainment target (add one: --slo ttft:500@95%, --target 90%)",
                    j.run_id, j.case_id
                )?;
                failed = true;
            }
            verdict => {
                writeln!(
                    err,
                    "check failed: run {} case {}: {verdict}",
                    j.run_id, j.case_id
                )?;
                failed = true;
            }
        }
    }
    Ok(if failed { Exit::GateFailed } else { Exit::Ok })
}
