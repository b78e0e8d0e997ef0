//! `report --all --slo`: many runs loaded and judged at once. Each run is
//! read and judged alone, so a few workers, each on a read connection of its
//! own, take the runs one after another; the judgements come back in the
//! runs' order, whatever order the workers finish them in. Memory is that of
//! one run per worker.
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::Value;

use crate::db::{self, DbError};
use crate::model::RunData;

/// At most this many workers: past it the disk and the judging's own
/// threads (rayon) gain nothing more.
const MAX_WORKERS: usize = 8;

/// What one worker judged: each run's position in the ids, and its outcome.
type Judged<T, E> = Vec<(usize, Result<T, E>)>;

/// Loads each of `ids` (its data and attached spans) and hands it to
/// `judge`, on up to one worker per core; returns each run's outcome in the
/// order of `ids`. A load that fails is that run's error, as a judgement
/// that fails is; only a connection that cannot be opened fails the whole.
pub fn load_and_judge<T, E>(
    db_path: &Path,
    ids: &[String],
    judge: impl Fn(&RunData, &[Value]) -> Result<T, E> + Sync,
) -> Result<Vec<Result<T, E>>, E>
where
    T: Send,
    E: Send + From<DbError>,
{
    each_run(db_path, ids, |conn, id| {
        db::store::load_run(conn, id)
            .and_then(|data| Ok((data, db::store::attached_spans(conn, id)?)))
            .map_err(E::from)
            .and_then(|(data, spans)| judge(&data, &spans))
    })
}

/// Hands each of `ids` to `each` with a read connection, on up to one
/// worker per core (each on a connection of its own); returns each run's
/// outcome in the order of `ids`. Only a connection that cannot be opened
/// fails the whole.
pub fn each_run<T, E>(
    db_path: &Path,
    ids: &[String],
    each: impl Fn(&db::Connection, &str) -> Result<T, E> + Sync,
) -> Result<Vec<Result<T, E>>, E>
where
    T: Send,
    E: Send + From<DbError>,
{
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_WORKERS)
        .min(ids.len().max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let each = &each;
    let (next, stop) = (&next, &stop);
    let done: Vec<Result<Judged<T, E>, E>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(move || -> Result<Judged<T, E>, E> {
                    let conn = match db::read::open_for_reading(db_path) {
                        Ok(c) => c,
                        Err(e) => {
                            stop.store(true, Ordering::Relaxed);
                            return Err(e.into());
                        }
                    };
                    let mut out = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(id) = ids.get(i) else {
                            break;
                        };
                        out.push((i, each(&conn, id)));
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(E::from(DbError::Other("a judging thread panicked".into())))
                })
            })
            .collect()
    });
    let mut all = Vec::with_capacity(ids.len());
    for part in done {
        all.extend(part?);
    }
    all.sort_by_key(|(i, _)| *i);
    Ok(all.into_iter().map(|(_, r)| r).collect())
}
