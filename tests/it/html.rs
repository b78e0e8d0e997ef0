//! `--format html`: the pages of fixed conformance runs as snapshots, the
//! pages' promises (one self-contained file: no resource from another host,
//! well-formed markup, size independent of the request count) and hostile
//! text from an artifact shown as text.
use std::path::Path;

use crate::common::{fixtures, run_in};

fn ingest(dir: &Path, files: &[&Path]) {
    let mut args = vec!["--db".to_owned(), "p.db".to_owned(), "ingest".to_owned()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_in(dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn page(dir: &Path, args: &[&str]) -> String {
    let mut full = vec!["--db", "p.db"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--format", "html", "-o", "page.html"]);
    let out = run_in(dir, &full);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(dir.join("page.html")).unwrap()
}

const VOID: [&str; 6] = ["meta", "br", "hr", "img", "input", "link"];

/// A strict well-formedness check of the markup stormlog writes (stricter
/// than an HTML5 parser, which repairs anything): every element closed in
/// order (void elements and `/>` aside), attribute values quoted and free of
/// `<`, every `&` an entity, `<script>`/`<style>` bodies free of `</`
/// other than their own end. Returns the first problem.
pub fn well_formed(html: &str) -> Result<(), String> {
    let b = html.as_bytes();
    let mut stack: Vec<String> = Vec::new();
    let mut i = 0;
    let at = |i: usize| format!("at byte {i}: {}", &html[i..(i + 60).min(html.len())]);
    if !html.starts_with("<!DOCTYPE html>") {
        return Err("no <!DOCTYPE html> first".into());
    }
    i += "<!DOCTYPE html>".len();
    while i < b.len() {
        match b[i] {
            b'<' => {
                let end = html[i..].find('>').ok_or_else(|| at(i))? + i;
                let tag = &html[i + 1..end];
                if let Some(name) = tag.strip_prefix('/') {
                    match stack.pop() {
                        Some(open) if open == name => {}
                        other => return Err(format!("</{name}> closes {other:?} {}", at(i))),
                    }
                    i = end + 1;
                    continue;
                }
                let self_closing = tag.ends_with('/');
                let tag = tag.trim_end_matches('/');
                let name: String = tag
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                if name.is_empty() {
                    return Err(format!("a bare '<' {}", at(i)));
                }
                // Attributes: name="value" pairs, values without '<' or '"'.
                let mut rest = tag[name.len()..].trim_start();
                while !rest.is_empty() {
                    let eq = rest
                        .find('=')
                        .ok_or_else(|| format!("attribute without value {}", at(i)))?;
                    let attr = &rest[..eq];
                    if !attr
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':')
                    {
                        return Err(format!("attribute name {attr:?} {}", at(i)));
                    }
                    let v = rest[eq + 1..]
                        .strip_prefix('"')
                        .ok_or_else(|| format!("unquoted attribute {}", at(i)))?;
                    let close = v.find('"').ok_or_else(|| at(i))?;
                    if v[..close].contains('<') {
                        return Err(format!("'<' in an attribute {}", at(i)));
                    }
                    rest = v[close + 1..].trim_start();
                }
                i = end + 1;
                if name == "script" || name == "style" {
                    let close = format!("</{name}>");
                    let body_end = html[i..].find(&close).ok_or_else(|| at(i))? + i;
                    if html[i..body_end].contains("</") {
                        return Err(format!("'</' inside <{name}> {}", at(i)));
                    }
                    i = body_end + close.len();
                    continue;
                }
                if !self_closing && !VOID.contains(&name.as_str()) {
                    stack.push(name);
                }
            }
            b'&' => {
                let semi = html[i..].find(';').ok_or_else(|| at(i))? + i;
                let ent = &html[i + 1..semi];
                let ok = (!ent.is_empty()
                    && ent.len() < 8
                    && ent.chars().all(|c| c.is_ascii_alphanumeric()))
                    || (ent.starts_with('#') && ent[1..].chars().all(|c| c.is_ascii_digit()))
                    || (ent.starts_with("#x") && ent[2..].chars().all(|c| c.is_ascii_hexdigit()));
                if !ok {
                    return Err(format!("a bare '&' {}", at(i)));
                }
                i = semi + 1;
            }
            b'>' => return Err(format!("a bare '>' {}", at(i))),
            _ => i += 1,
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed: {stack:?}"));
    }
    Ok(())
}

/// No resource from anywhere: no element that loads one, no URL in any
/// attribute but SVG's namespace, no `url(` or `@import` in the styles.
pub fn self_contained(html: &str) -> Result<(), String> {
    let lower = html.to_ascii_lowercase();
    for t in [
        "<link", "<img", "<iframe", "<object", "<embed", "<video", "<audio", "<source", "@import",
        "url(",
    ] {
        if lower.contains(t) {
            return Err(format!("{t} in the page"));
        }
    }
    if lower.matches("<script").count() != lower.matches("<script>").count() {
        return Err("a <script> with attributes (src?)".into());
    }
    let mut rest = lower.as_str();
    while let Some(p) = rest.find("=\"") {
        let v = &rest[p + 2..];
        let end = v.find('"').unwrap_or(v.len());
        let value = &v[..end];
        if value.contains("://") && value != "http://www.w3.org/2000/svg" {
            return Err(format!("a URL in an attribute: {value}"));
        }
        rest = &v[end..];
    }
    Ok(())
}

fn check(name: &str, html: &str) {
    if let Err(e) = well_formed(html) {
        panic!("{name}: not well formed: {e}");
    }
    if let Err(e) = self_contained(html) {
        panic!("{name}: not self-contained: {e}");
    }
    // Exactly our one script, and nothing else that runs.
    assert_eq!(html.matches("<script").count(), 1, "{name}");
    // No event handler attribute in any tag.
    for tag in html
        .split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap_or(""))
    {
        let handler = tag.split_whitespace().skip(1).any(|a| {
            let a = a.to_ascii_lowercase();
            a.starts_with("on") && a.contains('=')
        });
        assert!(!handler, "{name}: an event handler in <{tag}>");
    }
}

fn snapshot(name: &str, html: &str) {
    // The version in the footer changes with every release.
    let html = html.replace(env!("CARGO_PKG_VERSION"), "VERSION");
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, html);
    });
}

#[test]
fn run_pages_of_conformance_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = fixtures().join("cases");
    let tj = cases.join("telemetry_joined");
    ingest(
        tmp.path(),
        &[
            &cases.join("failures/artifact.jsonl"),
            &tj.join("artifact.jsonl"),
            &tj.join("telemetry.jsonl"),
        ],
    );
    let failures = page(
        tmp.path(),
        &[
            "report",
            "failures",
            "--slo",
            "ttft:200@95%",
            "--slo",
            "e2e:300",
        ],
    );
    check("failures", &failures);
    assert!(failures.contains("TTFT CDF, case c4_in64_out16"));
    assert!(failures.contains("SLO 200 ms") || failures.contains("SLO threshold 200 ms"));
    snapshot("html_run_failures", &failures);
    let joined = page(
        tmp.path(),
        &["report", "telemetry_joined", "--direct-server"],
    );
    check("telemetry_joined", &joined);
    assert!(joined.contains("Memory over time"));
    snapshot("html_run_telemetry_joined", &joined);
    let project = page(tmp.path(), &["report", "--all", "--slo", "ttft:200@95%"]);
    check("project", &project);
    // The grid links into each run's section.
    for run in ["failures", "telemetry_joined"] {
        let anchor = stormlog::html::escape::id("run", run);
        assert!(project.contains(&format!("href=\"#{anchor}\"")), "{run}");
        assert!(project.contains(&format!("id=\"{anchor}\"")), "{run}");
    }
    snapshot("html_project", &project);
}

#[test]
fn compare_page_of_a_conformance_case() {
    let dir = fixtures().join("cases/compare_config");
    let tmp = tempfile::tempdir().unwrap();
    let out_path = tmp.path().join("cmp.html");
    let out = run_in(
        &dir,
        &[
            "compare",
            "--baseline",
            "baseline_b1.jsonl",
            "baseline_b2.jsonl",
            "--candidate",
            "candidate_b1.jsonl",
            "candidate_b2.jsonl",
            "--format",
            "html",
            "-o",
            out_path.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&out_path).unwrap();
    check("compare", &html);
    assert!(html.contains("Comparability"));
    assert!(html.contains("client.ttft.p50"));
    // Both arms' distributions on one plot, each run's line through its own
    // report's quantiles: the baseline's first run's TTFT p50 .. p99 first.
    let out = run_in(
        &dir,
        &["infer", "analyze", "baseline_b1.jsonl", "--format", "json"],
    );
    let b1: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (case, c) = b1["cases"].as_object().unwrap().iter().next().unwrap();
    let fig = figure(&html, &format!("TTFT distributions, case {case}"));
    let q = &c["latency"]["metrics"]["client.ttft"]["successful"];
    let want: Vec<f64> = ["p50", "p90", "p95", "p99"]
        .iter()
        .map(|p| q[*p]["value_ms"].as_f64().unwrap())
        .collect();
    assert_eq!(data(fig, "data-x")[..4], want[..]);
    assert_eq!(data(fig, "data-y")[..4], [0.5, 0.9, 0.95, 0.99]);
    assert!(fig.contains("baseline") && fig.contains("candidate"));
    snapshot("html_compare", &html);
}

#[test]
fn hostile_text_from_an_artifact_is_shown_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(fixtures().join("cases/failures/artifact.jsonl")).unwrap();
    // JSON-escaped inside the artifact's strings.
    let run_id = "<script>alert(1)</script>";
    let case_id = "\"><img src=x onerror=alert(1)>";
    let hostile = src
        .replace(
            "\"run_id\": \"failures\"",
            "\"run_id\": \"<script>alert(1)</script>\"",
        )
        .replace("c4_in64_out16", "\\\"><img src=x onerror=alert(1)>")
        .replace("\"model\": \"fake\"", "\"model\": \"<b>&amp</b>\"");
    std::fs::write(tmp.path().join("hostile.jsonl"), hostile).unwrap();
    ingest(tmp.path(), &[Path::new("hostile.jsonl")]);
    let list = run_in(tmp.path(), &["--db", "p.db", "runs", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(
        runs[0]["run_id"], run_id,
        "the hostile run id was stored as given"
    );
    for (name, html) in [
        (
            "slo frontier",
            page(
                tmp.path(),
                &[
                    "slo",
                    "frontier",
                    run_id,
                    "--target",
                    "0.5",
                    "--criterion",
                    "ttft",
                ],
            ),
        ),
        (
            "slo binding",
            page(
                tmp.path(),
                &[
                    "slo", "binding", run_id, "--slo", "ttft:200", "--slo", "e2e:300",
                ],
            ),
        ),
        (
            "slo diff",
            page(
                tmp.path(),
                &[
                    "slo",
                    "diff",
                    run_id,
                    "--slo",
                    "ttft:200",
                    "--against",
                    "ttft:100",
                ],
            ),
        ),
        (
            "run",
            page(tmp.path(), &["report", run_id, "--slo", "ttft:200@95%"]),
        ),
        (
            "project",
            page(tmp.path(), &["report", "--all", "--slo", "ttft:200@95%"]),
        ),
    ] {
        check(name, &html);
        assert!(!html.contains("<img"), "{name}");
        assert!(!html.contains("<b>"), "{name}");
        assert!(!html.contains("alert(1)</script>"), "{name}");
        // Escaped (minijinja also writes '/' as &#x2f;, and quotes as &quot;
        // or &#34;), so it shows as text.
        let shown = html.replace("&#x2f;", "/").replace("&#34;", "&quot;");
        assert!(
            shown.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{name}: the run id shows"
        );
        assert!(
            shown.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"),
            "{name}: the case id shows"
        );
        // The slo pages do not name the model.
        assert!(
            name.starts_with("slo") || shown.contains("&lt;b&gt;&amp;amp&lt;/b&gt;"),
            "{name}: the model shows"
        );
        let _ = case_id;
    }
}

#[test]
fn the_checks_catch_what_they_promise_to() {
    assert!(well_formed("<!DOCTYPE html><p><b>x</p></b>").is_err());
    assert!(well_formed("<!DOCTYPE html><p a=x>y</p>").is_err());
    assert!(well_formed("<!DOCTYPE html><p>a & b</p>").is_err());
    assert!(well_formed("<!DOCTYPE html><p title=\"<x\">y</p>").is_err());
    assert!(
        well_formed("<!DOCTYPE html><p>a &amp; b<br><svg><path d=\"M0 0\"/></svg></p>").is_ok()
    );
    assert!(self_contained("<img src=\"a.png\">").is_err());
    assert!(self_contained("<script src=\"https://x/y.js\"></script>").is_err());
    assert!(self_contained("<a href=\"https://example.org\">x</a>").is_err());
    assert!(self_contained("<style>body{background:url(x.png)}</style>").is_err());
    assert!(self_contained(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg><p>http://127.0.0.1/v1</p>"
    )
    .is_ok());
}

#[test]
fn slo_curve_and_capacity_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let tj = fixtures().join("cases/telemetry_joined");
    ingest(tmp.path(), &[&tj.join("artifact.jsonl")]);
    // A ttft target the c8 case misses: the sweep brackets a capacity.
    std::fs::write(
        tmp.path().join("tight.toml"),
        "format = \"stormlog.infer.slo\"\nversion = 1\nname = \"tight\"\nattainment_target = 0.9\n\
         [[criteria]]\nmetric = \"ttft\"\nboundary = \"client\"\nmax_ms = 50\nattainment_target = 0.95\n",
    )
    .unwrap();
    let curve = page(
        tmp.path(),
        &[
            "slo",
            "curve",
            "telemetry_joined",
            "--criterion",
            "ttft",
            "--criterion",
            "e2e",
        ],
    );
    check("slo curve", &curve);
    assert!(
        curve.contains("Attainment against threshold: run telemetry_joined, case c8_in128_out24")
    );
    let capacity = page(
        tmp.path(),
        &[
            "slo",
            "capacity",
            "telemetry_joined",
            "--slo-file",
            "tight.toml",
        ],
    );
    check("slo capacity", &capacity);
    assert!(
        capacity.contains("capacity 4.25"),
        "the capacity point is marked"
    );
    snapshot("html_slo_capacity", &capacity);
}

const TIGHT: &str = "format = \"stormlog.infer.slo\"\nversion = 1\nname = \"tight\"\nattainment_target = 0.9\n\
     [[criteria]]\nmetric = \"ttft\"\nboundary = \"client\"\nmax_ms = 50\nattainment_target = 0.95\n\
     [[criteria]]\nmetric = \"e2e\"\nboundary = \"client\"\nmax_ms = 400\n";

/// The `<figure>` whose caption is `title` (panics when there is none).
fn figure<'a>(html: &'a str, title: &str) -> &'a str {
    let at = html
        .find(&format!("<figcaption>{title}</figcaption>"))
        .unwrap_or_else(|| panic!("no chart {title:?}"));
    let end = html[at..].find("</figure>").unwrap() + at;
    &html[at..end]
}

/// Every value of attribute `name` in `svg`, in order.
fn data(svg: &str, name: &str) -> Vec<f64> {
    let pat = format!(" {name}=\"");
    svg.match_indices(&pat)
        .map(|(i, _)| {
            let rest = &svg[i + pat.len()..];
            rest[..rest.find('"').unwrap()].parse::<f64>().unwrap()
        })
        .collect()
}

fn json_of(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["--db", "p.db"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--format", "json"]);
    let out = run_in(dir, &full);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_run_pages_charts_carry_the_reports_and_the_slo_commands_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let tj = fixtures().join("cases/telemetry_joined");
    ingest(
        tmp.path(),
        &[&tj.join("artifact.jsonl"), &tj.join("telemetry.jsonl")],
    );
    std::fs::write(tmp.path().join("tight.toml"), TIGHT).unwrap();
    let html = page(
        tmp.path(),
        &[
            "report",
            "telemetry_joined",
            "--direct-server",
            "--slo-file",
            "tight.toml",
        ],
    );
    check("sweep run", &html);
    // The attainment curve is `slo curve`'s, point for point.
    let curves = json_of(
        tmp.path(),
        &[
            "slo",
            "curve",
            "telemetry_joined",
            "--criterion",
            "ttft",
            "--criterion",
            "e2e",
        ],
    );
    for c in curves.as_array().unwrap() {
        let fig = figure(
            &html,
            &format!(
                "Attainment against {} threshold, case {}",
                c["criterion"].as_str().unwrap(),
                c["case"].as_str().unwrap()
            ),
        );
        let pts = c["points"].as_array().unwrap();
        let xs: Vec<f64> = pts
            .iter()
            .map(|p| p["threshold_ms"].as_f64().unwrap())
            .collect();
        let ys: Vec<f64> = pts
            .iter()
            .map(|p| p["attainment_lower"].as_f64().unwrap())
            .collect();
        assert_eq!(data(fig, "data-x"), xs);
        assert_eq!(data(fig, "data-y"), ys);
    }
    // The capacity sweep is `slo capacity`'s: its loads, attainments and point.
    let sweeps = json_of(
        tmp.path(),
        &[
            "slo",
            "capacity",
            "telemetry_joined",
            "--slo-file",
            "tight.toml",
        ],
    );
    let sweep = &sweeps[0];
    let fig = figure(
        &html,
        "Capacity: attainment against load, sweep 1 (bracketed)",
    );
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for name in ["joint", "client.ttft"] {
        for p in sweep["points"].as_array().unwrap() {
            let t = p["targets"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .unwrap();
            xs.push(p["load"].as_f64().unwrap());
            ys.push(t["attainment_lower"].as_f64().unwrap());
        }
    }
    assert_eq!(data(fig, "data-x"), xs);
    assert_eq!(data(fig, "data-y"), ys);
    assert!(fig.contains("capacity 4.25"));
    assert_eq!(
        sweep["capacity"].as_f64().map(|c| (c * 100.0).round()),
        Some(425.0)
    );
    // The throughput-latency curve: each case's throughput and percentiles
    // as the report gives them, in the order of the cases' load.
    let report = json_of(
        tmp.path(),
        &[
            "report",
            "telemetry_joined",
            "--direct-server",
            "--slo-file",
            "tight.toml",
        ],
    );
    let fig = figure(&html, "Throughput against latency");
    let cases = report["cases"].as_object().unwrap();
    let mut keyed: Vec<&serde_json::Value> = cases.values().collect();
    keyed.sort_by(|a, b| {
        a["arrivals"]["peak_in_flight"]
            .as_f64()
            .unwrap()
            .total_cmp(&b["arrivals"]["peak_in_flight"].as_f64().unwrap())
    });
    let thr: Vec<f64> = keyed
        .iter()
        .map(|c| c["throughput"]["requests_per_second"].as_f64().unwrap())
        .collect();
    let ttft_p50: Vec<f64> = keyed
        .iter()
        .map(|c| {
            c["latency"]["metrics"]["client.ttft"]["successful"]["p50"]["value_ms"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let xs = data(fig, "data-x");
    assert_eq!(xs[..thr.len()], thr[..]);
    assert_eq!(data(fig, "data-y")[..thr.len()], ttft_p50[..]);
    // --check with a page: the page is written and the gate decides the
    // exit (c8 misses the tight policy: 4).
    let out = run_in(
        tmp.path(),
        &[
            "--db",
            "p.db",
            "report",
            "telemetry_joined",
            "--slo-file",
            "tight.toml",
            "--check",
            "--format",
            "html",
            "-o",
            "gated.html",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("check failed: run telemetry_joined case c8_in128_out24: missed"));
    check(
        "gated",
        &std::fs::read_to_string(tmp.path().join("gated.html")).unwrap(),
    );
    let out = run_in(
        tmp.path(),
        &[
            "--db",
            "p.db",
            "report",
            "telemetry_joined",
            "--slo",
            "ttft:1000@50%",
            "--check",
            "--format",
            "html",
            "-o",
            "passed.html",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // No policy at all: nothing to judge, the gate fails (4) and says why.
    let out = run_in(
        tmp.path(),
        &[
            "--db",
            "p.db",
            "report",
            "--all",
            "--check",
            "--format",
            "html",
            "-o",
            "none.html",
        ],
    );
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no SLO policy to judge it by"));
    assert!(tmp.path().join("none.html").exists());
}

#[test]
fn vllm_gauges_and_server_ttft_on_the_run_page() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = fixtures().join("cases");
    ingest(
        tmp.path(),
        &[
            &cases.join("vllm_metrics/artifact.jsonl"),
            &cases.join("vllm_spans/artifact.jsonl"),
        ],
    );
    let html = page(tmp.path(), &["report", "vllm_metrics"]);
    check("vllm_metrics", &html);
    let report = json_of(tmp.path(), &["report", "vllm_metrics"]);
    let fig = figure(&html, "vLLM running and waiting requests");
    // The dots are the report's gauge means: running, then waiting, per case.
    let mut means = Vec::new();
    for (_, c) in report["telemetry"]["vllm"]["cases"].as_object().unwrap() {
        for key in ["running_requests", "queue_depth"] {
            means.push(
                c["engines"]["0"]["gauges"][key]["stats"]["_"]["mean"]
                    .as_f64()
                    .unwrap(),
            );
        }
    }
    assert_eq!(data(fig, "data-x"), means);
    snapshot("html_run_vllm_metrics", &html);
    let spans = page(tmp.path(), &["report", "vllm_spans"]);
    check("vllm_spans", &spans);
    let fig = figure(
        &spans,
        "Server TTFT against client TTFT, case c2_in64_out20",
    );
    assert!(fig.contains("server (spans)"));
    // The table's server p50 is the report's server.ttft p50 (same rounding).
    let report = json_of(tmp.path(), &["report", "vllm_spans"]);
    let p50 = report["cases"]["c2_in64_out20"]["latency"]["metrics"]["server.ttft"]["successful"]
        ["p50"]["value_ms"]
        .as_f64()
        .unwrap();
    assert!(
        fig.contains(&format!(
            "<td>server (spans)</td><td>30</td><td>{}</td>",
            stormlog::html::svg::fmt_num(p50)
        )),
        "{fig}"
    );
}

#[test]
fn slo_frontier_binding_and_diff_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let tj = fixtures().join("cases/telemetry_joined");
    ingest(tmp.path(), &[&tj.join("artifact.jsonl")]);
    std::fs::write(tmp.path().join("tight.toml"), TIGHT).unwrap();
    let frontier = page(
        tmp.path(),
        &[
            "slo",
            "frontier",
            "telemetry_joined",
            "--target",
            "0.9",
            "--criterion",
            "ttft",
        ],
    );
    check("frontier", &frontier);
    let rows = json_of(
        tmp.path(),
        &[
            "slo",
            "frontier",
            "telemetry_joined",
            "--target",
            "0.9",
            "--criterion",
            "ttft",
        ],
    );
    let fig = figure(&frontier, "Frontier of client.ttft, run telemetry_joined");
    let want: Vec<f64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["threshold_ms"].as_f64().unwrap())
        .collect();
    assert_eq!(data(fig, "data-x"), want);
    snapshot("html_slo_frontier", &frontier);
    let binding = page(
        tmp.path(),
        &[
            "slo",
            "binding",
            "telemetry_joined",
            "--slo-file",
            "tight.toml",
        ],
    );
    check("binding", &binding);
    let rows = json_of(
        tmp.path(),
        &[
            "slo",
            "binding",
            "telemetry_joined",
            "--slo-file",
            "tight.toml",
        ],
    );
    let c8 = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["case"] == "c8_in128_out24")
        .unwrap();
    let fig = figure(
        &binding,
        "Binding criteria, run telemetry_joined, case c8_in128_out24",
    );
    let xs = data(fig, "data-x");
    assert_eq!(xs[0], c8["joint_lower"].as_f64().unwrap());
    assert_eq!(
        xs[1],
        c8["criteria"][0]["attainment_lower"].as_f64().unwrap()
    );
    assert!(fig.contains("client.ttft ≤ 50 ms (binds)"));
    snapshot("html_slo_binding", &binding);
    let diff = page(
        tmp.path(),
        &[
            "slo",
            "diff",
            "telemetry_joined",
            "--slo-file",
            "tight.toml",
            "--against",
            "ttft:500",
            "--against",
            "e2e:4000",
        ],
    );
    check("diff", &diff);
    assert!(diff.contains("Attainment under both policies, run telemetry_joined"));
    snapshot("html_slo_diff", &diff);
}
