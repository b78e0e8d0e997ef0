//! The definitions tools give one name to, as functions: each tool's figure
//! is computed (or checked) with the one its documentation and source use,
//! and stormlog's own is computed from the same raw times (docs/import.md
//! lists which tool uses which).

/// "TPOT" without the first token: `(e2e - ttft) / (tokens - 1)`. AIPerf's
/// `inter_token_latency`, vLLM's TPOT, inference-perf's
/// `time_per_output_token`, and stormlog's `client.tpot`. None with fewer
/// than two tokens.
pub fn tpot_excluding_first(e2e_ms: f64, ttft_ms: f64, output_tokens: i64) -> Option<f64> {
    (output_tokens > 1).then(|| (e2e_ms - ttft_ms) / (output_tokens - 1) as f64)
}

/// "TPOT" with the first token: `e2e / tokens`. GuideLLM's
/// `time_per_output_token_ms`, inference-perf's
/// `normalized_time_per_output_token`. None without tokens.
pub fn tpot_including_first(e2e_ms: f64, output_tokens: i64) -> Option<f64> {
    (output_tokens > 0).then(|| e2e_ms / output_tokens as f64)
}

/// GuideLLM's per-request `inter_token_latency_ms`: the span from the first
/// to the last token iteration over the gaps between tokens,
/// `(last - first) / (tokens - 1)`.
pub fn itl_first_to_last(first_token_s: f64, last_token_s: f64, output_tokens: i64) -> Option<f64> {
    (output_tokens > 1).then(|| (last_token_s - first_token_s) * 1e3 / (output_tokens - 1) as f64)
}

/// Gaps between consecutive instants, in ms (seconds in).
pub fn gaps_ms(instants_s: &[f64]) -> Vec<f64> {
    instants_s.windows(2).map(|w| (w[1] - w[0]) * 1e3).collect()
}

/// The plain mean; None when empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// A mean weighted per token: GuideLLM summarises per-request TPOT and ITL
/// weighted by each request's output tokens (TPOT) or gaps (ITL), so its
/// "mean" is `Σ value·weight / Σ weight`.
pub fn weighted_mean(pairs: &[(f64, f64)]) -> Option<f64> {
    let w: f64 = pairs.iter().map(|p| p.1).sum();
    (w > 0.0).then(|| pairs.iter().map(|p| p.0 * p.1).sum::<f64>() / w)
}

/// The `q`-th percentile (0..=100) by linear interpolation between closest
/// ranks: numpy's default, used by AIPerf, vLLM and inference-perf.
pub fn percentile_linear(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let rank = q / 100.0 * (n - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    Some(sorted[lo] + (sorted[hi.min(n - 1)] - sorted[lo]) * frac)
}

/// GuideLLM's percentile (`Percentiles.from_pdf`): equal values merged
/// with their weights summed, each weight over the total, the cumulative sum
/// taken in order, and the first value whose cumulative probability reaches
/// `q` (0..=100) chosen: no interpolation. `pairs` are (value, weight); plain
/// values have weight 1, GuideLLM's TPOT and ITL are weighted by tokens.
pub fn percentile_guidellm(pairs: &[(f64, f64)], q: f64) -> Option<f64> {
    let mut v: Vec<(f64, f64)> = pairs.iter().copied().filter(|p| p.1 > 0.0).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(v.len());
    for (x, w) in v {
        match merged.last_mut() {
            Some(last) if last.0 == x => last.1 += w,
            _ => merged.push((x, w)),
        }
    }
    let total: f64 = merged.iter().map(|p| p.1).sum();
    let target = q / 100.0;
    let mut cdf = 0.0;
    for (x, w) in &merged {
        cdf += w / total;
        if cdf >= target {
            return Some(*x);
        }
    }
    merged.last().map(|p| p.0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tpot_with_and_without_the_first_token() {
        // 100 ms request, first token at 20 ms, 5 tokens.
        assert_eq!(tpot_excluding_first(100.0, 20.0, 5), Some(20.0));
        assert_eq!(tpot_including_first(100.0, 5), Some(20.0 * 5.0 / 5.0));
        assert_eq!(tpot_including_first(100.0, 4), Some(25.0));
        assert_eq!(tpot_excluding_first(100.0, 20.0, 1), None);
        assert_eq!(tpot_including_first(100.0, 0), None);
    }

    #[test]
    fn guidellm_itl_spans_first_to_last_token() {
        // tokens at 1.000 s and 1.090 s, 10 tokens: 90 ms over 9 gaps.
        let v = itl_first_to_last(1.0, 1.09, 10).unwrap();
        assert!((v - 10.0).abs() < 1e-9, "{v}");
        assert_eq!(itl_first_to_last(1.0, 1.0, 1), None);
    }

    #[test]
    fn gaps_and_means() {
        let g = gaps_ms(&[1.0, 1.002, 1.005]);
        assert!((g[0] - 2.0).abs() < 1e-9 && (g[1] - 3.0).abs() < 1e-9);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
        // (2·1 + 4·3) / 4 = 3.5
        assert_eq!(weighted_mean(&[(2.0, 1.0), (4.0, 3.0)]), Some(3.5));
    }

    #[test]
    fn percentiles_by_each_method() {
        let v = [10.0, 20.0, 30.0, 40.0];
        // numpy: rank 0.5·3 = 1.5 → 25; rank 0.9·3 = 2.7 → 37.
        assert_eq!(percentile_linear(&v, 50.0), Some(25.0));
        assert!((percentile_linear(&v, 90.0).unwrap() - 37.0).abs() < 1e-12);
        assert_eq!(percentile_linear(&v, 100.0), Some(40.0));
        // GuideLLM: cumulative 0.25, 0.5, 0.75, 1: the first reaching 0.5 is
        // 20, reaching 0.9 is 40; weights shift it (20 weighs 3 of 6: 0.5 at 20).
        let w: Vec<(f64, f64)> = v.iter().map(|x| (*x, 1.0)).collect();
        assert_eq!(percentile_guidellm(&w, 50.0), Some(20.0));
        assert_eq!(percentile_guidellm(&w, 90.0), Some(40.0));
        let weighted = [(10.0, 1.0), (20.0, 2.0), (30.0, 3.0)];
        assert_eq!(percentile_guidellm(&weighted, 50.0), Some(20.0));
        assert_eq!(percentile_guidellm(&weighted, 51.0), Some(30.0));
    }
}
