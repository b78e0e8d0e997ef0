//! Reading a stored run back: its records in file order, its contexts,
//! dispatches and attached spans, as the analysis takes them.
#[allow(unused_imports)]
use super::*;

/// Reads every row of `spec` for the run: (seq, rebuilt raw record, row columns).
pub(super) fn load_table(
    conn: &Connection,
    spec: &TableSpec,
    run_id: &str,
    mut each: impl FnMut(i64, &[Sql], i64, Option<&str>, &Sql),
) -> Result<(), DbError> {
    let mut stmt = conn
        .prepare_cached(spec.load.sql)
        .map_err(DbError::query(&spec.load))?;
    let n = spec.fields.len();
    let mut rows = stmt
        .query(rusqlite::named_params! {":run_id": run_id})
        .map_err(DbError::query(&spec.load))?;
    let mut fields: Vec<Sql> = Vec::with_capacity(n);
    while let Some(row) = rows.next().map_err(DbError::query(&spec.load))? {
        let seq: i64 = row.get(0).map_err(DbError::query(&spec.load))?;
        let sv: Sql = row.get(1).map_err(DbError::query(&spec.load))?;
        fields.clear();
        for i in 0..n {
            fields.push(row.get(2 + i).map_err(DbError::query(&spec.load))?);
        }
        let nulls: i64 = row.get(2 + n).map_err(DbError::query(&spec.load))?;
        let extra: Option<String> = row.get(3 + n).map_err(DbError::query(&spec.load))?;
        each(seq, &fields, nulls, extra.as_deref(), &sv);
    }
    Ok(())
}

/// A record with its position in the file.
pub(super) type Positioned = (i64, Map<String, Value>);

/// The bodies of a run's untyped records (`q` selects `seq, body`), parsed.
pub(super) fn load_bodies(
    conn: &Connection,
    q: &Query,
    run_id: &str,
) -> Result<Vec<Positioned>, DbError> {
    let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })
        .map_err(DbError::query(q))?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, body) = row.map_err(DbError::query(q))?;
        match crate::py::json::parse(&body) {
            Ok(Value::Object(m)) => out.push((seq, m)),
            Ok(_) => return Err(DbError::Other(format!("records row {seq}: not an object"))),
            Err(e) => return Err(DbError::Other(format!("records row {seq}: {e}"))),
        }
    }
    Ok(out)
}

/// A run's `infer.context` definitions: (seq, context id, context), in file order.
pub(super) fn load_contexts(
    conn: &Connection,
    run_id: &str,
) -> Result<Vec<(i64, String, Value)>, DbError> {
    let q = &sql::LOAD_CONTEXTS;
    let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .map_err(DbError::query(q))?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, id, ctx) = row.map_err(DbError::query(q))?;
        let ctx: Value =
            serde_json::from_str(&ctx).map_err(|e| DbError::Other(format!("context {id}: {e}")))?;
        out.push((seq, id, ctx));
    }
    Ok(out)
}

/// The raw records of a run, every table merged back into file order, with the
/// context definitions (for export). Each item: (seq, raw record).
pub fn raw_records(conn: &Connection, run_id: &str) -> Result<Vec<(i64, Value)>, DbError> {
    raw_records_except(conn, run_id, &[])
}

/// [`raw_records`] without the typed tables of the event types in `skip`
/// (their records kept in the generic table, if any, still come): a caller
/// that drops the per-request records need not rebuild thousands of them.
pub fn raw_records_except(
    conn: &Connection,
    run_id: &str,
    skip: &[&str],
) -> Result<Vec<(i64, Value)>, DbError> {
    let mut out: Vec<(i64, Value)> = Vec::new();
    for spec in TABLES.iter().filter(|t| !skip.contains(&t.event_type)) {
        load_table(conn, spec, run_id, |seq, fields, nulls, extra, sv| {
            out.push((
                seq,
                Value::Object(tables::rebuild(spec, sv, fields, nulls, extra)),
            ));
        })?;
    }
    for (seq, body) in load_bodies(conn, &sql::LOAD_RECORDS, run_id)? {
        out.push((seq, Value::Object(body)));
    }
    for (seq, id, ctx) in load_contexts(conn, run_id)? {
        out.push((
            seq,
            serde_json::json!({"schema_version": 4, "event_type": "infer.context", "context_id": id, "context": ctx}),
        ));
    }
    out.sort_by_key(|(seq, _)| *seq);
    Ok(out)
}

/// Loads a run for analysis: typed requests and samples, every other record decoded.
pub fn load_run(conn: &Connection, run_id: &str) -> Result<RunData, DbError> {
    load_run_of(conn, run_id, Rows::Stored)
}

/// [`load_run`] from a scratch database (`infer analyze`), whose ingest
/// packed the request rows without storing them (`Writer::report_only`).
pub fn load_run_packed(conn: &Connection, run_id: &str) -> Result<RunData, DbError> {
    load_run_of(conn, run_id, Rows::PackOnly)
}

fn load_run_of(conn: &Connection, run_id: &str, rows: Rows) -> Result<RunData, DbError> {
    let mut contexts = Contexts::default();
    for (_, id, ctx) in load_contexts(conn, run_id)? {
        contexts.insert(id, ctx);
    }
    let mut data = RunData {
        run_id: run_id.to_owned(),
        ..Default::default()
    };
    for spec in TABLES {
        match spec.table {
            "requests" => load_requests(conn, spec, run_id, &mut data.requests, rows)?,
            "system_samples" => load_table(conn, spec, run_id, |seq, fields, _nulls, extra, _| {
                let mut s = SystemSample {
                    seq,
                    ..Default::default()
                };
                for ((key, _), v) in spec.fields.iter().zip(fields) {
                    if let Sql::Integer(i) = v {
                        match *key {
                            "timestamp_ns" => s.timestamp_ns = Some(*i),
                            "device_used_bytes" => s.device_used_bytes = Some(*i),
                            "process_rss_bytes" => s.process_rss_bytes = Some(*i),
                            _ => {}
                        }
                    }
                }
                if let Some(Value::Object(extra)) =
                    extra.and_then(|e| crate::py::json::parse(e).ok())
                {
                    for (k, v) in &extra {
                        s.apply(k, v);
                    }
                }
                data.samples.push(s);
            })?,
            // One of each per request, and never read by the analysis but
            // for the execution block's map (load_dispatches).
            "dispatches" | "first_contents" => {}
            _ => load_table(conn, spec, run_id, |seq, fields, nulls, extra, sv| {
                let raw = tables::rebuild(spec, sv, fields, nulls, extra);
                data.records
                    .push((seq, Value::Object(contexts.expand(&raw))));
            })?,
        }
    }
    for (seq, body) in load_bodies(conn, &sql::LOAD_RECORDS_ANALYSIS, run_id)? {
        data.records
            .push((seq, Value::Object(contexts.expand(&body))));
    }
    // Sequence numbers are unique within a run, so an unstable sort gives the
    // same order; a stable one would allocate half the requests again as
    // scratch (75 MB at 300,000 requests). The requests arrive in order anyway.
    crate::db::execution::load(conn, run_id, &contexts, &mut data)?;
    if !data.execution_facts.is_empty() {
        data.execution_contexts = contexts
            .entries()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
    }
    data.records.sort_unstable_by_key(|(seq, _)| *seq);
    if crate::analysis::execution::needs_dispatches(&data) {
        data.dispatches = load_dispatches(conn, run_id)?;
    }
    // The requests come in order (load_requests).
    data.samples.sort_unstable_by_key(|s| s.seq);
    Ok(data)
}

/// A run's `infer.dispatch` records, each cut to the fields the execution
/// block reads (`event_type`, `request_id`, `case_id`, `x_request_id`):
/// there is one per request, and only this map needs them.
pub fn load_dispatches(conn: &Connection, run_id: &str) -> Result<Vec<(i64, Value)>, DbError> {
    let spec =
        tables::spec("dispatches").ok_or_else(|| DbError::Other("no dispatches table".into()))?;
    let mut out = Vec::new();
    load_table(conn, spec, run_id, |seq, fields, nulls, extra, sv| {
        let mut m = tables::rebuild(spec, sv, fields, nulls, extra);
        m.retain(|k, _| {
            matches!(
                k.as_str(),
                "event_type" | "request_id" | "case_id" | "x_request_id"
            )
        });
        out.push((seq, Value::Object(m)));
    })?;
    Ok(out)
}

/// Spans from span files attached to the run (`ingest --run RUN spans.jsonl`),
/// as stamped span records, files in attach order.
pub fn attached_spans(conn: &Connection, run_id: &str) -> Result<Vec<Value>, DbError> {
    let q = &sql::LOAD_ATTACHED_SPANS;
    let spec =
        tables::spec("vllm_spans").ok_or_else(|| DbError::Other("no vllm_spans table".into()))?;
    let mut stmt = conn.prepare_cached(q.sql).map_err(DbError::query(q))?;
    let n = spec.fields.len();
    let mut rows = stmt
        .query(rusqlite::named_params! {":run_id": run_id})
        .map_err(DbError::query(q))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(DbError::query(q))? {
        let sv: Sql = row.get(1).map_err(DbError::query(q))?;
        let mut fields = Vec::with_capacity(n);
        for i in 0..n {
            fields.push(row.get::<_, Sql>(2 + i).map_err(DbError::query(q))?);
        }
        let nulls: i64 = row.get(2 + n).map_err(DbError::query(q))?;
        let extra: Option<String> = row.get(3 + n).map_err(DbError::query(q))?;
        out.push(Value::Object(tables::rebuild(
            spec,
            &sv,
            &fields,
            nulls,
            extra.as_deref(),
        )));
    }
    Ok(out)
}
