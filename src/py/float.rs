//! Python's `float`: `repr()`, the JSON spellings of NaN/±∞, and the
//! `format()` specs the reports use (`g`, `f`, `%`), and `float(str)`.

use crate::py::text::number_text;

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

/// Python's `repr(f)` (and `str(f)`): [`float_repr`] with `nan`, `inf` and
/// `-inf` for the non-finite values.
pub fn repr(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        float_repr(f)
    }
}

/// The sign Python's `format()` writes: `-` for a negative number (`-0.0`
/// included), `+` for any other when `plus`; never one for a NaN unless
/// `plus` (CPython drops the sign bit of a NaN, which Rust's `0.0 / 0.0`
/// sets on x86).
fn sign(x: f64, plus: bool) -> &'static str {
    if x.is_sign_negative() && !x.is_nan() {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    }
}

/// Python's `nan`/`inf` spelling in `format()`, unsigned.
fn nonfinite(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("nan")
    } else if x.is_infinite() {
        Some("inf")
    } else {
        None
    }
}

/// What Python's `format(x, spec)` prints for a non-finite `x` without a
/// `+`: `nan`, `inf` or `-inf`; `None` for a finite `x`.
pub fn nonfinite_word(x: f64) -> Option<&'static str> {
    match nonfinite(x) {
        Some("inf") if x < 0.0 => Some("-inf"),
        word => word,
    }
}

/// Python's `format(x, ".{precision}g")` (`"+.{precision}g"` when `plus`):
/// `precision` significant digits (0 counts as 1), trailing zeros dropped,
/// exponent form when the exponent after rounding is below -4 or at least
/// `precision`.
pub fn format_g(x: f64, precision: usize, plus: bool) -> String {
    let sign = sign(x, plus);
    if let Some(word) = nonfinite(x) {
        return format!("{sign}{word}");
    }
    let a = x.abs();
    if a == 0.0 {
        return format!("{sign}0");
    }
    let p = precision.max(1);
    // Rounding to p significant digits first decides the exponent (9.999995
    // becomes 10.0000 at six digits, exponent 1), as Python's formatter does;
    // Rust's `{:e}` rounds the exact binary value half to even, as CPython.
    let sci = format!("{:.*e}", p - 1, a);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{}e{esign}{:02}", strip_zeros(mantissa), exp.abs());
    }
    let decimals = usize::try_from(p as i32 - 1 - exp).unwrap_or(0);
    format!("{sign}{}", strip_zeros(&format!("{a:.decimals$}")))
}

/// Python's `format(x, "g")`: [`format_g`] with six digits.
pub fn g(x: f64) -> String {
    format_g(x, 6, false)
}

/// `g`'s rule for trailing zeros: those after a decimal point go, and the
/// point with them when nothing follows it.
fn strip_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}

/// Python's `format(x, ".{decimals}f")` (`"+.{decimals}f"` when `plus`):
/// the exact binary value rounded half to even, as CPython does.
pub fn fixed(x: f64, decimals: usize, plus: bool) -> String {
    let sign = sign(x, plus);
    match nonfinite(x) {
        Some(word) => format!("{sign}{word}"),
        None => format!("{sign}{:.decimals$}", x.abs()),
    }
}

/// Python's `format(x, ".{decimals}%")` (`"+.{decimals}%"` when `plus`):
/// `x * 100` (one float multiplication, as CPython) in [`fixed`] form, then `%`.
pub fn percent(x: f64, decimals: usize, plus: bool) -> String {
    format!("{}%", fixed(x * 100.0, decimals, plus))
}

/// Python's `float(s)` of a string: surrounding whitespace as
/// [`number_text`] strips it, a sign, `inf`/`infinity`/`nan` in any case, or
/// a decimal with optional exponent where single underscores may join
/// digits; Unicode decimal digits read as digits. `None` where Python raises.
pub fn float_of_str(s: &str) -> Option<f64> {
    let text = number_text(s)?;
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text.as_str()),
    };
    let magnitude = match body.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => decimal(body)?,
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// `digits[.digits]`, `.digits` or `digits.`, then `e[sign]digits`.
fn decimal(body: &str) -> Option<f64> {
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let int = digit_part(int)?;
    let frac = digit_part(frac)?;
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut clean = format!(
        "{}.{}",
        if int.is_empty() { "0" } else { &int },
        if frac.is_empty() { "0" } else { &frac }
    );
    if let Some(exp) = exponent {
        let (sign, digits) = match exp.as_bytes().first() {
            Some(b'-') => ("-", &exp[1..]),
            Some(b'+') => ("", &exp[1..]),
            _ => ("", exp),
        };
        let digits = digit_part(digits).filter(|d| !d.is_empty())?;
        clean.push('e');
        clean.push_str(sign);
        clean.push_str(&digits);
    }
    clean.parse().ok()
}

/// A run of ASCII digits where a single `_` may sit between two digits;
/// returned without the underscores (empty input gives an empty run).
fn digit_part(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_digit() {
            out.push(c as char);
        } else if c == b'_'
            && i > 0
            && b[i - 1].is_ascii_digit()
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            continue;
        } else {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
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

    #[test]
    fn repr_matches_cpython() {
        // Generated once with CPython 3.11.7 (python3 on the build machine) and pasted.
        #[rustfmt::skip]
        let cases: &[(f64, &str)] = &[
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1e+16, "1e+16"),
            (1e-05, "1e-05"),
            (0.30000000000000004, "0.30000000000000004"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-f64::NAN, "nan"),
            (5e-324, "5e-324"),
            (1.7976931348623157e+308, "1.7976931348623157e+308"),
            (999999.5, "999999.5"),
            (9.999995, "9.999995"),
            (123456789.0, "123456789.0"),
            (0.0001, "0.0001"),
            (2.5, "2.5"),
            (0.125, "0.125"),
            (0.375, "0.375"),
            (-1.5, "-1.5"),
            (1e+22, "1e+22"),
            (12345.678, "12345.678"),
        ];
        for &(x, want) in cases {
            assert_eq!(repr(x), want, "repr({x:e})");
        }
    }

    #[test]
    fn format_g_matches_cpython() {
        // Generated once with CPython 3.11.7 (python3 on the build machine) and pasted.
        // (x, precision, plus, format(x, f"{'+' if plus else ''}.{precision}g"))
        #[rustfmt::skip]
        let cases: &[(f64, usize, bool, &str)] = &[
            (-0.0, 6, false, "-0"),
            (-0.0, 4, true, "-0"),
            (-0.0, 1, false, "-0"),
            (-0.0, 0, false, "-0"),
            (0.0, 6, false, "0"),
            (0.0, 4, true, "+0"),
            (0.0, 1, false, "0"),
            (0.0, 0, false, "0"),
            (1e+16, 6, false, "1e+16"),
            (1e+16, 4, true, "+1e+16"),
            (1e+16, 1, false, "1e+16"),
            (1e+16, 0, false, "1e+16"),
            (1e-05, 6, false, "1e-05"),
            (1e-05, 4, true, "+1e-05"),
            (1e-05, 1, false, "1e-05"),
            (1e-05, 0, false, "1e-05"),
            (0.30000000000000004, 6, false, "0.3"),
            (0.30000000000000004, 4, true, "+0.3"),
            (0.30000000000000004, 1, false, "0.3"),
            (0.30000000000000004, 0, false, "0.3"),
            (f64::INFINITY, 6, false, "inf"),
            (f64::INFINITY, 4, true, "+inf"),
            (f64::INFINITY, 1, false, "inf"),
            (f64::INFINITY, 0, false, "inf"),
            (f64::NEG_INFINITY, 6, false, "-inf"),
            (f64::NEG_INFINITY, 4, true, "-inf"),
            (f64::NEG_INFINITY, 1, false, "-inf"),
            (f64::NEG_INFINITY, 0, false, "-inf"),
            (f64::NAN, 6, false, "nan"),
            (f64::NAN, 4, true, "+nan"),
            (f64::NAN, 1, false, "nan"),
            (f64::NAN, 0, false, "nan"),
            (-f64::NAN, 6, false, "nan"),
            (-f64::NAN, 4, true, "+nan"),
            (-f64::NAN, 1, false, "nan"),
            (-f64::NAN, 0, false, "nan"),
            (5e-324, 6, false, "4.94066e-324"),
            (5e-324, 4, true, "+4.941e-324"),
            (5e-324, 1, false, "5e-324"),
            (5e-324, 0, false, "5e-324"),
            (1.7976931348623157e+308, 6, false, "1.79769e+308"),
            (1.7976931348623157e+308, 4, true, "+1.798e+308"),
            (1.7976931348623157e+308, 1, false, "2e+308"),
            (1.7976931348623157e+308, 0, false, "2e+308"),
            (999999.5, 6, false, "1e+06"),
            (999999.5, 4, true, "+1e+06"),
            (999999.5, 1, false, "1e+06"),
            (999999.5, 0, false, "1e+06"),
            (9.999995, 6, false, "10"),
            (9.999995, 4, true, "+10"),
            (9.999995, 1, false, "1e+01"),
            (9.999995, 0, false, "1e+01"),
            (123456789.0, 6, false, "1.23457e+08"),
            (123456789.0, 4, true, "+1.235e+08"),
            (123456789.0, 1, false, "1e+08"),
            (123456789.0, 0, false, "1e+08"),
            (0.0001, 6, false, "0.0001"),
            (0.0001, 4, true, "+0.0001"),
            (0.0001, 1, false, "0.0001"),
            (0.0001, 0, false, "0.0001"),
            (2.5, 6, false, "2.5"),
            (2.5, 4, true, "+2.5"),
            (2.5, 1, false, "2"),
            (2.5, 0, false, "2"),
            (0.125, 6, false, "0.125"),
            (0.125, 4, true, "+0.125"),
            (0.125, 1, false, "0.1"),
            (0.125, 0, false, "0.1"),
            (0.375, 6, false, "0.375"),
            (0.375, 4, true, "+0.375"),
            (0.375, 1, false, "0.4"),
            (0.375, 0, false, "0.4"),
            (-1.5, 6, false, "-1.5"),
            (-1.5, 4, true, "-1.5"),
            (-1.5, 1, false, "-2"),
            (-1.5, 0, false, "-2"),
            (1e+22, 6, false, "1e+22"),
            (1e+22, 4, true, "+1e+22"),
            (1e+22, 1, false, "1e+22"),
            (1e+22, 0, false, "1e+22"),
            (12345.678, 6, false, "12345.7"),
            (12345.678, 4, true, "+1.235e+04"),
            (12345.678, 1, false, "1e+04"),
            (12345.678, 0, false, "1e+04"),
        ];
        for &(x, p, plus, want) in cases {
            assert_eq!(
                format_g(x, p, plus),
                want,
                "format({x:e}, .{p}g, plus={plus})"
            );
        }
        assert_eq!(g(1234567.0), "1.23457e+06");
    }

    #[test]
    fn fixed_and_percent_match_cpython() {
        // Generated once with CPython 3.11.7 (python3 on the build machine) and pasted.
        // (x, decimals, plus, format(x, ".{decimals}f"), format(x, ".{decimals}%"))
        #[rustfmt::skip]
        let cases: &[(f64, usize, bool, &str, &str)] = &[
            (-0.0, 2, false, "-0.00", "-0.00%"),
            (-0.0, 1, true, "-0.0", "-0.0%"),
            (-0.0, 0, false, "-0", "-0%"),
            (0.0, 2, false, "0.00", "0.00%"),
            (0.0, 1, true, "+0.0", "+0.0%"),
            (0.0, 0, false, "0", "0%"),
            (1e+16, 2, false, "10000000000000000.00", "1000000000000000000.00%"),
            (1e+16, 1, true, "+10000000000000000.0", "+1000000000000000000.0%"),
            (1e+16, 0, false, "10000000000000000", "1000000000000000000%"),
            (1e-05, 2, false, "0.00", "0.00%"),
            (1e-05, 1, true, "+0.0", "+0.0%"),
            (1e-05, 0, false, "0", "0%"),
            (0.30000000000000004, 2, false, "0.30", "30.00%"),
            (0.30000000000000004, 1, true, "+0.3", "+30.0%"),
            (0.30000000000000004, 0, false, "0", "30%"),
            (f64::INFINITY, 2, false, "inf", "inf%"),
            (f64::INFINITY, 1, true, "+inf", "+inf%"),
            (f64::INFINITY, 0, false, "inf", "inf%"),
            (f64::NEG_INFINITY, 2, false, "-inf", "-inf%"),
            (f64::NEG_INFINITY, 1, true, "-inf", "-inf%"),
            (f64::NEG_INFINITY, 0, false, "-inf", "-inf%"),
            (f64::NAN, 2, false, "nan", "nan%"),
            (f64::NAN, 1, true, "+nan", "+nan%"),
            (f64::NAN, 0, false, "nan", "nan%"),
            (-f64::NAN, 2, false, "nan", "nan%"),
            (-f64::NAN, 1, true, "+nan", "+nan%"),
            (-f64::NAN, 0, false, "nan", "nan%"),
            (5e-324, 2, false, "0.00", "0.00%"),
            (5e-324, 1, true, "+0.0", "+0.0%"),
            (5e-324, 0, false, "0", "0%"),
            (1.7976931348623157e+308, 2, false, "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.00", "inf%"),
            (1.7976931348623157e+308, 1, true, "+179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.0", "+inf%"),
            (1.7976931348623157e+308, 0, false, "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368", "inf%"),
            (999999.5, 2, false, "999999.50", "99999950.00%"),
            (999999.5, 1, true, "+999999.5", "+99999950.0%"),
            (999999.5, 0, false, "1000000", "99999950%"),
            (9.999995, 2, false, "10.00", "1000.00%"),
            (9.999995, 1, true, "+10.0", "+1000.0%"),
            (9.999995, 0, false, "10", "1000%"),
            (123456789.0, 2, false, "123456789.00", "12345678900.00%"),
            (123456789.0, 1, true, "+123456789.0", "+12345678900.0%"),
            (123456789.0, 0, false, "123456789", "12345678900%"),
            (0.0001, 2, false, "0.00", "0.01%"),
            (0.0001, 1, true, "+0.0", "+0.0%"),
            (0.0001, 0, false, "0", "0%"),
            (2.5, 2, false, "2.50", "250.00%"),
            (2.5, 1, true, "+2.5", "+250.0%"),
            (2.5, 0, false, "2", "250%"),
            (0.125, 2, false, "0.12", "12.50%"),
            (0.125, 1, true, "+0.1", "+12.5%"),
            (0.125, 0, false, "0", "12%"),
            (0.375, 2, false, "0.38", "37.50%"),
            (0.375, 1, true, "+0.4", "+37.5%"),
            (0.375, 0, false, "0", "38%"),
            (-1.5, 2, false, "-1.50", "-150.00%"),
            (-1.5, 1, true, "-1.5", "-150.0%"),
            (-1.5, 0, false, "-2", "-150%"),
            (1e+22, 2, false, "10000000000000000000000.00", "999999999999999983222784.00%"),
            (1e+22, 1, true, "+10000000000000000000000.0", "+999999999999999983222784.0%"),
            (1e+22, 0, false, "10000000000000000000000", "999999999999999983222784%"),
            (12345.678, 2, false, "12345.68", "1234567.80%"),
            (12345.678, 1, true, "+12345.7", "+1234567.8%"),
            (12345.678, 0, false, "12346", "1234568%"),
        ];
        for &(x, d, plus, want_f, want_pct) in cases {
            assert_eq!(fixed(x, d, plus), want_f, "fixed({x:e}, {d}, {plus})");
            assert_eq!(percent(x, d, plus), want_pct, "percent({x:e}, {d}, {plus})");
        }
        assert_eq!(nonfinite_word(f64::NEG_INFINITY), Some("-inf"));
        assert_eq!(nonfinite_word(-f64::NAN), Some("nan"));
        assert_eq!(nonfinite_word(1.0), None);
    }

    #[test]
    fn float_of_str_matches_cpython() {
        // Generated once with CPython 3.11.7 (python3 on the build machine) and pasted.
        // (s, float(s), None where it raises ValueError)
        #[rustfmt::skip]
        let cases: &[(&str, Option<f64>)] = &[
            ("1", Some(1.0)),
            ("-7", Some(-7.0)),
            (" 1_000 ", Some(1000.0)),
            ("\u{661}\u{662}\u{663}", Some(123.0)),
            ("\u{ff11}\u{ff12}", Some(12.0)),
            ("1_2", Some(12.0)),
            ("1__2", None),
            ("_1", None),
            ("1_", None),
            ("+", None),
            ("", None),
            (" ", None),
            ("1.5", Some(1.5)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("1e3", Some(1000.0)),
            ("1E-2", Some(0.01)),
            ("1_0.5", Some(10.5)),
            ("1._5", None),
            ("inf", Some(f64::INFINITY)),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("nAn", Some(f64::NAN)),
            ("+nan", Some(f64::NAN)),
            ("in_f", None),
            ("0x10", None),
            ("1\u{1c}", None),
            ("\u{1c}1", None),
            ("1\u{1f}", None),
            ("1\u{85}", Some(1.0)),
            ("\u{85}1", Some(1.0)),
            ("1\u{3000}", Some(1.0)),
            ("\u{3000}1", Some(1.0)),
            ("1\u{a0}", Some(1.0)),
            ("1\u{b}", Some(1.0)),
            ("\u{9}1\u{a}", Some(1.0)),
            ("- 1", None),
            ("1 2", None),
            ("\u{661}.\u{662}", Some(1.2)),
            ("1e\u{663}", Some(1000.0)),
            ("12345678901234567890123456789012345678901234567890", Some(1.2345678901234567e+49)),
            ("-99999999999999999999999999999999999999999", Some(-1e+41)),
            ("abc", None),
            ("\u{661}_\u{662}", Some(12.0)),
            ("\u{2028} 1", Some(1.0)),
            (" 1e400 ", Some(f64::INFINITY)),
            ("\u{b2}", None),
        ];
        for &(s, want) in cases {
            let got = float_of_str(s);
            match (got, want) {
                (Some(a), Some(b)) if a.is_nan() && b.is_nan() => {}
                (Some(a), Some(b)) => assert!(
                    a == b && a.is_sign_negative() == b.is_sign_negative(),
                    "float({s:?}) = {a}, want {b}"
                ),
                _ => assert_eq!(got, want, "float({s:?})"),
            }
        }
    }

    /// The formats the comparison's text and gate statements use.
    #[test]
    fn compare_number_formats() {
        assert_eq!(format_g(0.05, 6, false), "0.05");
        assert_eq!(format_g(0.0, 4, true), "+0");
        assert_eq!(format_g(-0.22049, 4, true), "-0.2205");
        assert_eq!(format_g(0.066509, 4, true), "+0.06651");
        assert_eq!(format_g(123456.0, 4, true), "+1.235e+05");
        assert_eq!(format_g(0.00001234, 4, false), "1.234e-05");
        assert_eq!(format_g(5.0, 6, false), "5");
        assert_eq!(percent(-0.234, 1, true), "-23.4%");
        assert_eq!(percent(0.975, 1, false), "97.5%");
    }

    /// `float()` over the limits `--slo KEY:MS` takes (slo::flags).
    #[test]
    fn float_of_str_reads_slo_limits() {
        let ok = [
            ("5", 5.0),
            (" 5 ", 5.0),
            ("\u{2003}5", 5.0),
            ("1_000", 1000.0),
            ("1e1_0", 1e10),
            (".5", 0.5),
            ("5.", 5.0),
            ("1.e5", 1e5),
            ("-1", -1.0),
            ("+2.5E-3", 2.5e-3),
            ("١٢", 12.0),
            ("١_٢", 12.0),
            ("1e400", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("iNF", f64::INFINITY),
        ];
        for (s, want) in ok {
            assert_eq!(float_of_str(s), Some(want), "{s:?}");
        }
        assert!(float_of_str("nAn").unwrap().is_nan());
        assert!(float_of_str("+nan").unwrap().is_nan());
        for bad in [
            "", ".", "_1", "1__0", "1_", "1_e1", "0x10", "1e", "1e+", "1_.5", "1._5", "\x1c5",
            "fast", "5 6", "infinit", "é",
        ] {
            assert_eq!(float_of_str(bad), None, "{bad:?}");
        }
    }

    /// `format(x, "g")` as an SLO policy's messages print seconds (slo::policy).
    #[test]
    fn g_of_slo_seconds() {
        assert_eq!(g(30.0), "30");
        assert_eq!(g(2.5), "2.5");
        assert_eq!(g(1234567.0), "1.23457e+06");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(999999.5), "1e+06");
        assert_eq!(g(123456.0), "123456");
        assert_eq!(g(0.1), "0.1");
    }
}
