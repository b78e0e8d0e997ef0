//! Timings: the `STORMLOG_TIMINGS` phase marks on stderr.

/// Phase timings on stderr when `STORMLOG_TIMINGS` is set (for profiling a
/// slow run: `STORMLOG_TIMINGS=1 stormlog analyze big.jsonl`).
pub struct Phases {
    start: Option<std::time::Instant>,
}

impl Phases {
    pub fn from_env() -> Self {
        Phases {
            start: std::env::var_os("STORMLOG_TIMINGS").map(|_| std::time::Instant::now()),
        }
    }

    /// Prints the time since the start, labelled.
    pub fn mark(&mut self, label: &str) {
        if let Some(start) = self.start {
            // Linux reports the peak resident size so far; elsewhere it is left out.
            let peak = std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find(|l| l.starts_with("VmHWM:"))
                        .map(|l| l["VmHWM:".len()..].trim().to_owned())
                })
                .map(|p| format!(", peak memory {p}"))
                .unwrap_or_default();
            eprintln!(
                "stormlog: {label} done at {:.3} s{peak}",
                start.elapsed().as_secs_f64()
            );
        }
    }
}
