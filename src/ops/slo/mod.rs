//! `stormlog slo`: questions asked of stored runs' requests without
//! re-running them (docs/slo.md). Curves of attainment against a threshold,
//! the tightest threshold that still meets a target, which criterion binds,
//! capacity over a load sweep, and which requests change verdict between two
//! policies. Every figure is the one `report --slo` would give: the per-run
//! work goes through `slo::evaluate_case` (via `report::judge::judge_run`)
//! or through `slo::sweep`'s columns, which count exactly as it does.
//!
//! Runs are read one at a time on a reader thread while this one works, so
//! memory stays bounded by about one run's requests.

pub mod binding;
pub mod capacity;
pub mod curve;
pub mod diff;
pub mod frontier;
pub mod render;
pub mod runs;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::db;
use crate::exit::Exit;
use crate::model::{Request, RunData};
use crate::slo::{Policy, PolicySource, Spans};
use crate::vllm::SpanJoin;

/// Why a `slo` command could not answer; carries the exit status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SloOpsError {
    pub message: String,
    pub exit: Exit,
}

impl SloOpsError {
    pub fn usage(message: impl Into<String>) -> Self {
        SloOpsError {
            message: message.into(),
            exit: Exit::Usage,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        SloOpsError {
            message: message.into(),
            exit: Exit::InvalidInput,
        }
    }
}

impl From<crate::db::DbError> for SloOpsError {
    fn from(e: crate::db::DbError) -> Self {
        SloOpsError {
            exit: e.exit(),
            message: e.to_string(),
        }
    }
}

impl From<crate::slo::SloError> for SloOpsError {
    fn from(e: crate::slo::SloError) -> Self {
        SloOpsError {
            exit: e.exit(),
            message: e.to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, SloOpsError>;

/// Which stored runs and cases a command reads.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub db: PathBuf,
    /// Run ids or unique prefixes (ignored with `all`).
    pub runs: Vec<String>,
    pub all: bool,
    /// A case-id pattern (`*` any run of characters, `?` one character).
    pub case: Option<String>,
}

/// One stored run as the `slo` commands see it: its spans joined to its
/// requests, and its measured requests by case (as the report groups them),
/// keeping the cases the pattern selects.
pub struct RunView<'a> {
    pub data: &'a RunData,
    pub external_spans: &'a [Value],
    pub join: SpanJoin,
    pub cases: Vec<(String, Vec<&'a Request>)>,
}

impl<'a> RunView<'a> {
    pub fn new(data: &'a RunData, external_spans: &'a [Value], pattern: Option<&str>) -> Self {
        let mut spans: Vec<Value> = data.of_type("infer.vllm_span").cloned().collect();
        spans.extend(external_spans.iter().cloned());
        let join = crate::vllm::join_spans(&spans, &data.requests);
        let mut by_case: BTreeMap<&str, Vec<&Request>> = BTreeMap::new();
        for r in data.measured() {
            by_case.entry(r.case_key.as_str()).or_default().push(r);
        }
        let cases = by_case
            .into_iter()
            .filter(|(k, _)| pattern.is_none_or(|p| glob(p, k)))
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        RunView {
            data,
            external_spans,
            join,
            cases,
        }
    }

    pub fn spans(&self) -> Spans<'_> {
        Spans {
            joined: &self.join.joined,
            quarantined: &self.join.quarantined,
        }
    }

    pub fn run_id(&self) -> &str {
        &self.data.run_id
    }

    /// The run judged under `policy`, case by case, as `report --all
    /// --slo` judges it, keeping the selected cases.
    pub fn judge(
        &self,
        policy: &Policy,
        source: PolicySource,
    ) -> Vec<crate::report::judge::CaseJudgement> {
        crate::report::judge::judge_run(self.data, policy, source, self.external_spans)
            .into_iter()
            .filter(|j| self.cases.iter().any(|(k, _)| *k == j.case_id))
            .collect()
    }
}

/// The policy a command uses for a run: the one given, else the run's
/// recorded one (None when it has none).
pub fn policy_for(
    data: &RunData,
    given: Option<&(Policy, PolicySource)>,
) -> Result<Option<(Policy, PolicySource)>> {
    if let Some(p) = given {
        return Ok(Some(p.clone()));
    }
    let recorded: Vec<&Value> = data.of_type("infer.slo").collect();
    let selected = crate::slo::select(None, &recorded)?;
    Ok(selected.policy.zip(selected.source))
}

/// Calls `work` on every selected run in order. One thread reads the next
/// run (its own connection) while this one works on the current; the hand
/// over waits for both, so at most two runs are in memory at a time. A run
/// that cannot be read is an error.
pub fn each_run(
    sel: &Selection,
    mut work: impl FnMut(&RunData, &[Value]) -> Result<()>,
) -> Result<()> {
    let conn = db::read::open_for_reading(&sel.db)?;
    let ids: Vec<String> = if sel.all {
        crate::db::runs::ids(&conn)?
    } else {
        sel.runs
            .iter()
            .map(|r| crate::db::runs::resolve(&conn, r))
            .collect::<std::result::Result<_, _>>()?
    };
    drop(conn);
    let path = sel.db.clone();
    type Loaded = Result<(RunData, Vec<Value>)>;
    let (send, recv) = std::sync::mpsc::sync_channel::<Loaded>(0);
    let reader = std::thread::spawn(move || {
        let conn = match db::read::open_for_reading(&path) {
            Ok(c) => c,
            Err(e) => {
                let _ = send.send(Err(e.into()));
                return;
            }
        };
        for id in ids {
            let loaded = crate::db::store::load_run(&conn, &id)
                .and_then(|data| Ok((data, crate::db::store::attached_spans(&conn, &id)?)))
                .map_err(SloOpsError::from);
            if send.send(loaded).is_err() {
                break;
            }
        }
    });
    let mut result = Ok(());
    for loaded in recv.iter() {
        let step = loaded.and_then(|(data, spans)| work(&data, &spans));
        if let Err(e) = step {
            result = Err(e);
            break;
        }
    }
    drop(recv);
    reader
        .join()
        .map_err(|_| SloOpsError::invalid("the reading thread panicked"))?;
    result
}

/// Shell-style match of a whole case id: `*` matches any run of
/// characters, `?` exactly one; everything else matches itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Greedy with one backtrack point: linear for the patterns people type.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A criterion named as `--slo` names it: `ttft` is `client.ttft`.
pub fn parse_key(s: &str) -> Result<crate::slo::CriterionKey> {
    let (boundary, metric) = s.split_once('.').unwrap_or(("client", s));
    crate::slo::CriterionKey::check(boundary, metric)
        .map_err(|m| SloOpsError::usage(format!("--criterion {s}: {m}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_whole_ids() {
        assert!(glob("*", "c1_in32"));
        assert!(glob("c?_in32*", "c4_in32_out8"));
        assert!(!glob("c?_in32", "c4_in32_out8"));
        assert!(glob("*out8", "c4_in32_out8"));
        assert!(glob("c*_*_out8", "c4_in32_out8"));
        assert!(!glob("c*_out24", "c4_in32_out8"));
        assert!(glob("", ""));
        assert!(!glob("", "x"));
    }

    #[test]
    fn keys_as_flags_name_them() {
        assert_eq!(
            parse_key("ttft").ok(),
            Some(crate::slo::CriterionKey::ClientTtft)
        );
        assert_eq!(
            parse_key("server.queue").ok(),
            Some(crate::slo::CriterionKey::ServerQueue)
        );
        assert!(parse_key("client.itl").is_err());
    }
}
