//! `vllm bench serve --save-result` result JSON: run facts and aggregates
//! (`{mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms`, `completed`, `failed`,
//! …) and, with `--save-detailed`, per-request arrays of equal length
//! (`ttfts`, `itls`, `latencies`, `start_times` in monotonic seconds,
//! `input_lens`, `output_lens`, `errors`). A failed request has no flag: its
//! `errors` entry is non-empty (and its latencies 0). Without the arrays only
//! the aggregates are stored.

use std::collections::BTreeMap;
use std::io::Read;

use serde_json::{Map, Value};

use super::numbers as num;
use super::walk::Walker;
use super::{defs, secs_to_ns, Case, Clock, FormatError, Import, Load, Request, Status, Tool};

/// The per-request arrays (all optional: absent without `--save-detailed`).
#[derive(Default)]
struct Arrays {
    input_lens: Option<Vec<Option<i64>>>,
    output_lens: Option<Vec<Option<i64>>>,
    ttfts: Option<Vec<Option<f64>>>,
    itls: Option<Vec<Vec<f64>>>,
    latencies: Option<Vec<Option<f64>>>,
    start_times: Option<Vec<Option<f64>>>,
    errors: Option<Vec<Option<String>>>,
}

fn typed<T: serde::de::DeserializeOwned>(
    raw: &[u8],
    key: &str,
    what: &str,
) -> Result<T, FormatError> {
    serde_json::from_slice(raw).map_err(|e| FormatError::new(key, format!("{e}; expected {what}")))
}

/// A per-request array, read streaming: each element is parsed from its own
/// bytes as the walker reaches it (borrowed from the walker's buffer), so
/// the array's text is never held whole; a wrong element is named by its
/// index. `null` reads as an empty array. `room` is the length expected
/// (a hint only: the room reserved, never trusted for the length read).
fn array<T: serde::de::DeserializeOwned, R: Read>(
    w: &mut Walker<R>,
    key: &str,
    what: &str,
    room: usize,
    fast: fn(&[u8]) -> Option<(T, usize)>,
) -> Result<Vec<T>, FormatError> {
    if w.null()? {
        return Ok(Vec::new());
    }
    if !matches!(w.peek(), Some(b'[') | None) {
        let e = w.error(format!("expected a list of {what}"));
        return Err(FormatError::new(key, e.to_string()));
    }
    w.begin_array()?;
    let mut out = Vec::with_capacity(room);
    let mut first = true;
    while w.next_element(first)? {
        first = false;
        if let Some(one) = element(w, key, what, out.len(), fast)? {
            out.push(one);
        }
    }
    Ok(out)
}

/// The array element the walker is at, number `at` of `key`: its plain
/// values read directly from the walker's buffer (`fast`), anything else
/// (and every error) through serde, a wrong element named by its index.
/// None for a value cut by the end of the file, which is the file cut
/// short, not the element wrong (the walker says so next).
fn element<T: serde::de::DeserializeOwned, R: Read>(
    w: &mut Walker<R>,
    key: &str,
    what: &str,
    at: usize,
    fast: fn(&[u8]) -> Option<(T, usize)>,
) -> Result<Option<T>, FormatError> {
    if let Some(one) = w.try_take(fast) {
        return Ok(Some(one));
    }
    match serde_json::from_slice::<T>(w.value_bytes()?) {
        Ok(one) => Ok(Some(one)),
        Err(_) if w.at_end() => {
            w.next_element(false)?;
            Ok(None)
        }
        Err(e) => Err(FormatError::new(
            format!("{key}[{at}]"),
            format!("{e}; expected one of a list of {what}"),
        )),
    }
}

/// Lists of seconds (`itls`, the bulk of a detailed result), read as
/// [`array`] reads them, the same values and errors, but the lists a
/// buffer holds whole ([`Walker::lists_ahead`]) are parsed on all cores;
/// from the first the fast read declines, the element-by-element read
/// goes on (serde, and a wrong list named by its index).
fn lists<R: Read>(w: &mut Walker<R>, key: &str, room: usize) -> Result<Vec<Vec<f64>>, FormatError> {
    use rayon::prelude::*;
    const WHAT: &str = "lists of seconds";
    if w.null()? {
        return Ok(Vec::new());
    }
    if !matches!(w.peek(), Some(b'[') | None) {
        let e = w.error(format!("expected a list of {WHAT}"));
        return Err(FormatError::new(key, e.to_string()));
    }
    w.begin_array()?;
    let mut out: Vec<Vec<f64>> = Vec::with_capacity(room);
    let mut first = true;
    let mut spans: Vec<(usize, usize)> = Vec::new();
    while w.next_element(first)? {
        first = false;
        // Each list of the run: from its `[` to the `]` after it.
        let run = w.lists_ahead(&mut spans);
        if !spans.is_empty() {
            let parsed: Vec<Option<Vec<f64>>> = spans
                .par_iter()
                .with_min_len(256)
                .map(|&(a, b)| num::flat_f64_list(&run[a..b]))
                .collect();
            // The lists read up to the first that is not a plain list of
            // numbers: that one, and the rest, take the general path.
            let good = parsed.iter().take_while(|p| p.is_some()).count();
            out.extend(parsed.into_iter().take(good).flatten());
            if good > 0 {
                let end = spans[good - 1].1;
                w.consume(end);
                continue;
            }
        }
        if let Some(one) = element(w, key, WHAT, out.len(), num::f64_list)? {
            out.push(one);
        }
    }
    Ok(out)
}

/// The most room an array is given before its elements are read (a hint
/// past it only grows the array as it is read): 4M requests.
const MAX_ROOM: usize = 1 << 22;
const INTS: &str = "integers";
const SECS: &str = "seconds";
type Fast<T> = fn(&[u8]) -> Option<(T, usize)>;
const INT: Fast<Option<i64>> = num::opt_i64;
const SEC: Fast<Option<f64>> = num::opt_f64;
const STR: Fast<Option<String>> = num::opt_string;

/// Keeps an array read, and says its length (the next array's room).
fn put<T>(slot: &mut Option<Vec<T>>, v: Vec<T>) -> usize {
    let n = v.len();
    *slot = Some(v);
    n
}

/// Reads a result file.
pub fn parse(reader: impl Read) -> Result<Import, FormatError> {
    let mut w = Walker::new(reader);
    let mut top = Map::new();
    let mut a = Arrays::default();
    // The arrays' expected length, for the room each is given at once
    // (100,000 requests: otherwise each grows by copies into fresh pages):
    // `num_prompts`, if it comes first, then the length of the last array
    // read. A hint only, and bounded, so a wrong count costs nothing but
    // an allocation's address space.
    let mut room = 0usize;
    w.begin_object()?;
    let mut first = true;
    while let Some(key) = w.next_key(first)? {
        first = false;
        // The generated texts are the bulk of a detailed result and no figure
        // needs them: they stay in the stored original file only.
        if key == "generated_texts" {
            w.skip()?;
            continue;
        }
        let r = room.min(MAX_ROOM);
        match key.as_str() {
            "input_lens" => room = put(&mut a.input_lens, array(&mut w, &key, INTS, r, INT)?),
            "output_lens" => room = put(&mut a.output_lens, array(&mut w, &key, INTS, r, INT)?),
            "ttfts" => room = put(&mut a.ttfts, array(&mut w, &key, SECS, r, SEC)?),
            "itls" => room = put(&mut a.itls, lists(&mut w, &key, r)?),
            "latencies" => room = put(&mut a.latencies, array(&mut w, &key, SECS, r, SEC)?),
            "start_times" => room = put(&mut a.start_times, array(&mut w, &key, SECS, r, SEC)?),
            "errors" => room = put(&mut a.errors, array(&mut w, &key, "strings", r, STR)?),
            // Kept whole (the generated texts are the bulk of what is not read).
            _ => {
                // A list of fractions (`queue_times`, a request long) read
                // here, as serde would read it; any other value by serde.
                let raw = w.value_bytes()?;
                let v: Value = match num::float_values(raw) {
                    Some(list) => Value::Array(list),
                    None => typed(raw, &key, "JSON")?,
                };
                if key == "num_prompts" && room == 0 {
                    room = v.as_u64().map_or(0, |n| n as usize);
                }
                top.insert(key, v);
            }
        }
    }
    if !w.at_end() {
        return Err(w.error("unexpected data after the document").into());
    }
    for k in ["completed", "num_prompts"] {
        if !top.contains_key(k) && !top.contains_key("completed") {
            return Err(FormatError::new(
                k,
                "missing; expected a `vllm bench serve --save-result` JSON (completed, request_throughput, …)",
            ));
        }
    }
    let mut imp = Import::new(Tool::VllmBenchServe, Clock::Monotonic);
    let s = |k: &str| top.get(k).and_then(Value::as_str).map(str::to_owned);
    imp.model = s("model_id");
    // The result names the backend (`openai-chat`), not the URL.
    imp.endpoint = None;
    imp.tool_version = s("vllm_version").or(s("version"));
    // `date` is datetime.now() when the result was saved, as
    // %Y%m%d-%H%M%S in the machine's local time, zone not written: shown as
    // the tool's own timestamp, never taken for a UTC start.
    imp.wall_time = s("date").map(|d| {
        let b = d.as_bytes();
        let shaped = b.len() == 15
            && b[8] == b'-'
            && d.bytes()
                .enumerate()
                .all(|(i, c)| i == 8 || c.is_ascii_digit());
        let shown = if shaped {
            format!(
                "{}-{}-{} {}:{}:{}",
                &d[0..4],
                &d[4..6],
                &d[6..8],
                &d[9..11],
                &d[11..13],
                &d[13..15]
            )
        } else {
            d.clone()
        };
        format!("{shown} local (vLLM's `date` at saving, zone not recorded)")
    });
    let rate = top.get("request_rate");
    let rate_f = rate.and_then(Value::as_f64);
    let burstiness = top.get("burstiness").and_then(Value::as_f64);
    let max_conc = top.get("max_concurrency").and_then(Value::as_i64);
    let arrival_mode = match (rate_f, burstiness) {
        (None, _) => Some("closed"),
        (Some(_), Some(b)) if (b - 1.0).abs() < 1e-12 => Some("poisson"),
        (Some(_), None) => Some("poisson"),
        // Gamma-distributed gaps of another shape: no stormlog equivalent.
        _ => None,
    };
    let mut detail = BTreeMap::new();
    for k in [
        "request_rate",
        "burstiness",
        "max_concurrency",
        "num_prompts",
        "duration",
    ] {
        if let Some(v) = top.get(k) {
            detail.insert(k.to_owned(), v.clone());
        }
    }
    let tool_mode = match (rate_f, burstiness) {
        (None, _) => "request_rate=inf".to_owned(),
        (Some(_), Some(b)) => format!("gamma(burstiness={})", crate::py::json::float_repr(b)),
        (Some(_), None) => "poisson".to_owned(),
    };
    let load = Load {
        arrival_mode,
        tool_mode,
        rate_per_second: rate_f,
        concurrency: max_conc,
        detail,
    };
    imp.cases.push(Case {
        case_id: load.case_id(),
        load,
        started_at_ns: None,
        ended_at_ns: None,
        scheduled_ns: None,
        summary: Value::Null,
    });
    let n = a.latencies.as_ref().map(Vec::len);
    imp.per_request = n.is_some();
    if let Some(n) = n {
        for (k, len) in [
            ("input_lens", a.input_lens.as_ref().map(Vec::len)),
            ("output_lens", a.output_lens.as_ref().map(Vec::len)),
            ("ttfts", a.ttfts.as_ref().map(Vec::len)),
            ("itls", a.itls.as_ref().map(Vec::len)),
            ("start_times", a.start_times.as_ref().map(Vec::len)),
            ("errors", a.errors.as_ref().map(Vec::len)),
        ] {
            if let Some(len) = len.filter(|l| *l != n) {
                return Err(FormatError::new(
                    k,
                    format!("has {len} entries but `latencies` has {n}; expected arrays of equal length, one entry per request"),
                ));
            }
        }
        imp.requests.reserve_exact(n);
        for i in 0..n {
            let err = a
                .errors
                .as_mut()
                .and_then(|e| e[i].take())
                .filter(|e| !e.is_empty());
            // Read once: the status and the row's code both need it.
            let code = err.as_deref().and_then(super::guidellm::http_status_in);
            let status = match &err {
                Some(text) => Status::of_failure(code, text),
                None => Status::Ok,
            };
            let mut r = Request::new(0, status);
            let lat = a.latencies.as_ref().and_then(|v| v[i]);
            let ttft = a.ttfts.as_ref().and_then(|v| v[i]);
            let start = a.start_times.as_ref().and_then(|v| v[i]);
            r.started_at_ns = start.and_then(secs_to_ns);
            if status == Status::Ok {
                r.e2e_ms = lat.map(|s| s * 1e3);
                r.ttft_ms = ttft.map(|s| s * 1e3);
                r.ended_at_ns = match (start, lat) {
                    (Some(s), Some(l)) => secs_to_ns(s + l),
                    _ => None,
                };
                if let Some(itl) = a.itls.as_mut().map(|v| std::mem::take(&mut v[i])) {
                    // The parsed gaps become the request's, in ms, in place.
                    r.chunk_gaps_ms = itl;
                    r.chunk_gaps_ms.iter_mut().for_each(|s| *s *= 1e3);
                }
                r.output_tokens = a.output_lens.as_ref().and_then(|v| v[i]);
                r.output_token_source = if r.output_tokens.is_some() {
                    "server_usage"
                } else {
                    "unknown"
                };
                r.tool.ttft_ms = r.ttft_ms;
                r.tool.e2e_ms = r.e2e_ms;
                if let (Some(e), Some(t), Some(o)) = (r.e2e_ms, r.ttft_ms, r.output_tokens) {
                    r.tool.tpot_ms = defs::tpot_excluding_first(e, t, o);
                }
                r.tool.itl_ms = defs::mean(&r.chunk_gaps_ms);
            } else {
                // vLLM keeps a failure's slot with zero latencies: no figures.
                r.ended_at_ns = r.started_at_ns;
                r.http_status = code;
                r.error_message = err;
            }
            r.stream = Some(true);
            r.prompt_tokens = a.input_lens.as_ref().and_then(|v| v[i]);
            r.prompt_token_source = if r.prompt_tokens.is_some() {
                "transformers"
            } else {
                "unknown"
            };
            r.total_tokens = match (r.prompt_tokens, r.output_tokens) {
                (Some(p), Some(o)) => Some(p + o),
                _ => None,
            };
            imp.requests.push(r);
        }
        let c = &mut imp.cases[0];
        c.started_at_ns = imp.requests.iter().filter_map(|r| r.started_at_ns).min();
        c.ended_at_ns = imp.requests.iter().filter_map(|r| r.ended_at_ns).max();
        imp.rebase_to_first_instant();
    } else {
        imp.notes.push(
            "saved without --save-detailed: only vLLM's aggregates exist, so per-request questions \
             (percentiles under stormlog's definitions, SLO re-judging, failures by request) cannot be answered"
                .into(),
        );
    }
    // The summary: everything but the per-request arrays (generated texts dropped
    // from the summary; they stay in the stored original file).
    let mut summary = top.clone();
    summary.remove("generated_texts");
    imp.cases[0].summary = Value::Object(summary.clone());
    imp.summary = Value::Object(summary);
    imp.config = Value::Null;
    imp.define_stormlog();
    imp.define(
        "tool.ttft",
        "vLLM ttfts: request send -> first chunk with content, s",
    );
    imp.define(
        "tool.e2e",
        "vLLM latencies (e2el): request send -> last chunk, s",
    );
    imp.define(
        "tool.tpot",
        "vLLM TPOT: (latency - ttft) / (output_len - 1), successful requests with more than one token",
    );
    imp.define(
        "tool.itl",
        "vLLM ITL: gaps between consecutive chunks (itls), pooled over all requests; per request here the mean of its gaps",
    );
    imp.define("tool.percentiles", "vLLM: numpy linear interpolation");
    imp.define(
        "tool.failures",
        "vLLM: a non-empty `errors` entry; completed counts successes, total_input_tokens counts successes only",
    );
    imp.define(
        "time_base",
        "vLLM: start_times are time.perf_counter() seconds (monotonic, no epoch anchor; `date` is local time); stored relative to the first request's start",
    );
    Ok(imp)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const HEAD: &str = r#"{"backend": "openai", "num_prompts": 2, "completed": 2, "model_id": "m""#;

    fn parse_str(doc: &str) -> Result<Import, FormatError> {
        parse(doc.as_bytes())
    }

    #[test]
    fn the_arrays_are_read_element_by_element() {
        let doc = format!(
            r#"{HEAD}, "input_lens": [3, 4], "output_lens": [2, null], "ttfts": [0.5, 0.25],
             "itls": [[0.001, 0.002], []], "latencies": [1.0, 2.0], "start_times": [10.0, 10.5],
             "errors": ["", "HTTP Error 503"], "generated_texts": ["a \"b\"", "c"]}}"#
        );
        let imp = parse_str(&doc).unwrap();
        assert_eq!(imp.requests.len(), 2);
        let (a, b) = (&imp.requests[0], &imp.requests[1]);
        assert_eq!(a.status, Status::Ok);
        assert_eq!(a.ttft_ms, Some(500.0));
        assert_eq!(a.chunk_gaps_ms, vec![0.001 * 1e3, 0.002 * 1e3]);
        assert_eq!(a.started_at_ns, Some(0));
        assert_eq!(a.ended_at_ns, Some(1_000_000_000));
        assert_eq!(a.tool.tpot_ms, Some(500.0));
        assert_eq!(b.status, Status::Rejected);
        assert_eq!(b.http_status, Some(503));
        assert_eq!(b.started_at_ns, Some(500_000_000));
        assert!(imp.summary.get("generated_texts").is_none());
    }

    #[test]
    fn a_wrong_element_is_named_by_its_key_and_index() {
        let doc = format!(r#"{HEAD}, "latencies": [1.0, 2.0], "ttfts": [0.5, "x"]}}"#);
        let e = parse_str(&doc).unwrap_err();
        assert_eq!(e.at, "ttfts[1]", "{e}");
        assert!(
            e.message.contains("expected one of a list of seconds"),
            "{e}"
        );
        let doc = format!(r#"{HEAD}, "latencies": [1.0, 2.0], "itls": [[0.1], [true]]}}"#);
        assert_eq!(parse_str(&doc).unwrap_err().at, "itls[1]");
        // Not a list at all: the key says where.
        let doc = format!(r#"{HEAD}, "latencies": {{"a": 1}}}}"#);
        let e = parse_str(&doc).unwrap_err();
        assert_eq!(e.at, "latencies", "{e}");
        assert!(e.message.contains("expected a list of seconds"), "{e}");
        // Arrays of unequal length.
        let doc = format!(r#"{HEAD}, "latencies": [1.0, 2.0], "ttfts": [0.5]}}"#);
        assert_eq!(parse_str(&doc).unwrap_err().at, "ttfts");
    }

    #[test]
    fn a_document_cut_inside_an_array_says_it_is_cut_short() {
        let doc = format!(
            r#"{HEAD}, "ttfts": [0.5, 0.25], "itls": [[0.001, 0.002], [0.003]], "latencies": [1.0, 2.0]}}"#
        );
        // Cut at every byte inside the arrays: refused, never a panic.
        let from = doc.find("\"ttfts\"").unwrap();
        for cut in from..doc.len() - 1 {
            let e = parse_str(&doc[..cut]).unwrap_err();
            assert!(e.message.contains("cut short"), "cut at {cut}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_without_a_panic() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for key in ["itls", "ttfts", "label"] {
            let doc = format!(r#"{HEAD}, "latencies": [1.0], "{key}": [{deep}]}}"#);
            assert!(parse_str(&doc).is_err(), "{key}");
            // Cut inside the nesting too.
            let cut = &doc[..doc.len() / 2];
            assert!(parse_str(cut).unwrap_err().message.contains("cut short"));
        }
    }

    /// The parallel read of `itls` gives what the element-by-element read
    /// gives, values and errors, wherever the buffer's refills cut the
    /// runs: long documents of odd blanks, exponents, negatives, empty
    /// lists, and wrong lists at many places.
    #[test]
    fn lists_read_as_the_element_by_element_read() {
        type Read = Result<Vec<Vec<f64>>, FormatError>;
        fn both(doc: &str) -> (Read, Read) {
            let mut w = Walker::new(doc.as_bytes());
            let fast = lists(&mut w, "itls", 0);
            let mut w = Walker::new(doc.as_bytes());
            let slow = array(&mut w, "itls", "lists of seconds", 0, num::f64_list);
            (fast, slow)
        }
        let mut next = crate::import::xorshift(0x2545_f491_4f6c_dd1du64);
        let blanks = [" ", "", "\n", "\t", "\r\n  "];
        let mut elements = Vec::new();
        for _ in 0..60_000 {
            let n = next() % 12;
            let b = blanks[(next() % 5) as usize];
            let nums: Vec<String> = (0..n)
                .map(|_| match next() % 5 {
                    0 => format!("{:?}", (next() % 10_000_000) as f64 / 1e9),
                    1 => format!("-{}e-{}", next() % 1000, next() % 30),
                    2 => format!("{}E+{}", next() % 1000, next() % 20),
                    3 => format!("{}", next() % 100),
                    _ => format!("{:?}", f64::from_bits(next()).abs() % 10.0),
                })
                .filter(|t| !t.contains("NaN"))
                .collect();
            elements.push(format!("[{b}{}{b}]", nums.join(&format!("{b},{b}"))));
        }
        let good = format!("[{}]", elements.join(", "));
        let (fast, slow) = both(&good);
        let fast = fast.unwrap();
        assert_eq!(fast.len(), 60_000);
        let bits = |v: &Vec<Vec<f64>>| -> Vec<Vec<u64>> {
            v.iter()
                .map(|l| l.iter().map(|x| x.to_bits()).collect())
                .collect()
        };
        assert_eq!(bits(&fast), bits(&slow.unwrap()));
        // Wrong lists (and other values) at places across the refills.
        for (k, bad) in [
            "[1,,2]", "[01]", "[1e400]", "[1 2]", "null", "[[1]]", "[\"1\"]", "[1]x", "{}", "[-]",
            "[1.]", "[true]",
        ]
        .iter()
        .enumerate()
        {
            for at in [0, 1, 4_999 + k * 3_001, 59_999] {
                let mut e = elements.clone();
                e[at] = (*bad).to_owned();
                let doc = format!("[{}]", e.join(","));
                let (fast, slow) = both(&doc);
                match (fast, slow) {
                    (Ok(f), Ok(s)) => assert_eq!(bits(&f), bits(&s), "{bad} at {at}"),
                    (Err(f), Err(s)) => {
                        assert_eq!(
                            (f.at.as_str(), f.message.as_str()),
                            (s.at.as_str(), s.message.as_str()),
                            "{bad} at {at}"
                        );
                        if !bad.starts_with('[') || *bad == "[1]x" {
                            continue;
                        }
                        assert_eq!(f.at, format!("itls[{at}]"), "{bad}");
                    }
                    (f, s) => panic!("{bad} at {at}: {:?} vs {:?}", f.err(), s.err()),
                }
            }
        }
        // Cut anywhere in a long document: the same refusal.
        for cut in [good.len() / 3, good.len() / 2 + 7, good.len() - 2] {
            let (fast, slow) = both(&good[..cut]);
            let (f, s) = (fast.unwrap_err(), slow.unwrap_err());
            assert_eq!((f.at, f.message), (s.at, s.message), "cut at {cut}");
        }
    }
}
