//! The one-pass blocks of a case: arrivals, prompts, lengths, cache and
//! streaming.
use super::*;

/// The arrival, prompt, length and streaming blocks of a case (docs/report.md §4.3-§4.5,
/// §4.8), read in one pass over its requests: a pass over a large case
/// costs more in memory traffic (each request is a few hundred bytes) than
/// in arithmetic.
pub fn passes(reqs: &[&Request], window: Option<&Value>) -> [(&'static str, Value); 4] {
    let (mut a, mut p, mut l, mut s) = (
        Arrivals::new(reqs.len()),
        Prompts::default(),
        Lengths::new(reqs.len()),
        Streaming::new(reqs.len()),
    );
    for r in reqs {
        a.take(r);
        p.take(r);
        l.take(r);
        s.take(r);
    }
    [
        ("arrivals", a.finish(reqs.len(), window)),
        ("prompts", p.finish(window)),
        ("lengths", l.finish()),
        ("streaming", s.finish()),
    ]
}

/// `arrivals` (docs/report.md §4.3), as its requests are read.
pub(super) struct Arrivals<'r> {
    modes: Distinct<'r>,
    dropped: usize,
    completed: usize,
    held: usize,
    failed: BTreeMap<String, i64>,
    peak: Option<Int>,
    /// The count of intended times, and the earliest and latest.
    intended: usize,
    intended_span: Option<(Int, Int)>,
    lag: Vec<f64>,
}

impl<'r> Arrivals<'r> {
    fn new(n: usize) -> Self {
        Arrivals {
            modes: Distinct::default(),
            dropped: 0,
            completed: 0,
            held: 0,
            failed: BTreeMap::new(),
            peak: None,
            intended: 0,
            intended_span: None,
            lag: Vec::with_capacity(n),
        }
    }

    fn take(&mut self, r: &'r Request) {
        self.modes.take(r.arrival_mode.as_str());
        match r.status.as_str() {
            "dropped" => self.dropped += 1,
            status => {
                if status == "ok" {
                    self.completed += 1;
                } else {
                    *self.failed.entry(status.to_owned()).or_insert(0) += 1;
                }
                self.held += usize::from(r.held_for_slot);
            }
        }
        if let Some(x) = r.in_flight_int() {
            self.peak = Some(match self.peak.take() {
                Some(p) => p.max(x),
                None => x,
            });
        }
        if let Some(t) = r.intended_at() {
            self.intended += 1;
            widen(&mut self.intended_span, t.clone(), t);
        }
        self.lag.extend(finite(r.dispatch_lag_ms()));
    }

    fn finish(self, offered: usize, window: Option<&Value>) -> Value {
        let Arrivals {
            modes,
            dropped,
            completed,
            held,
            failed,
            peak,
            intended,
            intended_span,
            lag,
        } = self;
        let mode = if modes.words.len() == 1 {
            modes
                .words
                .iter()
                .next()
                .copied()
                .unwrap_or("closed")
                .to_owned()
        } else {
            "mixed".to_owned()
        };
        let offered_rate = match intended_span {
            Some((first, last)) if mode != "closed" && intended >= 2 && first != last => {
                let span = last.sub(&first).to_f64();
                fnum(span.map(|span| (intended - 1) as f64 / (span / 1e9)))
            }
            _ => Value::Null,
        };
        let lag_max = max_of(&lag);
        let [lag_p50, lag_p95] = pcts(lag, [50, 95]);
        let (window_s, drain_s) = match window {
            Some(wn) => match (
                ns_of(pyjson::get(wn, "started_at_ns")),
                ns_of(pyjson::get(wn, "window_ended_at_ns")),
                ns_of(pyjson::get(wn, "drained_at_ns")),
            ) {
                (Some(s), Some(we), Some(d)) => {
                    let seconds = |d: Int| fnum(d.max(Int::default()).to_f64().map(|d| d / 1e9));
                    (seconds(we.sub(&s)), seconds(d.sub(&we)))
                }
                _ => (Value::Null, Value::Null),
            },
            None => (Value::Null, Value::Null),
        };
        json!({
            "mode": mode, "offered": offered, "sent": offered - dropped,
            "completed": completed, "dropped": dropped, "failed": failed,
            "held_for_slot": held, "peak_in_flight": peak.map(|p| p.to_json()), "offered_rate_per_second": offered_rate,
            "dispatch_lag_ms": {"p50": lag_p50, "p95": lag_p95, "max": lag_max},
            "window_seconds": window_s, "drain_seconds": drain_s,
        })
    }
}

/// `prompts` (docs/report.md §4.4), as its requests are read. A prompt repeats request
/// after request (`repeat` mode): runs of one value are collapsed as they
/// are read, before the sort that finds the distinct ones.
#[derive(Default)]
pub(super) struct Prompts<'r> {
    modes: Distinct<'r>,
    digests: Vec<&'r Scalar>,
    groups: Vec<&'r Scalar>,
    /// The fewest and most shared prefix tokens.
    shared: Option<(f64, f64)>,
}

impl<'r> Prompts<'r> {
    fn take(&mut self, r: &'r Request) {
        if r.status == "dropped" {
            return;
        }
        self.modes.take(r.prompt_mode.as_str());
        for (keys, v) in [
            (&mut self.digests, &r.prompt_digest),
            (&mut self.groups, &r.prefix_group),
        ] {
            if !v.is_null() && keys.last() != Some(&v) {
                keys.push(v);
            }
        }
        if let Some(x) = finite(r.shared_prefix_tokens()) {
            widen(&mut self.shared, x, x);
        }
    }

    fn finish(self, window: Option<&Value>) -> Value {
        let mode = match self.modes.words.len() {
            0 => Value::Null,
            1 => json!(self.modes.words.iter().next()),
            _ => json!("mixed"),
        };
        let distinct = |mut keys: Vec<&Scalar>| {
            keys.sort_unstable();
            keys.dedup();
            match keys.len() {
                0 => Value::Null,
                n => json!(n),
            }
        };
        json!({
            "mode": mode,
            "distinct_prompts": distinct(self.digests),
            "prefix_groups_used": distinct(self.groups),
            "shared_prefix_tokens": {"min": fnum(self.shared.map(|s| s.0)), "max": fnum(self.shared.map(|s| s.1))},
            "prompts_digest": window.map_or(Value::Null, |w| pyjson::get(w, "prompts_digest").clone()),
        })
    }
}

/// `lengths` (docs/report.md §4.5), as its requests are read.
pub(super) struct Lengths {
    prompt: Vec<f64>,
    output: Vec<f64>,
}

impl Lengths {
    fn new(n: usize) -> Self {
        Lengths {
            prompt: Vec::with_capacity(n),
            output: Vec::with_capacity(n),
        }
    }

    fn take(&mut self, r: &Request) {
        if r.is_ok() {
            self.prompt.extend(finite(r.prompt_tokens()));
            self.output.extend(finite(r.output_tokens()));
        }
    }

    fn finish(self) -> Value {
        let d = |v: Vec<f64>| {
            let (min, max) = (min_of(&v), max_of(&v));
            let [p50, p95] = pcts(v, [50, 95]);
            json!({"min": min, "p50": p50, "p95": p95, "max": max})
        };
        json!({"prompt_tokens": d(self.prompt), "output_tokens": d(self.output)})
    }
}

/// `cache` (docs/report.md §4.6).
pub fn cache(record: Option<&Value>) -> Value {
    match record {
        None => {
            json!({"requested": "unspecified", "reset": null, "attempted": null, "acknowledged": null,
                       "verified": "unverified", "reason": "the artifact does not record a cache state", "run_kind": null})
        }
        Some(r) => {
            let mut m = Map::new();
            for k in [
                "requested",
                "reset",
                "attempted",
                "acknowledged",
                "verified",
                "reason",
                "run_kind",
            ] {
                m.insert(k.into(), pyjson::get(r, k).clone());
            }
            Value::Object(m)
        }
    }
}

/// `streaming` (docs/report.md §4.8), as its requests are read.
pub(super) struct Streaming {
    chunks: Vec<f64>,
    gaps: Vec<f64>,
    /// Whether any streamed response's tokens are the server's count, their
    /// sum and the sum of their chunks.
    usage: (bool, Int, usize),
}

/// Whether a request counts towards the tokens per chunk (the reference's
/// streamed responses whose count is the server's).
pub(super) fn counts_tokens_per_chunk(r: &Request) -> bool {
    r.is_ok()
        && r.stream
        && finite(r.ttft_ms()).is_some()
        && r.output_token_source == "server_usage"
}

/// Python's error, if the reference's tokens per chunk of these requests
/// (one case's) cannot convert a request's `output_tokens` to an integer.
pub fn tokens_per_chunk_inputs(reqs: &[&Request]) -> Result<(), String> {
    for r in reqs.iter().filter(|r| counts_tokens_per_chunk(r)) {
        if let Some(e) = r.output_tokens_call_error() {
            return Err(e.to_owned());
        }
    }
    Ok(())
}

impl Streaming {
    fn new(n: usize) -> Self {
        Streaming {
            chunks: Vec::with_capacity(n),
            gaps: Vec::new(),
            usage: (false, Int::default(), 0),
        }
    }

    fn take(&mut self, r: &Request) {
        if !(r.is_ok() && r.stream && finite(r.ttft_ms()).is_some()) {
            return;
        }
        let before = self.gaps.len();
        self.gaps
            .extend(r.chunk_gaps.iter().copied().filter(|g| g.is_finite()));
        self.chunks.push((self.gaps.len() - before + 1) as f64);
        if r.output_token_source == "server_usage" {
            // A value Python cannot convert stopped the report before this
            // pass (`tokens_per_chunk_inputs`).
            let tokens = self
                .usage
                .1
                .add(&r.output_tokens_call().unwrap_or_default());
            self.usage = (true, tokens, self.usage.2 + r.chunk_list_len as usize + 1);
        }
    }

    fn finish(self) -> Value {
        let Streaming {
            chunks,
            gaps,
            usage,
        } = self;
        let responses = chunks.len();
        let (chunks_max, gaps_max, gaps_n) = (max_of(&chunks), max_of(&gaps), gaps.len());
        let [chunks_p50, chunks_p95] = pcts(chunks, [50, 95]);
        let [gaps_p50, gaps_p95] = pcts(gaps, [50, 95]);
        let mean_tokens = match usage {
            (true, tokens, chunks) => fnum(tokens.true_div(chunks as u64)),
            _ => Value::Null,
        };
        json!({
            "granularity": "chunk", "responses": responses,
            "content_chunks_per_response": {"p50": chunks_p50, "p95": chunks_p95, "max": chunks_max},
            "chunk_interarrival_ms": {"p50": gaps_p50, "p95": gaps_p95, "max": gaps_max, "n": gaps_n},
            "mean_tokens_per_chunk": mean_tokens,
            "note": "chunk-level timing: a streamed chunk can carry several tokens, so these are not inter-token latencies",
        })
    }
}
