//! Batches into Parquet files, each written under a temporary name beside
//! its destination and renamed over it when complete, so a reader (or an
//! export killed half-way) never sees part of a file.
//!
//! The low-level writer of the `parquet` crate, without Arrow: one row group
//! per batch, snappy pages, every column OPTIONAL (the views' columns may be
//! NULL), instants annotated TIMESTAMP(NANOS, UTC), text annotated STRING.
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

use super::{Batch, Kind, TableDef, Values};

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
    inner: SerializedFileWriter<BufWriter<File>>,
    temp: PathBuf,
    dest: PathBuf,
    rows: u64,
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
        let pq = |source| WriteError::Parquet {
            path: dest.to_path_buf(),
            source,
        };
        let mut props = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("stormlog {}", env!("CARGO_PKG_VERSION")));
        for col in table.columns {
            if super::mostly_unique(table, col.name) {
                props = props.set_column_dictionary_enabled(ColumnPath::from(col.name), false);
            }
        }
        let props = props.build();
        let inner = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            Arc::new(schema(table).map_err(pq)?),
            Arc::new(props),
        )
        .map_err(pq)?;
        Ok(PartWriter {
            inner,
            temp,
            dest: dest.to_path_buf(),
            rows: 0,
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
        let mut group = self.inner.next_row_group().map_err(pq)?;
        let mut levels: Vec<i16> = Vec::with_capacity(batch.rows());
        let mut texts: Vec<ByteArray> = Vec::new();
        let mut i = 0;
        while let Some(mut col) = group.next_column().map_err(pq)? {
            let Some(data) = batch.columns.get(i) else {
                break;
            };
            levels.clear();
            levels.extend(data.defined.iter().map(|&d| i16::from(d)));
            match (col.untyped(), &data.values) {
                (ColumnWriter::Int64ColumnWriter(w), Values::Int(v)) => {
                    w.write_batch(v, Some(&levels), None).map_err(pq)?;
                }
                (ColumnWriter::DoubleColumnWriter(w), Values::Real(v)) => {
                    w.write_batch(v, Some(&levels), None).map_err(pq)?;
                }
                (ColumnWriter::ByteArrayColumnWriter(w), Values::Text { data, ends }) => {
                    // One buffer for the column; each value a slice of it.
                    let whole = ByteArray::from(data.clone());
                    texts.clear();
                    let mut start = 0;
                    for &end in ends {
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

    /// Finishes the file, makes it durable and renames it into place.
    pub fn finish(self) -> Result<Written, WriteError> {
        let PartWriter {
            inner,
            temp,
            dest,
            rows,
        } = self;
        let pq = |source| WriteError::Parquet {
            path: dest.clone(),
            source,
        };
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| WriteError::Io { path, source }
        };
        let buf = inner.into_inner().map_err(pq)?;
        let file = buf.into_inner().map_err(|e| WriteError::Io {
            path: temp.clone(),
            source: e.into_error(),
        })?;
        // The data reaches the disk before the name does, so not even a
        // power cut can leave a named file without its bytes. The folder is
        // not synced after each rename (one fsync per file instead of two):
        // a rename lost that way leaves the previous file, which is whole;
        // the manifest's write syncs its folder.
        file.sync_data().map_err(io(&temp))?;
        let bytes = file.metadata().map_err(io(&temp))?.len();
        drop(file);
        std::fs::rename(&temp, &dest).map_err(io(&dest))?;
        Ok(Written { rows, bytes })
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
    use crate::columnar::{Cell, RUNS};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

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
}
