//! Attainment targets given on stormlog's own command line, so a policy made
//! from flags can fail a gate (`report --check`).
//!
//! `--slo KEY:MS@TARGET` sets the criterion's marginal target and `--target
//! TARGET` the joint one (every criterion passes); a TARGET is a share of the
//! offered requests, written `95%` or `0.95`. The reference's `--slo` has no
//! targets, so the drop-in `infer analyze` never reads this suffix and keeps
//! its own messages for such a value.
use super::{Policy, SloError};

/// Splits `KEY:MS@TARGET` into `KEY:MS` and the target, if one is given.
pub fn split_target(flag: &str) -> Result<(&str, Option<f64>), SloError> {
    match flag.rsplit_once('@') {
        None => Ok((flag, None)),
        Some((criterion, target)) => Ok((
            criterion,
            Some(parse_target(&format!("--slo {flag}"), target)?),
        )),
    }
}

/// `95%` or `0.95`: a share in (0, 1].
pub fn parse_target(flag: &str, text: &str) -> Result<f64, SloError> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match value {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(SloError::Usage(format!(
            "{flag}: the target '{text}' is not a share of requests; write it as 95% or 0.95"
        ))),
    }
}

/// Sets the criteria's targets (in flag order) and the joint one on `policy`.
pub fn apply(policy: &mut Policy, marginal: &[Option<f64>], joint: Option<f64>) {
    for (criterion, target) in policy.criteria.iter_mut().zip(marginal) {
        if target.is_some() {
            criterion.attainment_target = *target;
        }
    }
    if joint.is_some() {
        policy.attainment_target = joint;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_a_percentage_or_a_fraction() {
        assert_eq!(split_target("ttft:500").unwrap(), ("ttft:500", None));
        assert_eq!(
            split_target("ttft:500@95%").unwrap(),
            ("ttft:500", Some(0.95))
        );
        assert_eq!(
            split_target("e2e:4000@0.9").unwrap(),
            ("e2e:4000", Some(0.9))
        );
        for bad in ["ttft:500@", "ttft:500@0", "ttft:500@150%", "ttft:500@x"] {
            let e = split_target(bad).unwrap_err().to_string();
            assert!(e.contains("write it as 95% or 0.95"), "{bad}: {e}");
        }
    }
}
