//! The cache `stormlog history` keeps of each run (`history_entries`,
//! migration 0006): read every run's stamp and kept entry, write new ones.
use rusqlite::{named_params, Connection};

use super::DbError;
use crate::sql;

/// One stored run as `history` sees it first.
#[derive(Debug, Clone)]
pub struct EntryRow {
    pub run_id: String,
    /// What the run's entry depends on in the database (artifact, attached files).
    pub stamp: String,
    /// The kept entry's stamp and JSON, if one was kept under this policy.
    pub cached: Option<(String, String)>,
}

/// Every run, with its kept entry under `policy_key`, by run id.
pub fn entries(conn: &Connection, policy_key: &str) -> Result<Vec<EntryRow>, DbError> {
    let q = &sql::HISTORY_ENTRIES;
    let mut stmt = conn.prepare(q.sql).map_err(DbError::query(q))?;
    let rows = stmt
        .query_map(named_params! {":policy_key": policy_key}, |r| {
            let stamp: Option<String> = r.get(2)?;
            let entry: Option<String> = r.get(3)?;
            Ok(EntryRow {
                run_id: r.get(0)?,
                stamp: r.get(1)?,
                cached: stamp.zip(entry),
            })
        })
        .map_err(DbError::query(q))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(DbError::query(q))
}

/// Keeps entries `(run_id, stamp, entry JSON)` under `policy_key`, in one transaction.
pub fn store_entries(
    conn: &Connection,
    policy_key: &str,
    entries: &[(String, String, String)],
) -> Result<(), DbError> {
    if entries.is_empty() {
        return Ok(());
    }
    let q = &sql::HISTORY_STORE_ENTRY;
    let tx = conn.unchecked_transaction().map_err(DbError::query(q))?;
    {
        let mut stmt = tx.prepare(q.sql).map_err(DbError::query(q))?;
        for (run_id, stamp, entry) in entries {
            stmt.execute(named_params! {
                ":run_id": run_id,
                ":policy_key": policy_key,
                ":stamp": stamp,
                ":entry": entry,
            })
            .map_err(DbError::query(q))?;
        }
    }
    tx.commit().map_err(DbError::query(q))
}
