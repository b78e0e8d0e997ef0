//! Arms of stored runs chosen by the labels the runs recorded (`compare --db
//! --experiment NAME`): the experiment, arm and block an experiment runner
//! (or `infer profile --experiment --arm --block`) writes into each run's
//! session config, as the reference's experiment plans lay them out. A team
//! compares "baseline" against "candidate" without listing run ids
//! (docs/compare.md, "Arms by experiment labels").
//!
//! Labels are matched as the reference's runner matches them: the experiment
//! and arm as strings, the block by its `str()`. A retried run (a higher
//! `attempt` of the same experiment, arm and block) supersedes the earlier
//! attempts, which the runner keeps only as a record of what went wrong.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::CompareError;
use crate::db::runs::LabeledRun;
use crate::py::json as pyjson;

/// What the flags ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmChoice {
    pub experiment: String,
    pub baseline: String,
    pub candidate: String,
    /// Only these blocks (by their `str()`), when given.
    pub blocks: Vec<String>,
}

/// The run ids of each arm, in start order, and the attempts left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    pub baseline: Vec<String>,
    pub candidate: Vec<String>,
    /// (left out, the later attempt that supersedes it).
    pub superseded: Vec<(String, String)>,
}

/// An arm's run ids, and (left out, superseded by) for its retried blocks.
type ArmRuns = (Vec<String>, Vec<(String, String)>);

fn label<'a>(run: &'a LabeledRun, key: &str) -> &'a Value {
    pyjson::get(&run.labels, key)
}

/// A label that must be a string to match a name given on the command line.
fn text<'a>(run: &'a LabeledRun, key: &str) -> Option<&'a str> {
    label(run, key).as_str()
}

/// The attempt number: 1 when not recorded as an integer (the runner's
/// default), so a first attempt without the label is superseded by a 2.
fn attempt(run: &LabeledRun) -> i64 {
    let v = label(run, "attempt");
    if pyjson::is_int(v) {
        v.as_i64().unwrap_or(1)
    } else {
        1
    }
}

fn names(items: BTreeSet<&str>) -> String {
    items.into_iter().collect::<Vec<_>>().join(", ")
}

/// The arms the choice names among the stored runs (`runs` in listing order).
pub fn choose(runs: &[LabeledRun], choice: &ArmChoice) -> Result<Chosen, CompareError> {
    if choice.baseline == choice.candidate {
        return Err(CompareError::usage(format!(
            "--baseline and --candidate both name arm '{}': compare two arms",
            choice.baseline
        )));
    }
    let of_experiment: Vec<&LabeledRun> = runs
        .iter()
        .filter(|r| text(r, "experiment") == Some(choice.experiment.as_str()))
        .collect();
    if of_experiment.is_empty() {
        let recorded: BTreeSet<&str> = runs.iter().filter_map(|r| text(r, "experiment")).collect();
        return Err(CompareError::usage(if recorded.is_empty() {
            format!(
                "no stored run records experiment '{}': no run in the database records an experiment label",
                choice.experiment
            )
        } else {
            format!(
                "no stored run records experiment '{}'; the database holds experiment {}",
                choice.experiment,
                names(recorded)
            )
        }));
    }
    let in_blocks = |r: &&LabeledRun| {
        choice.blocks.is_empty() || choice.blocks.contains(&pyjson::str_form(label(r, "block")))
    };
    let arm = |name: &str| -> Result<ArmRuns, CompareError> {
        let runs: Vec<&LabeledRun> = of_experiment
            .iter()
            .copied()
            .filter(|r| text(r, "arm") == Some(name))
            .filter(in_blocks)
            .collect();
        if runs.is_empty() {
            let arms: BTreeSet<&str> = of_experiment
                .iter()
                .filter_map(|r| text(r, "arm"))
                .collect();
            let blocks = if choice.blocks.is_empty() {
                String::new()
            } else {
                format!(" in block {}", choice.blocks.join(", "))
            };
            return Err(CompareError::usage(format!(
                "experiment '{}' has no run of arm '{name}'{blocks}; its arms: {}",
                choice.experiment,
                if arms.is_empty() {
                    "none recorded".to_owned()
                } else {
                    names(arms)
                }
            )));
        }
        Ok(latest_attempts(&runs))
    };
    let (baseline, mut superseded) = arm(&choice.baseline)?;
    let (candidate, more) = arm(&choice.candidate)?;
    superseded.extend(more);
    Ok(Chosen {
        baseline,
        candidate,
        superseded,
    })
}

/// One arm's runs less those a later attempt of their block supersedes;
/// runs without a block are all kept (nothing says they repeat each other).
fn latest_attempts(runs: &[&LabeledRun]) -> ArmRuns {
    let mut best: BTreeMap<String, &LabeledRun> = BTreeMap::new();
    for run in runs {
        let block = label(run, "block");
        if block.is_null() {
            continue;
        }
        let key = pyjson::str_form(block);
        match best.get(&key) {
            // Listing order is start order: a tie goes to the later run.
            Some(kept) if attempt(kept) > attempt(run) => {}
            _ => {
                best.insert(key, run);
            }
        }
    }
    let mut kept = Vec::new();
    let mut superseded = Vec::new();
    for run in runs {
        let block = label(run, "block");
        let winner = (!block.is_null())
            .then(|| best.get(&pyjson::str_form(block)))
            .flatten();
        match winner {
            Some(w) if w.run_id != run.run_id && attempt(w) > attempt(run) => {
                superseded.push((run.run_id.clone(), w.run_id.clone()));
            }
            _ => kept.push(run.run_id.clone()),
        }
    }
    (kept, superseded)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(id: &str, labels: Value) -> LabeledRun {
        LabeledRun {
            run_id: id.into(),
            started_at_ns: None,
            labels,
        }
    }

    fn lab(exp: &str, arm: &str, block: Value, attempt: Value) -> Value {
        json!({"experiment": exp, "arm": arm, "block": block, "attempt": attempt, "position": 1})
    }

    fn choice(blocks: &[&str]) -> ArmChoice {
        ArmChoice {
            experiment: "exp".into(),
            baseline: "baseline".into(),
            candidate: "candidate".into(),
            blocks: blocks.iter().map(|b| b.to_string()).collect(),
        }
    }

    fn stored() -> Vec<LabeledRun> {
        vec![
            run("b1", lab("exp", "baseline", json!("1"), Value::Null)),
            run("c1", lab("exp", "candidate", json!(1), Value::Null)),
            run("c2-first", lab("exp", "candidate", json!(2), json!(1))),
            run("b2", lab("exp", "baseline", json!(2), Value::Null)),
            run("c2-retry", lab("exp", "candidate", json!(2), json!(2))),
            run("other", lab("exp-2", "baseline", json!(1), Value::Null)),
            run("unlabeled", Value::Null),
        ]
    }

    #[test]
    fn arms_by_their_recorded_names_with_retries_superseded() {
        let got = choose(&stored(), &choice(&[])).unwrap();
        assert_eq!(got.baseline, ["b1", "b2"]);
        assert_eq!(got.candidate, ["c1", "c2-retry"]);
        assert_eq!(
            got.superseded,
            [("c2-first".to_owned(), "c2-retry".to_owned())]
        );
        // A block is matched by its str(): "1" and 1 are one block.
        let got = choose(&stored(), &choice(&["1"])).unwrap();
        assert_eq!(
            (got.baseline, got.candidate),
            (vec!["b1".to_owned()], vec!["c1".to_owned()])
        );
    }

    #[test]
    fn unknown_names_list_what_the_database_holds() {
        let mut c = choice(&[]);
        c.experiment = "nope".into();
        let e = choose(&stored(), &c).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no stored run records experiment 'nope'; the database holds experiment exp, exp-2"
        );
        assert_eq!(e.exit(), crate::exit::Exit::Usage);
        let mut c = choice(&[]);
        c.candidate = "treatment".into();
        assert_eq!(
            choose(&stored(), &c).unwrap_err().to_string(),
            "experiment 'exp' has no run of arm 'treatment'; its arms: baseline, candidate"
        );
        assert_eq!(
            choose(&stored(), &choice(&["7"])).unwrap_err().to_string(),
            "experiment 'exp' has no run of arm 'baseline' in block 7; its arms: baseline, candidate"
        );
        let mut c = choice(&[]);
        c.candidate = "baseline".into();
        assert!(choose(&stored(), &c).is_err());
    }

    #[test]
    fn runs_without_a_block_are_all_kept() {
        let runs = vec![
            run("a", lab("exp", "baseline", Value::Null, Value::Null)),
            run("b", lab("exp", "baseline", Value::Null, json!(2))),
            run("c", lab("exp", "candidate", Value::Null, Value::Null)),
        ];
        let got = choose(&runs, &choice(&[])).unwrap();
        assert_eq!(got.baseline, ["a", "b"]);
        assert!(got.superseded.is_empty());
    }
}
