//! One metric's statistics against values the reference
//! (`comparison_stats.compare_values`, stormlog 0.4.3) computed for the
//! same inputs.
#![allow(clippy::unwrap_used)]
use super::*;

fn close(actual: Option<f64>, expected: f64) {
    let a = actual.unwrap();
    assert!(
        (a - expected).abs() <= 1e-9 * expected.abs().max(1e-12),
        "{a} != {expected}"
    );
}

fn labels(n: usize) -> Option<(Vec<String>, Vec<String>)> {
    let l: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    Some((l.clone(), l))
}

fn request(
    name: &str,
    direction: &str,
    scale: &str,
    unit: &str,
    gate: Option<GateRule>,
    blocks: Option<(Vec<String>, Vec<String>)>,
) -> Request {
    Request {
        name: name.into(),
        direction: direction.into(),
        scale: scale.into(),
        unit: unit.into(),
        value_unit: None,
        confidence: 0.95,
        gate,
        bootstrap_min_n: 10,
        seed: 0,
        unavailable: None,
        trials: None,
        blocks,
    }
}

fn points(v: &[f64]) -> Vec<RunValue> {
    v.iter().map(|x| RunValue::Point(*x)).collect()
}

const BASE: [f64; 4] = [10.0, 11.0, 10.5, 12.0];
const CAND: [f64; 4] = [11.0, 12.5, 10.9, 13.1];

#[test]
fn paired_log_ratio_with_a_non_inferiority_gate() {
    let gate = GateRule::new(NON_INFERIORITY, 0.05, RELATIVE, None).unwrap();
    let r = request(
        "client.e2e.p50",
        LOWER_IS_BETTER,
        LOG_RATIO,
        RELATIVE,
        Some(gate),
        labels(4),
    );
    let m = compare_values(&r, &points(&BASE), &points(&CAND)).unwrap();
    let w = m.worst.clone().unwrap();
    close(w.effect, 0.09096122556747059);
    close(w.lower, 0.027915606300576462);
    close(w.upper, 0.15787365071257406);
    close(w.p_worse, 0.009353947321346479);
    let f = m.cross_check.clone().unwrap();
    close(f.effect, 0.09195402298850586);
    close(f.lower, 0.0264996700879232);
    close(f.upper, 0.15452519107166962);
    let d = m.difference.clone().unwrap();
    close(d.lower, 0.2766203174606582);
    close(m.guards.skewness, -0.6902424622222149);
    let [lmin, lmax, umin, umax] = m.guards.leave_one_out.unwrap();
    close(lmin, -0.027872735356278083);
    close(lmax, 0.05197401915402971);
    close(umin, 0.1637653072622712);
    close(umax, 0.22219772061425566);
    assert_eq!(m.guards.decision_flips, Some(0));
    assert_eq!(m.verdict, Some(("worse".into(), "undetermined".into())));
    let g = m.gate.unwrap();
    assert_eq!(
        (g.status.as_str(), g.reason.as_deref(), g.case.as_deref()),
        (FAIL, Some("exceeds_budget"), Some("worst_case"))
    );
}

#[test]
fn independent_welch_with_a_significant_gate() {
    let gate = GateRule::new(SIGNIFICANT, 0.02, RELATIVE, None).unwrap();
    let r = request(
        "throughput_rps",
        HIGHER_IS_BETTER,
        LOG_RATIO,
        RELATIVE,
        Some(gate),
        None,
    );
    let m = compare_values(&r, &points(&BASE), &points(&CAND)).unwrap();
    assert_eq!(m.design, INDEPENDENT);
    let w = m.worst.clone().unwrap();
    close(w.lower, -0.0992600992157815);
    close(w.upper, 0.3213541385870079);
    close(w.p_worse, 0.8780303890965906);
    close(m.cross_check.clone().unwrap().lower, -0.10371288590819305);
    close(m.guards.skewness, 0.21116753362598914);
    close(m.guards.leave_one_out.unwrap()[0], -0.21170952576812513);
    let g = m.gate.unwrap();
    assert_eq!(
        (g.status.as_str(), g.case.as_deref()),
        (PASS, Some("best_case"))
    );
}

fn twelve() -> (Vec<f64>, Vec<f64>) {
    let b: Vec<f64> = (0..12)
        .map(|i| 10.0 + 0.3 * i as f64 + (i % 3) as f64 * 0.2)
        .collect();
    let c: Vec<f64> = b
        .iter()
        .enumerate()
        .map(|(i, v)| v * 1.05 + (i % 4) as f64 * 0.1)
        .collect();
    (b, c)
}

#[test]
fn the_seeded_bootstrap_draws_numpys_resamples() {
    let (b, c) = twelve();
    let mut r = request(
        "client.ttft.p90",
        LOWER_IS_BETTER,
        LOG_RATIO,
        RELATIVE,
        None,
        labels(12),
    );
    r.seed = 7;
    let m = compare_values(&r, &points(&b), &points(&c)).unwrap();
    close(m.worst.clone().unwrap().p_worse, 5.830476246672932e-11);
    let s = m.sensitivity.unwrap();
    close(s.effect, 0.062431804747879606);
    close(s.lower, 0.05720315531552277);
    close(s.upper, 0.06769088358029515);
    assert_eq!(m.verdict, Some(("worse".into(), "beyond".into())));

    let mut r = request(
        "client.ttft.p90",
        LOWER_IS_BETTER,
        LOG_RATIO,
        RELATIVE,
        None,
        None,
    );
    r.seed = 3;
    let m = compare_values(&r, &points(&b), &points(&c[..11])).unwrap();
    let s = m.sensitivity.unwrap();
    assert_eq!(s.method, "cluster_bootstrap_log_ratio");
    close(s.effect, 0.047178626214661706);
    close(s.lower, -0.026844446660970078);
    close(s.upper, 0.12588544026665371);
}

#[test]
fn a_fraction_is_gated_on_the_run_level_claim() {
    let gate = GateRule::new(NON_INFERIORITY, 0.05, FRACTION_UNIT, None).unwrap();
    let mut r = request(
        "failure_fraction",
        LOWER_IS_BETTER,
        DIFFERENCE,
        FRACTION_UNIT,
        Some(gate),
        labels(6),
    );
    r.trials = Some((vec![Some(100); 6], vec![Some(100); 6]));
    let base = [0.0, 0.01, 0.0, 0.02, 0.0, 0.01];
    let cand = [0.01, 0.0, 0.0, 0.03, 0.01, 0.0];
    let m = compare_values(&r, &points(&base), &points(&cand)).unwrap();
    let w = m.worst.clone().unwrap();
    close(w.lower, -0.012453646760505217);
    close(w.upper, 0.015786980093838547);
    close(w.p_worse, 0.3868967667788995);
    assert_eq!(w.detail.as_deref(), Some(BINOMIAL_FLOOR));
    let g = m.gate.unwrap();
    assert_eq!(
        (g.status.as_str(), g.case.as_deref()),
        (PASS, Some("run_level"))
    );
    assert_eq!(
        g.claim.unwrap().statement,
        "6 of 6 candidate runs within 0.05 of the block baseline; run-pass rate at least 0.541 with 97.5% confidence"
    );
    let pooled = m.pooled.unwrap();
    match pooled.get("bad_direction_bound") {
        J::Float(f) => close(Some(*f), 0.017520008574562162),
        other => panic!("{other:?}"),
    }
}

#[test]
fn interval_values_use_the_worst_case() {
    let r = request(
        "attainment",
        HIGHER_IS_BETTER,
        DIFFERENCE,
        FRACTION_UNIT,
        None,
        labels(3),
    );
    let base = [
        RunValue::Range(0.9, 0.95),
        RunValue::Point(0.92),
        RunValue::Range(0.88, 0.93),
    ];
    let cand = [
        RunValue::Range(0.85, 0.9),
        RunValue::Range(0.9, 0.91),
        RunValue::Range(0.8, 0.9),
    ];
    let m = compare_values(&r, &base, &cand).unwrap();
    let w = m.worst.clone().unwrap();
    close(w.effect, -0.08333333333333333);
    close(w.lower, -0.22458738301937425);
    close(w.upper, 0.05792071635270761);
    close(w.p_worse, 0.06321465136586736);
    close(m.guards.skewness, 1.2056594965075196);
}

#[test]
fn a_candidate_that_served_nothing_fails_its_gate() {
    let gate = GateRule::new(NON_INFERIORITY, 0.1, RELATIVE, None).unwrap();
    let r = request(
        "goodput_rps",
        HIGHER_IS_BETTER,
        LOG_RATIO,
        RELATIVE,
        Some(gate),
        labels(3),
    );
    let m = compare_values(&r, &points(&[1.0, 2.0, 1.5]), &points(&[0.0, 1.0, 1.2])).unwrap();
    assert_eq!(m.reason.as_deref(), Some("candidate_zero"));
    assert!(m.verdict.is_none());
    let d = m.difference.clone().unwrap();
    close(d.effect, -0.7666666666666666);
    close(d.lower, -1.7706189702748745);
    close(d.upper, 0.23728563694154126);
    let g = m.gate.unwrap();
    assert_eq!(
        (g.status.as_str(), g.reason.as_deref()),
        (FAIL, Some("candidate_zero"))
    );
}

#[test]
fn too_few_blocks_leave_a_gate_not_evaluable() {
    let gate = GateRule::new(NON_INFERIORITY, 0.05, RELATIVE, None).unwrap();
    let r = request(
        "client.e2e.p50",
        LOWER_IS_BETTER,
        LOG_RATIO,
        RELATIVE,
        Some(gate),
        labels(2),
    );
    let m = compare_values(&r, &points(&BASE[..2]), &points(&CAND[..2])).unwrap();
    let g = m.gate.unwrap();
    assert_eq!(
        (g.status.as_str(), g.reason.as_deref()),
        (NOT_EVALUABLE, Some("insufficient_blocks"))
    );
}

#[test]
fn proportions_and_holm_match_the_reference() {
    let b = clopper_pearson(3, 7, 0.95, "independent_runs");
    close(Some(b.lower), 0.09898827844250789);
    close(Some(b.upper), 0.8159484323599169);
    let gate = run_pass_gate(6, 6, 0.5, 0.95);
    assert_eq!(
        gate.get("lower_bound"),
        &J::Float(gate.get("lower_bound").to_value().as_f64().unwrap())
    );
    close(
        gate.get("lower_bound").to_value().as_f64(),
        0.5407418735600996,
    );
    let p = vec![
        ("a".into(), Some(0.01)),
        ("b".into(), Some(0.04)),
        ("c".into(), Some(0.001)),
        ("d".into(), None),
    ];
    let rejected = holm(&p, 0.05);
    assert_eq!(
        rejected,
        vec![
            ("a".into(), true),
            ("b".into(), true),
            ("c".into(), true),
            ("d".into(), false)
        ]
    );
}
