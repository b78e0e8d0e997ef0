//! Other benchmarking tools' result files as stormlog runs (docs/import.md).
//!
//! Each tool's format is parsed by pure code into the types here ([`Import`]:
//! the run, its cases, its requests, what each figure means), and
//! [`artifact`] maps that onto stormlog's own artifact records, so an
//! imported run lands in the same tables, views and reports as a profiled
//! one. Reading files, hashing and SQLite live at the edges
//! (`ingest::peers`, `db::imports`). Formats are recognised by content
//! ([`detect`]), never by file name.

pub mod aiperf;
pub mod artifact;
pub mod defs;
pub mod guidellm;
pub mod inference_perf;
pub mod numbers;
pub mod vllm;
pub mod walk;

use std::collections::BTreeMap;

use serde_json::Value;

/// The tools whose results are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    AiPerf,
    GuideLlm,
    InferencePerf,
    VllmBenchServe,
}

impl Tool {
    /// The name stored in `imports.tool`.
    pub fn name(self) -> &'static str {
        match self {
            Tool::AiPerf => "aiperf",
            Tool::GuideLlm => "guidellm",
            Tool::InferencePerf => "inference-perf",
            Tool::VllmBenchServe => "vllm-bench-serve",
        }
    }

    /// The per-request (or result) file's format name.
    pub fn format(self) -> &'static str {
        match self {
            Tool::AiPerf => "aiperf.profile_export.jsonl",
            Tool::GuideLlm => "guidellm.benchmarks.json",
            Tool::InferencePerf => "inference-perf.per_request_lifecycle_metrics.json",
            Tool::VllmBenchServe => "vllm.bench_serve.result.json",
        }
    }
}

/// The clock a tool's instants are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Nanoseconds (or seconds) since the Unix epoch: stored as is.
    UnixEpoch,
    /// A monotonic clock with no epoch anchor: stored relative to the run's
    /// first instant, so durations are exact but no wall time is known.
    Monotonic,
}

impl Clock {
    /// The clock's kind as stored (`imports.clock_kind`).
    pub fn kind(self) -> &'static str {
        match self {
            Clock::UnixEpoch => "unix_epoch",
            Clock::Monotonic => "monotonic",
        }
    }

    /// The clock domain recorded for the run.
    pub fn domain(self, tool: Tool) -> String {
        match self {
            Clock::UnixEpoch => "unix_epoch_ns".to_owned(),
            Clock::Monotonic => format!("{}/monotonic_relative_ns", tool.name()),
        }
    }
}

/// A failure to read a tool's file; nothing is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatError {
    /// Which record: `line 17`, `benchmarks[0].requests.successful[3]`, …
    pub at: String,
    /// What was expected there.
    pub message: String,
}

impl FormatError {
    pub fn new(at: impl Into<String>, message: impl Into<String>) -> Self {
        FormatError {
            at: at.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.at.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.at, self.message)
        }
    }
}

impl From<walk::WalkError> for FormatError {
    fn from(e: walk::WalkError) -> Self {
        FormatError::new(format!("line {} (byte {})", e.line, e.offset), e.message)
    }
}

/// What a request's outcome was, in stormlog's status vocabulary
/// (docs/artifact.md §3.8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// The server answered with an error.
    Error,
    /// HTTP 429 or 503.
    Rejected,
    Timeout,
    /// Still running when the tool stopped (GuideLLM's `incomplete`, AIPerf's
    /// cancelled requests).
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Rejected => "rejected",
            Status::Timeout => "timeout",
            Status::Cancelled => "cancelled",
        }
    }

    /// A failure's status from its HTTP code and error text.
    pub fn of_failure(http_status: Option<i64>, text: &str) -> Status {
        match http_status {
            Some(429 | 503) => Status::Rejected,
            _ if text.to_ascii_lowercase().contains("timeout")
                || text.to_ascii_lowercase().contains("timed out") =>
            {
                Status::Timeout
            }
            _ => Status::Error,
        }
    }
}

/// The figures a tool computed for one request, under its own definitions
/// (kept beside stormlog's so the tool's summary can be reproduced).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolFigures {
    pub ttft_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    /// The tool's "TPOT" or per-request ITL (see the run's definitions).
    pub tpot_ms: Option<f64>,
    /// The tool's per-request inter-token latency where it differs from tpot.
    pub itl_ms: Option<f64>,
    /// The tool's output token count, where stormlog's comes from elsewhere.
    pub output_tokens: Option<i64>,
}

/// One request, in stormlog's units: instants in ns (on the run's clock),
/// latencies in ms.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Index into [`Import::cases`].
    pub case: usize,
    /// `measured`, or `warmup` for the tool's warm-up requests.
    pub phase: &'static str,
    pub request_id: Option<String>,
    pub status: Status,
    pub started_at_ns: Option<i64>,
    pub ended_at_ns: Option<i64>,
    /// The scheduled send time, where the tool recorded one.
    pub intended_at_ns: Option<i64>,
    /// stormlog's definitions: send → first content chunk, send → end.
    pub ttft_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    /// Gaps between consecutive content chunks, ms.
    pub chunk_gaps_ms: Vec<f64>,
    pub stream: Option<bool>,
    pub prompt_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub total_tokens: Option<i64>,
    /// `server_usage`, `transformers` (the tool's tokenizer), `unknown`.
    pub output_token_source: &'static str,
    pub prompt_token_source: &'static str,
    pub http_status: Option<i64>,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
    pub finish_reason: Option<String>,
    pub x_request_id: Option<String>,
    pub response_id: Option<String>,
    pub tool: ToolFigures,
}

impl Request {
    /// A request with nothing known but its case and status.
    pub fn new(case: usize, status: Status) -> Self {
        Request {
            case,
            phase: "measured",
            request_id: None,
            status,
            started_at_ns: None,
            ended_at_ns: None,
            intended_at_ns: None,
            ttft_ms: None,
            e2e_ms: None,
            chunk_gaps_ms: Vec::new(),
            stream: None,
            prompt_tokens: None,
            output_tokens: None,
            total_tokens: None,
            output_token_source: "unknown",
            prompt_token_source: "unknown",
            http_status: None,
            error_type: None,
            error_message: None,
            finish_reason: None,
            x_request_id: None,
            response_id: None,
            tool: ToolFigures::default(),
        }
    }
}

/// The load a tool declared for a case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Load {
    /// stormlog's arrival mode: `closed`, `fixed-rate`, `poisson`; None when
    /// the tool's own process has no stormlog equivalent (see `tool_mode`).
    pub arrival_mode: Option<&'static str>,
    /// The tool's own name for it (`constant`, `concurrency`, `sweep`, …).
    pub tool_mode: String,
    pub rate_per_second: Option<f64>,
    pub concurrency: Option<i64>,
    /// Further facts the tool declared (burstiness, duration, …).
    pub detail: BTreeMap<String, Value>,
}

impl Load {
    /// A case id from the load itself (`closed-c4`, `fixed-rate-40`,
    /// `poisson-40`), so runs of the same load shape measured by different
    /// tools share case ids and `compare` pairs them.
    pub fn case_id(&self) -> String {
        let rate = |r: f64| {
            if r.fract() == 0.0 && r.abs() < 1e15 {
                format!("{}", r as i64)
            } else {
                crate::py::json::float_repr(r)
            }
        };
        match (self.arrival_mode, self.rate_per_second, self.concurrency) {
            (Some("closed"), _, Some(c)) => format!("closed-c{c}"),
            (Some("closed"), _, None) => "closed".to_owned(),
            (Some(mode), Some(r), _) => format!("{mode}-{}", rate(r)),
            (Some(mode), None, _) => mode.to_owned(),
            (None, _, _) if !self.tool_mode.is_empty() => self.tool_mode.clone(),
            (None, _, _) => "case".to_owned(),
        }
    }
}

/// Makes case ids unique in order: a repeated id gets `#<index>`.
pub fn unique_case_ids(cases: &mut [Case]) {
    for i in 0..cases.len() {
        if cases[..i].iter().any(|c| c.case_id == cases[i].case_id) {
            cases[i].case_id = format!("{}#{i}", cases[i].case_id);
        }
    }
}

/// One case: a tool's benchmark, stage or profile phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub case_id: String,
    pub load: Load,
    /// The window the tool measured over, ns on the run's clock.
    pub started_at_ns: Option<i64>,
    pub ended_at_ns: Option<i64>,
    /// The length of the scheduled arrival window the tool declared (a
    /// stage's duration), ns; None when the load was not time-bounded.
    pub scheduled_ns: Option<i64>,
    /// The tool's own aggregates for this case (its summary), as written.
    pub summary: Value,
}

/// A parsed import: everything stored for one run.
#[derive(Debug, Clone)]
pub struct Import {
    pub tool: Tool,
    pub tool_version: Option<String>,
    /// The format's own version field, where it has one.
    pub format_version: Option<String>,
    /// The tool's identity of the run (AIPerf's benchmark id, GuideLLM's
    /// run id, inference-perf's experiment id); None: a content hash names it.
    pub identity: Option<String>,
    pub clock: Clock,
    /// Epoch ns (UTC) of the run's start where the tool recorded one beside
    /// its monotonic instants (inference-perf's first stage's `run.time.start`);
    /// on a monotonic clock this, not the instants, dates the run.
    pub wall_start_ns: Option<i64>,
    /// The tool's own wall timestamp of the run as it wrote it, with what it
    /// is (`2026-12-01 19:22:33, local time …`): shown where a monotonic run
    /// has no UTC start.
    pub wall_time: Option<String>,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    pub cases: Vec<Case>,
    pub requests: Vec<Request>,
    /// Whether per-request data exists (vLLM without `--save-detailed`: no).
    pub per_request: bool,
    /// What each figure means: figure name → definition.
    pub definitions: BTreeMap<String, String>,
    /// The tool's configuration, as it wrote it (JSON).
    pub config: Value,
    /// The tool's run-level summary (JSON).
    pub summary: Value,
    /// Notes on what could not be read or is not known.
    pub notes: Vec<String>,
}

impl Import {
    pub fn new(tool: Tool, clock: Clock) -> Self {
        Import {
            tool,
            tool_version: None,
            format_version: None,
            identity: None,
            clock,
            wall_start_ns: None,
            wall_time: None,
            model: None,
            endpoint: None,
            cases: Vec::new(),
            requests: Vec::new(),
            per_request: true,
            definitions: BTreeMap::new(),
            config: Value::Null,
            summary: Value::Null,
            notes: Vec::new(),
        }
    }

    /// Records the definition of a figure.
    pub fn define(&mut self, figure: &str, definition: &str) {
        self.definitions
            .insert(figure.to_owned(), definition.to_owned());
    }

    /// The definitions every import shares: stormlog's own, computed from
    /// the tool's raw times where possible.
    pub fn define_stormlog(&mut self) {
        self.define(
            "client.ttft",
            "stormlog: send -> first content chunk, ms (requests.ttft_ms)",
        );
        self.define(
            "client.e2e",
            "stormlog: send -> end of response, ms (requests.e2e_latency_ms)",
        );
        self.define(
            "client.tpot",
            "stormlog: (e2e - ttft) / (output_tokens - 1), server-reported tokens only",
        );
        self.define(
            "client.chunk_interarrival",
            "stormlog: gaps between consecutive content chunks, ms (per chunk, not per token)",
        );
        self.define(
            "percentiles",
            "stormlog: linear interpolation between closest ranks (numpy's default)",
        );
        self.define(
            "failures",
            "stormlog: every request whose status is not `ok` counts as a failure",
        );
    }

    /// When the run started, as epoch ns: its first instant on an epoch
    /// clock; on a monotonic clock (instants relative to the first request)
    /// only the wall time the tool recorded, else None: a monotonic run is
    /// never dated 1970.
    pub fn started_ns(&self) -> Option<i64> {
        match self.clock {
            Clock::UnixEpoch => self
                .cases
                .iter()
                .filter_map(|c| c.started_at_ns)
                .chain(self.requests.iter().filter_map(|r| r.started_at_ns))
                .min(),
            Clock::Monotonic => self.wall_start_ns,
        }
    }

    /// Shifts every instant so that the run's first one is 0 (monotonic
    /// clocks: only differences mean something).
    pub fn rebase_to_first_instant(&mut self) {
        let first = self
            .requests
            .iter()
            .flat_map(|r| [r.started_at_ns, r.intended_at_ns])
            .chain(self.cases.iter().map(|c| c.started_at_ns))
            .flatten()
            .min();
        let Some(t0) = first else { return };
        let shift = |t: &mut Option<i64>| {
            if let Some(v) = t {
                *v -= t0;
            }
        };
        for r in &mut self.requests {
            shift(&mut r.started_at_ns);
            shift(&mut r.ended_at_ns);
            shift(&mut r.intended_at_ns);
        }
        for c in &mut self.cases {
            shift(&mut c.started_at_ns);
            shift(&mut c.ended_at_ns);
        }
    }
}

/// What is stored about an imported run's meaning (the `imports` row).
#[derive(Debug, Clone)]
pub struct Provenance {
    pub tool: String,
    pub tool_version: Option<String>,
    pub format: String,
    pub format_version: Option<String>,
    pub identity: Option<String>,
    pub clock_kind: String,
    pub clock_domain: String,
    pub per_request: bool,
    pub definitions: Value,
    pub notes: Value,
}

/// Epoch ns of a UTC time `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (or `+00:00`);
/// None for any other form (a local time says nothing about UTC).
pub fn parse_utc(text: &str) -> Option<i64> {
    let t = text.trim();
    let t = t.strip_suffix('Z').or_else(|| t.strip_suffix("+00:00"))?;
    let (date, time) = t.split_once(['T', ' '])?;
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let mut d = date.split('-');
    let (y, m, day) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut h = hms.split(':');
    let (hh, mm, ss) = (num(h.next()?)?, num(h.next()?)?, num(h.next()?)?);
    if h.next().is_some() || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let frac_ns = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(9).collect();
        num(&digits)? * 10i64.pow(9 - digits.len() as u32)
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Seconds (float) to integer ns, rounded.
pub fn secs_to_ns(s: f64) -> Option<i64> {
    let ns = (s * 1e9).round();
    (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64)
}

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    Tool(Tool),
    /// The AIPerf summary (`profile_export_aiperf.json`): read beside the
    /// per-request file.
    AiPerfSummary,
    /// An inference-perf summary or stage file: read beside the per-request file.
    InferencePerfSide,
    /// Another file the tool writes beside its results (AIPerf's CSV and
    /// console summaries and server-metrics export, GuideLLM's CSV and HTML
    /// reports, inference-perf's validation report): not read, but kept with
    /// the run so `export --files` gives the tool's whole output back.
    Companion(Tool),
    /// Not one of these formats.
    Unknown,
}

/// Recognises a file by its content: `head` is its first bytes (up to a few
/// kB). GuideLLM's and vLLM's documents name themselves in their first keys;
/// AIPerf's JSONL lines have `metadata` and `metrics`; inference-perf's
/// per-request file is an array of objects with `start_time`, `end_time`,
/// `request` and `response`.
pub fn detect(head: &[u8]) -> Detected {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start();
    let has = |k: &str| t.contains(&format!("\"{k}\""));
    if let Some(tool) = companion(t) {
        return Detected::Companion(tool);
    }
    if t.starts_with('[') {
        if has("start_time") && has("end_time") && (has("request") || has("error")) {
            return Detected::Tool(Tool::InferencePerf);
        }
        return Detected::Unknown;
    }
    if !t.starts_with('{') {
        return Detected::Unknown;
    }
    // stormlog's own records (artifacts, telemetry, spans) name their event
    // type on every line; none of these tools writes that key first-level.
    let first_line = t.lines().next().unwrap_or("");
    if first_line.contains("\"event_type\"") {
        return Detected::Unknown;
    }
    if has("guidellm_version") || (has("benchmarks") && has("metadata") && has("config")) {
        return Detected::Tool(Tool::GuideLlm);
    }
    if has("aiperf_version") || (has("benchmark_id") && has("request_throughput")) {
        return Detected::AiPerfSummary;
    }
    if first_line_keys_are(first_line, &["metadata", "metrics"]) {
        return Detected::Tool(Tool::AiPerf);
    }
    if has("benchmark_time_seconds") && has("load_summary") {
        return Detected::InferencePerfSide;
    }
    if has("backend") && (has("num_prompts") || has("request_rate")) && has("completed") {
        return Detected::Tool(Tool::VllmBenchServe);
    }
    Detected::Unknown
}

/// Which tool's companion file `t` (a file's first bytes, leading
/// whitespace trimmed) is, by the tool's own headings.
fn companion(t: &str) -> Option<Tool> {
    let first = t.lines().next().unwrap_or("");
    if first.starts_with("Metric,avg,")
        || first.starts_with("# AIPerf ")
        || (t.starts_with('{')
            && t.contains("\"aiperf_version\"")
            && t.contains("\"endpoints_configured\""))
        || (!t.starts_with(['{', '[']) && t.contains("NVIDIA AIPerf |"))
    {
        return Some(Tool::AiPerf);
    }
    if first.starts_with("Run Info,Run Info,")
        || (t.starts_with("<!DOCTYPE html") && t.contains("<title>GuideLLM"))
    {
        return Some(Tool::GuideLlm);
    }
    if t.starts_with('{')
        && t.contains("\"reports\"")
        && t.contains("\"global\"")
        && t.contains("_lifecycle_metrics.json\"")
    {
        return Some(Tool::InferencePerf);
    }
    None
}

/// Whether `line` is a JSON object whose first-level keys include all of
/// `keys` (AIPerf's JSONL: `metadata`, `metrics`, and `error` on failure).
fn first_line_keys_are(line: &str, keys: &[&str]) -> bool {
    let Ok(m) = serde_json::from_str::<BTreeMap<String, serde::de::IgnoredAny>>(line) else {
        return false;
    };
    keys.iter().all(|k| m.contains_key(*k))
}

/// A xorshift64 sequence from `seed`: the tests' generated inputs, the same
/// from run to run.
#[cfg(test)]
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn detection_tells_the_formats_from_stormlogs_own() {
        let aiperf = br#"{"metadata": {"x_request_id": "a"}, "metrics": {}}"#;
        assert_eq!(detect(aiperf), Detected::Tool(Tool::AiPerf));
        let artifact = br#"{"event_type": "infer.request", "metadata": {}, "metrics": {}, "x_request_id": "a"}"#;
        assert_eq!(detect(artifact), Detected::Unknown);
        let vllm = br#"{"date": "x", "backend": "openai-chat", "num_prompts": 2, "completed": 2}"#;
        assert_eq!(detect(vllm), Detected::Tool(Tool::VllmBenchServe));
        let ip = b"[\n {\"start_time\": 1.0, \"end_time\": 2.0, \"request\": \"x\"}]";
        assert_eq!(detect(ip), Detected::Tool(Tool::InferencePerf));
        assert_eq!(
            detect(b"{\"metadata\": {\"guidellm_version\": \"0.8\"}}"),
            Detected::Tool(Tool::GuideLlm)
        );
    }

    #[test]
    fn rebasing_keeps_differences_and_starts_at_zero() {
        let mut imp = Import::new(Tool::VllmBenchServe, Clock::Monotonic);
        let mut a = Request::new(0, Status::Ok);
        a.started_at_ns = Some(5_000);
        a.ended_at_ns = Some(9_000);
        let mut b = Request::new(0, Status::Ok);
        b.started_at_ns = Some(3_000);
        b.ended_at_ns = Some(4_000);
        imp.requests = vec![a, b];
        imp.rebase_to_first_instant();
        assert_eq!(imp.requests[0].started_at_ns, Some(2_000));
        assert_eq!(imp.requests[0].ended_at_ns, Some(6_000));
        assert_eq!(imp.requests[1].started_at_ns, Some(0));
    }

    #[test]
    fn case_ids_name_the_load() {
        let load = |mode, rate, conc| Load {
            arrival_mode: mode,
            rate_per_second: rate,
            concurrency: conc,
            ..Load::default()
        };
        assert_eq!(load(Some("closed"), None, Some(4)).case_id(), "closed-c4");
        assert_eq!(
            load(Some("poisson"), Some(40.0), None).case_id(),
            "poisson-40"
        );
        assert_eq!(
            load(Some("fixed-rate"), Some(43.5), None).case_id(),
            "fixed-rate-43.5"
        );
    }

    #[test]
    fn failure_statuses_follow_stormlogs_vocabulary() {
        assert_eq!(Status::of_failure(Some(429), "x"), Status::Rejected);
        assert_eq!(Status::of_failure(Some(503), ""), Status::Rejected);
        assert_eq!(Status::of_failure(Some(500), "boom"), Status::Error);
        assert_eq!(
            Status::of_failure(None, "ReadTimeout: timed out"),
            Status::Timeout
        );
    }

    #[test]
    fn utc_times_parse_and_local_ones_do_not() {
        // 2026-12-01T19:21:51Z: 20788 days after the epoch, + 19:21:51.
        let want = (20_788 * 86_400 + 19 * 3600 + 21 * 60 + 51) * 1_000_000_000 + 79_937_000;
        assert_eq!(parse_utc("2026-12-01T19:21:51.079937Z"), Some(want));
        assert_eq!(parse_utc("1970-01-01T00:00:00+00:00"), Some(0));
        assert_eq!(
            parse_utc("2024-02-29T00:00:00Z"),
            Some(19_782 * 86_400 * 1_000_000_000)
        );
        assert_eq!(parse_utc("2026-12-01T19:21:51"), None);
        assert_eq!(parse_utc("20261201-192233"), None);
    }

    #[test]
    fn a_monotonic_run_is_dated_only_by_the_tools_wall_time() {
        let mut imp = Import::new(Tool::VllmBenchServe, Clock::Monotonic);
        let mut a = Request::new(0, Status::Ok);
        a.started_at_ns = Some(0);
        imp.requests.push(a);
        assert_eq!(imp.started_ns(), None);
        imp.wall_start_ns = Some(7);
        assert_eq!(imp.started_ns(), Some(7));
        imp.clock = Clock::UnixEpoch;
        assert_eq!(imp.started_ns(), Some(0));
    }

    #[test]
    fn seconds_become_rounded_nanoseconds() {
        assert_eq!(secs_to_ns(2909.499382593), Some(2_909_499_382_593));
        assert_eq!(secs_to_ns(f64::NAN), None);
    }
}
