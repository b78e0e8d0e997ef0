//! Background write-back of a database an ingest creates.
//!
//! A new database is written in rollback-journal mode ([`super::open_for_ingest`]),
//! where a commit syncs the whole file: every page the transaction wrote sat
//! dirty in the page cache until then, and the commit waited for all of them
//! to reach the disk (the one `fsync` of a 100,000-request vLLM import took
//! 0.09 s of its 0.74 s, with both cores idle). A thread of this module asks
//! the kernel to write the file's pages out every [`PERIOD`] meanwhile, so
//! the disk works while the cores do, and the commit's sync finds little
//! left to write. Nothing changes in what is durable when: the commit still
//! syncs, in SQLite's order; an early write-back only moves work earlier.
//!
//! The thread holds its own descriptor of the file. POSIX drops every
//! advisory lock a process holds on a file when any descriptor of it is
//! closed, so that descriptor must outlive the SQLite connection's locks:
//! [`Writeback`] is dropped after the connection is closed (`ops::ingest`).
use std::fs::File;
use std::path::Path;
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the pages written so far are handed to the disk.
const PERIOD: Duration = Duration::from_millis(50);

/// The write-back thread of one database file; stops when dropped, and
/// closes its descriptor then.
pub struct Writeback {
    stop: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Writeback {
    /// Starts writing `path`'s dirty pages back every [`PERIOD`]; None when
    /// the file cannot be opened or the thread not started (the ingest then
    /// runs as without it).
    pub fn start(path: &Path) -> Option<Self> {
        let file = File::open(path).ok()?;
        let (stop, wait) = sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("stormlog-writeback".into())
            .spawn(move || {
                // Until told to stop (or the sender is gone): a failed sync
                // is only a missed head start, the commit syncs anyway.
                while let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(PERIOD) {
                    let _ = file.sync_data();
                }
                drop(file);
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
    fn writes_back_until_dropped_and_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        std::fs::write(&path, b"pages").unwrap();
        let w = Writeback::start(&path).expect("a thread for an existing file");
        std::thread::sleep(PERIOD * 3);
        drop(w); // joins: the thread saw the stop
        assert_eq!(std::fs::read(&path).unwrap(), b"pages");
        assert!(Writeback::start(&dir.path().join("missing.db")).is_none());
    }
}
