//! The read floor: what every analyzer of an artifact must do, and nothing else.
//!
//! Reads the whole file, finds its lines, checks each is UTF-8 and walks every
//! line's keys and values with stormlog's own scanner (`db::scan`), on all
//! cores. No decoding into records, no database, no analysis. `bench/run.sh`
//! states analyze and ingest as multiples of this figure.
//!
//! ```console
//! cargo bench --bench floor -- FILE [REPEAT]
//! ```
//!
//! Prints one line per phase with the median wall time of REPEAT runs
//! (default 5): `read` (the file into memory), `lines` (read, then every
//! newline found) and `floor` (read, lines, UTF-8 and every member scanned).
use rayon::prelude::*;
use std::time::Instant;
use stormlog::db::scan::{members_shaped, Shape};

/// Lines of `bytes` in about `parts` pieces, each cut at a newline.
fn pieces(bytes: &[u8], parts: usize) -> Vec<&[u8]> {
    let step = (bytes.len() / parts.max(1)).max(1);
    let mut out = Vec::with_capacity(parts + 1);
    let mut start = 0;
    while start < bytes.len() {
        let guess = (start + step).min(bytes.len());
        let end = match memchr::memchr(b'\n', &bytes[guess..]) {
            Some(i) => guess + i + 1,
            None => bytes.len(),
        };
        out.push(&bytes[start..end]);
        start = end;
    }
    out
}

/// What a piece holds: lines, members scanned, lines the scanner declined.
#[derive(Default, Clone, Copy)]
struct Tally {
    lines: u64,
    members: u64,
    declined: u64,
}

impl Tally {
    fn add(self, o: Tally) -> Tally {
        Tally {
            lines: self.lines + o.lines,
            members: self.members + o.members,
            declined: self.declined + o.declined,
        }
    }
}

fn scan_piece(piece: &[u8]) -> Tally {
    let mut shape = Shape::default();
    let mut t = Tally::default();
    for line in piece.split(|&b| b == b'\n') {
        if line.is_empty() {
            continue;
        }
        t.lines += 1;
        let Ok(text) = std::str::from_utf8(line) else {
            t.declined += 1;
            continue;
        };
        match members_shaped(text.trim_end_matches('\r'), &mut shape) {
            Some((members, _)) => {
                // Touch every key and value, as a decoder must.
                t.members += members
                    .iter()
                    .map(|(k, v)| (k.len() + v.text.len()).min(1) as u64)
                    .sum::<u64>();
            }
            None => t.declined += 1,
        }
    }
    t
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> std::process::ExitCode {
    // `cargo bench` passes `--bench` to harness-less targets: skip flags.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cargo bench --bench floor -- FILE [REPEAT]");
        return std::process::ExitCode::from(2);
    };
    let repeat: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(5).max(1);
    let parts = rayon::current_num_threads() * 8;
    let (mut read, mut lines, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    let mut tally = Tally::default();
    let mut size = 0;
    for _ in 0..repeat {
        let t0 = Instant::now();
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("floor: cannot read {path}: {e}");
                return std::process::ExitCode::from(2);
            }
        };
        size = bytes.len();
        read.push(t0.elapsed().as_secs_f64());
        drop(bytes);

        let t0 = Instant::now();
        let bytes = std::fs::read(path).unwrap_or_default();
        let n: usize = pieces(&bytes, parts)
            .par_iter()
            .map(|p| memchr::memchr_iter(b'\n', p).count())
            .sum();
        std::hint::black_box(n);
        lines.push(t0.elapsed().as_secs_f64());
        drop(bytes);

        let t0 = Instant::now();
        let bytes = std::fs::read(path).unwrap_or_default();
        tally = pieces(&bytes, parts)
            .par_iter()
            .map(|p| scan_piece(p))
            .reduce(Tally::default, Tally::add);
        floor.push(t0.elapsed().as_secs_f64());
    }
    let mb = size as f64 / 1e6;
    let f = median(floor.clone());
    println!(
        "file: {path} ({mb:.1} MB, {} lines, {} members, {} declined)",
        tally.lines, tally.members, tally.declined
    );
    println!("read:  {:.3} s", median(read));
    println!("lines: {:.3} s", median(lines));
    println!(
        "floor: {f:.3} s ({:.0} MB/s on {} threads)",
        mb / f,
        rayon::current_num_threads()
    );
    std::process::ExitCode::SUCCESS
}
