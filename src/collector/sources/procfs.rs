//! The server process as Linux's `/proc` shows it: RSS from `statm`, and the
//! process identity (PID plus start time in clock ticks since boot) from
//! `stat`, which is how a reused PID is told apart (docs/telemetry.md §5.3,
//! docs/telemetry.md §5.7). Reading two small files per poll is cheaper than a general process
//! table refresh and gives the same numbers the reference's psutil reads.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{ProcessReading, ProcessSource};

/// The process named by `--pid` cannot be watched (a usage error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessLookupError {
    #[error("no process with pid {0}")]
    NoSuchProcess(i64),
    #[error("server process is not running")]
    NotRunning,
}

/// The fields of `/proc/{pid}/stat` the collector needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub state: char,
    pub ppid: u32,
    /// Field 22: start time in clock ticks after boot.
    pub start_ticks: u64,
}

/// Parses a `stat` line. `comm` may contain spaces and parentheses, so the
/// fields start after the *last* `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let after = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    if fields.len() < 20 {
        return None;
    }
    Some(ProcStat {
        state: fields[0].chars().next()?,
        ppid: fields[1].parse().ok()?,
        start_ticks: fields[19].parse().ok()?,
    })
}

/// How a `/proc` read failed, in the terms the states need.
#[derive(Debug)]
enum ReadFailure {
    Gone,
    Denied,
    Other(String),
}

fn classify(err: &io::Error) -> ReadFailure {
    // ESRCH comes from a process that exits while its files are read.
    if err.kind() == io::ErrorKind::NotFound || err.raw_os_error() == Some(libc::ESRCH) {
        ReadFailure::Gone
    } else if err.kind() == io::ErrorKind::PermissionDenied {
        ReadFailure::Denied
    } else {
        ReadFailure::Other(err.to_string())
    }
}

/// A process read through a `/proc` tree (normally `/proc`).
#[derive(Debug)]
pub struct ProcfsProcess {
    root: PathBuf,
    pid: u32,
    /// Start time seen at lookup; `None` when the OS denied the read then.
    start_ticks: Option<u64>,
    /// Once gone or replaced, always gone: a PID does not come back.
    ended: bool,
    page_size: u64,
    clock_ticks: u64,
    /// `stat` and `statm` kept open and re-read from offset 0 each poll: at
    /// 100 Hz, opening them by path was most of the collector's CPU time.
    stat_file: std::cell::RefCell<Option<fs::File>>,
    statm_file: std::cell::RefCell<Option<fs::File>>,
}

/// Re-reads a kept-open `/proc` file from its start; on any failure the file
/// is opened again by path, so errors (a process gone, a PID reused) are
/// classified exactly as a fresh read classifies them. The flag says whether
/// the text came through the file kept open since an earlier read: such a
/// file stays bound to the process it was opened for (a reused PID makes it
/// fail, never read another process).
fn read_proc(
    slot: &std::cell::RefCell<Option<fs::File>>,
    path: &Path,
) -> std::io::Result<(String, bool)> {
    if let Some(file) = slot.borrow().as_ref() {
        if let Ok(text) = read_whole(file) {
            return Ok((text, true));
        }
    }
    *slot.borrow_mut() = None;
    // The handle kept is the one read: text and handle are of one process.
    let file = fs::File::open(path)?;
    let text = read_whole(&file)?;
    *slot.borrow_mut() = Some(file);
    Ok((text, false))
}

/// A `/proc` file's text from its start. procfs renders the whole file on
/// each read, so a read that does not fill the buffer got all of it; asking
/// again for the end would render it a second time.
fn read_whole(file: &fs::File) -> std::io::Result<String> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 4096];
    let mut len = 0;
    loop {
        let n = file.read_at(&mut buf[len..], len as u64)?;
        len += n;
        if n == 0 || len < buf.len() {
            break;
        }
        buf.resize(buf.len() * 2, 0);
    }
    buf.truncate(len);
    String::from_utf8(buf).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

impl ProcfsProcess {
    /// Looks the process up as the reference does at start-up (docs/telemetry.md §5.2 step
    /// 3.6): no such PID, or a zombie, refuses it; a denied read accepts it
    /// and leaves the verdict to the first poll.
    pub fn open(pid: i64) -> Result<Self, ProcessLookupError> {
        Self::open_in(Path::new("/proc"), pid)
    }

    fn open_in(root: &Path, pid: i64) -> Result<Self, ProcessLookupError> {
        let pid32 = u32::try_from(pid).map_err(|_| ProcessLookupError::NoSuchProcess(pid))?;
        let (page_size, clock_ticks) = page_size_and_clock_ticks();
        let mut process = Self {
            root: root.to_path_buf(),
            pid: pid32,
            start_ticks: None,
            ended: false,
            page_size,
            clock_ticks,
            stat_file: Default::default(),
            statm_file: Default::default(),
        };
        match process.stat() {
            Ok(stat) if stat.state == 'Z' => Err(ProcessLookupError::NotRunning),
            Ok(stat) => {
                process.start_ticks = Some(stat.start_ticks);
                Ok(process)
            }
            Err(ReadFailure::Denied) => Ok(process),
            Err(ReadFailure::Gone | ReadFailure::Other(_)) => {
                Err(ProcessLookupError::NoSuchProcess(pid))
            }
        }
    }

    fn proc_file(&self, pid: u32, name: &str) -> PathBuf {
        self.root.join(pid.to_string()).join(name)
    }

    fn stat(&self) -> Result<ProcStat, ReadFailure> {
        let path = self.proc_file(self.pid, "stat");
        let (text, _) = read_proc(&self.stat_file, &path).map_err(|e| classify(&e))?;
        parse_stat(&text).ok_or_else(|| ReadFailure::Other(format!("malformed {}", path.display())))
    }

    /// Resident pages times page size, or `None` when the process has no
    /// address space left (`statm` all zeros): it is exiting. The flag: read
    /// through the file kept open for this very process (see [`read_proc`]).
    fn rss(&self) -> Result<(Option<u64>, bool), ReadFailure> {
        let path = self.proc_file(self.pid, "statm");
        let (text, kept) = read_proc(&self.statm_file, &path).map_err(|e| classify(&e))?;
        let malformed = || ReadFailure::Other(format!("malformed {}", path.display()));
        let mut fields = text.split_whitespace().map(str::parse::<u64>);
        let size = fields.next().and_then(Result::ok).ok_or_else(malformed)?;
        let pages = fields.next().and_then(Result::ok).ok_or_else(malformed)?;
        Ok((
            (size > 0).then(|| pages.saturating_mul(self.page_size)),
            kept,
        ))
    }

    fn boot_time_s(&self) -> Option<u64> {
        let text = fs::read_to_string(self.root.join("stat")).ok()?;
        text.lines()
            .find_map(|line| line.strip_prefix("btime"))
            .and_then(|rest| rest.trim().parse().ok())
    }

    fn check_same_process(&mut self) -> Result<(), ProcessReading> {
        let stat = match self.stat() {
            Ok(stat) => stat,
            Err(failure) => return Err(self.failure_reading(failure)),
        };
        match self.start_ticks {
            // A different start time means the PID now names another process.
            Some(start) if start != stat.start_ticks => {
                self.ended = true;
                return Err(ProcessReading::ended());
            }
            Some(_) => {}
            None => self.start_ticks = Some(stat.start_ticks),
        }
        // A zombie has exited; it keeps its PID (and RSS 0) until reaped.
        if stat.state == 'Z' {
            self.ended = true;
            return Err(ProcessReading::ended());
        }
        Ok(())
    }

    fn failure_reading(&mut self, failure: ReadFailure) -> ProcessReading {
        match failure {
            ReadFailure::Gone => {
                self.ended = true;
                ProcessReading::ended()
            }
            ReadFailure::Denied => ProcessReading::access_denied(),
            ReadFailure::Other(text) => {
                ProcessReading::missing(format!("server process memory unavailable: {text}"))
            }
        }
    }
}

impl ProcessSource for ProcfsProcess {
    fn pid(&self) -> u32 {
        self.pid
    }

    /// `trunc((ticks / CLK_TCK + btime) * 1e9)` in doubles, exactly as
    /// psutil's creation time times 10^9 (docs/telemetry.md §5.3), so identities match the
    /// reference's to the nanosecond.
    fn start_ns(&self) -> Result<u64, String> {
        let ticks = self
            .start_ticks
            .ok_or_else(|| format!("access denied reading the start time of pid {}", self.pid))?;
        let btime = self
            .boot_time_s()
            .ok_or_else(|| format!("line 'btime' not found in {}/stat", self.root.display()))?;
        let start_s = ticks as f64 / self.clock_ticks as f64 + btime as f64;
        Ok((start_s * 1e9) as u64)
    }

    /// Reads `statm` first and confirms the process with `stat` after, so
    /// a value is only reported for a process that was still the same one,
    /// alive, once it was read. (psutil checks first and reads second, and
    /// can report a valid RSS of 0 for a process caught mid-exit.)
    ///
    /// A value read through the `statm` file kept open since a poll that
    /// confirmed the process needs no second confirmation: that file can only
    /// read the process it was opened for, and an exited one reads all zeros.
    /// At 100 Hz this halves the kernel's work per sample.
    fn read_rss(&mut self) -> ProcessReading {
        if self.ended {
            return ProcessReading::ended();
        }
        let rss = self.rss();
        let confirmed = matches!(rss, Ok((Some(_), true))) && self.start_ticks.is_some();
        if !confirmed {
            if let Err(reading) = self.check_same_process() {
                return reading;
            }
        }
        match rss.map(|(bytes, _)| bytes) {
            Ok(Some(bytes)) => ProcessReading::valid(bytes),
            Ok(None) => {
                self.ended = true;
                ProcessReading::ended()
            }
            Err(failure) => self.failure_reading(failure),
        }
    }

    fn descendants(&mut self) -> BTreeSet<u32> {
        let Ok(entries) = fs::read_dir(&self.root) else {
            return BTreeSet::new();
        };
        let mut children: BTreeMap<u32, Vec<(u32, u64)>> = BTreeMap::new();
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // Processes vanish while the table is read; skip them.
            let Ok(text) = fs::read_to_string(self.proc_file(pid, "stat")) else {
                continue;
            };
            if let Some(stat) = parse_stat(&text) {
                children
                    .entry(stat.ppid)
                    .or_default()
                    .push((pid, stat.start_ticks));
            }
        }
        let mut found = BTreeSet::new();
        let mut queue = VecDeque::from([(self.pid, self.start_ticks.unwrap_or(0))]);
        while let Some((parent, parent_start)) = queue.pop_front() {
            for &(child, child_start) in children.get(&parent).map_or(&[][..], Vec::as_slice) {
                // A "child" older than its parent is an orphan whose parent's
                // PID was reused; psutil drops those too.
                if child_start >= parent_start && found.insert(child) {
                    queue.push_back((child, child_start));
                }
            }
        }
        found
    }
}

/// Page size and `CLK_TCK`, from the auxiliary vector the kernel gave this
/// process (what `sysconf` reads), so no `unsafe` libc call is needed.
/// Falls back to Linux's usual 4096 and 100.
pub fn page_size_and_clock_ticks() -> (u64, u64) {
    const AT_PAGESZ: u64 = 6;
    const AT_CLKTCK: u64 = 17;
    let mut page_size = 4096;
    let mut clock_ticks = 100;
    if let Ok(bytes) = fs::read("/proc/self/auxv") {
        let word = std::mem::size_of::<usize>();
        let read = |chunk: &[u8]| -> u64 {
            let mut buf = [0u8; 8];
            let n = chunk.len().min(8);
            if cfg!(target_endian = "little") {
                buf[..n].copy_from_slice(&chunk[..n]);
                u64::from_le_bytes(buf)
            } else {
                buf[8 - n..].copy_from_slice(&chunk[..n]);
                u64::from_be_bytes(buf)
            }
        };
        for pair in bytes.chunks_exact(2 * word) {
            let (key, value) = (read(&pair[..word]), read(&pair[word..]));
            match key {
                AT_PAGESZ if value > 0 => page_size = value,
                AT_CLKTCK if value > 0 => clock_ticks = value,
                _ => {}
            }
        }
    }
    (page_size, clock_ticks)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::collector::output::SampleState;

    /// A fake `/proc` with one process, so every state can be produced.
    struct FakeProc {
        dir: tempfile::TempDir,
    }

    impl FakeProc {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            fs::write(
                dir.path().join("stat"),
                "cpu 1 2 3\nbtime 1795960000\nprocesses 9\n",
            )
            .unwrap();
            Self { dir }
        }

        fn process(&self, pid: u32, ppid: u32, state: char, start: u64, rss_pages: u64) {
            let d = self.dir.path().join(pid.to_string());
            fs::create_dir_all(&d).unwrap();
            let rest: Vec<String> = (0..15).map(|i| i.to_string()).collect();
            fs::write(
                d.join("stat"),
                format!(
                    "{pid} (my (odd) comm) {state} {ppid} 1 1 {} {start} 0 0\n",
                    rest.join(" ")
                ),
            )
            .unwrap();
            fs::write(d.join("statm"), format!("1000 {rss_pages} 50 1 0 100 0\n")).unwrap();
        }

        fn remove(&self, pid: u32) {
            fs::remove_dir_all(self.dir.path().join(pid.to_string())).unwrap();
        }

        fn open(&self, pid: i64) -> Result<ProcfsProcess, ProcessLookupError> {
            ProcfsProcess::open_in(self.dir.path(), pid)
        }
    }

    #[test]
    fn parses_stat_after_the_last_parenthesis() {
        let line = "7 (a) b) S 1 7 7 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 36985 1 2";
        let stat = parse_stat(line).unwrap();
        assert_eq!((stat.state, stat.ppid, stat.start_ticks), ('S', 1, 36985));
        assert_eq!(parse_stat("7 (a) S 1"), None);
    }

    #[test]
    fn lookup_refuses_missing_and_zombie_processes() {
        let fake = FakeProc::new();
        fake.process(10, 1, 'Z', 5, 0);
        assert_eq!(
            fake.open(11).unwrap_err().to_string(),
            "no process with pid 11"
        );
        assert_eq!(
            fake.open(10).unwrap_err().to_string(),
            "server process is not running"
        );
        assert_eq!(
            fake.open(1 << 40).unwrap_err(),
            ProcessLookupError::NoSuchProcess(1 << 40)
        );
    }

    #[test]
    fn valid_rss_is_resident_pages_times_page_size() {
        let fake = FakeProc::new();
        fake.process(10, 1, 'S', 5, 447);
        let mut p = fake.open(10).unwrap();
        let (page, _) = page_size_and_clock_ticks();
        assert_eq!(p.read_rss(), ProcessReading::valid(447 * page));
    }

    #[test]
    fn start_ns_uses_double_arithmetic_like_psutil() {
        let fake = FakeProc::new();
        // ticks / 100 + btime = 1795960369.85 -> 1795960369849999872 (docs/telemetry.md §5.3).
        fake.process(10, 1, 'S', 36985, 1);
        let mut p = fake.open(10).unwrap();
        p.clock_ticks = 100;
        assert_eq!(p.start_ns(), Ok(1_795_960_369_849_999_872));
    }

    #[test]
    fn pid_reuse_zombie_and_exit_are_sticky_invalid() {
        let fake = FakeProc::new();
        fake.process(10, 1, 'S', 5, 2);
        let mut p = fake.open(10).unwrap();
        // Same PID, later start: another process now.
        fake.process(10, 1, 'S', 6, 2);
        assert_eq!(p.read_rss(), ProcessReading::ended());
        // Even if the original start time came back, ended stays ended.
        fake.process(10, 1, 'S', 5, 2);
        assert_eq!(p.read_rss(), ProcessReading::ended());

        let mut z = fake.open(10).unwrap();
        fake.process(10, 1, 'Z', 5, 0);
        assert_eq!(z.read_rss().state, SampleState::Invalid);

        fake.process(10, 1, 'S', 5, 2);
        let mut gone = fake.open(10).unwrap();
        fake.remove(10);
        assert_eq!(
            gone.read_rss().detail.as_deref(),
            Some(super::super::PROCESS_ENDED_DETAIL)
        );
    }

    #[test]
    fn a_process_without_address_space_is_ending() {
        let fake = FakeProc::new();
        fake.process(10, 1, 'R', 5, 2);
        let mut p = fake.open(10).unwrap();
        fs::write(fake.dir.path().join("10/statm"), "0 0 0 0 0 0 0\n").unwrap();
        assert_eq!(p.read_rss(), ProcessReading::ended());
    }

    #[test]
    fn unreadable_memory_is_missing_not_invalid() {
        let fake = FakeProc::new();
        fake.process(10, 1, 'S', 5, 2);
        let mut p = fake.open(10).unwrap();
        fs::write(fake.dir.path().join("10/statm"), "garbage").unwrap();
        let reading = p.read_rss();
        assert_eq!(reading.state, SampleState::Missing);
        let detail = reading.detail.unwrap();
        assert!(
            detail.starts_with("server process memory unavailable: malformed "),
            "{detail}"
        );
        // A directory where the file should be is "another error", not an exit.
        fs::remove_file(fake.dir.path().join("10/statm")).unwrap();
        fs::create_dir(fake.dir.path().join("10/statm")).unwrap();
        assert_eq!(p.read_rss().state, SampleState::Missing);
    }

    #[test]
    fn descendants_are_recursive_and_skip_older_orphans() {
        let fake = FakeProc::new();
        fake.process(10, 1, 'S', 50, 1);
        fake.process(11, 10, 'S', 60, 1);
        fake.process(12, 11, 'S', 70, 1);
        fake.process(13, 10, 'S', 40, 1); // older than its "parent": a reused PID
        fake.process(14, 1, 'S', 80, 1);
        let mut p = fake.open(10).unwrap();
        assert_eq!(p.descendants(), BTreeSet::from([11, 12]));
    }

    #[test]
    fn reads_this_process_from_the_real_proc() {
        let pid = i64::from(std::process::id());
        let mut p = ProcfsProcess::open(pid).unwrap();
        let reading = p.read_rss();
        assert_eq!(reading.state, SampleState::Valid);
        assert!(reading.rss_bytes.unwrap() > 0);
        let start = p.start_ns().unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        assert!(start <= now && now - start < 3_600_000_000_000);
    }
}
