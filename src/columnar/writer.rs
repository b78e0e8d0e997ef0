//! Batches into Parquet files, each written under a temporary name beside
//! its destination and renamed over it when complete, so a reader (or an
//! export killed half-way) never sees part of a file.
//!
//! The low-level writer of the `parquet` crate, without Arrow: one row group
//! per batch, snappy pages, every column OPTIONAL (the views' columns may be
//! NULL), instants annotated TIMESTAMP(NANOS, UTC), text annotated STRING.
//! The `requests` table's column chunks are encoded by `columnar::pages`
//! and spliced into the crate's row groups; the other tables are written by
//! the crate's column writer.
use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use parquet::basic::{Compression, Encoding, LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

use super::{pages, Batch, Kind, TableDef, Values};

/// The codec every page is compressed with.
pub const COMPRESSION: &str = "snappy";

/// Why a file could not be written; names the file.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parquet {
        path: PathBuf,
        source: parquet::errors::ParquetError,
    },
}

/// What a finished file holds.
#[derive(Debug, Clone, Copy)]
pub struct Written {
    pub rows: u64,
    pub bytes: u64,
}

/// The Parquet schema of a table.
fn schema(table: &TableDef) -> parquet::errors::Result<Type> {
    let mut fields = Vec::with_capacity(table.columns.len());
    for col in table.columns {
        let (physical, logical) = match col.kind {
            Kind::Int => (Physical::INT64, None),
            Kind::Real => (Physical::DOUBLE, None),
            Kind::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            Kind::Instant => (
                Physical::INT64,
                Some(LogicalType::timestamp(true, TimeUnit::NANOS)),
            ),
        };
        let field = Type::primitive_type_builder(col.name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()?;
        fields.push(Arc::new(field));
    }
    Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
}

/// Whether every value of a text column is UTF-8: the whole buffer is, and
/// no value ends inside a character (then none starts inside one either).
fn utf8(data: &[u8], ends: &[usize]) -> Option<()> {
    std::str::from_utf8(data).ok()?;
    // A byte 0b10xx_xxxx continues a character.
    let inside = |&end: &usize| data.get(end).is_some_and(|&b| b & 0xC0 == 0x80);
    (!ends.iter().any(inside)).then_some(())
}

/// A text column with each value made UTF-8 as `String::from_utf8_lossy`
/// makes it.
fn lossy(data: &[u8], ends: &[usize]) -> (Vec<u8>, Vec<usize>) {
    let mut out = Vec::with_capacity(data.len());
    let mut out_ends = Vec::with_capacity(ends.len());
    let mut start = 0;
    for &end in ends {
        let value = data.get(start..end).unwrap_or_default();
        out.extend_from_slice(String::from_utf8_lossy(value).as_bytes());
        out_ends.push(out.len());
        start = end;
    }
    (out, out_ends)
}

/// A text column's bytes and value ends with every value UTF-8: as they
/// are where they already are (the common case), else each value repaired
/// as `String::from_utf8_lossy` repairs it.
fn valid_text<'a>(data: &'a [u8], ends: &'a [usize]) -> (Cow<'a, [u8]>, Cow<'a, [usize]>) {
    match utf8(data, ends) {
        Some(()) => (Cow::Borrowed(data), Cow::Borrowed(ends)),
        None => {
            let (data, ends) = lossy(data, ends);
            (Cow::Owned(data), Cow::Owned(ends))
        }
    }
}

/// Whether a table's column chunks are encoded by `columnar::pages`
/// rather than the crate's column writer: the `requests` table, whose size
/// the export's time follows.
fn own_pages(table: &TableDef) -> bool {
    table.name == super::REQUESTS.name
}

/// Values the crate's column writer takes per step (its default is 1,024):
/// a run's column in one step, so its encoder's buffer grows once, not by
/// doubling per kilo-value, and the per-step page checks run once.
const WRITE_BATCH: usize = 32 * 1024;

/// Each table's schema and writer properties, made once (a file of a run
/// is small, and building them per file showed in the profile).
#[allow(clippy::type_complexity)]
static SETUPS: Mutex<Vec<(&'static str, Arc<Type>, Arc<WriterProperties>)>> =
    Mutex::new(Vec::new());

fn setup(table: &'static TableDef) -> parquet::errors::Result<(Arc<Type>, Arc<WriterProperties>)> {
    let mut setups = SETUPS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, s, p)) = setups
        .iter()
        .find(|(name, s, _)| *name == table.name && s.get_fields().len() == table.columns.len())
    {
        return Ok((s.clone(), p.clone()));
    }
    // Snappy pages, a dictionary only for the text columns whose values
    // repeat, min/max statistics per row group only where a reader prunes
    // by them (columnar::dictionary, columnar::statistics).
    let mut props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::SNAPPY)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_write_batch_size(WRITE_BATCH)
        .set_created_by(format!("stormlog {}", env!("CARGO_PKG_VERSION")));
    for col in table.columns {
        let path = ColumnPath::from(col.name);
        if super::dictionary(table, col) {
            props = props.set_column_dictionary_enabled(path.clone(), true);
        } else if matches!(col.kind, Kind::Int | Kind::Instant) {
            // As columnar::pages writes the requests' integers.
            props = props.set_column_encoding(path.clone(), Encoding::DELTA_BINARY_PACKED);
        }
        if super::statistics(table, col) {
            props = props.set_column_statistics_enabled(path, EnabledStatistics::Chunk);
        }
    }
    let made = (Arc::new(schema(table)?), Arc::new(props.build()));
    setups.push((table.name, made.0.clone(), made.1.clone()));
    Ok(made)
}

/// A file's bytes on their way to it: gathered in a buffer that the thread
/// keeps from one file to the next (its pages stay mapped; a fresh buffer
/// per file cost a page fault per 4 KiB), written a few MiB at a time.
struct Sink {
    file: File,
    buf: Vec<u8>,
}

/// What a sink gathers before it writes.
const SINK_BYTES: usize = 4 << 20;

thread_local! {
    static SPARE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Sink {
    fn new(file: File) -> Sink {
        let buf = SPARE.with(|s| std::mem::take(&mut *s.borrow_mut()));
        Sink { file, buf }
    }

    fn write_buf(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes what is left; the buffer goes back to the thread.
    fn into_file(mut self) -> std::io::Result<File> {
        self.write_buf()?;
        let buf = std::mem::take(&mut self.buf);
        SPARE.with(|s| *s.borrow_mut() = buf);
        Ok(self.file)
    }
}

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + b.len() > SINK_BYTES {
            self.write_buf()?;
        }
        if b.len() >= SINK_BYTES {
            return self.file.write(b);
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    /// Writes nothing: the parquet crate flushes after every column chunk,
    /// which turned one file into a dozen small writes (58,000 `write`
    /// calls for a 1,000-run export); what is gathered goes out when the
    /// buffer fills and at `into_file`, which every finished file passes.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The temporary name a file is written under: hidden (a leading dot, which
/// Spark, Trino and Hive skip) and without the `.parquet` ending globs match.
pub fn temp_path(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dest.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Whether a file name is one `temp_path` makes (left behind by a killed export).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// One Parquet file being written.
pub struct PartWriter {
    inner: SerializedFileWriter<Sink>,
    opened: u64,
    temp: PathBuf,
    dest: PathBuf,
    rows: u64,
    /// Whether the column chunks are encoded by `columnar::pages`.
    own_pages: bool,
}

impl PartWriter {
    /// Starts `dest` (its folder is created) under its temporary name.
    pub fn create(dest: &Path, table: &'static TableDef) -> Result<PartWriter, WriteError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| WriteError::Io { path, source }
        };
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let temp = temp_path(dest);
        let file = File::create(&temp).map_err(io(&temp))?;
        let opened = OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pq = |source| WriteError::Parquet {
            path: dest.to_path_buf(),
            source,
        };
        let (schema, props) = setup(table).map_err(pq)?;
        let inner = SerializedFileWriter::new(Sink::new(file), schema, props).map_err(pq)?;
        Ok(PartWriter {
            inner,
            opened,
            temp,
            dest: dest.to_path_buf(),
            rows: 0,
            own_pages: own_pages(table),
        })
    }

    /// Writes the batch as one row group.
    pub fn write(&mut self, batch: &Batch) -> Result<(), WriteError> {
        if batch.is_empty() {
            return Ok(());
        }
        let dest = &self.dest;
        let pq = |source| WriteError::Parquet {
            path: dest.clone(),
            source,
        };
        if self.own_pages {
            return self.write_own(batch);
        }
        let mut group = self.inner.next_row_group().map_err(pq)?;
        let mut levels: Vec<i16> = Vec::with_capacity(batch.rows());
        let mut texts: Vec<ByteArray> = Vec::new();
        let mut i = 0;
        while let Some(mut col) = group.next_column().map_err(pq)? {
            let Some(data) = batch.columns.get(i) else {
                break;
            };
            levels.clear();
            match data.defined() {
                Some(d) => levels.extend(d.iter().map(|&d| i16::from(d))),
                None => levels.resize(data.rows(), 1),
            }
            // A dictionary column goes to the crate as its values.
            let expanded;
            let values = match &data.values {
                Values::Dict(d) => {
                    let (data, ends) = d.expand();
                    expanded = Values::Text { data, ends };
                    &expanded
                }
                v => v,
            };
            match (col.untyped(), values) {
                (ColumnWriter::Int64ColumnWriter(w), Values::Int(v)) => {
                    w.write_batch(v, Some(&levels), None).map_err(pq)?;
                }
                (ColumnWriter::DoubleColumnWriter(w), Values::Real(v)) => {
                    w.write_batch(v, Some(&levels), None).map_err(pq)?;
                }
                (ColumnWriter::ByteArrayColumnWriter(w), Values::Text { data, ends }) => {
                    // One buffer for the column; each value a slice of it.
                    let (data, ends) = valid_text(data, ends);
                    let whole = ByteArray::from(data.into_owned());
                    texts.clear();
                    let mut start = 0;
                    for &end in ends.iter() {
                        texts.push(whole.slice(start, end - start));
                        start = end;
                    }
                    w.write_batch(&texts, Some(&levels), None).map_err(pq)?;
                }
                _ => {
                    return Err(pq(parquet::errors::ParquetError::General(format!(
                        "column {} does not have the type of its schema",
                        batch.table.columns[i].name
                    ))))
                }
            }
            col.close().map_err(pq)?;
            i += 1;
        }
        group.close().map_err(pq)?;
        self.rows += batch.rows() as u64;
        Ok(())
    }

    /// Writes the batch as one row group, each column chunk encoded by
    /// `columnar::pages` and spliced in whole.
    fn write_own(&mut self, batch: &Batch) -> Result<(), WriteError> {
        let dest = &self.dest;
        let pq = |source| WriteError::Parquet {
            path: dest.clone(),
            source,
        };
        let table = batch.table;
        let descrs: Vec<_> = {
            let schema = self.inner.schema_descr();
            (0..schema.num_columns())
                .map(|i| schema.column(i))
                .collect()
        };
        let mut group = self.inner.next_row_group().map_err(pq)?;
        let columns = batch.columns.iter().zip(table.columns).zip(descrs);
        for ((col, def), descr) in columns {
            // Text made UTF-8: a dictionary's entries, else the values.
            let text = match &col.values {
                Values::Text { data, ends } => Some(valid_text(data, ends)),
                Values::Dict(d) => Some(valid_text(&d.data, &d.ends)),
                Values::Int(_) | Values::Real(_) => None,
            };
            let plan = pages::Plan {
                dictionary: super::dictionary(table, def),
                statistics: super::statistics(table, def),
            };
            let input = pages::Input::of(col, text.as_ref().map(|(d, e)| (&**d, &**e)));
            let (bytes, close) =
                pages::encode(descr, pages::Defined::of(col), &input, plan).map_err(pq)?;
            group.append_column(&bytes, close).map_err(pq)?;
            pages::give_back(bytes);
        }
        group.close().map_err(pq)?;
        self.rows += batch.rows() as u64;
        Ok(())
    }

    /// Finishes the file, makes it durable and renames it into place.
    pub fn finish(self) -> Result<Written, WriteError> {
        let (job, written) = self.complete()?;
        job.land()?;
        Ok(written)
    }

    /// Finishes the file and hands its sync and rename to `landing`: the
    /// file is in place once [`Landing::wait`] returns.
    pub fn finish_into(self, landing: &Landing) -> Result<Written, WriteError> {
        let (job, written) = self.complete()?;
        landing.submit(job);
        Ok(written)
    }

    /// Writes the file's footer; what is left is its sync and rename.
    fn complete(self) -> Result<(Job, Written), WriteError> {
        let PartWriter {
            inner,
            opened,
            temp,
            dest,
            rows,
            own_pages: _,
        } = self;
        let pq = |source| WriteError::Parquet {
            path: dest.clone(),
            source,
        };
        let sink = inner.into_inner().map_err(pq)?;
        let file = sink.into_file().map_err(io_at(&temp))?;
        let bytes = file.metadata().map_err(io_at(&temp))?.len();
        let job = Job {
            file,
            opened,
            temp,
            dest,
        };
        Ok((job, Written { rows, bytes }))
    }
}

fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError {
    let path = path.to_path_buf();
    move |source| WriteError::Io { path, source }
}

/// A finished file under its temporary name, to be synced and renamed.
struct Job {
    file: File,
    /// When the file was opened, in the order files are ([`OPENED`]).
    opened: u64,
    temp: PathBuf,
    dest: PathBuf,
}

/// Counts the files opened for writing, so that a batch knows its oldest.
static OPENED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Job {
    fn land(self) -> Result<(), WriteError> {
        // The data reaches the disk before the name does, so not even a
        // power cut can leave a named file without its bytes. The folder is
        // not synced after each rename (one fsync per file instead of two):
        // a rename lost that way leaves the previous file, which is whole;
        // the manifest's write syncs its folder.
        self.file.sync_data().map_err(io_at(&self.temp))?;
        self.rename()
    }

    /// The rename alone, once the data is on the disk.
    fn rename(self) -> Result<(), WriteError> {
        drop(self.file);
        std::fs::rename(&self.temp, &self.dest).map_err(io_at(&self.dest))
    }
}

/// The most files one sync of their file system lands.
const BATCH_FILES: usize = 256;

/// Lands `jobs`: where the OS syncs a whole file system in one call
/// (Linux's `syncfs`), the data of every file on the oldest one's is made
/// durable at once and each is then renamed; the others, or all where that
/// sync fails, one at a time as [`Job::land`] does.
///
/// The sync is asked through the oldest file's own descriptor: it reports
/// a write-back error of the file system since that descriptor was opened,
/// so none of the batch's files can have lost a page unreported. After a
/// failure each file's own sync says which (a failure elsewhere on the file
/// system costs only the one-at-a-time syncs).
///
/// An export writes two files a run: synced one by one, each took a
/// journal commit and a flush of the device's cache, and their interrupts
/// and wake-ups were a tenth of the export's CPU (1,000 runs); a sync of
/// the file system takes one commit for a batch of files written while the
/// one before it was synced.
fn land_all(jobs: Vec<Job>, state: &(Mutex<LandingState>, std::sync::Condvar)) {
    let oldest = jobs.iter().min_by_key(|j| j.opened);
    let synced = oldest.and_then(|j| Some((device(&j.temp)?, &j.file)));
    let (together, alone) = match synced {
        Some((dev, file)) if sync_file_system(file) => {
            jobs.into_iter().partition(|j| device(&j.temp) == Some(dev))
        }
        _ => (Vec::new(), jobs),
    };
    for job in together {
        settle(state, job.rename());
    }
    for job in alone {
        settle(state, job.land());
    }
}

#[cfg(unix)]
fn device(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.dev())
}

#[cfg(not(unix))]
fn device(_: &Path) -> Option<u64> {
    None
}

/// Syncs the file system `file` is on; false where that cannot be done or
/// it reports an error.
#[cfg(target_os = "linux")]
fn sync_file_system(file: &File) -> bool {
    nix::unistd::syncfs(file).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn sync_file_system(_: &File) -> bool {
    false
}

/// Threads that sync finished files and rename them into place, so that
/// the threads writing files go on computing instead of waiting on the
/// disk: a file's sync waits for its pages, the inode and the device's
/// cache flush (ext4: 62% of an export's context switches were there).
/// Each file is still synced before its rename, alone or with the others
/// of its batch ([`land_all`]); [`Landing::wait`] says when all handed over
/// are in place, before a manifest names them.
pub struct Landing {
    send: Option<std::sync::mpsc::Sender<Job>>,
    state: Arc<(Mutex<LandingState>, std::sync::Condvar)>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct LandingState {
    pending: usize,
    failed: Option<WriteError>,
}

impl Landing {
    /// A landing of `threads` threads (at least one; one where a batch of
    /// files is synced at once: a second would only split the batches);
    /// none started when threads cannot be: every file then lands where it
    /// is handed over.
    pub fn new(threads: usize) -> Landing {
        let threads = match cfg!(target_os = "linux") {
            true => 1,
            false => threads.max(1),
        };
        let (send, recv) = std::sync::mpsc::channel::<Job>();
        let recv = Arc::new(Mutex::new(recv));
        let state: Arc<(Mutex<LandingState>, std::sync::Condvar)> = Arc::default();
        let mut handles = Vec::new();
        for _ in 0..threads {
            let (recv, state) = (Arc::clone(&recv), Arc::clone(&state));
            let spawned = std::thread::Builder::new()
                .name("stormlog-landing".into())
                .spawn(move || loop {
                    // The next file, and every other already waiting.
                    let batch = {
                        let recv = recv.lock().unwrap_or_else(PoisonError::into_inner);
                        let Ok(first) = recv.recv() else {
                            return; // the landing is dropped
                        };
                        let mut batch = vec![first];
                        while batch.len() < BATCH_FILES {
                            match recv.try_recv() {
                                Ok(job) => batch.push(job),
                                Err(_) => break,
                            }
                        }
                        batch
                    };
                    land_all(batch, &state);
                });
            if let Ok(h) = spawned {
                handles.push(h);
            }
        }
        Landing {
            send: (!handles.is_empty()).then_some(send),
            state,
            threads: handles,
        }
    }

    fn submit(&self, job: Job) {
        let (lock, _) = &*self.state;
        lock.lock().unwrap_or_else(PoisonError::into_inner).pending += 1;
        let job = match &self.send {
            Some(send) => match send.send(job) {
                Ok(()) => return,
                // No thread left to take it (every one died): landed here
                // instead.
                Err(std::sync::mpsc::SendError(job)) => job,
            },
            // No threads: every file lands where it is handed over.
            None => job,
        };
        settle(&self.state, job.land());
    }

    /// Waits until every file handed over is synced and in place; the first
    /// that could not be, if any (each failure is reported once).
    pub fn wait(&self) -> Result<(), WriteError> {
        let (lock, cond) = &*self.state;
        let mut st = lock.lock().unwrap_or_else(PoisonError::into_inner);
        while st.pending > 0 {
            st = cond.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        st.failed.take().map_or(Ok(()), Err)
    }
}

/// Counts a handed-over file as landed, keeping the first failure.
fn settle(state: &(Mutex<LandingState>, std::sync::Condvar), done: Result<(), WriteError>) {
    let (lock, cond) = state;
    let mut st = lock.lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(e) = done {
        st.failed.get_or_insert(e);
    }
    st.pending -= 1;
    cond.notify_all();
}

impl Drop for Landing {
    fn drop(&mut self) {
        self.send = None; // the threads end once the queue is empty
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

/// Makes a rename in `path`'s folder durable; a folder that cannot be opened
/// (some file systems) is left to the OS.
pub fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent() {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

/// Writes `text` to `dest` the same way: a temporary name, then a rename.
pub fn write_atomic(dest: &Path, text: &[u8]) -> Result<(), WriteError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError::Io { path, source }
    };
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let temp = temp_path(dest);
    {
        let file = File::create(&temp).map_err(io(&temp))?;
        use std::io::Write;
        let mut w = &file;
        w.write_all(text).map_err(io(&temp))?;
        file.sync_all().map_err(io(&temp))?;
    }
    std::fs::rename(&temp, dest).map_err(io(dest))?;
    sync_dir(dest);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::columnar::{Cell, REQUESTS, RUNS};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    /// Text pushed as bytes is checked a column at a time; a value that is
    /// not UTF-8 (alone, though the column's bytes end to end may be) is
    /// written as `from_utf8_lossy` makes it.
    #[test]
    fn text_bytes_are_written_as_utf8() {
        assert_eq!(utf8("aé".as_bytes(), &[1, 3]), Some(()));
        // "é" split between two values: the buffer is UTF-8, the values not.
        assert_eq!(utf8("é".as_bytes(), &[1, 2]), None);
        assert_eq!(utf8(b"a\xff", &[2]), None);
        let (data, ends) = lossy("é".as_bytes(), &[1, 2]);
        assert_eq!(String::from_utf8(data).unwrap(), "\u{FFFD}\u{FFFD}");
        assert_eq!(ends, vec![3, 6]);

        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("runs.parquet");
        let mut b = Batch::new(&RUNS);
        for value in ["é".as_bytes(), &"é".as_bytes()[..1], b"ok"] {
            for (i, d) in RUNS.columns.iter().enumerate() {
                match d.kind {
                    Kind::Text => b.push_bytes(i, value).unwrap(),
                    _ => b.push(i, Cell::Null).unwrap(),
                }
            }
            b.end_row();
        }
        let mut w = PartWriter::create(&dest, &RUNS).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        let reader = SerializedFileReader::new(File::open(&dest).unwrap()).unwrap();
        let ids: Vec<Field> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().get_column_iter().next().unwrap().1.clone())
            .collect();
        assert_eq!(
            ids,
            ["é", "\u{FFFD}", "ok"]
                .map(|s| Field::Str(s.into()))
                .to_vec()
        );
    }

    /// Files handed to a landing are under their temporary names until it
    /// lands them, whole, under their own; a file that cannot be renamed
    /// (its folder gone) is reported by `wait`, once, and the others land.
    #[test]
    fn a_landing_puts_files_in_place_by_its_wait_and_reports_a_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let one_row = || {
            let mut b = Batch::new(&RUNS);
            for (i, d) in RUNS.columns.iter().enumerate() {
                match d.kind {
                    Kind::Text => b.push(i, Cell::Text("r")).unwrap(),
                    _ => b.push(i, Cell::Null).unwrap(),
                }
            }
            b.end_row();
            b
        };
        let landing = Landing::new(2);
        let dests: Vec<PathBuf> = (0..6)
            .map(|k| tmp.path().join(format!("p{k}")).join("part-0.parquet"))
            .collect();
        for dest in &dests {
            let mut w = PartWriter::create(dest, &RUNS).unwrap();
            w.write(&one_row()).unwrap();
            let written = w.finish_into(&landing).unwrap();
            assert_eq!(written.rows, 1);
            assert!(written.bytes > 0);
        }
        landing.wait().unwrap();
        for dest in &dests {
            let reader = SerializedFileReader::new(File::open(dest).unwrap()).unwrap();
            assert_eq!(reader.metadata().file_metadata().num_rows(), 1);
            assert!(!temp_path(dest).exists());
        }
        // A batch landed at once: every file in place, each counted.
        let state: (Mutex<LandingState>, std::sync::Condvar) = Default::default();
        let mut jobs = Vec::new();
        for k in 0..3 {
            let dest = tmp.path().join(format!("b{k}")).join("part-0.parquet");
            let mut w = PartWriter::create(&dest, &RUNS).unwrap();
            w.write(&one_row()).unwrap();
            jobs.push((w.complete().unwrap().0, dest));
        }
        let dests: Vec<PathBuf> = jobs.iter().map(|(_, d)| d.clone()).collect();
        state.0.lock().unwrap().pending = 3;
        land_all(jobs.into_iter().map(|(j, _)| j).collect(), &state);
        assert_eq!(state.0.lock().unwrap().pending, 0);
        assert!(state.0.lock().unwrap().failed.is_none());
        for dest in &dests {
            assert!(dest.is_file() && !temp_path(dest).exists());
        }
        // A file whose folder is removed before it lands.
        let gone = tmp.path().join("gone").join("part-0.parquet");
        let mut w = PartWriter::create(&gone, &RUNS).unwrap();
        w.write(&one_row()).unwrap();
        let job = w.complete().unwrap().0;
        std::fs::remove_dir_all(tmp.path().join("gone")).unwrap();
        landing.submit(job);
        let err = landing.wait().unwrap_err().to_string();
        assert!(err.contains("gone"), "{err}");
        landing.wait().unwrap(); // reported once
                                 // Without threads, a file lands where it is handed over.
        let inline = Landing {
            send: None,
            state: Arc::default(),
            threads: Vec::new(),
        };
        let dest = tmp.path().join("inline.parquet");
        let mut w = PartWriter::create(&dest, &RUNS).unwrap();
        w.write(&one_row()).unwrap();
        w.finish_into(&inline).unwrap();
        assert!(dest.is_file());
        inline.wait().unwrap();
    }

    #[test]
    fn a_file_reads_back_with_its_types_and_nulls() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("runs.parquet");
        let mut b = Batch::new(&RUNS);
        for row in 0..2 {
            for (i, d) in RUNS.columns.iter().enumerate() {
                let cell = match d.kind {
                    _ if row == 1 && i > 0 => Cell::Null,
                    Kind::Text => Cell::Text("r1"),
                    Kind::Int => Cell::Int(-7),
                    Kind::Instant => Cell::Int(1_795_961_268_123_456_789),
                    Kind::Real => Cell::Real(0.5),
                };
                b.push(i, cell).unwrap();
            }
            b.end_row();
        }
        let mut w = PartWriter::create(&dest, &RUNS).unwrap();
        assert!(temp_path(&dest).exists());
        w.write(&b).unwrap();
        let done = w.finish().unwrap();
        assert_eq!(done.rows, 2);
        assert!(!temp_path(&dest).exists());
        let reader = SerializedFileReader::new(File::open(&dest).unwrap()).unwrap();
        let meta = reader.metadata().file_metadata();
        assert_eq!(meta.num_rows(), 2);
        let started = meta.schema_descr().column(4);
        assert_eq!(
            started.logical_type_ref(),
            Some(&LogicalType::timestamp(true, TimeUnit::NANOS))
        );
        let rows: Vec<_> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let first: Vec<(String, Field)> = rows[0]
            .get_column_iter()
            .map(|(n, f)| (n.clone(), f.clone()))
            .collect();
        assert_eq!(first[0], ("run_id".into(), Field::Str("r1".into())));
        assert_eq!(first[4].1, Field::Long(1_795_961_268_123_456_789));
        assert_eq!(first[7].1, Field::Long(-7));
        let second: Vec<&Field> = rows[1].get_column_iter().map(|(_, f)| f).collect();
        assert_eq!(second[0], &Field::Str("r1".into()));
        assert!(second[1..].iter().all(|f| **f == Field::Null));
    }

    /// A `requests` batch of `rows` rows with the cases the page encoder
    /// must get right: NULLs here and there, a column all NULL, empty and
    /// non-ASCII text, text bounds past the 64 bytes statistics keep, a
    /// dictionary column of one value and one of many, a PLAIN text column
    /// past a page, NaN and zeros of both signs, integers whose differences
    /// wrap.
    fn edge_batch(first: usize, rows: usize) -> Batch {
        let mut b = Batch::new(&REQUESTS);
        for r in first..first + rows {
            for (i, d) in REQUESTS.columns.iter().enumerate() {
                let cell: Cell<'_> = match (d.name, d.kind) {
                    ("run_id", _) => Cell::Text("run-é"),
                    ("case_key", _) => Cell::Text(["", "a", "ü-case", "zz"][r % 4]),
                    ("case_id", _) if r % 7 == 0 => Cell::Null,
                    ("case_id", _) => {
                        b.push_bytes(i, format!("{}{}", "é".repeat(40), r % 300).as_bytes())
                            .unwrap();
                        continue;
                    }
                    ("phase", _) => Cell::Null,
                    ("status", _) => Cell::Text(if r % 1000 == 999 { "error" } else { "ok" }),
                    ("request_id", _) => {
                        b.push_bytes(i, format!("req-{r}-{}", "x".repeat(r % 90)).as_bytes())
                            .unwrap();
                        continue;
                    }
                    ("error_message", _) if r % 3 == 0 => Cell::Null,
                    ("error_message", _) => {
                        b.push_bytes(i, format!("{r:08}{}", "ß".repeat(60)).as_bytes())
                            .unwrap();
                        continue;
                    }
                    ("x_request_id", _) => Cell::Text(""),
                    ("trace_id", _) => Cell::Null,
                    ("ended_at", _) if r % 5 == 1 => Cell::Null,
                    ("ttft_ms", _) => match r % 6 {
                        0 => Cell::Null,
                        1 => Cell::Real(f64::NAN),
                        2 => Cell::Real(-0.0),
                        3 => Cell::Real(0.0),
                        _ => Cell::Real(r as f64 / 7.0),
                    },
                    ("seq", _) => Cell::Int(r as i64 - 5),
                    // Differences past 64 bits, which wrap, and every width.
                    ("request_index", _) => Cell::Int(match r % 5 {
                        0 => i64::MIN,
                        1 => i64::MAX,
                        2 => 0,
                        3 => -1,
                        _ => (r as i64).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64) >> (r % 64),
                    }),
                    ("ok", _) if r % 11 == 0 => Cell::Null,
                    ("ok", _) => Cell::Int((r % 2) as i64),
                    ("started_at_ns", _) => Cell::Int(1_795_961_268_000_000_000 + r as i64),
                    ("intended_at_ns", _) => Cell::Null,
                    (_, Kind::Text) => Cell::Text("t"),
                    (_, Kind::Real) => Cell::Real(r as f64 * 0.25),
                    (_, Kind::Int | Kind::Instant) => Cell::Int(-(r as i64)),
                };
                b.push(i, cell).unwrap();
            }
            b.end_row();
        }
        b
    }

    fn write_both(dir: &Path, batches: &[Batch]) -> (PathBuf, PathBuf) {
        let mut out = Vec::new();
        for own in [true, false] {
            let dest = dir.join(format!("own-{own}.parquet"));
            let mut w = PartWriter::create(&dest, &REQUESTS).unwrap();
            assert!(w.own_pages);
            w.own_pages = own;
            for b in batches {
                w.write(b).unwrap();
            }
            w.finish().unwrap();
            out.push(dest);
        }
        (out[0].clone(), out[1].clone())
    }

    /// The rows of a file, each value as `Debug` prints it (NaN equal to NaN).
    fn rows_of(path: &Path) -> Vec<String> {
        let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| format!("{:?}", r.unwrap()))
            .collect()
    }

    /// The `requests` table's chunks encoded by `columnar::pages` read back
    /// as the crate's column writer's do: the same rows, row groups, types,
    /// statistics, null counts, level histograms, dictionary columns and
    /// offset index (its pages may differ).
    #[test]
    fn own_pages_read_back_as_the_crates() {
        let tmp = tempfile::tempdir().unwrap();
        let batches = [
            edge_batch(0, 32_768),
            edge_batch(32_768, 32_768),
            edge_batch(65_536, 1_000),
            edge_batch(70_000, 1),
        ];
        let (own, crate_) = write_both(tmp.path(), &batches);
        let (a, b) = (rows_of(&own), rows_of(&crate_));
        assert_eq!(a.len(), 32_768 * 2 + 1_001);
        assert!(a == b, "rows differ");
        let open = |p: &Path| {
            let opts = parquet::file::serialized_reader::ReadOptionsBuilder::new()
                .with_page_index()
                .build();
            SerializedFileReader::new_with_options(File::open(p).unwrap(), opts).unwrap()
        };
        let (ra, rb) = (open(&own), open(&crate_));
        let (ma, mb) = (ra.metadata(), rb.metadata());
        assert_eq!(ma.num_row_groups(), 4);
        assert_eq!(ma.num_row_groups(), mb.num_row_groups());
        assert_eq!(
            ma.file_metadata().schema_descr(),
            mb.file_metadata().schema_descr()
        );
        let mut dictionaries = 0;
        let mut pages = 0;
        for g in 0..ma.num_row_groups() {
            let (ga, gb) = (ma.row_group(g), mb.row_group(g));
            assert_eq!(ga.num_rows(), gb.num_rows());
            for c in 0..ga.num_columns() {
                let (ca, cb) = (ga.column(c), gb.column(c));
                let name = ca.column_path().string();
                assert_eq!(ca.column_type(), cb.column_type(), "{name}");
                assert_eq!(ca.compression(), cb.compression(), "{name}");
                assert_eq!(ca.num_values(), cb.num_values(), "{name}");
                assert_eq!(ca.statistics(), cb.statistics(), "{name} in group {g}");
                assert_eq!(
                    ca.definition_level_histogram(),
                    cb.definition_level_histogram(),
                    "{name}"
                );
                assert_eq!(
                    ca.repetition_level_histogram(),
                    cb.repetition_level_histogram(),
                    "{name}"
                );
                assert_eq!(
                    ca.unencoded_byte_array_data_bytes(),
                    cb.unencoded_byte_array_data_bytes(),
                    "{name}"
                );
                if name == "error_message" && g < 2 {
                    // Past a dictionary page's 1 MiB of distinct values the
                    // crate keeps the dictionary for the pages before and
                    // writes the rest PLAIN; this chunk is PLAIN throughout.
                    assert!(ca.dictionary_page_offset().is_none());
                    assert!(cb.dictionary_page_offset().is_some());
                } else {
                    assert_eq!(
                        ca.dictionary_page_offset().is_some(),
                        cb.dictionary_page_offset().is_some(),
                        "{name}"
                    );
                    assert_eq!(ca.encodings_mask(), cb.encodings_mask(), "{name}");
                }
                dictionaries += usize::from(ca.dictionary_page_offset().is_some());
                let (oa, ob) = (
                    &ma.offset_index().unwrap()[g][c],
                    &mb.offset_index().unwrap()[g][c],
                );
                pages += oa.page_locations().len();
                assert_eq!(
                    oa.unencoded_byte_array_data_bytes()
                        .map(|v| v.iter().sum::<i64>()),
                    ob.unencoded_byte_array_data_bytes()
                        .map(|v| v.iter().sum::<i64>()),
                    "{name}"
                );
            }
        }
        assert!(dictionaries > 0);
        // error_message is past 1 MiB a row group: more than one page.
        assert!(pages > 4 * REQUESTS.columns.len(), "{pages}");
    }

    /// The RLE/bit-packed hybrid: every run length around the switch
    /// between bit-packed groups and RLE runs decodes to its values.
    #[test]
    fn hybrid_runs_decode_to_their_values() {
        for width in [0u8, 1, 3, 8, 13] {
            let max = if width == 0 { 0 } else { (1u32 << width) - 1 };
            for run in [1usize, 7, 8, 9, 15, 16, 17, 40] {
                let mut values = Vec::new();
                for k in 0..5 {
                    values.extend(std::iter::repeat_n(max.min(k * 3), run));
                    values.push(max.min(1));
                }
                let mut out = Vec::new();
                pages::hybrid(&mut out, &values, width);
                assert_eq!(
                    pages::unhybrid(&out, width, values.len()),
                    values,
                    "{width} {run}"
                );
            }
        }
    }
}
