//! Background write-back of the files an ingest writes.
//!
//! A new database is written in rollback-journal mode ([`super::open_for_ingest`]),
//! where a commit syncs the whole file: every page the transaction wrote sat
//! dirty in the page cache until then, and the commit waited for all of them
//! to reach the disk (the one `fsync` of a 100,000-request vLLM import took
//! 0.09 s of its 0.74 s, with both cores idle). A WAL database's checkpoints
//! sync the log and then the file the same way (0.43 s of syncs for 100
//! project artifacts ingested into a database of 100 runs). A thread of this
//! module asks the kernel to write the files' pages out every [`PERIOD`]
//! meanwhile, so the disk works while the cores do, and the ingest's own
//! syncs find little left to write (0.008 s and 0.09 s). Nothing changes in
//! what is durable when: SQLite still syncs, in its order; an early
//! write-back only moves work earlier.
//!
//! The thread holds its own descriptors of the files. POSIX drops every
//! advisory lock a process holds on a file when any descriptor of it is
//! closed, so the database's descriptor must outlive the SQLite
//! connection's locks: [`Writeback`] is dropped after the connection
//! (`ops::ingest::run` declares it first).
use std::fs::File;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the pages written so far are handed to the disk, and the
/// log's committed pages copied into the database.
const PERIOD: Duration = Duration::from_millis(50);

/// A thread that does one thing every `period` until dropped; its drop
/// stops it and waits for it, so what the work holds (descriptors, a
/// connection) is let go by then.
struct Every {
    stop: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Every {
    /// None when the thread cannot start.
    fn start(
        name: &str,
        period: Duration,
        mut work: impl FnMut() + Send + 'static,
    ) -> Option<Every> {
        let (stop, wait) = sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                // Until told to stop (or the sender is gone).
                while let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(period) {
                    work();
                }
            })
            .ok()?;
        Some(Every {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Every {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.try_send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The write-back thread of an ingest's files; stops when dropped, and
/// closes its descriptors then.
pub struct Writeback {
    _thread: Every,
}

impl Writeback {
    /// Starts writing the dirty pages of `paths` back every [`PERIOD`]; a
    /// file that does not exist yet (a WAL file before the first write) is
    /// looked for again each time. None when the thread cannot start (the
    /// ingest then runs as without it).
    pub fn start(paths: Vec<PathBuf>) -> Option<Self> {
        let mut files: Vec<Option<File>> = paths.iter().map(|_| None).collect();
        let every = Every::start("stormlog-writeback", PERIOD, move || {
            // A failed sync is only a missed head start: the commit syncs
            // anyway.
            for (file, path) in files.iter_mut().zip(&paths) {
                if file.is_none() {
                    *file = File::open(path).ok();
                }
                if let Some(f) = file {
                    let _ = f.sync_data();
                }
            }
        })?;
        Some(Writeback { _thread: every })
    }
}

/// Background checkpoints of a WAL database while an ingest writes it.
///
/// SQLite checkpoints on the connection that commits: once the log passes
/// its 1,000 pages, the commit that passed it reads every page of the log
/// back and writes it into the database before it returns. An ingest of 100
/// project artifacts into a WAL database wrote 724 MB and read 279 MB on its
/// writer thread for 250 MB of new pages, about half of it checkpointing,
/// while the other core waited. A thread of this module runs a PASSIVE
/// checkpoint on a connection of its own every [`PERIOD`]:
/// it copies what is committed while the writer goes on (a PASSIVE
/// checkpoint takes no lock a writer or reader waits for), so the writer's
/// own checkpoints find little left to copy. What is durable when does not
/// change: a checkpoint syncs the log before it writes into the database
/// and the database after, whichever connection runs it. The writer's
/// checkpoints still run, so the log is still restarted from its start
/// between files. The connection closes when the checkpointer is dropped.
pub struct Checkpointer {
    _thread: Every,
}

impl Checkpointer {
    /// Starts checkpointing the WAL database at `path`. None when its
    /// connection or thread cannot start (the writer then checkpoints alone,
    /// as without it).
    pub fn start(path: &std::path::Path) -> Option<Self> {
        use rusqlite::OpenFlags;
        let conn = rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .ok()?;
        // As the writer: a checkpoint syncs the log first and the database
        // after.
        conn.pragma_update(None, "synchronous", "NORMAL").ok()?;
        let every = Every::start("stormlog-checkpoint", PERIOD, move || {
            // Busy (the writer's own checkpoint) or failed: the writer
            // checkpoints anyway; try again next turn.
            let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        })?;
        Some(Checkpointer { _thread: every })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// What a writer commits (and, with its own checkpoints off, leaves in
    /// the log) reaches the database file by the checkpointer's turns.
    #[test]
    fn a_checkpointer_copies_committed_pages_into_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let w = rusqlite::Connection::open(&path).unwrap();
        let mode: String = w
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        w.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        w.execute_batch("CREATE TABLE t(x BLOB)").unwrap();
        w.execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
             INSERT INTO t SELECT randomblob(1000) FROM n",
        )
        .unwrap();
        let size = || std::fs::metadata(&path).unwrap().len();
        let before = size();
        std::thread::sleep(PERIOD * 2);
        assert_eq!(size(), before, "nothing checkpoints without it");
        let c = Checkpointer::start(&path).expect("a checkpointer");
        let started = std::time::Instant::now();
        while size() < before + 2_000_000 && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(PERIOD);
        }
        drop(c);
        assert!(size() >= before + 2_000_000, "{} -> {}", before, size());
        // The writer goes on, and the rows read back from the file alone.
        w.execute_batch("INSERT INTO t VALUES (x'00')").unwrap();
        drop(w);
        let r = rusqlite::Connection::open(&path).unwrap();
        let n: i64 = r
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 2001);
    }

    #[test]
    fn writes_back_until_dropped_and_leaves_the_files_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        let later = dir.path().join("x.db-wal");
        std::fs::write(&path, b"pages").unwrap();
        let w = Writeback::start(vec![path.clone(), later.clone()]).expect("a thread");
        std::thread::sleep(PERIOD * 2);
        std::fs::write(&later, b"frames").unwrap(); // found at a later turn
        std::thread::sleep(PERIOD * 2);
        drop(w); // joins: the thread saw the stop
        assert_eq!(std::fs::read(&path).unwrap(), b"pages");
        assert_eq!(std::fs::read(&later).unwrap(), b"frames");
    }
}
