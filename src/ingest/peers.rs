//! `stormlog ingest` of other tools' results (docs/import.md): finds the
//! files by content (a tool's output folder, or one result file and the side
//! files beside it), reads and hashes them, hands them to the pure parsers of
//! [`crate::import`] and stores the run through [`crate::db::imports`].
//! Nothing is stored unless every file reads.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::db::Connection;

use super::lines::Lines;
use super::{now_utc, IngestError, Ingested, Kind, Options, Outcome};
use crate::db::imports::{self as store, SourceFile, Stored};
use crate::import::{self, aiperf, guidellm, inference_perf, vllm, Detected, FormatError, Tool};

/// Bytes read to recognise a file.
const HEAD: usize = 64 * 1024;

fn io(path: &Path) -> impl Fn(std::io::Error) -> IngestError + '_ {
    move |source| IngestError::Io {
        path: path.to_owned(),
        source,
    }
}

fn head(path: &Path) -> Result<Vec<u8>, IngestError> {
    let mut f = File::open(path).map_err(io(path))?;
    let mut buf = vec![0u8; HEAD];
    let mut filled = 0;
    while filled < HEAD {
        let n = f.read(&mut buf[filled..]).map_err(io(path))?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    buf.truncate(filled);
    Ok(buf)
}

/// What a YAML side file of inference-perf is, by content.
fn yaml_kind(head: &[u8]) -> Option<&'static str> {
    let t = String::from_utf8_lossy(head);
    let top = |k: &str| t.lines().any(|l| l == k);
    if top("run:") && t.contains("eid:") {
        return Some("stage_config");
    }
    if top("load:") && (top("api:") || top("data:")) {
        return Some("config");
    }
    None
}

/// The tool a path holds results of (None: not another tool's result file).
pub fn detect(path: &Path) -> Result<Option<Tool>, IngestError> {
    if path.is_dir() {
        return Ok(Some(find(path)?.0));
    }
    Ok(match import::detect(&head(path)?) {
        Detected::Tool(t) => Some(t),
        _ => None,
    })
}

/// The files of one import: the result file, then its side files.
struct Found {
    main: PathBuf,
    side: Vec<(Detected, Option<&'static str>, PathBuf)>,
}

/// Classifies the regular files of `dir` by content.
fn scan_dir(dir: &Path) -> Result<(Vec<(Tool, PathBuf)>, Found), IngestError> {
    let mut mains = Vec::new();
    let mut side = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    for p in entries {
        let h = head(&p)?;
        match import::detect(&h) {
            Detected::Tool(t) => mains.push((t, p)),
            Detected::Unknown => {
                if let Some(k) = yaml_kind(&h) {
                    side.push((Detected::Unknown, Some(k), p));
                }
            }
            d => side.push((d, None, p)),
        }
    }
    Ok((
        mains,
        Found {
            main: PathBuf::new(),
            side,
        },
    ))
}

fn find(dir: &Path) -> Result<(Tool, Found), IngestError> {
    let (mains, mut found) = scan_dir(dir)?;
    match mains.as_slice() {
        [] => Err(IngestError::Invalid {
            path: dir.to_owned(),
            message:
                "no result file of AIPerf (profile_export.jsonl), GuideLLM (benchmarks.json), \
                      inference-perf (per_request_lifecycle_metrics.json) or vLLM bench serve \
                      (--save-result JSON) found in this folder (files are recognised by content)"
                    .into(),
        }),
        [(t, p)] => {
            found.main = p.clone();
            Ok((*t, found))
        }
        many => Err(IngestError::Invalid {
            path: dir.to_owned(),
            message: format!(
                "the folder holds {} result files ({}): ingest them one at a time",
                many.len(),
                many.iter()
                    .map(|(_, p)| p
                        .file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

fn invalid(path: &Path, e: FormatError) -> IngestError {
    IngestError::Invalid {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_json(path: &Path) -> Result<serde_json::Value, IngestError> {
    let text = super::read_text(path)?;
    serde_json::from_str(&text).map_err(|e| IngestError::Invalid {
        path: path.to_owned(),
        message: format!("{e}; expected a JSON document"),
    })
}

/// The stage number inference-perf writes into a stage file's name; the
/// content says it is a stage file, only the name says which.
fn stage_number(p: &Path) -> Option<usize> {
    let n = name_of(p);
    let rest = n.strip_prefix("stage_")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Ingests another tool's result file, or a folder of one tool's output.
pub fn ingest(conn: &mut Connection, path: &Path, opts: &Options) -> Result<Ingested, IngestError> {
    let (tool, found) = if path.is_dir() {
        find(path)?
    } else {
        let tool = detect(path)?.ok_or_else(|| IngestError::Invalid {
            path: path.to_owned(),
            message: "not a result file of a known tool".into(),
        })?;
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let (_, mut f) = scan_dir(dir)?;
        f.main = path.to_owned();
        (tool, f)
    };
    let mut clock = crate::util::Phases::from_env();
    let main = found.main.clone();
    let mut files = Vec::new();
    // The side files are small: read here, before the per-request file.
    let mut aiperf_summary = None;
    let mut ip_side = inference_perf::Side::default();
    match tool {
        Tool::AiPerf => {
            if let Some(s) = found.side.iter().find(|s| s.0 == Detected::AiPerfSummary) {
                aiperf_summary = Some(read_json(&s.2)?);
                files.push(("summary", s.2.clone()));
            }
        }
        Tool::InferencePerf => {
            for (d, y, p) in &found.side {
                match (d, y) {
                    (Detected::InferencePerfSide, _) => {
                        let v = read_json(p)?;
                        match stage_number(p) {
                            Some(n) => {
                                ip_side.stages.insert(n, v);
                                files.push(("stage", p.clone()));
                            }
                            None => {
                                ip_side.summary = Some(v);
                                files.push(("summary", p.clone()));
                            }
                        }
                    }
                    (_, Some("config")) => {
                        ip_side.config_yaml = Some(super::read_text(p)?);
                        files.push(("config", p.clone()));
                    }
                    (_, Some("stage_config")) => {
                        ip_side.partials.push(super::read_text(p)?);
                        files.push(("stage_config", p.clone()));
                    }
                    _ => {}
                }
            }
        }
        Tool::GuideLlm | Tool::VllmBenchServe => {}
    }
    // The tool's other outputs beside it are kept as they are (export --files).
    for (d, _, p) in &found.side {
        if *d == Detected::Companion(tool) {
            files.push(("companion", p.clone()));
        }
    }
    // The per-request file is parsed on one thread while this one stores its
    // bytes (and hashes them) in the transaction; a parse error drops the
    // transaction, so nothing is stored.
    let mut tx = store::begin(conn)?;
    let parse_path = main.clone();
    let parser = std::thread::spawn(move || -> Result<import::Import, IngestError> {
        let path = parse_path.as_path();
        let file = File::open(path).map_err(io(path))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        Ok(match tool {
            Tool::AiPerf => aiperf::assemble(read_aiperf(path, reader)?, aiperf_summary),
            Tool::GuideLlm => guidellm::parse(&mut reader).map_err(|e| invalid(path, e))?,
            Tool::VllmBenchServe => vllm::parse(&mut reader).map_err(|e| invalid(path, e))?,
            Tool::InferencePerf => {
                inference_perf::parse(&mut reader, ip_side).map_err(|e| invalid(path, e))?
            }
        })
    });
    let original = File::open(&main)
        .map_err(io(&main))
        .and_then(|f| Ok(tx.store_original(BufReader::with_capacity(1 << 20, f))?));
    let parsed = parser
        .join()
        .map_err(|_| IngestError::invalid(&main, "the parser thread panicked"))?;
    let imp = parsed?;
    let blob = original?;
    clock.mark("parse");
    let (bytes, sha) = (blob.bytes, blob.sha256.clone());
    let mut sources = vec![SourceFile {
        role: "per_request",
        name: name_of(&main),
        path: main.clone(),
        sha256: sha.clone(),
        bytes,
        blob_id: Some(blob.blob_id),
    }];
    for (role, p) in files {
        let bytes = std::fs::metadata(&p).map_err(io(&p))?.len();
        sources.push(SourceFile {
            role,
            name: name_of(&p),
            sha256: crate::util::sha256_file(&p).map_err(io(&p))?,
            path: p,
            bytes,
            blob_id: None,
        });
    }
    let run_id = opts
        .run_id
        .clone()
        .or_else(|| imp.identity.clone())
        .unwrap_or_else(|| format!("{}-{}", tool.name(), &sha[..12]));
    let (stored, records) = tx.finish(&imp, &run_id, &sha, &sources, opts.replace, &now_utc())?;
    clock.mark("store");
    let outcome = match stored {
        Stored::Added => Outcome::Added,
        Stored::Replaced => Outcome::Replaced,
        Stored::Unchanged => Outcome::Unchanged,
        Stored::Conflict => {
            return Err(IngestError::Conflict {
                path: main,
                run_id,
                existing: "a different import".into(),
            })
        }
    };
    Ok(Ingested {
        kind: Kind::Import(tool),
        run_id,
        records: if outcome == Outcome::Unchanged {
            imp.requests.len() as u64
        } else {
            records
        },
        bytes,
        outcome,
    })
}

/// Lines per batch of AIPerf's JSONL.
const AIPERF_BATCH: usize = 512;

/// Reads AIPerf's JSONL as the artifact ingest reads an artifact: one thread
/// reads lines in batches (two queued), this one parses each batch in
/// parallel, so reading overlaps parsing; memory holds a few batches of lines
/// and the parsed requests.
fn read_aiperf(path: &Path, reader: impl Read + Send) -> Result<Vec<aiperf::Parsed>, IngestError> {
    use rayon::prelude::*;
    type Batch = Vec<(u64, String)>;
    let mut out = Vec::new();
    let read = std::thread::scope(|scope| -> Result<Result<(), String>, IngestError> {
        let (send, recv) = std::sync::mpsc::sync_channel::<Batch>(2);
        let lines = scope.spawn(move || -> std::io::Result<Result<(), String>> {
            // Not hashed here: store_original hashes the same bytes.
            let mut lines = Lines::hashing(BufReader::with_capacity(1 << 20, reader), false);
            loop {
                let mut batch: Batch = Vec::with_capacity(AIPERF_BATCH);
                while batch.len() < AIPERF_BATCH {
                    match lines.next_line()? {
                        // Invalid UTF-8 refuses the file: nothing more is read.
                        Some(_) if lines.utf8_error.is_some() => break,
                        Some(l) => batch.push((lines.line_no, l)),
                        None => break,
                    }
                }
                let done = batch.len() < AIPERF_BATCH || lines.utf8_error.is_some();
                if !batch.is_empty() && send.send(batch).is_err() {
                    break; // a record did not parse: stop reading
                }
                if done {
                    break;
                }
            }
            Ok(lines.utf8_error.take().map_or(Ok(()), Err))
        });
        for batch in recv {
            let parsed: Vec<Result<Option<aiperf::Parsed>, FormatError>> = batch
                .par_iter()
                .map(|(n, l)| aiperf::parse_line(*n, l))
                .collect();
            for p in parsed {
                if let Some(p) = p.map_err(|e| invalid(path, e))? {
                    out.push(p);
                }
            }
        }
        lines
            .join()
            .map_err(|_| IngestError::invalid(path, "the reader thread panicked"))?
            .map_err(io(path))
    })?;
    if let Err(msg) = read {
        return Err(IngestError::Invalid {
            path: path.to_owned(),
            message: msg,
        });
    }
    if out.is_empty() {
        return Err(IngestError::Invalid {
            path: path.to_owned(),
            message: "no AIPerf records (expected one JSON object a line)".into(),
        });
    }
    Ok(out)
}
