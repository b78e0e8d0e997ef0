//! `stormlog report`'s flags, checked into `ops::report::ReportConfig`.
use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::join::JoinFlags;
use super::DbArg;
use crate::exit::Exit;
use crate::ops::report::{self, PageFormat, ReportConfig, ReportFlags};

/// `report`'s formats: the two of `analyze`, and a self-contained HTML page.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ReportPageFormat {
    // Text for people; the reference's report JSON (`--all`: the
    // judgements); one self-contained HTML file with charts (`--all`: the
    // project page). Plain comments: doc comments on the values would switch
    // clap to the long help layout.
    Txt,
    Json,
    Html,
    Csv,
}

impl From<ReportPageFormat> for PageFormat {
    fn from(f: ReportPageFormat) -> Self {
        match f {
            ReportPageFormat::Txt => PageFormat::Txt,
            ReportPageFormat::Json => PageFormat::Json,
            ReportPageFormat::Html => PageFormat::Html,
            ReportPageFormat::Csv => PageFormat::Csv,
        }
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Output format: txt for people, json (the reference's report JSON),
    /// html (one self-contained page with charts; with --all, the project page),
    /// csv (one row per judged case: the judgement lines of --all).
    #[arg(long, value_enum, default_value = "txt")]
    pub format: ReportPageFormat,
    /// Write the report to FILE instead of stdout (parent directories are created).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub join: JoinFlags,
    /// Re-judge the run with an SLO criterion KEY:MS[@TARGET] (repeatable),
    /// e.g. ttft:500@95%: at most 500 ms, met by at least 95% of the offered
    /// requests. Or the path of a policy file.
    #[arg(long, value_name = "KEY:MS[@TARGET]")]
    pub slo: Vec<String>,
    /// Re-judge the run with an SLO policy file (JSON or TOML).
    #[arg(long = "slo-file", value_name = "FILE")]
    pub slo_file: Option<PathBuf>,
    /// The joint attainment target of a --slo policy (every criterion passes),
    /// as 90% or 0.9.
    #[arg(long, value_name = "TARGET", requires = "slo")]
    pub target: Option<String>,
    /// Judge every stored run (one line per run and case) instead of reporting one.
    #[arg(long, conflicts_with = "runs")]
    pub all: bool,
    /// Exit 4 unless every attainment target is met; also when nothing could
    /// be judged (no policy, no target, no case).
    #[arg(long)]
    pub check: bool,
    /// Also report this slice of each case's measured phase, NAME=START:END in
    /// seconds from the phase's start, as a case of its own (repeatable; one
    /// run's report only). See docs/compare.md, "Segments".
    #[arg(long, value_name = "NAME=START:END", conflicts_with = "all")]
    pub segment: Vec<String>,
    /// A segment's requests: those that arrived in it, or that overlap it
    /// (overlap: no rates, as requests in flight grow with their latency).
    #[arg(long = "segment-membership", value_enum, default_value = "arrival")]
    pub segment_membership: SegmentMembership,
    /// Run ids (see `stormlog runs`; a unique prefix will do). One run gives
    /// its full report; several give one judgement line per run and case.
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
}

/// Which requests belong to a segment (`--segment-membership`).
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum SegmentMembership {
    /// Those whose intended arrival (else send time) falls in it.
    Arrival,
    /// Those in flight at any time during it.
    Overlap,
}

impl From<SegmentMembership> for crate::analysis::segment::Membership {
    fn from(m: SegmentMembership) -> Self {
        match m {
            SegmentMembership::Arrival => Self::Arrival,
            SegmentMembership::Overlap => Self::Overlap,
        }
    }
}

/// Checks `report`'s flags (before any database is opened) and runs it.
pub fn run(a: ReportArgs, out: &mut dyn Write, err: &mut dyn Write) -> crate::ops::Result<Exit> {
    let (policy, segments) = report::check_flags(&ReportFlags {
        slo: &a.slo,
        slo_file: a.slo_file.as_deref(),
        target: a.target.as_deref(),
        segment: &a.segment,
        all: a.all,
        runs: &a.runs,
        csv: a.format == ReportPageFormat::Csv,
    })?;
    let config = ReportConfig {
        db: a.db.db,
        format: a.format.into(),
        output: a.output,
        join: (&a.join).into(),
        policy,
        all: a.all,
        check: a.check,
        segments,
        membership: a.segment_membership.into(),
        runs: a.runs,
    };
    report::run(config, out, err)
}
