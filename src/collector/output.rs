//! Telemetry samples and how they leave the collector: the collector's
//! samples of `infer.telemetry_sample` (docs/telemetry.md §2), written by the
//! one record writer (`model::telemetry`, byte for byte the reference's), and
//! the sinks a poll is written to. A poll's lines go out in one write followed
//! by a flush, so a killed collector leaves whole lines on disk.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::identity::ServerIdentity;
use crate::model::telemetry::{write_record, RecordHead, SampleFields};

/// `source` of the RSS sample (the reference reads it through psutil).
pub const SOURCE_PROCESS: &str = "psutil";
/// `source` of the GPU samples.
pub const SOURCE_NVML: &str = "nvml-v2";

/// The counters the collector writes (docs/telemetry.md §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    ProcessRss,
    DeviceMemoryUsed,
    DeviceMemoryReserved,
    InstanceMemoryUsed,
    InstanceMemoryReserved,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::ProcessRss => "process_rss_bytes",
            Metric::DeviceMemoryUsed => "device_memory_used_bytes",
            Metric::DeviceMemoryReserved => "device_memory_reserved_bytes",
            Metric::InstanceMemoryUsed => "instance_memory_used_bytes",
            Metric::InstanceMemoryReserved => "instance_memory_reserved_bytes",
        }
    }

    pub fn scope(self) -> &'static str {
        match self {
            Metric::ProcessRss => "server_process",
            Metric::DeviceMemoryUsed | Metric::DeviceMemoryReserved => "gpu_device",
            Metric::InstanceMemoryUsed | Metric::InstanceMemoryReserved => "gpu_instance",
        }
    }

    pub fn counter_owner(self) -> &'static str {
        match self {
            Metric::ProcessRss => "operating_system_process",
            Metric::DeviceMemoryUsed | Metric::DeviceMemoryReserved => "gpu_device",
            Metric::InstanceMemoryUsed | Metric::InstanceMemoryReserved => "gpu_instance",
        }
    }

    pub fn source(self) -> &'static str {
        match self {
            Metric::ProcessRss => SOURCE_PROCESS,
            _ => SOURCE_NVML,
        }
    }
}

/// Whether a sample holds a good reading (docs/telemetry.md §2.4). The collector never writes
/// `Stale`; it exists so the type covers every state the format allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleState {
    Valid,
    Missing,
    Stale,
    Invalid,
}

impl SampleState {
    pub fn as_str(self) -> &'static str {
        match self {
            SampleState::Valid => "valid",
            SampleState::Missing => "missing",
            SampleState::Stale => "stale",
            SampleState::Invalid => "invalid",
        }
    }
}

/// One counter of one poll. `value_bytes` is `Some` exactly when the state
/// is `Valid`; the readers that build samples keep that invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub metric: Metric,
    pub value_bytes: Option<u64>,
    pub state: SampleState,
    pub detail: Option<String>,
}

/// All samples of one poll, in write order: RSS, then GPU used, reserved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poll {
    /// Wall-clock time of the poll, ns since the Unix epoch; shared by all
    /// of its samples.
    pub observed_at_ns: i64,
    pub samples: Vec<Sample>,
}

/// What every record of one collection shares, with its JSON pieces
/// rendered once instead of on every poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordContext {
    pub run_id: String,
    pub identity: ServerIdentity,
    pub interval_ms: i64,
    head: RecordHead,
}

impl RecordContext {
    pub fn new(run_id: &str, identity: ServerIdentity, interval_ms: i64) -> Self {
        Self {
            run_id: run_id.to_string(),
            head: RecordHead::new(run_id, &identity),
            identity,
            interval_ms,
        }
    }

    /// One record as a line (`model::telemetry::write_record`).
    pub fn render_sample(&self, observed_at_ns: i64, sample: &Sample, line: &mut String) {
        let metric = sample.metric;
        let fields = SampleFields {
            observed_at_ns,
            metric: metric.name(),
            scope: metric.scope(),
            counter_owner: metric.counter_owner(),
            value_bytes: sample.value_bytes.map(i128::from),
            state: sample.state.as_str(),
            source: metric.source(),
            interval_ms: self.interval_ms,
            detail: sample.detail.as_deref(),
            provenance: "observed",
        };
        write_record(line, &self.head, &fields, None);
    }

    /// Every line of one poll, concatenated, for a single write.
    pub fn render_poll(&self, poll: &Poll) -> String {
        let mut text = String::with_capacity(900 * poll.samples.len());
        for sample in &poll.samples {
            self.render_sample(poll.observed_at_ns, sample, &mut text);
        }
        text
    }
}

/// Writing a poll failed; names the file so the user knows where.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("cannot create {}: {source}", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// Where polls go. The loop calls `write_poll` once per poll; a sink that
/// returns an error ends the collection.
pub trait SampleSink {
    fn write_poll(&mut self, context: &RecordContext, poll: &Poll) -> Result<(), SinkError>;
}

/// The JSONL telemetry file.
pub struct JsonlSink {
    path: PathBuf,
    file: File,
}

impl JsonlSink {
    /// Creates parent directories and opens `path` with truncation (docs/telemetry.md §1.1):
    /// a collection that stops before its first poll leaves an empty file.
    pub fn create(path: &Path) -> Result<Self, SinkError> {
        let fail = |source| SinkError::Create {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(fail)?;
        }
        let file = File::create(path).map_err(fail)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }
}

impl SampleSink for JsonlSink {
    fn write_poll(&mut self, context: &RecordContext, poll: &Poll) -> Result<(), SinkError> {
        // One unbuffered write per poll keeps the poll's lines contiguous;
        // `File` has no user-space buffer, so the flush is the write itself.
        let text = context.render_poll(poll);
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|source| SinkError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

/// Keeps polls in memory; for tests and for callers that post-process.
#[derive(Debug, Default)]
pub struct MemorySink {
    pub polls: Vec<Poll>,
    pub text: String,
}

impl SampleSink for MemorySink {
    fn write_poll(&mut self, context: &RecordContext, poll: &Poll) -> Result<(), SinkError> {
        self.text.push_str(&context.render_poll(poll));
        self.polls.push(poll.clone());
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::identity::tests::identity;

    /// The spec's example line (docs/telemetry.md §1.1), byte for byte.
    #[test]
    fn renders_the_reference_line() {
        let ctx = RecordContext::new("r1", identity(), 100);
        let mut line = String::new();
        let sample = Sample {
            metric: Metric::ProcessRss,
            value_bytes: Some(1_830_912),
            state: SampleState::Valid,
            detail: None,
        };
        ctx.render_sample(1_795_960_373_301_197_735, &sample, &mut line);
        let expected = concat!(
            r#"{"clock_domain": "vm/80956652-4182-4e20-8984-7a99c0a0659e/unix_epoch_ns", "#,
            r#""counter_owner": "operating_system_process", "detail": null, "#,
            r#""event_type": "infer.telemetry_sample", "identity": {"boot_id": "#,
            r#""80956652-4182-4e20-8984-7a99c0a0659e", "device_uuid": null, "#,
            r#""gpu_instance_id": null, "group_id": null, "host": "vm", "pid": 8934, "#,
            r#""process_start_ns": 1795960369849999872, "rank": null, "replica_id": null, "#,
            r#""world_size": null}, "interval_ms": 100, "metric": "process_rss_bytes", "#,
            r#""observed_at_ns": 1795960373301197735, "provenance": "observed", "#,
            r#""run_id": "r1", "schema_version": 1, "scope": "server_process", "#,
            r#""source": "psutil", "state": "valid", "value_bytes": 1830912}"#,
            "\n"
        );
        assert_eq!(line, expected);
    }

    #[test]
    fn renders_gpu_and_group_fields() {
        let mut id = identity();
        id.device_uuid = Some("GPU-a".into());
        id.gpu_instance_id = Some("MIG-b".into());
        id.group_id = Some("g".into());
        id.rank = Some(1);
        id.world_size = Some(2);
        id.replica_id = Some("é".into());
        let ctx = RecordContext::new("r", id, 12);
        let line = ctx.render_poll(&Poll {
            observed_at_ns: 5,
            samples: vec![Sample {
                metric: Metric::InstanceMemoryReserved,
                value_bytes: None,
                state: SampleState::Invalid,
                detail: Some("parent device UUID changed".into()),
            }],
        });
        assert!(line.contains(r#""detail": "parent device UUID changed""#));
        assert!(
            line.contains(r#""device_uuid": "GPU-a", "gpu_instance_id": "MIG-b", "group_id": "g""#)
        );
        assert!(line.contains(r#""rank": 1, "replica_id": "\u00e9", "world_size": 2}"#));
        assert!(line.contains(r#""counter_owner": "gpu_instance""#));
        assert!(line.contains(r#""scope": "gpu_instance", "source": "nvml-v2", "state": "invalid", "value_bytes": null}"#));
    }

    #[test]
    fn jsonl_sink_truncates_and_creates_parents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/t.jsonl");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "old contents\n").unwrap();
        let sink = JsonlSink::create(&path).unwrap();
        drop(sink);
        assert_eq!(fs::read_to_string(&path).unwrap(), "");
        let nested = dir.path().join("x/y/z.jsonl");
        JsonlSink::create(&nested).unwrap();
        assert!(nested.exists());
    }
}
