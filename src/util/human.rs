//! Human units: byte sizes and durations as people write them.

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
