//! The poll loop (docs/telemetry.md §5.6, §5.8): wait for the next poll or a
//! stop, read the process and then the GPU, write the poll, and decide from
//! the samples whether to go on. Scheduling uses a monotonic clock and keeps
//! a steady cadence that skips missed polls instead of bursting; sample
//! timestamps use the wall clock. Time and sources come in through traits so
//! the loop runs in tests without sleeping or a GPU.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::output::{Metric, Poll, RecordContext, Sample, SampleSink, SampleState, SinkError};
use super::sources::{reborrow_gpu, GpuReading, GpuSource, ProcessSource, PROCESS_ENDED_DETAIL};

/// Time as the loop sees it.
pub trait Clock {
    /// Monotonic seconds (any origin).
    fn monotonic(&mut self) -> f64;
    /// Wall-clock ns since the Unix epoch.
    fn wall_ns(&mut self) -> i64;
    /// Waits until monotonic time `wake` or until `stop` is set; returns
    /// whether `stop` is set (also when it was set before the call).
    fn wait_until(&mut self, wake: f64, stop: &StopFlag) -> bool;
}

/// The operating system's clocks; waiting sleeps on the stop flag.
#[derive(Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn monotonic(&mut self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }

    fn wall_ns(&mut self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }

    fn wait_until(&mut self, wake: f64, stop: &StopFlag) -> bool {
        let timeout = (wake - self.monotonic()).max(0.0);
        stop.wait_timeout(Duration::from_secs_f64(timeout))
    }
}

/// Set by SIGINT/SIGTERM (or a caller) to end collection after the poll in
/// progress. A condition variable lets a waiting loop wake at once.
#[derive(Debug, Clone, Default)]
pub struct StopFlag {
    inner: Arc<(Mutex<bool>, Condvar)>,
}

impl StopFlag {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&self) {
        let (lock, wake) = &*self.inner;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
    }

    pub fn clear(&self) {
        *self.inner.0.lock().unwrap_or_else(PoisonError::into_inner) = false;
    }

    pub fn is_set(&self) -> bool {
        *self.inner.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits up to `timeout` for the flag; returns whether it is set.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let (lock, wake) = &*self.inner;
        let guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let (guard, _) = wake
            .wait_timeout_while(guard, timeout, |set| !*set)
            .unwrap_or_else(PoisonError::into_inner);
        *guard
    }
}

/// Why a collection stopped (docs/telemetry.md §5.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    DurationElapsed,
    StopRequested,
    ServerProcessEnded,
    GpuIdentityChanged,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::DurationElapsed => "duration_elapsed",
            StopReason::StopRequested => "stop_requested",
            StopReason::ServerProcessEnded => "server_process_ended",
            StopReason::GpuIdentityChanged => "gpu_identity_changed",
        }
    }
}

/// What a collection did (docs/telemetry.md §5.9). `polls` counts written polls, a final
/// invalid one included; `warnings` are the GPU-match messages, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionResult {
    pub polls: u64,
    pub stop_reason: StopReason,
    pub detail: Option<String>,
    pub warnings: Vec<String>,
}

/// Everything the loop needs besides its sources.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    pub context: RecordContext,
    pub interval_seconds: f64,
    pub duration_seconds: Option<f64>,
}

impl LoopConfig {
    pub fn new(
        context: RecordContext,
        interval_seconds: f64,
        duration_seconds: Option<f64>,
    ) -> Self {
        Self {
            context,
            interval_seconds,
            duration_seconds,
        }
    }
}

/// The nominal interval in whole ms, rounded half to even like Python's
/// `round` on the same double product (0.0125 s -> 12, 0.0155 s -> 16).
pub fn interval_ms(interval_seconds: f64) -> i64 {
    // Saturating: only absurd intervals (> 292 million years) are affected.
    (interval_seconds * 1000.0).round_ties_even() as i64
}

/// Keeps a steady cadence, but skips missed polls instead of bursting: the
/// next poll is one interval after the previous *scheduled* one, unless that
/// is already past, then one interval from now.
pub fn next_poll_time(previous: f64, interval: f64, now: f64) -> f64 {
    let scheduled = previous + interval;
    if scheduled > now {
        scheduled
    } else {
        now + interval
    }
}

/// Runs the poll loop until a stop reason (docs/telemetry.md §5.6). Between polls the stop
/// flag is checked before the deadline; a poll in progress always completes
/// and is written. A sink error ends the collection with that error.
pub fn collect(
    config: &LoopConfig,
    process: &mut dyn ProcessSource,
    mut gpu: Option<&mut dyn GpuSource>,
    clock: &mut dyn Clock,
    sink: &mut dyn SampleSink,
    stop: &StopFlag,
) -> Result<CollectionResult, SinkError> {
    let started = clock.monotonic();
    let deadline = config.duration_seconds.map(|d| started + d);
    let mut next_poll = started;
    let mut polls = 0;
    let finish = |polls, stop_reason, detail| CollectionResult {
        polls,
        stop_reason,
        detail,
        warnings: Vec::new(),
    };
    loop {
        let wake = deadline.map_or(next_poll, |d| next_poll.min(d));
        if clock.wait_until(wake, stop) {
            return Ok(finish(polls, StopReason::StopRequested, None));
        }
        if deadline.is_some_and(|d| clock.monotonic() >= d) {
            return Ok(finish(polls, StopReason::DurationElapsed, None));
        }
        let poll = poll_once(process, reborrow_gpu(&mut gpu), clock);
        sink.write_poll(&config.context, &poll)?;
        polls += 1;
        if let Some((reason, detail)) = stop_reason(&poll) {
            return Ok(finish(polls, reason, detail));
        }
        next_poll = next_poll_time(next_poll, config.interval_seconds, clock.monotonic());
    }
}

/// One poll (docs/telemetry.md §5.6.1): one wall timestamp, the RSS sample, then the GPU's
/// used and reserved samples. NVML is not asked when the process is gone.
pub fn poll_once(
    process: &mut dyn ProcessSource,
    gpu: Option<&mut dyn GpuSource>,
    clock: &mut dyn Clock,
) -> Poll {
    let observed_at_ns = clock.wall_ns();
    let rss = process.read_rss();
    let process_ended = rss.state == SampleState::Invalid;
    let mut samples = vec![Sample {
        metric: Metric::ProcessRss,
        value_bytes: rss.rss_bytes,
        state: rss.state,
        detail: rss.detail,
    }];
    if let Some(gpu) = gpu {
        let reading = if process_ended {
            GpuReading::unavailable(SampleState::Invalid, PROCESS_ENDED_DETAIL.to_string())
        } else {
            gpu.read()
        };
        let (used, reserved) = if gpu.gpu_instance_id().is_some() {
            (Metric::InstanceMemoryUsed, Metric::InstanceMemoryReserved)
        } else {
            (Metric::DeviceMemoryUsed, Metric::DeviceMemoryReserved)
        };
        for (metric, value) in [
            (used, reading.used_bytes),
            (reserved, reading.reserved_bytes),
        ] {
            samples.push(Sample {
                metric,
                value_bytes: value,
                state: reading.state,
                detail: reading.detail.clone(),
            });
        }
    }
    Poll {
        observed_at_ns,
        samples,
    }
}

/// The process first, then the GPU: an invalid RSS sample means the server
/// ended; otherwise an invalid GPU sample means the GPU identity changed.
fn stop_reason(poll: &Poll) -> Option<(StopReason, Option<String>)> {
    let (first, rest) = poll.samples.split_first()?;
    if first.state == SampleState::Invalid {
        return Some((StopReason::ServerProcessEnded, first.detail.clone()));
    }
    rest.iter()
        .find(|s| s.state == SampleState::Invalid)
        .map(|s| (StopReason::GpuIdentityChanged, s.detail.clone()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::collector::identity::ServerIdentity;
    use crate::collector::output::MemorySink;
    use crate::collector::sources::fake::{FakeClock, FakeGpu, FakeProcess};
    use crate::collector::sources::ProcessReading;

    fn context(gpu: Option<(&str, Option<&str>)>) -> RecordContext {
        let identity = ServerIdentity {
            host: "vm".into(),
            pid: 42,
            process_start_ns: 7,
            device_uuid: gpu.map(|g| g.0.to_string()),
            gpu_instance_id: gpu.and_then(|g| g.1.map(str::to_string)),
            replica_id: None,
            rank: None,
            boot_id: None,
            group_id: None,
            world_size: None,
        };
        RecordContext::new("r1", identity, 100)
    }

    fn config(duration: Option<f64>) -> LoopConfig {
        LoopConfig::new(context(None), 0.1, duration)
    }

    #[test]
    fn interval_ms_rounds_half_to_even() {
        assert_eq!(interval_ms(0.1), 100);
        assert_eq!(interval_ms(0.0125), 12);
        assert_eq!(interval_ms(0.0155), 16);
        assert_eq!(interval_ms(0.0105), 10);
        assert_eq!(interval_ms(2.5e-3 * 10.0), 25);
    }

    #[test]
    fn next_poll_skips_missed_polls() {
        assert_eq!(next_poll_time(10.0, 0.5, 10.2), 10.5);
        // Already past the slot: one interval from now, no catch-up burst.
        assert_eq!(next_poll_time(10.0, 0.5, 11.3), 11.8);
        assert_eq!(next_poll_time(10.0, 0.5, 10.5), 11.0);
    }

    #[test]
    fn duration_stops_after_the_polls_that_fit() {
        // Polls at 0, 0.1, 0.2, 0.3 fit in 0.35 s (the spec's 4-poll example).
        let mut clock = FakeClock::new();
        let mut process = FakeProcess::new(42, vec![]);
        let mut sink = MemorySink::default();
        let r = collect(
            &config(Some(0.35)),
            &mut process,
            None,
            &mut clock,
            &mut sink,
            &StopFlag::new(),
        )
        .unwrap();
        assert_eq!(
            (r.polls, r.stop_reason, r.detail.clone()),
            (4, StopReason::DurationElapsed, None)
        );
        let times: Vec<i64> = sink.polls.iter().map(|p| p.observed_at_ns).collect();
        assert_eq!(times[0], clock.wall_epoch_ns + 1000 * 1_000_000_000);
        for pair in times.windows(2) {
            assert!((pair[1] - pair[0] - 100_000_000).abs() < 1_000, "{pair:?}");
        }
        // The last wait is cut short by the deadline, not the next slot.
        assert!((clock.waits.last().unwrap() - 1000.35).abs() < 1e-9);
        assert_eq!(sink.text.lines().count(), 4);
    }

    #[test]
    fn slow_polls_skip_slots_instead_of_bursting() {
        let mut clock = FakeClock::new();
        let mut process = FakeProcess::new(42, vec![]);
        process.time = Some(clock.now.clone());
        // The second poll takes 0.25 s: slots 0.2 and 0.3 are missed.
        process.costs = [0.0, 0.25].into();
        let mut sink = MemorySink::default();
        let r = collect(
            &config(Some(0.6)),
            &mut process,
            None,
            &mut clock,
            &mut sink,
            &StopFlag::new(),
        )
        .unwrap();
        let starts: Vec<f64> = clock
            .waits
            .iter()
            .map(|w| ((w - 1000.0) * 100.0).round() / 100.0)
            .collect();
        // Polls at 0, 0.1 (ends 0.35), then 0.45, 0.55; the deadline at 0.6.
        assert_eq!(starts, vec![0.0, 0.1, 0.45, 0.55, 0.6]);
        assert_eq!(r.polls, 4);
    }

    #[test]
    fn signal_stops_between_polls() {
        let mut clock = FakeClock::new();
        clock.stop_at = Some(1000.25);
        let mut process = FakeProcess::new(42, vec![]);
        let mut sink = MemorySink::default();
        let stop = StopFlag::new();
        let r = collect(
            &config(None),
            &mut process,
            None,
            &mut clock,
            &mut sink,
            &stop,
        )
        .unwrap();
        assert_eq!(
            (r.polls, r.stop_reason, r.detail),
            (3, StopReason::StopRequested, None)
        );
        assert!(stop.is_set());
    }

    #[test]
    fn stop_already_set_writes_nothing_and_beats_the_deadline() {
        let mut clock = FakeClock::new();
        let mut process = FakeProcess::new(42, vec![]);
        let mut sink = MemorySink::default();
        let stop = StopFlag::new();
        stop.set();
        let r = collect(
            &config(Some(0.0001)),
            &mut process,
            None,
            &mut clock,
            &mut sink,
            &stop,
        )
        .unwrap();
        assert_eq!((r.polls, r.stop_reason), (0, StopReason::StopRequested));
        assert_eq!(process.reads, 0);
    }

    #[test]
    fn process_end_writes_the_invalid_poll_and_stops() {
        let mut clock = FakeClock::new();
        let mut process = FakeProcess::new(
            42,
            vec![
                ProcessReading::valid(1),
                ProcessReading::valid(2),
                ProcessReading::ended(),
            ],
        );
        let mut gpu = FakeGpu::new("GPU-a", vec![]);
        let mut sink = MemorySink::default();
        let cfg = LoopConfig::new(context(Some(("GPU-a", None))), 0.5, None);
        let r = collect(
            &cfg,
            &mut process,
            Some(&mut gpu),
            &mut clock,
            &mut sink,
            &StopFlag::new(),
        )
        .unwrap();
        assert_eq!(r.polls, 3);
        assert_eq!(r.stop_reason, StopReason::ServerProcessEnded);
        assert_eq!(r.detail.as_deref(), Some(PROCESS_ENDED_DETAIL));
        // NVML was read for the two live polls only.
        assert_eq!(gpu.reads, 2);
        let last = &sink.polls[2].samples;
        assert!(last
            .iter()
            .all(|s| s.state == SampleState::Invalid && s.value_bytes.is_none()));
        assert!(last
            .iter()
            .all(|s| s.detail.as_deref() == Some(PROCESS_ENDED_DETAIL)));
        assert_eq!(
            last.iter().map(|s| s.metric).collect::<Vec<_>>(),
            vec![
                Metric::ProcessRss,
                Metric::DeviceMemoryUsed,
                Metric::DeviceMemoryReserved
            ]
        );
        // Two valid polls 500 ms apart, then the invalid one.
        let t: Vec<i64> = sink.polls.iter().map(|p| p.observed_at_ns).collect();
        assert_eq!(t[1] - t[0], 500_000_000);
        let lines: Vec<&str> = sink.text.lines().collect();
        assert_eq!(lines.len(), 9);
        assert!(lines[6].contains(r#""state": "invalid", "value_bytes": null}"#));
    }

    #[test]
    fn gpu_identity_change_stops_with_its_detail() {
        let mut clock = FakeClock::new();
        let mut process = FakeProcess::new(42, vec![]);
        let mut gpu = FakeGpu::new(
            "GPU-a",
            vec![
                GpuReading::valid(5, 1),
                GpuReading::unavailable(SampleState::Invalid, "device UUID changed".into()),
            ],
        );
        let mut sink = MemorySink::default();
        let cfg = LoopConfig::new(context(Some(("GPU-a", None))), 0.1, None);
        let r = collect(
            &cfg,
            &mut process,
            Some(&mut gpu),
            &mut clock,
            &mut sink,
            &StopFlag::new(),
        )
        .unwrap();
        assert_eq!(
            (r.polls, r.stop_reason),
            (2, StopReason::GpuIdentityChanged)
        );
        assert_eq!(r.detail.as_deref(), Some("device UUID changed"));
        // The RSS sample of that poll is still a good reading.
        assert_eq!(sink.polls[1].samples[0].state, SampleState::Valid);
    }

    #[test]
    fn process_end_takes_precedence_over_gpu_change() {
        let mut clock = FakeClock::new();
        let mut process = FakeProcess::new(42, vec![ProcessReading::ended()]);
        let mut gpu = FakeGpu::new(
            "GPU-a",
            vec![GpuReading::unavailable(
                SampleState::Invalid,
                "device UUID changed".into(),
            )],
        );
        let mut sink = MemorySink::default();
        let cfg = LoopConfig::new(context(Some(("GPU-a", None))), 0.1, None);
        let r = collect(
            &cfg,
            &mut process,
            Some(&mut gpu),
            &mut clock,
            &mut sink,
            &StopFlag::new(),
        )
        .unwrap();
        assert_eq!(
            (r.polls, r.stop_reason),
            (1, StopReason::ServerProcessEnded)
        );
        assert_eq!(gpu.reads, 0);
    }

    #[test]
    fn missing_samples_do_not_stop_collection() {
        let mut clock = FakeClock::new();
        let mut process = FakeProcess::new(
            42,
            vec![
                ProcessReading::access_denied(),
                ProcessReading::missing("server process memory unavailable: x".into()),
                ProcessReading::valid(9),
            ],
        );
        let mut gpu = FakeGpu::new(
            "GPU-a",
            vec![
                GpuReading::unavailable(
                    SampleState::Missing,
                    "NVML memory read unavailable (code 3)".into(),
                ),
                GpuReading::unavailable(
                    SampleState::Missing,
                    "device identity unreadable: NVML UUID lookup failed (code 15)".into(),
                ),
                GpuReading::valid(5, 1),
            ],
        );
        let mut sink = MemorySink::default();
        let cfg = LoopConfig::new(context(Some(("GPU-a", None))), 0.1, Some(0.25));
        let r = collect(
            &cfg,
            &mut process,
            Some(&mut gpu),
            &mut clock,
            &mut sink,
            &StopFlag::new(),
        )
        .unwrap();
        assert_eq!((r.polls, r.stop_reason), (3, StopReason::DurationElapsed));
        let states: Vec<(&str, Option<&str>)> = sink
            .polls
            .iter()
            .flat_map(|p| {
                p.samples
                    .iter()
                    .map(|s| (s.state.as_str(), s.detail.as_deref()))
            })
            .collect();
        assert_eq!(
            states,
            vec![
                (
                    "missing",
                    Some("access denied reading server process memory")
                ),
                ("missing", Some("NVML memory read unavailable (code 3)")),
                ("missing", Some("NVML memory read unavailable (code 3)")),
                ("missing", Some("server process memory unavailable: x")),
                (
                    "missing",
                    Some("device identity unreadable: NVML UUID lookup failed (code 15)")
                ),
                (
                    "missing",
                    Some("device identity unreadable: NVML UUID lookup failed (code 15)")
                ),
                ("valid", None),
                ("valid", None),
                ("valid", None),
            ]
        );
        assert_eq!(sink.polls[2].samples[1].value_bytes, Some(5));
        assert_eq!(sink.polls[2].samples[2].value_bytes, Some(1));
    }

    #[test]
    fn mig_samples_use_instance_metrics() {
        let mut clock = FakeClock::new();
        let mut process = FakeProcess::new(42, vec![]);
        let mut gpu = FakeGpu::new("GPU-a", vec![]);
        gpu.gpu_instance_id = Some("MIG-b".into());
        let mut sink = MemorySink::default();
        let cfg = LoopConfig::new(context(Some(("GPU-a", Some("MIG-b")))), 0.1, Some(0.05));
        collect(
            &cfg,
            &mut process,
            Some(&mut gpu),
            &mut clock,
            &mut sink,
            &StopFlag::new(),
        )
        .unwrap();
        let metrics: Vec<&str> = sink.polls[0]
            .samples
            .iter()
            .map(|s| s.metric.name())
            .collect();
        assert_eq!(
            metrics,
            vec![
                "process_rss_bytes",
                "instance_memory_used_bytes",
                "instance_memory_reserved_bytes"
            ]
        );
        assert!(sink.text.contains(r#""scope": "gpu_instance""#));
    }

    #[test]
    fn stale_state_renders_for_other_producers() {
        assert_eq!(SampleState::Stale.as_str(), "stale");
    }

    #[test]
    fn system_clock_wakes_early_on_stop() {
        let stop = StopFlag::new();
        let setter = stop.clone();
        let handle = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            setter.set();
        });
        let mut clock = SystemClock::new();
        let begun = Instant::now();
        let wake = clock.monotonic() + 10.0;
        assert!(clock.wait_until(wake, &stop));
        assert!(begun.elapsed() < Duration::from_secs(5));
        handle.join().unwrap();
    }
}
