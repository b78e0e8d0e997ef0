//! `infer compare`'s JSON report: the `stormlog.report` v1 envelope with
//! report kind `inference_comparison` and the `stormlog.infer.comparison`
//! v1 payload. Findings point at the metric they are about with a JSON
//! pointer into the payload.

use super::engine::Comparison;
use super::ojson::{obj, J};
use super::stats::FAIL;

pub const REPORT_KIND: &str = "inference_comparison";
/// The reference version this report format follows.
pub const TOOL_VERSION: &str = "0.4.3";

const LIMITS: [&str; 6] = [
    "Paired t is nominal for roughly symmetric block log ratios; under strongly skewed noise it covers 86-88% instead of 95%.",
    "Guards flag; they do not certify coverage.",
    "The independent design's intervals are conservative by construction.",
    "Latency quantile screens assume independent requests, which queueing violates.",
    "A fraction's interval under-covers when failures cluster within runs; its gate is the run-level claim, exact under independent runs.",
    "Segments by overlap are length-biased in rates and quantiles: diagnostics, never gated.",
];

fn verdict_status(exit_code: i64) -> &'static str {
    match exit_code {
        0 => "pass",
        2 => "usage",
        3 => "findings",
        4 => "gate_failed",
        5 => "invalid_input",
        130 => "interrupted",
        _ => "error",
    }
}

/// The envelope every report shares.
pub fn envelope(
    exit_code: i64,
    summary: &str,
    findings: Vec<J>,
    metrics: J,
    payload: Option<J>,
    argv: &[String],
    generated_at: &str,
) -> J {
    let mut report = obj([
        ("schema_version", J::Int(1)),
        ("format", J::from("stormlog.report")),
        ("report_kind", J::from(REPORT_KIND)),
        ("generated_at_utc", J::from(generated_at)),
        (
            "tool",
            obj([
                ("name", J::from("stormlog")),
                ("command", J::from("infer compare")),
                ("version", J::from(TOOL_VERSION)),
                ("argv", J::Arr(argv.iter().map(J::from).collect())),
            ]),
        ),
        (
            "verdict",
            obj([
                ("status", J::from(verdict_status(exit_code))),
                ("exit_code", J::Int(exit_code)),
                ("summary", J::from(summary)),
            ]),
        ),
        ("findings", J::Arr(findings)),
        ("metrics", metrics),
        ("artifacts", J::Arr(vec![])),
        ("recommendations", J::Arr(vec![])),
        ("session_id", J::Null),
        ("run_id", J::Null),
    ]);
    if let Some(payload) = payload {
        report.set("payload", payload);
    }
    report
}

/// The envelope when the runs could not be compared at all (exit 5).
pub fn error_report(message: &str, exit_code: i64, argv: &[String], generated_at: &str) -> J {
    let finding = finding(
        "inference.comparison.invalid_input",
        "invalid_input",
        "critical",
        "The runs could not be compared",
        vec![],
        Some(message),
        None,
    );
    envelope(
        exit_code,
        message,
        vec![finding],
        J::Obj(vec![]),
        None,
        argv,
        generated_at,
    )
}

fn finding(
    id: &str,
    kind: &str,
    severity: &str,
    title: &str,
    evidence: Vec<J>,
    message: Option<&str>,
    metrics: Option<J>,
) -> J {
    let mut f = obj([
        ("id", J::from(id)),
        ("kind", J::from(kind)),
        ("severity", J::from(severity)),
        ("title", J::from(title)),
        ("evidence", J::Arr(evidence)),
    ]);
    if let Some(message) = message {
        f.set("message", J::from(message));
    }
    if let Some(metrics) = metrics {
        f.set("metrics", metrics);
    }
    f
}

fn pointer_evidence(pointer: &str, path: Option<&str>, description: &str) -> J {
    let mut e = obj([("kind", J::from("comparison_metric"))]);
    if let Some(path) = path {
        e.set("path", J::from(path));
    }
    e.set("pointer", J::from(pointer));
    e.set("description", J::from(description));
    e
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn finding_id(kind: &str, parts: &[&str]) -> String {
    let mut out = vec!["inference.comparison".to_owned(), kind.to_owned()];
    for part in parts {
        let lower = part.to_lowercase();
        let mut cleaned = String::new();
        let mut in_run = false;
        for c in lower.chars() {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.' {
                cleaned.push(c);
                in_run = false;
            } else if !in_run {
                cleaned.push('_');
                in_run = true;
            }
        }
        let trimmed = cleaned.trim_matches(|c| c == '_' || c == '.');
        out.push(if trimmed.is_empty() {
            "x".to_owned()
        } else {
            trimmed.to_owned()
        });
    }
    out.join(".")
}

fn summary(c: &Comparison, exit_code: i64) -> String {
    let gates = c.gate_count();
    if gates == 0 && c.spec.min_attainment.is_none() {
        let count: usize = c.cases.iter().map(|(_, case)| case.metrics.len()).sum();
        return format!("{count} metrics compared; no gate configured");
    }
    let (failed, unknown) = (c.failed().len(), c.not_evaluable().len());
    if exit_code == 0 && unknown > 0 {
        return format!("{unknown} of {gates} gates could not be evaluated (allowed); none failed");
    }
    if exit_code == 0 {
        return format!("every gate passed ({gates} gates)");
    }
    format!("{failed} gate(s) failed and {unknown} could not be evaluated, of {gates}")
}

/// The payload: `stormlog.infer.comparison` v1.
pub fn payload(c: &Comparison) -> J {
    let cases = c
        .cases
        .iter()
        .map(|(id, case)| {
            (
                id.clone(),
                obj([
                    (
                        "metrics",
                        J::Obj(
                            case.metrics
                                .iter()
                                .map(|m| (m.name.clone(), m.to_record()))
                                .collect(),
                        ),
                    ),
                    (
                        "absent_gates",
                        J::Obj(
                            case.absent_gates
                                .iter()
                                .map(|(p, g)| (p.clone(), g.to_record()))
                                .collect(),
                        ),
                    ),
                    (
                        "attainment_gate",
                        case.attainment_gate.clone().unwrap_or(J::Null),
                    ),
                    (
                        "attainment_mean",
                        case.attainment_mean.clone().unwrap_or(J::Null),
                    ),
                    (
                        "attrition",
                        J::Arr(case.attrition.iter().map(|e| e.to_record()).collect()),
                    ),
                    (
                        "set_aside",
                        obj([
                            ("unit", J::from(&case.set_aside.0)),
                            (
                                "items",
                                J::Arr(case.set_aside.1.iter().map(J::from).collect()),
                            ),
                        ]),
                    ),
                    ("membership", J::from(case.membership.clone())),
                    ("gated", J::Bool(case.gated)),
                ]),
            )
        })
        .collect();
    let strings = |v: &Vec<String>| J::Arr(v.iter().map(J::from).collect());
    let ints = |v: &Vec<i64>| J::Arr(v.iter().map(|i| J::Int(*i)).collect());
    obj([
        ("format", J::from("stormlog.infer.comparison")),
        ("version", J::Int(1)),
        ("spec", c.spec.to_record()),
        ("design", J::from(&c.design)),
        (
            "runs",
            J::Arr(c.runs.iter().map(|(arm, r)| r_record(r, arm)).collect()),
        ),
        (
            "excluded",
            J::Arr(c.excluded.iter().map(|e| e.to_record()).collect()),
        ),
        ("compatibility", c.compatibility.to_record()),
        ("observer_issues", strings(&c.observer_issues)),
        ("cases", J::Obj(cases)),
        ("family", c.family.clone().unwrap_or(J::Null)),
        (
            "verdict",
            obj([
                ("exit_code", J::Int(c.exit_code())),
                (
                    "failed",
                    J::Arr(
                        c.failed()
                            .into_iter()
                            .map(|(a, b)| J::Arr(vec![J::from(a), J::from(b)]))
                            .collect(),
                    ),
                ),
                (
                    "not_evaluable",
                    J::Arr(
                        c.not_evaluable()
                            .into_iter()
                            .map(|(a, b, r)| J::Arr(vec![J::from(a), J::from(b), r]))
                            .collect(),
                    ),
                ),
                ("allow_not_evaluable", J::Bool(c.spec.allow_not_evaluable)),
            ]),
        ),
        (
            "diagnostics",
            obj([
                (
                    "started_at_ns",
                    obj([
                        ("baseline", ints(&c.started.0)),
                        ("candidate", ints(&c.started.1)),
                    ]),
                ),
                (
                    "covariates",
                    J::Arr(
                        c.compatibility
                            .covariates
                            .iter()
                            .map(|d| d.to_record())
                            .collect(),
                    ),
                ),
                ("warnings", strings(&c.warnings)),
                (
                    "unverified_pairs",
                    J::Arr(
                        c.unverified_pairs
                            .iter()
                            .map(|(a, b, n)| J::Arr(vec![J::from(a), J::from(b), strings(n)]))
                            .collect(),
                    ),
                ),
                (
                    "allowed_within_arm",
                    J::Arr(
                        c.allowed_within_arm
                            .iter()
                            .map(|w| {
                                obj([
                                    ("arm", J::from(&w.arm)),
                                    ("field", J::from(&w.field)),
                                    (
                                        "values",
                                        J::Obj(
                                            w.values
                                                .iter()
                                                .map(|(k, v)| (k.clone(), J::Raw(v.clone())))
                                                .collect(),
                                        ),
                                    ),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ]),
        ),
        (
            "limits",
            J::Arr(LIMITS.iter().map(|s| J::from(*s)).collect()),
        ),
    ])
}

fn r_record(run: &super::engine::RunSummary, arm: &str) -> J {
    run_record(run, arm)
}

/// A run as the payload lists it.
pub fn run_record(run: &super::engine::RunSummary, arm: &str) -> J {
    obj([
        ("arm", J::from(arm)),
        ("path", J::from(&run.name)),
        ("sha256", J::from(&run.sha256)),
        ("run_id", J::Raw(run.run_id.clone())),
        ("session_id", J::Raw(run.session_id.clone())),
        ("labels", J::Raw(run.labels.clone())),
        ("session_status", J::from(run.session_status.clone())),
        (
            "protocol_failures",
            J::Arr(run.protocol_failures.iter().map(J::from).collect()),
        ),
        (
            "outcome_failures",
            J::Arr(run.outcome_failures.iter().map(J::from).collect()),
        ),
        ("started_at_ns", J::from(run.started_at_ns)),
    ])
}

/// The envelope for a finished comparison; `path` names the report file.
pub fn comparison_report(
    c: &Comparison,
    exit_code: i64,
    argv: &[String],
    path: Option<&str>,
    generated_at: &str,
) -> J {
    let mut findings = Vec::new();
    for (case_id, name, gate, absent) in c.gates() {
        if gate.status == "pass" {
            continue;
        }
        let failed = gate.status == FAIL;
        let _ = absent;
        let unmatched = matches!(
            gate.reason.as_deref(),
            Some("metric_absent") | Some(super::engine::OVERLAP_NOT_GATED)
        );
        let place = if unmatched { "absent_gates" } else { "metrics" };
        let pointer = format!(
            "/payload/cases/{}/{place}/{}",
            escape(case_id),
            escape(name)
        );
        let kind = if failed {
            "regression"
        } else {
            "not_evaluable"
        };
        let title = if failed {
            format!("{name} in {case_id} failed its {} gate", gate.rule.rule)
        } else {
            format!("{name} in {case_id} could not be gated")
        };
        let statement = gate.claim.as_ref().map(|c| c.statement.clone());
        let message = match (&gate.reason, statement) {
            (r, None) => r.clone(),
            (Some(r), Some(s)) => Some(format!("{r}: {s}")),
            (None, Some(s)) => Some(s),
        };
        findings.push(finding(
            &finding_id(kind, &[case_id, name]),
            kind,
            if failed { "critical" } else { "warning" },
            &title,
            vec![pointer_evidence(&pointer, path, "the metric's comparison")],
            message.as_deref(),
            None,
        ));
    }
    for (case_id, case) in &c.cases {
        let Some(gate) = &case.attainment_gate else {
            continue;
        };
        if gate.get("status") != &J::from(FAIL) {
            continue;
        }
        let pointer = format!("/payload/cases/{}/attainment_gate", escape(case_id));
        findings.push(finding(
            &finding_id("attainment", &[case_id]),
            "attainment",
            "critical",
            &format!("too few candidate runs in {case_id} met the attainment target"),
            vec![pointer_evidence(&pointer, path, "the run-level gate")],
            None,
            Some(obj([
                ("runs_meeting", gate.get("runs_meeting").clone()),
                ("runs", gate.get("runs").clone()),
            ])),
        ));
    }
    for (index, item) in c.excluded.iter().enumerate() {
        findings.push(finding(
            &finding_id("excluded_run", &[&item.case, &index.to_string()]),
            "excluded_run",
            "warning",
            &format!("a {} run was set aside for {}", item.arm, item.case),
            vec![],
            Some(&format!("{}: {}", item.run, item.reasons_text())),
            None,
        ));
    }
    if c.compatibility.status == "unverified" {
        let mut names: Vec<&str> = c
            .compatibility
            .unverified
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        names.sort_unstable();
        findings.push(finding(
            "inference.comparison.unverified",
            "unverified",
            "warning",
            "the runs could not be shown to measure the same server",
            vec![pointer_evidence(
                "/payload/compatibility",
                path,
                "the comparability check",
            )],
            Some(&format!("unknown on a side: {}", names.join(", "))),
            None,
        ));
    }
    // Arms measured by different tools (compare/definitions.rs).
    let differing = c
        .warnings
        .iter()
        .filter_map(|w| w.strip_prefix(super::definitions::DIFFERS));
    for (index, what) in differing.enumerate() {
        let figure = what.split(':').next().unwrap_or("");
        findings.push(finding(
            &finding_id("definition_differs", &[figure, &index.to_string()]),
            "definition_differs",
            "warning",
            &format!("{figure} means different things in the two arms"),
            vec![],
            Some(what),
            None,
        ));
    }
    let metrics_compared: usize = c.cases.iter().map(|(_, case)| case.metrics.len()).sum();
    let metrics = obj([
        ("metrics_compared", J::from(metrics_compared)),
        ("gates", J::from(c.gate_count())),
        ("gates_failed", J::from(c.failed().len())),
        ("gates_not_evaluable", J::from(c.not_evaluable().len())),
        ("runs_excluded", J::from(c.excluded.len())),
    ]);
    envelope(
        exit_code,
        &summary(c, exit_code),
        findings,
        metrics,
        Some(payload(c)),
        argv,
        generated_at,
    )
}
