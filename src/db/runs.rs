//! Runs as a whole: listing, resolving a name the user typed, exporting.
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::DbError;
use crate::py::json as pyjson;
use crate::sql;

/// One line of `stormlog runs`.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub run_id: String,
    pub started_at_ns: Option<i64>,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    pub artifact_name: Option<String>,
    pub cases: i64,
    pub requests: i64,
    pub failures: i64,
    pub telemetry_files: i64,
    pub telemetry_samples: i64,
    /// An imported run's clock (`unix_epoch`, `monotonic`); None: profiled.
    pub clock_kind: Option<String>,
    /// A monotonic import's own timestamp as the tool wrote it, with what it is.
    pub wall_time: Option<String>,
}

impl RunRow {
    /// Whether the run's instants are on a monotonic clock (no date in them).
    pub fn monotonic(&self) -> bool {
        self.clock_kind.as_deref() == Some("monotonic")
    }

    /// The start as `stormlog runs` shows it: UTC, or for a monotonic-clock
    /// import without a UTC start what is known instead.
    pub fn started_shown(&self) -> String {
        match (self.started_at_ns, self.monotonic(), &self.wall_time) {
            (Some(ns), _, _) => crate::util::iso8601_utc_signed(ns.div_euclid(1_000_000_000)),
            (None, true, Some(w)) => format!("unknown (monotonic clock; {w})"),
            (None, true, None) => "unknown (monotonic clock)".into(),
            (None, false, _) => "-".into(),
        }
    }
}

pub fn list(conn: &Connection) -> Result<Vec<RunRow>, DbError> {
    let q = &sql::RUNS_LIST;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
                started_at_ns: r.get(1)?,
                model: r.get(2)?,
                endpoint: r.get(3)?,
                artifact_name: r.get(4)?,
                cases: r.get(5)?,
                requests: r.get(6)?,
                failures: r.get(7)?,
                telemetry_files: r.get(8)?,
                telemetry_samples: r.get(9)?,
                clock_kind: r.get(10)?,
                wall_time: r.get(11)?,
            })
        })
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// Every stored run id, in listing order.
pub fn ids(conn: &Connection) -> Result<Vec<String>, DbError> {
    let q = &sql::RUNS_IDS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map([], |r| r.get(0))
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// A stored run and the experiment labels it recorded (`config.labels` of its
/// first session record; `Value::Null` when it recorded none).
#[derive(Debug, Clone, PartialEq)]
pub struct LabeledRun {
    pub run_id: String,
    pub started_at_ns: Option<i64>,
    pub labels: Value,
}

/// Every stored run with its labels, in listing order.
pub fn labeled(conn: &Connection) -> Result<Vec<LabeledRun>, DbError> {
    let q = &sql::RUNS_LABELS;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map([], |r| {
            let labels: Option<String> = r.get(2)?;
            Ok(LabeledRun {
                run_id: r.get(0)?,
                started_at_ns: r.get(1)?,
                // The query hands out an object's JSON text only.
                labels: labels
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or(Value::Null),
            })
        })
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// The stored run a user named: its exact id, or the one run whose id starts with it.
pub fn resolve(conn: &Connection, name: &str) -> Result<String, DbError> {
    let q = &sql::RUNS_FIND;
    let exact: Option<String> = conn
        .query_row(q.sql, rusqlite::named_params! {":run_id": name}, |r| {
            r.get(0)
        })
        .optional()
        .map_err(DbError::query(q))?;
    if let Some(id) = exact {
        return Ok(id);
    }
    // The ids alone: the listing's counts walk every request of every run.
    let all = ids(conn)?;
    let matches: Vec<&String> = all.iter().filter(|id| id.starts_with(name)).collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(DbError::UnknownRun {
            name: name.to_owned(),
            suggestions: closest(name, all.iter().map(String::as_str)),
        }),
        many => Err(DbError::AmbiguousRun {
            name: name.to_owned(),
            matches: many.iter().map(|id| (*id).clone()).collect(),
        }),
    }
}

/// The (at most three) run ids nearest to `name` by edit distance, nearest
/// first, among those close enough to be a typo of it: at most a third of
/// the longer name's characters apart (and at least one, for short names).
pub fn closest<'a>(name: &str, ids: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = ids
        .map(|id| (edit_distance(name, id), id))
        .filter(|&(d, id)| d <= (name.chars().count().max(id.chars().count()) / 3).max(1))
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, id)| id.to_owned())
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The run whose whole id is `name`: a prefix that happens to be unique
/// today is too easy a way to delete the wrong run, so it is only suggested.
pub fn resolve_whole(conn: &Connection, name: &str) -> Result<String, DbError> {
    let id = resolve(conn, name)?;
    if id != name {
        return Err(DbError::UnknownRun {
            name: name.to_owned(),
            suggestions: vec![id],
        });
    }
    Ok(id)
}

/// Deletes the named runs (each resolved as `resolve` does) and everything
/// attached to them, in one transaction: all go, or none (an unknown name
/// refuses the lot). Answers the run ids deleted, in the order given.
pub fn delete(conn: &mut Connection, names: &[String]) -> Result<Vec<String>, DbError> {
    let q = &sql::RUNS_DELETE;
    let tx = conn.transaction().map_err(DbError::query(q))?;
    let mut ids: Vec<String> = Vec::new();
    for name in names {
        let id = resolve_whole(&tx, name)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    for id in &ids {
        tx.execute(q.sql, rusqlite::named_params! {":run_id": id})
            .map_err(DbError::query(q))?;
    }
    tx.commit().map_err(DbError::query(q))?;
    Ok(ids)
}

/// The run's artifact as JSONL: every record back in file order, compact transport kept.
pub fn export_artifact(conn: &Connection, run_id: &str) -> Result<String, DbError> {
    let mut out = String::new();
    for (_, rec) in super::store::raw_records(conn, run_id)? {
        out.push_str(&pyjson::dumps_compact(&rec));
        out.push('\n');
    }
    Ok(out)
}

/// The server samples attached to a run, files in attach order and lines in
/// order, each with the JSON of the keys it kept aside (`extra`).
pub fn telemetry_samples(
    conn: &Connection,
    run_id: &str,
) -> Result<Vec<(crate::join::ServerSample, Option<String>)>, DbError> {
    let q = &sql::TELEMETRY_LOAD_SAMPLES;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            let sample = crate::join::ServerSample {
                run_id: r.get(2)?,
                observed_at_ns: r.get(3)?,
                metric: r.get(4)?,
                value_bytes: r.get(5)?,
                state: r.get(6)?,
                source: r.get(7)?,
                interval_ms: r.get(8)?,
                detail: r.get(9)?,
                provenance: r.get(10)?,
                identity: crate::join::Identity {
                    host: r.get(12)?,
                    pid: r.get(13)?,
                    process_start_ns: r.get(14)?,
                    device_uuid: r.get(15)?,
                    gpu_instance_id: r.get(16)?,
                    replica_id: r.get(17)?,
                    rank: r.get(18)?,
                    boot_id: r.get(19)?,
                    group_id: r.get(20)?,
                    world_size: r.get(21)?,
                },
            };
            Ok((sample, r.get::<_, Option<String>>(11)?))
        })
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// The run's server telemetry as JSONL, files in attach order: each sample as
/// the collector writes it (`model::telemetry::write_record`), with the keys
/// it kept aside.
pub fn export_telemetry(conn: &Connection, run_id: &str) -> Result<String, DbError> {
    let mut out = String::new();
    // Consecutive samples mostly share a run ID and a server: render that
    // part of their records once.
    type Head = (
        String,
        crate::join::Identity,
        crate::model::telemetry::RecordHead,
    );
    let mut head: Option<Head> = None;
    for (sample, extra) in telemetry_samples(conn, run_id)? {
        let same = |(run, id, _): &Head| *run == sample.run_id && *id == sample.identity;
        if !head.as_ref().is_some_and(same) {
            head = Some((
                sample.run_id.clone(),
                sample.identity.clone(),
                sample.head(),
            ));
        }
        let extra = match extra.map(|e| pyjson::parse(&e)) {
            Some(Ok(Value::Object(extra))) => Some(extra),
            _ => None,
        };
        if let Some((_, _, head)) = &head {
            sample.write_record(head, extra.as_ref(), &mut out);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod closest_tests {
    use super::*;

    #[test]
    fn a_typo_finds_the_run_and_a_stranger_finds_none() {
        let ids = ["telemetry_joined", "fixed_rate", "fixed_rate_b"];
        assert_eq!(
            closest("telemetry_joind", ids.iter().copied()),
            ["telemetry_joined"]
        );
        assert_eq!(
            closest("fixed_rat", ids.iter().copied()),
            ["fixed_rate", "fixed_rate_b"]
        );
        assert!(closest("zzz", ids.iter().copied()).is_empty());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn a_name_resolves_exactly_then_by_a_unique_prefix() {
        let conn = crate::db::open_memory().unwrap();
        for id in ["fixed_rate", "fixed_rate_b", "telemetry_joined"] {
            conn.execute(
                "INSERT INTO runs (run_id, ingested_at) VALUES (?1, 'now')",
                [id],
            )
            .unwrap();
        }
        // An exact id wins over the longer ids it is a prefix of.
        assert_eq!(resolve(&conn, "fixed_rate").unwrap(), "fixed_rate");
        assert_eq!(resolve(&conn, "tele").unwrap(), "telemetry_joined");
        match resolve(&conn, "fixed") {
            Err(DbError::AmbiguousRun { matches, .. }) => {
                assert_eq!(matches, ["fixed_rate", "fixed_rate_b"]);
            }
            other => panic!("{other:?}"),
        }
        match resolve(&conn, "fixed_rtae") {
            // Nearest first.
            Err(DbError::UnknownRun { suggestions, .. }) => {
                assert_eq!(suggestions, ["fixed_rate", "fixed_rate_b"]);
            }
            other => panic!("{other:?}"),
        }
        // Whole ids only where a prefix would be a guess (`runs delete`).
        assert!(resolve_whole(&conn, "tele").is_err());
    }
}
