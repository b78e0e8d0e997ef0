//! Which policy a report judges by (docs/slo-policy.md §5): a command-line policy
//! replaces whatever the artifact recorded; otherwise the artifact's single
//! `infer.slo` record (§4); otherwise none. Also the report's `slo` block,
//! the "replaces" warnings and the policy text lines.

use serde_json::{json, Map, Value};

use super::digest::digest;
use super::policy::{from_document, Policy};
use super::{PolicySource, SloError};
use crate::py::json as pyjson;

/// The policy in force and everything the report says about its choice.
#[derive(Debug, Clone, PartialEq)]
pub struct Selected {
    pub policy: Option<Policy>,
    /// Where `policy` came from (None exactly when `policy` is None).
    pub source: Option<PolicySource>,
    /// The report's top-level `slo`: null or `{name, digest, source, policy, overrides}`.
    pub report_slo: Value,
    /// Printed to stderr before the report, each after `Warning: `.
    pub warnings: Vec<String>,
    /// The `SLO policy:` line and its `replaces` lines, for the text report.
    pub text_lines: Vec<String>,
}

/// Chooses the policy. `recorded` are the artifact's `infer.slo` records in
/// file order. Errors (exit 5) only when no CLI policy is given and the
/// recorded one cannot be used (docs/artifact.md §5 E5–E7).
pub fn select(
    cli: Option<(Policy, PolicySource)>,
    recorded: &[&Value],
) -> Result<Selected, SloError> {
    let (policy, source, overrides) = match cli {
        Some((policy, source)) => {
            // Recorded policies are listed as recorded, not validated.
            let overrides: Vec<Value> = recorded
                .iter()
                .map(|r| {
                    let name = match pyjson::get(r, "slo") {
                        Value::Object(m) => m.get("name").cloned().unwrap_or(Value::Null),
                        _ => Value::Null,
                    };
                    json!({"name": name, "digest": pyjson::get(r, "digest").clone()})
                })
                .collect();
            (policy, source, overrides)
        }
        None => match recorded {
            [] => {
                return Ok(Selected {
                    policy: None,
                    source: None,
                    report_slo: Value::Null,
                    warnings: Vec::new(),
                    text_lines: Vec::new(),
                })
            }
            [record] => {
                let artifact =
                    |m: String| SloError::Artifact(format!("the artifact's infer.slo record: {m}"));
                let policy = from_document(pyjson::get(record, "slo")).map_err(artifact)?;
                policy.require_measured_window().map_err(artifact)?;
                (policy, PolicySource::Artifact, Vec::new())
            }
            many => {
                return Err(SloError::Artifact(format!(
                    "the artifact holds {} infer.slo records; expected one",
                    many.len()
                )))
            }
        },
    };
    let digest = digest(&policy);
    // An identical re-declaration is listed but does not count as replaced.
    let replaced: Vec<&Value> = overrides
        .iter()
        .filter(|o| o.get("digest").and_then(Value::as_str) != Some(digest.as_str()))
        .collect();
    let flag = if source == PolicySource::File {
        "--slo-file"
    } else {
        "--slo"
    };
    let warnings = replaced
        .iter()
        .map(|o| {
            format!(
                "{flag} replaces the policy the artifact recorded ({}, digest {})",
                pyjson::str_form(pyjson::get(o, "name")),
                short(pyjson::get(o, "digest"))
            )
        })
        .collect();
    let mut text_lines = vec![format!(
        "SLO policy: {} from {}, digest {}",
        policy.name,
        source.as_str(),
        &digest[..12]
    )];
    text_lines.extend(replaced.iter().map(|o| {
        format!(
            "  replaces the recorded policy {} (digest {})",
            pyjson::str_form(pyjson::get(o, "name")),
            short(pyjson::get(o, "digest"))
        )
    }));
    let mut report = Map::new();
    report.insert("name".into(), policy.name.clone().into());
    report.insert("digest".into(), digest.into());
    report.insert("source".into(), source.as_str().into());
    report.insert("policy".into(), policy.to_record());
    report.insert("overrides".into(), Value::Array(overrides));
    Ok(Selected {
        policy: Some(policy),
        source: Some(source),
        report_slo: Value::Object(report),
        warnings,
        text_lines,
    })
}

/// Python's `str(v)[:12]`.
fn short(v: &Value) -> String {
    pyjson::str_form(v).chars().take(12).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn record(slo: Value, digest: Value) -> Value {
        json!({"schema_version": 1, "event_type": "infer.slo", "session_id": "s", "source": "flags",
               "digest": digest, "slo": slo})
    }

    #[test]
    fn no_policy_anywhere() {
        let s = select(None, &[]).unwrap();
        assert_eq!(s.policy, None);
        assert_eq!(s.report_slo, Value::Null);
        assert!(s.text_lines.is_empty() && s.warnings.is_empty());
    }

    #[test]
    fn recorded_policy_is_used_and_redigested() {
        let p = crate::slo::parse_flags(&["ttft:100".into(), "e2e:500".into()]).unwrap();
        let rec = record(p.to_record(), json!("not checked"));
        let s = select(None, &[&rec]).unwrap();
        assert_eq!(s.source, Some(PolicySource::Artifact));
        assert_eq!(
            s.report_slo["digest"],
            "ea7f74e77d0130282af5f41d13cd6d6260b75deeec7de776f106ed64107be5eb"
        );
        assert_eq!(s.report_slo["source"], "artifact");
        assert_eq!(s.report_slo["overrides"], json!([]));
        assert_eq!(
            s.text_lines,
            vec!["SLO policy: cli from artifact, digest ea7f74e77d01"]
        );
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn recorded_policy_errors() {
        let p = crate::slo::parse_flags(&["ttft:100".into()]).unwrap();
        let rec = record(p.to_record(), Value::Null);
        let e = select(None, &[&rec, &rec]).unwrap_err();
        assert_eq!(
            (e.to_string(), e.exit().code()),
            (
                "the artifact holds 2 infer.slo records; expected one".into(),
                5
            )
        );
        let bad = record(json!({"format": "x"}), Value::Null);
        let e = select(None, &[&bad]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the artifact's infer.slo record: format must be 'stormlog.infer.slo'"
        );
        let missing = json!({"event_type": "infer.slo"});
        assert_eq!(
            select(None, &[&missing]).unwrap_err().to_string(),
            "the artifact's infer.slo record: the policy must be a JSON object"
        );
        let mut live = p.to_record();
        live["interval"] = json!({"kind": "sliding", "seconds": 1234567.0});
        let e = select(None, &[&record(live, Value::Null)]).unwrap_err();
        assert_eq!(
            (e.to_string(), e.exit().code()),
            (
                "the artifact's infer.slo record: a sliding interval of 1.23457e+06 s is judged online by a watcher; \
                 profile and analyze judge each case over its whole rate interval"
                    .into(),
                5
            )
        );
    }

    #[test]
    fn a_cli_policy_replaces_recorded_ones() {
        let cli = crate::slo::parse_flags(&["ttft:100".into(), "e2e:500".into()]).unwrap();
        let same = record(
            cli.to_record(),
            json!("ea7f74e77d0130282af5f41d13cd6d6260b75deeec7de776f106ed64107be5eb"),
        );
        let other = record(json!({"name": "web"}), json!("0123456789abcdef"));
        let broken = json!({"event_type": "infer.slo", "slo": 5});
        // Even several or invalid recorded policies are only listed.
        let s = select(
            Some((cli.clone(), PolicySource::File)),
            &[&same, &other, &broken],
        )
        .unwrap();
        assert_eq!(
            s.report_slo["overrides"],
            json!([
                {"name": "cli", "digest": "ea7f74e77d0130282af5f41d13cd6d6260b75deeec7de776f106ed64107be5eb"},
                {"name": "web", "digest": "0123456789abcdef"},
                {"name": null, "digest": null}
            ])
        );
        assert_eq!(s.report_slo["source"], "file");
        assert_eq!(s.report_slo["policy"], cli.to_record());
        assert_eq!(
            s.warnings,
            vec![
                "--slo-file replaces the policy the artifact recorded (web, digest 0123456789ab)",
                "--slo-file replaces the policy the artifact recorded (None, digest None)",
            ]
        );
        assert_eq!(
            s.text_lines,
            vec![
                "SLO policy: cli from file, digest ea7f74e77d01",
                "  replaces the recorded policy web (digest 0123456789ab)",
                "  replaces the recorded policy None (digest None)",
            ]
        );
        let s = select(Some((cli, PolicySource::Flags)), &[&other]).unwrap();
        assert_eq!(
            s.warnings,
            vec!["--slo replaces the policy the artifact recorded (web, digest 0123456789ab)"]
        );
    }
}
