//! `stormlog report`: one stored run's report (text for people, the
//! reference's JSON, an HTML page), or judgement lines of several runs
//! (`--all`), with the `--check` gate; and the writing of a built report
//! (its warnings, then its text to stdout or `-o FILE`), which `analyze`
//! shares.
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::join::JoinConfig;
use super::judge::{gate, judgements};
use super::{write_output, Error, Result};
use crate::analysis::segment::{Membership, Segment};
use crate::db;
use crate::exit::Exit;
use crate::report;
use crate::slo::{Policy, PolicySource};

/// The two forms of an analysis report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Txt,
    Json,
}

/// `report`'s formats: the two of `analyze`, a self-contained HTML page,
/// and CSV judgement lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageFormat {
    Txt,
    Json,
    Html,
    Csv,
}

impl PageFormat {
    fn plain(self) -> ReportFormat {
        match self {
            PageFormat::Json => ReportFormat::Json,
            _ => ReportFormat::Txt,
        }
    }
}

/// What `report` is asked, checked (`policy`, `segments`).
#[derive(Debug, Clone)]
pub struct ReportConfig {
    pub db: PathBuf,
    pub format: PageFormat,
    pub output: Option<PathBuf>,
    pub join: JoinConfig,
    /// A policy from the command line (replaces recorded ones).
    pub policy: Option<(Policy, PolicySource)>,
    /// Judge every stored run.
    pub all: bool,
    /// Exit 4 unless every target is met.
    pub check: bool,
    /// Slices of each case's measured phase (one run's report only).
    pub segments: Vec<Segment>,
    pub membership: Membership,
    /// Run ids or unique prefixes.
    pub runs: Vec<String>,
}

/// The flags of `report` that are checked before any database is opened,
/// in the order they are checked.
#[derive(Debug, Clone, Default)]
pub struct ReportFlags<'a> {
    pub slo: &'a [String],
    pub slo_file: Option<&'a Path>,
    pub target: Option<&'a str>,
    pub segment: &'a [String],
    pub all: bool,
    pub runs: &'a [String],
    pub csv: bool,
}

/// A command line's policy and where it came from.
pub type GivenPolicy = Option<(Policy, PolicySource)>;

/// The checked policy and segments of `report`'s flags; every refusal is
/// a usage error (or the policy file's).
pub fn check_flags(f: &ReportFlags<'_>) -> Result<(GivenPolicy, Vec<Segment>)> {
    if !f.all && f.runs.is_empty() {
        return Err(Error::new(
            Exit::Usage,
            "name a run (`stormlog runs` lists them), or pass --all to judge every run",
        ));
    }
    let policy = policy(f.slo, f.slo_file, f.target)?;
    let segments = segments(f.segment)?;
    if !segments.is_empty() && (f.all || f.runs.len() > 1 || f.csv) {
        return Err(Error::new(
            Exit::Usage,
            "--segment needs one run's report: several runs (or --format csv) give judgement lines, which have no segments",
        ));
    }
    Ok((policy, segments))
}

/// `report`'s policy: `slo::policy_from_cli` with the targets stormlog's
/// own flags may carry (`slo::targets`), and a plain word for a policy file
/// that is not there.
pub fn policy(
    slo: &[String],
    slo_file: Option<&Path>,
    target: Option<&str>,
) -> Result<Option<(Policy, PolicySource)>> {
    let mut criteria = Vec::new();
    let mut marginal = Vec::new();
    for flag in slo {
        let is_file = flag.ends_with(".toml") || flag.ends_with(".json");
        if is_file && !Path::new(flag).is_file() {
            return Err(Error::new(
                Exit::Usage,
                format!("--slo {flag}: no such policy file (a --slo value is KEY:MS[@TARGET] or the path of a .toml or .json policy)"),
            ));
        }
        let (criterion, target) = if is_file {
            (flag.as_str(), None)
        } else {
            crate::slo::targets::split_target(flag)?
        };
        criteria.push(criterion.to_owned());
        marginal.push(target);
    }
    let joint = target
        .map(|t| crate::slo::targets::parse_target("--target", t))
        .transpose()?;
    let mut policy = crate::slo::policy_from_cli(&criteria, slo_file)?;
    if let Some((p, PolicySource::Flags)) = policy.as_mut() {
        crate::slo::targets::apply(p, &marginal, joint);
    } else if marginal.iter().any(Option::is_some) || joint.is_some() {
        return Err(Error::new(
            Exit::Usage,
            "targets (@TARGET, --target) go with --slo KEY:MS criteria; a policy file carries its own",
        ));
    }
    Ok(policy)
}

/// `--segment` values, checked as `infer compare` checks them; every
/// refusal is a usage error here (exit 2).
pub fn segments(texts: &[String]) -> Result<Vec<Segment>> {
    use crate::analysis::segment::check_unique;
    let usage = |e: crate::analysis::segment::SegmentError| Error::new(Exit::Usage, e.to_string());
    let segments = texts
        .iter()
        .map(|t| Segment::parse(t))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(usage)?;
    check_unique(&segments).map_err(usage)?;
    Ok(segments)
}

/// Runs `report`.
pub fn run(c: ReportConfig, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    let conn = db::read::open_for_reading(&c.db)?;
    if c.format == PageFormat::Html {
        return html(&conn, &c, out, err);
    }
    if c.all || c.runs.len() > 1 || c.format == PageFormat::Csv {
        return judge_runs(&conn, &c, out, err);
    }
    let mut clock = crate::util::Phases::from_env();
    clock.mark("open");
    let run = crate::db::runs::resolve(&conn, &c.runs[0])?;
    let data = crate::db::store::load_run(&conn, &run)?;
    clock.mark("load");
    let samples = crate::ingest::telemetry::load_samples(&conn, &run)?;
    let spans = crate::db::store::attached_spans(&conn, &run)?;
    let policy = c.policy;
    let inputs = report::Inputs {
        policy: policy.clone(),
        telemetry_configured: !samples.is_empty(),
        server_samples: samples,
        direct_server: c.join.direct_server,
        clock_offset_ns: c.join.clock_offset_ns,
        clock_uncertainty_ns: c.join.clock_uncertainty_ns,
        external_spans: spans.clone(),
        segments: c.segments,
        membership: c.membership,
    };
    let has_policy = policy.is_some() || data.of_type("infer.slo").next().is_some();
    let mut rep = report::build(&data, inputs)?;
    if let Some(p) = crate::db::imports::provenance(&conn, &run)? {
        report::imported::annotate(&mut rep, &p, &data);
    }
    clock.mark("report");
    let exit = emit_for_people(&rep, c.format.plain(), c.output.as_deref(), out, err)?;
    let exit = if c.check {
        let judged = judgements(&data, policy, &spans)?;
        let unjudged = if judged.is_empty() && !has_policy {
            vec![run.clone()]
        } else {
            vec![]
        };
        gate(&judged, &unjudged, err)?
    } else {
        exit
    };
    // Freeing a few hundred thousand requests costs more than the exit that
    // follows: the process hands the memory back as a whole.
    std::mem::forget(data);
    std::mem::forget(rep);
    Ok(exit)
}

/// The runs `--all` or several run ids name, resolved.
fn run_ids(conn: &db::Connection, c: &ReportConfig) -> Result<Vec<String>> {
    Ok(if c.all {
        crate::db::runs::ids(conn)?
    } else {
        c.runs
            .iter()
            .map(|r| crate::db::runs::resolve(conn, r))
            .collect::<std::result::Result<_, _>>()?
    })
}

/// `report --all` / several runs: one judgement line per run and case.
fn judge_runs(
    conn: &db::Connection,
    c: &ReportConfig,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let ids = run_ids(conn, c)?;
    // Runs are loaded and judged on several threads (ops::judge_all).
    let judged_all = crate::ops::judge_all::load_and_judge(&c.db, &ids, |data, spans| {
        judgements(data, c.policy.clone(), spans)
    })?;
    let mut rows = Vec::new();
    let mut unjudged = Vec::new();
    for (id, judged) in ids.into_iter().zip(judged_all) {
        match judged {
            Ok(j) if j.is_empty() => {
                writeln!(
                    err,
                    "Warning: run {} has no policy to judge it by; pass --slo or --slo-file",
                    crate::util::printable(&id)
                )?;
                unjudged.push(id);
            }
            Ok(j) => rows.extend(j),
            Err(e) => writeln!(
                err,
                "Warning: run {}: {}",
                crate::util::printable(&id),
                crate::util::printable(&e.message)
            )?,
        }
    }
    let text = match c.format {
        PageFormat::Csv => report::judge::render_csv(&rows),
        PageFormat::Json => {
            let v: Vec<Value> = rows
                .iter()
                .map(report::judge::CaseJudgement::to_json)
                .collect();
            let mut s = crate::py::json::dumps_pretty(&Value::Array(v));
            s.push('\n');
            s
        }
        PageFormat::Txt | PageFormat::Html => report::judge::render_table(&rows),
    };
    match &c.output {
        Some(path) => {
            write_output(path, text.as_bytes())?;
            writeln!(out, "Judgements saved to: {}", path.display())?;
        }
        None => out.write_all(text.as_bytes())?,
    }
    if c.check {
        return gate(&rows, &unjudged, err);
    }
    Ok(Exit::Ok)
}

/// `report --format html`: one run's page, or the project page (`--all`, several runs).
fn html(
    conn: &db::Connection,
    c: &ReportConfig,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let cfg = super::html::PageConfig {
        policy: c.policy.clone(),
        join: c.join,
    };
    let page_err = |e: super::html::PageError| Error::new(e.exit, e.message);
    let page = if c.all || c.runs.len() > 1 {
        let ids = run_ids(conn, c)?;
        let page = super::html::project_page(&c.db, &ids, &cfg).map_err(page_err)?;
        for w in &page.warnings {
            writeln!(err, "Warning: {}", crate::util::printable(w))?;
        }
        page
    } else {
        let run = crate::db::runs::resolve(conn, &c.runs[0])?;
        super::html::run_page(conn, &run, &cfg).map_err(page_err)?
    };
    match &c.output {
        Some(path) => {
            write_output(path, page.html.as_bytes())?;
            writeln!(out, "HTML report saved to: {}", path.display())?;
        }
        None => out.write_all(page.html.as_bytes())?,
    }
    // `--check` with a page: the page is written either way (it shows why),
    // then the exit status is the gate's, judged as the page shows it.
    if c.check {
        return gate(&page.judged, &page.unjudged, err);
    }
    Ok(Exit::Ok)
}

/// Writes a built report: its warnings, then its text or JSON.
pub fn emit(
    rep: &report::Report,
    format: ReportFormat,
    output: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let text = match format {
        ReportFormat::Json => rep.to_json(),
        ReportFormat::Txt => rep.to_text(),
    };
    write_report(rep, &text, output, out, err)
}

/// `emit` for stormlog's own `report`: its text in people's units, with hints
/// (`report::people`); the JSON is the reference's.
fn emit_for_people(
    rep: &report::Report,
    format: ReportFormat,
    output: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    if format == ReportFormat::Json {
        return emit(rep, format, output, out, err);
    }
    let text = report::people::for_people(&rep.to_text());
    write_report(rep, &text, output, out, err)
}

/// The report's warnings on stderr (their stored names escaped), then its
/// rendered `text` to `output` or stdout.
fn write_report(
    rep: &report::Report,
    text: &str,
    output: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    for w in &rep.warnings {
        writeln!(err, "Warning: {}", crate::util::printable(w))?;
    }
    match output {
        Some(path) => {
            write_output(path, text.as_bytes())?;
            writeln!(out, "Analysis report saved to: {}", path.display())?;
        }
        None => out.write_all(text.as_bytes())?,
    }
    Ok(Exit::Ok)
}
