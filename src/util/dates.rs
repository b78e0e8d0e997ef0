//! Dates: seconds since the Unix epoch as ISO 8601 UTC text.

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch (UTC, proleptic Gregorian).
pub fn iso8601_utc(secs: u64) -> String {
    iso8601_utc_signed(i64::try_from(secs).unwrap_or(i64::MAX))
}

/// [`iso8601_utc`] of seconds that may be before 1970 (a run's instants are
/// signed nanoseconds).
pub fn iso8601_utc_signed(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
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

#[cfg(test)]
mod tests {
    #[test]
    fn iso_dates() {
        assert_eq!(super::iso8601_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::iso8601_utc(1_795_961_268), "2026-11-29T14:07:48Z");
        assert_eq!(super::iso8601_utc(951_782_400), "2000-02-29T00:00:00Z");
        // Before the epoch (a signed instant): the day and time count back.
        assert_eq!(super::iso8601_utc_signed(-1), "1969-12-31T23:59:59Z");
        assert_eq!(
            super::iso8601_utc_signed(-86_400 * 365),
            "1969-01-01T00:00:00Z"
        );
        // Past i64 the seconds saturate instead of wrapping.
        assert!(super::iso8601_utc(u64::MAX).starts_with("292277026596-"));
    }
}
