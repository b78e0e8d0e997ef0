//! Re-judging stored runs against a policy (`stormlog report --all --slo`):
//! only what judgement needs (each case's requests, population and rate
//! interval, and joined spans for server criteria), one line per run and case,
//! and whether each attainment target was met.
use serde_json::{json, Value};

use crate::analysis::case::{self, RunContext};
use crate::model::{Request, RunData};
use crate::slo::{Policy, PolicySource};

/// One run and case judged.
#[derive(Debug, Clone)]
pub struct CaseJudgement {
    pub run_id: String,
    pub case_id: String,
    /// The case `slo` record (docs/slo.md §8).
    pub slo: Value,
    /// Each target: (name, target, outcome) with outcome `met`, `missed`,
    /// `undecided` (the unknowns decide it) or `unmeasurable`.
    pub targets: Vec<(String, f64, &'static str)>,
}

impl CaseJudgement {
    /// `met` when every target is met; else the worst outcome; `no target`
    /// when the policy sets none.
    pub fn verdict(&self) -> &'static str {
        if self.targets.is_empty() {
            return if self.slo["status"] == "evaluated" {
                "no target"
            } else {
                "unmeasurable"
            };
        }
        for worst in ["missed", "unmeasurable", "undecided"] {
            if self.targets.iter().any(|t| t.2 == worst) {
                return worst;
            }
        }
        "met"
    }

    pub fn to_json(&self) -> Value {
        json!({
            "run_id": self.run_id, "case_id": self.case_id,
            "policy": self.slo["slo_name"], "digest": self.slo["slo_digest"],
            "status": self.slo["status"], "reason": self.slo["reason"],
            "offered": self.slo["offered"], "met": self.slo["met"], "missed": self.slo["missed"], "unknown": self.slo["unknown"],
            "attainment_lower": self.slo["attainment_lower"], "attainment_upper": self.slo["attainment_upper"],
            "goodput_lower_rps": self.slo["goodput_lower_rps"], "goodput_upper_rps": self.slo["goodput_upper_rps"],
            "targets": self.targets.iter().map(|(n, t, o)| json!({"name": n, "target": t, "outcome": o})).collect::<Vec<_>>(),
            "verdict": self.verdict(),
        })
    }
}

/// Where an attainment interval stands against a target.
pub(crate) fn outcome(lower: &Value, upper: &Value, target: f64) -> &'static str {
    match (lower.as_f64(), upper.as_f64()) {
        (Some(lo), _) if lo >= target => "met",
        (_, Some(hi)) if hi < target => "missed",
        (Some(_), Some(_)) => "undecided",
        _ => "unmeasurable",
    }
}

/// Judges every case of a run under `policy`.
pub fn judge_run(
    data: &RunData,
    policy: &Policy,
    source: PolicySource,
    external_spans: &[Value],
) -> Vec<CaseJudgement> {
    let mut spans: Vec<Value> = data.of_type("infer.vllm_span").cloned().collect();
    spans.extend(external_spans.iter().cloned());
    let join = crate::vllm::join_spans(&spans, &data.requests);
    let slo_spans = crate::slo::Spans {
        joined: &join.joined,
        quarantined: &join.quarantined,
    };
    let admitted = super::admitted_ids(data, external_spans, &join);
    let ctx = RunContext::new(data, admitted);
    let mut by_case: std::collections::BTreeMap<String, Vec<&Request>> = Default::default();
    for r in data.measured() {
        by_case.entry(r.case_key.to_string()).or_default().push(r);
    }
    by_case
        .iter()
        .map(|(key, reqs)| {
            let pop = case::population(&ctx, key, reqs);
            let rate = pop.intervals.get("rate").cloned().unwrap_or(Value::Null);
            let slo =
                crate::slo::evaluate_case(reqs, policy, source, &rate, &pop.population, &slo_spans);
            judgement(&data.run_id, key, slo, policy)
        })
        .collect()
}

/// The judgement table for a terminal.
/// The `report --all` table, made to fit 100 columns: the policy is said
/// once above the table when every row shares it, each target goes on a line
/// of its own (`ttft>=95% met`, the client boundary left implied), and run
/// and case ids longer than 24 characters are shortened in the middle.
pub fn render_table(rows: &[CaseJudgement]) -> String {
    let policies: std::collections::BTreeSet<String> = rows
        .iter()
        .map(|r| crate::py::json::str_form(&r.slo["slo_name"]))
        .collect();
    let one_policy = policies.len() == 1;
    let mut header = vec!["RUN", "CASE"];
    if !one_policy {
        header.push("POLICY");
    }
    header.extend(["ATTAINMENT", "GOODPUT/S", "UNKNOWN", "TARGETS", "VERDICT"]);
    let mut body: Vec<Vec<String>> = Vec::new();
    for r in rows {
        let s = &r.slo;
        let (attain, goodput) = if s["status"] == "evaluated" {
            let a = if s["attainment_lower"] == s["attainment_upper"] {
                super::text::pct1(&s["attainment_lower"])
            } else {
                format!(
                    "{}-{}",
                    super::text::pct1(&s["attainment_lower"]),
                    super::text::pct1(&s["attainment_upper"])
                )
            };
            let g = if s["goodput_lower_rps"] == s["goodput_upper_rps"] {
                super::text::f2(&s["goodput_lower_rps"])
            } else {
                format!(
                    "{}-{}",
                    super::text::f2(&s["goodput_lower_rps"]),
                    super::text::f2(&s["goodput_upper_rps"])
                )
            };
            (a, g)
        } else {
            (
                format!("unmeasurable ({})", crate::py::json::str_form(&s["reason"])),
                "-".into(),
            )
        };
        let targets: Vec<String> = r
            .targets
            .iter()
            .map(|(n, t, o)| {
                let n = n.strip_prefix("client.").unwrap_or(n);
                let pct = format!("{:.1}", t * 100.0);
                let pct = pct.strip_suffix(".0").unwrap_or(&pct);
                format!("{n}>={pct}% {o}")
            })
            .collect();
        let mut row = vec![shorten(&r.run_id), shorten(&r.case_id)];
        if !one_policy {
            row.push(crate::py::json::str_form(&s["slo_name"]));
        }
        row.extend([
            attain,
            goodput,
            crate::py::json::str_form(&s["unknown"]),
            targets.first().cloned().unwrap_or_else(|| "-".into()),
            r.verdict().to_owned(),
        ]);
        let width = row.len();
        body.push(row);
        for t in targets.iter().skip(1) {
            let mut more = vec![String::new(); width];
            more[width - 2] = t.clone();
            body.push(more);
        }
    }
    let table = crate::util::table(&header, &body);
    match policies.first() {
        Some(p) if one_policy => format!("policy {p}\n{table}"),
        _ => table,
    }
}

/// The judgements as CSV, one row per case (RFC 4180 quoting): the figures
/// in full precision, as the JSON form has them, empty where it has `null`;
/// `targets` lists each target as `name>=target:outcome`, `;` between them.
pub fn render_csv(rows: &[CaseJudgement]) -> String {
    let header = [
        "run_id",
        "case_id",
        "policy",
        "status",
        "reason",
        "offered",
        "met",
        "missed",
        "unknown",
        "attainment_lower",
        "attainment_upper",
        "goodput_lower_rps",
        "goodput_upper_rps",
        "targets",
        "verdict",
    ];
    let cell = |v: &Value| match v {
        Value::Null => String::new(),
        other => crate::py::json::str_form(other),
    };
    let mut out = header.join(",");
    out.push('\n');
    for r in rows {
        let s = &r.slo;
        let targets: Vec<String> = r
            .targets
            .iter()
            .map(|(n, t, o)| format!("{n}>={}:{o}", crate::py::json::str_form(&json!(t))))
            .collect();
        let mut fields = vec![r.run_id.clone(), r.case_id.clone()];
        for key in [
            "slo_name",
            "status",
            "reason",
            "offered",
            "met",
            "missed",
            "unknown",
            "attainment_lower",
            "attainment_upper",
            "goodput_lower_rps",
            "goodput_upper_rps",
        ] {
            fields.push(cell(&s[key]));
        }
        fields.push(targets.join(";"));
        fields.push(r.verdict().to_owned());
        let fields: Vec<String> = fields.iter().map(|f| crate::output::csv_field(f)).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// An id of more than 24 characters as its first 11 and last 12, joined by `~`.
fn shorten(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    if chars.len() <= 24 {
        return id.to_owned();
    }
    let head: String = chars[..11].iter().collect();
    let tail: String = chars[chars.len() - 12..].iter().collect();
    format!("{head}~{tail}")
}

/// A case's judgement from its `slo` block: each attainment target of the
/// policy (the joint one first) met, missed or unmeasurable by the block's
/// bounds. `report --all` and the HTML pages judge through this one place.
pub(crate) fn judgement(
    run_id: &str,
    case_id: &str,
    slo: Value,
    policy: &crate::slo::Policy,
) -> CaseJudgement {
    let evaluated = slo["status"] == "evaluated";
    let judge = |block: &Value, t: f64| {
        if evaluated {
            outcome(&block["attainment_lower"], &block["attainment_upper"], t)
        } else {
            "unmeasurable"
        }
    };
    let mut targets = Vec::new();
    if let Some(t) = policy.attainment_target {
        targets.push(("joint".to_owned(), t, judge(&slo, t)));
    }
    for c in &policy.criteria {
        if let Some(t) = c.attainment_target {
            let name = c.key.as_str().to_owned();
            let o = judge(&slo["per_criterion"][&name], t);
            targets.push((name, t, o));
        }
    }
    CaseJudgement {
        run_id: run_id.to_owned(),
        case_id: case_id.to_owned(),
        slo,
        targets,
    }
}
