//! Small helpers shared by the commands: time stamps, hashing, progress.
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch (UTC, proleptic Gregorian).
pub fn iso8601_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// The SHA-256 of a file's bytes, as hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// A byte-count progress bar on stderr, only when asked for and stderr is a terminal.
pub fn progress_bar(enabled: bool, total: u64, path: &Path) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !enabled || !std::io::stderr().is_terminal() || total < (8 << 20) {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    let style = indicatif::ProgressStyle::with_template(
        // `wide_msg` shortens the file name so the line fits the terminal;
        // the sizes are binary units, as the final line's MiB.
        "{wide_msg} [{bar:20}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
    )
    .map(|s| s.progress_chars("=> "));
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar.set_message(path.display().to_string());
    Some(bar)
}

/// `s` safe to print on a terminal: control characters (ESC, a newline,
/// C1 controls) and the bidirectional overrides are written as `\u{1b}`
/// escapes, so a stored run id, model or endpoint can neither send escape
/// sequences nor forge a line of a table.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `s` padded with spaces to `width` characters, on the right (or, when
/// `right_align`, on the left). `format!`'s `{:<w$}` panics for a width
/// of 65,536 or more, which a stored value can ask for.
pub fn pad(s: &str, width: usize, right_align: bool) -> String {
    let fill = width.saturating_sub(s.chars().count());
    let mut out = String::with_capacity(s.len() + fill);
    if right_align {
        out.extend(std::iter::repeat_n(' ', fill));
    }
    out.push_str(s);
    if !right_align {
        out.extend(std::iter::repeat_n(' ', fill));
    }
    out
}

/// Left-aligned columns for a terminal, two spaces apart.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|c| printable(c).into_owned()).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                l.push_str(c);
            } else {
                l.push_str(&pad(c, widths[i], false));
                l.push_str("  ");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}

/// The SHA-256 of bytes, as hex.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Transparent huge pages (Linux's 2 MiB pages) make first touching memory
/// several times cheaper: on the virtual machines we measure on, 100 MB took
/// 85 ms in 4 KiB pages and 14 ms in huge ones, and a report spends a third
/// of its time there. But any touched 2 MiB is then resident whole, which
/// for the many small allocations of an ingest or an analyze costs more
/// memory than it saves time (a 90,000-request analyze peaked at 88 MB with
/// them everywhere, 67 MB without). So they are off for the process
/// ([`small_pages`], first thing in `main`) and on only while a
/// [`HugePages`] lives, around the allocation of a run's requests, the one
/// large array. The switch is the process's (`PR_SET_THP_DISABLE`): memory
/// other threads first touch meanwhile may land on huge pages too. Where
/// the kernel has no such switch, nothing changes.
pub fn small_pages() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(true);
}

/// Huge pages allowed for as long as it lives (not to be nested: the first
/// to end turns them off).
pub struct HugePages(());

impl HugePages {
    pub fn allow() -> Self {
        #[cfg(target_os = "linux")]
        let _ = nix::sys::prctl::set_thp_disable(false);
        HugePages(())
    }
}

impl Drop for HugePages {
    fn drop(&mut self) {
        small_pages();
    }
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn iso_dates() {
        assert_eq!(super::iso8601_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::iso8601_utc(1_795_961_268), "2026-11-29T14:07:48Z");
        assert_eq!(super::iso8601_utc(951_782_400), "2000-02-29T00:00:00Z");
    }
}

/// A size for people: B, KiB, MiB or GiB, one decimal above bytes.
pub fn human_bytes(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else if b < KIB * KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else {
        format!("{:.2} GiB", b / (KIB * KIB * KIB))
    }
}

/// A duration for people: whole milliseconds under a second, seconds above.
pub fn human_seconds(secs: f64) -> String {
    if !secs.is_finite() {
        return "-".into();
    }
    if secs < 1.0 {
        format!("{} ms", (secs * 1000.0).round() as i64)
    } else {
        format!("{secs:.2} s")
    }
}

#[cfg(test)]
mod human_tests {
    use super::{human_bytes, human_seconds};

    #[test]
    fn sizes_and_durations_read_as_people_write_them() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(33_095_680), "31.6 MiB");
        assert_eq!(human_bytes(3 << 30), "3.00 GiB");
        assert_eq!(human_seconds(0.0304), "30 ms");
        assert_eq!(human_seconds(2.5), "2.50 s");
    }
}
