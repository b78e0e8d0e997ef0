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

/// How often the pages written so far are handed to the disk.
const PERIOD: Duration = Duration::from_millis(50);

/// The write-back thread of an ingest's files; stops when dropped, and
/// closes its descriptors then.
pub struct Writeback {
    stop: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Writeback {
    /// Starts writing the dirty pages of `paths` back every [`PERIOD`]; a
    /// file that does not exist yet (a WAL file before the first write) is
    /// looked for again each time. None when the thread cannot start (the
    /// ingest then runs as without it).
    pub fn start(paths: Vec<PathBuf>) -> Option<Self> {
        let (stop, wait) = sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("stormlog-writeback".into())
            .spawn(move || {
                let mut files: Vec<Option<File>> = paths.iter().map(|_| None).collect();
                // Until told to stop (or the sender is gone): a failed sync
                // is only a missed head start, the commit syncs anyway.
                while let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(PERIOD) {
                    for (file, path) in files.iter_mut().zip(&paths) {
                        if file.is_none() {
                            *file = File::open(path).ok();
                        }
                        if let Some(f) = file {
                            let _ = f.sync_data();
                        }
                    }
                }
                drop(files);
            })
            .ok()?;
        Some(Writeback {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Writeback {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.try_send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
