//! Python's `float`: `repr()`, the JSON spellings of NaN/±∞, and the
//! `format()` specs the reports use (`g`, `f`, `%`).

/// Python `repr(float)` (shortest round-trip digits; scientific notation when
/// the decimal exponent is outside [-4, 16)), with the JSON spellings `NaN`,
/// `Infinity`, `-Infinity` for non-finite values.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, point) = shortest_digits(f.abs());
    let n = digits.len() as i32;
    let exp = point - 1;
    let body = if (-4..16).contains(&exp) {
        if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point >= n {
            format!("{digits}{}.0", "0".repeat((point - n) as usize))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{first}{dot}{rest}e{esign}{:02}", exp.abs())
    };
    format!("{sign}{body}")
}

/// Shortest round-trip significant digits of a positive finite `f` (from
/// ryu) and the position of the decimal point relative to them:
/// `f = 0.DIGITS × 10^point`.
fn shortest_digits(f: f64) -> (String, i32) {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(f);
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let trimmed = all.trim_start_matches('0');
    let lead = (all.len() - trimmed.len()) as i32;
    let digits = trimmed.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    (digits.to_owned(), int.len() as i32 - lead + exp)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn float_repr_matches_python() {
        // Expected strings printed by CPython 3.11 `repr(float)`.
        #[rustfmt::skip]
        let cases: &[(f64, &str)] = &[
            (5.0, "5.0"), (1000000000000000.0, "1000000000000000.0"), (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (123456789012345680.0, "1.2345678901234568e+17"), (1e-5, "1e-05"), (1.5e-7, "1.5e-07"),
            (1e-7, "1e-07"), (-0.0, "-0.0"), (0.0, "0.0"), (0.1, "0.1"), (1e22, "1e+22"),
            (0.0001, "0.0001"), (0.00001, "1e-05"), (2.5e-05, "2.5e-05"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (5e-324, "5e-324"),
            (9999999999999998.0, "9999999999999998.0"), (0.3, "0.3"),
            (2.0 / 3.0, "0.6666666666666666"), (-1.5, "-1.5"), (100.0, "100.0"), (1e100, "1e+100"),
            (12345.678, "12345.678"), (f64::NAN, "NaN"), (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(*f), *want, "repr of {f:e}");
        }
    }
}
