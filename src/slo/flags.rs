//! `--slo KEY:MS` (docs/slo.md §2): all flags of one command form one policy named
//! `cli`; every error is a usage error worded as the reference words it,
//! including Python's `repr` of the flag and Python's `float()` grammar.
//!
//! A `--slo` value naming an existing `.toml` or `.json` file loads that file
//! as a policy instead (an extension of this project; the reference has only
//! `--slo-file`).

use std::path::Path;

use super::criteria::CriterionKey;
use super::file::load_file;
use super::policy::{assemble, Criterion, Interval, Policy};
use super::{PolicySource, SloError};
use crate::py::float::float_of_str;
use crate::py::text::repr_str;

/// The policy the `--slo` values give (see [`policy_from_flags`] for a file).
pub fn parse_flags(flags: &[String]) -> Result<Policy, SloError> {
    policy_from_flags(flags).map(|(p, _)| p)
}

/// The policy the `--slo` values give, and where it came from: `flags`, or
/// `file` when the one value names a `.toml`/`.json` file that exists.
pub fn policy_from_flags(flags: &[String]) -> Result<(Policy, PolicySource), SloError> {
    if let Some(path) = flags.iter().find(|f| names_policy_file(f)) {
        if flags.len() > 1 {
            return Err(SloError::Usage(format!(
                "--slo {}: a policy file must be the only --slo value",
                repr_str(path)
            )));
        }
        return load_file(Path::new(path), path).map(|p| (p, PolicySource::File));
    }
    let criteria = flags
        .iter()
        .map(|f| criterion_from_flag(f))
        .collect::<Result<Vec<_>, _>>()?;
    let policy = assemble(Some("cli"), criteria, None, Interval::MeasuredWindow)
        .map_err(|m| SloError::Usage(format!("--slo: {m}")))?;
    Ok((policy, PolicySource::Flags))
}

/// The policy a command line gives, if any: `--slo` values or a
/// `--slo-file` (not both, a usage error). Every command that takes the two
/// flags turns them into a policy here.
pub fn policy_from_cli(
    slo: &[String],
    slo_file: Option<&Path>,
) -> Result<Option<(Policy, PolicySource)>, SloError> {
    if !slo.is_empty() && slo_file.is_some() {
        return Err(SloError::slo_and_slo_file());
    }
    if let Some(path) = slo_file {
        let policy = load_file(path, &path.display().to_string())?;
        return Ok(Some((policy, PolicySource::File)));
    }
    if !slo.is_empty() {
        return Ok(Some(policy_from_flags(slo)?));
    }
    Ok(None)
}

fn names_policy_file(value: &str) -> bool {
    (value.ends_with(".toml") || value.ends_with(".json")) && Path::new(value).is_file()
}

fn criterion_from_flag(item: &str) -> Result<Criterion, SloError> {
    let usage = |m: String| SloError::Usage(format!("--slo {}: {m}", repr_str(item)));
    let Some((key, raw)) = item.rsplit_once(':').filter(|(k, _)| !k.is_empty()) else {
        return Err(usage("expected KEY:MS, such as ttft:500".into()));
    };
    let (boundary, metric) = key.split_once('.').unwrap_or(("client", key));
    let Some(limit) = float_of_str(raw) else {
        return Err(usage(format!("{} is not a number", repr_str(raw))));
    };
    let key = CriterionKey::check(boundary, metric).map_err(usage)?;
    if !(limit.is_finite() && limit > 0.0) {
        return Err(usage(
            "the limit must be a positive number of milliseconds".into(),
        ));
    }
    Ok(Criterion {
        key,
        max_ms: limit,
        attainment_target: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn flag_err(flags: &[&str]) -> (String, u8) {
        let v: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        let e = parse_flags(&v).unwrap_err();
        (e.to_string(), e.exit().code())
    }

    const KNOWN: &str = "known: client.e2e, client.e2e_from_intended, client.tpot, client.ttft, \
                         client.ttft_from_intended, server.e2e, server.itl, server.queue, server.tpot, server.ttft";

    #[test]
    fn flags_build_one_cli_policy() {
        let v: Vec<String> = [
            "ttft:500",
            "server.queue:200",
            "e2e_from_intended:6000.5",
            "ttft_from_intended: 1_000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let p = parse_flags(&v).unwrap();
        assert_eq!(p.name, "cli");
        assert_eq!(p.attainment_target, None);
        assert_eq!(p.interval, Interval::MeasuredWindow);
        let keys: Vec<(&str, f64)> = p
            .criteria
            .iter()
            .map(|c| (c.key.as_str(), c.max_ms))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("client.ttft", 500.0),
                ("server.queue", 200.0),
                ("client.e2e_from_intended", 6000.5),
                ("client.ttft_from_intended", 1000.0)
            ]
        );
        assert_eq!(
            p.to_record()["criteria"][0]["max_ms"],
            serde_json::json!(500.0)
        );
        assert!(parse_flags(&["server.itl:30".into()]).is_ok());
    }

    /// Texts verified by running the reference (`infer analyze ... --slo X`).
    #[test]
    fn flag_errors_as_the_reference_words_them() {
        let cases: Vec<(&[&str], String)> = vec![
            (
                &["ttft"],
                "--slo 'ttft': expected KEY:MS, such as ttft:500".into(),
            ),
            (
                &[":5"],
                "--slo ':5': expected KEY:MS, such as ttft:500".into(),
            ),
            (
                &["ttft:fast"],
                "--slo 'ttft:fast': 'fast' is not a number".into(),
            ),
            (&["ttft:"], "--slo 'ttft:': '' is not a number".into()),
            (
                &["ttft:5:6"],
                format!("--slo 'ttft:5:6': unknown criterion client.ttft:5; {KNOWN}"),
            ),
            (
                &["TTFT:5"],
                format!("--slo 'TTFT:5': unknown criterion client.TTFT; {KNOWN}"),
            ),
            (
                &["a.b.c:5"],
                format!("--slo 'a.b.c:5': unknown criterion a.b.c; {KNOWN}"),
            ),
            (
                &["it's:5"],
                format!("--slo \"it's:5\": unknown criterion client.it's; {KNOWN}"),
            ),
            (
                &["tab\tx:5"],
                format!("--slo 'tab\\tx:5': unknown criterion client.tab\tx; {KNOWN}"),
            ),
            (
                &["é:5"],
                format!("--slo 'é:5': unknown criterion client.é; {KNOWN}"),
            ),
            (
                &["ttft:a\"b'"],
                r#"--slo 'ttft:a"b\'': 'a"b\'' is not a number"#.into(),
            ),
            (
                &["client.itl:5"],
                "--slo 'client.itl:5': client.itl does not exist: streamed chunks are not tokens. \
                 Use client.tpot for a per-token mean, or server.itl for vLLM's own"
                    .into(),
            ),
            (
                &["ttft:0"],
                "--slo 'ttft:0': the limit must be a positive number of milliseconds".into(),
            ),
            (
                &["ttft:-1"],
                "--slo 'ttft:-1': the limit must be a positive number of milliseconds".into(),
            ),
            (
                &["ttft:nan"],
                "--slo 'ttft:nan': the limit must be a positive number of milliseconds".into(),
            ),
            (
                &["ttft:inf"],
                "--slo 'ttft:inf': the limit must be a positive number of milliseconds".into(),
            ),
            (
                &["ttft:1e400"],
                "--slo 'ttft:1e400': the limit must be a positive number of milliseconds".into(),
            ),
            // The first failing flag is reported; repeats are checked after all flags.
            (
                &["ttft:5", "x:1", "ttft:fast"],
                format!("--slo 'x:1': unknown criterion client.x; {KNOWN}"),
            ),
            (
                &["ttft:5", "e2e:5", "ttft:6", "e2e:1"],
                "--slo: criterion client.e2e, client.ttft is given more than once".into(),
            ),
            // A name check comes before the number check only for the key; the number first.
            (
                &["bogus:fast"],
                "--slo 'bogus:fast': 'fast' is not a number".into(),
            ),
        ];
        for (flags, want) in cases {
            assert_eq!(flag_err(flags), (want, 2), "{flags:?}");
        }
    }
}
