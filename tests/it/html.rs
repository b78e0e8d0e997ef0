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
        assert!(
            shown.contains("&lt;b&gt;&amp;amp&lt;/b&gt;"),
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
    // Commands without a page say so.
    let out = run_in(
        tmp.path(),
        &[
            "--db",
            "p.db",
            "slo",
            "binding",
            "telemetry_joined",
            "--slo-file",
            "tight.toml",
            "--format",
            "html",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
}
