//! Fast reads of the plain JSON values the per-request arrays are made of
//! (numbers, `null`, lists of numbers, strings without escapes), straight
//! from their bytes. Each returns None for anything it does not read
//! exactly as serde_json would (an escape, an out-of-range number, a value
//! of another shape): the caller then takes serde's path for that value, so
//! the value read and any error are the same as before, only the common
//! case is quicker. Numbers are parsed by the standard library, which rounds
//! correctly, as serde_json's `float_roundtrip` does.

/// The length of the JSON number at the start of `b` (grammar of RFC 8259:
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`), and whether it
/// is an integer (no fraction, no exponent); None when `b` does not start
/// with one.
fn number_len(b: &[u8]) -> Option<(usize, bool)> {
    let mut i = 0;
    if b.first() == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while matches!(b.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        _ => return None,
    }
    let mut integer = true;
    if b.get(i) == Some(&b'.') {
        integer = false;
        i += 1;
        let from = i;
        while matches!(b.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        if i == from {
            return None;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        integer = false;
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let from = i;
        while matches!(b.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        if i == from {
            return None;
        }
    }
    Some((i, integer))
}

/// A finite f64 from the number's text (None: out of range, or not ASCII).
fn float_of(text: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(text).ok()?;
    s.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Whether `b` holds nothing at `n` but the end of a value (a delimiter).
fn ends(b: &[u8], n: usize) -> bool {
    matches!(
        b.get(n),
        Some(b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t')
    )
}

/// `null` at the start of `b`.
fn null_at(b: &[u8]) -> bool {
    b.starts_with(b"null") && ends(b, 4)
}

/// A number or `null` at the start of `b`, and the bytes it takes (the
/// value must be followed by a delimiter).
pub fn opt_f64(b: &[u8]) -> Option<(Option<f64>, usize)> {
    if null_at(b) {
        return Some((None, 4));
    }
    let (n, _) = number_len(b)?;
    ends(b, n).then_some(())?;
    Some((Some(float_of(&b[..n])?), n))
}

/// An integer (as serde reads an i64: no fraction or exponent) or `null`.
pub fn opt_i64(b: &[u8]) -> Option<(Option<i64>, usize)> {
    if null_at(b) {
        return Some((None, 4));
    }
    match number_len(b) {
        // serde reads `-0` as a float, which an i64 refuses.
        Some((n, true)) if ends(b, n) && !b.starts_with(b"-0") => {
            let v = std::str::from_utf8(&b[..n]).ok()?.parse().ok()?;
            Some((Some(v), n))
        }
        _ => None,
    }
}

/// A string without escapes or control characters, or `null`.
pub fn opt_string(b: &[u8]) -> Option<(Option<String>, usize)> {
    if null_at(b) {
        return Some((None, 4));
    }
    let rest = b.strip_prefix(b"\"")?;
    let close = memchr::memchr2(b'"', b'\\', rest)?;
    let inner = &rest[..close];
    if rest[close] != b'"' || inner.iter().any(|&c| c < 0x20) || !ends(b, close + 2) {
        return None;
    }
    let s = std::str::from_utf8(inner).ok()?;
    Some((Some(s.to_owned()), close + 2))
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

/// A list of numbers (`[0.1, 2e-3]`) at the start of `b`, and the bytes it
/// takes (None: anything else, `null` included, is left to serde).
pub fn f64_list(b: &[u8]) -> Option<(Vec<f64>, usize)> {
    if b.first() != Some(&b'[') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    let skip = |i: &mut usize| {
        while *i < b.len() && is_ws(b[*i]) {
            *i += 1;
        }
    };
    skip(&mut i);
    if b.get(i) == Some(&b']') {
        return ends(b, i + 1).then_some((out, i + 1));
    }
    loop {
        skip(&mut i);
        let (n, _) = number_len(&b[i..])?;
        out.push(float_of(&b[i..i + n])?);
        i += n;
        skip(&mut i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b']') => return ends(b, i + 1).then_some((out, i + 1)),
            _ => return None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Whatever the fast read takes, serde reads the same, and it takes the
    /// whole value; what it leaves, serde decides.
    #[test]
    fn fast_reads_agree_with_serde() {
        let floats = [
            "0",
            "-0",
            "1",
            "0.1",
            "1e-3",
            "1E+3",
            "2.5e10",
            "0.0017722369999546572",
            "4.373399925000058",
            "123456789012345678901234567890",
            "1e308",
            "1e400",
            "-1e-400",
            "01",
            "1.",
            ".5",
            "+1",
            "-",
            "1e",
            "1.5e+",
            "inf",
            "NaN",
            "null",
            "nul",
            "nullx",
            "\"1\"",
            "5e-324",
            "2.2250738585072011e-308",
            "64",
            "64.0",
            "99999999999999999999",
            "1x",
        ];
        for f in floats {
            let doc = format!("{f},");
            let serde: Result<Option<f64>, _> = serde_json::from_str(f);
            if let Some((v, n)) = opt_f64(doc.as_bytes()) {
                assert_eq!(n, f.len(), "{f}");
                assert_eq!(v.map(f64::to_bits), serde.unwrap().map(f64::to_bits), "{f}");
            }
            let serde_i: Result<Option<i64>, _> = serde_json::from_str(f);
            if let Some((v, n)) = opt_i64(doc.as_bytes()) {
                assert_eq!(n, f.len(), "{f}");
                assert_eq!(v, serde_i.unwrap(), "{f}");
            }
            // Not followed by a delimiter (the buffer may end there): declined.
            assert!(opt_f64(f.as_bytes()).is_none(), "{f}");
        }
        assert_eq!(opt_i64(b"64]"), Some((Some(64), 2)));
        assert_eq!(opt_i64(b"64.0]"), None);
        assert_eq!(opt_f64(b"0.5 ,"), Some((Some(0.5), 3)));
        let lists = [
            "[]",
            "[ ]",
            "[0.1, 0.2]",
            "[0.1,0.2]",
            "[ 1 , 2 ]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[[1]]",
            "[1e400]",
            "[null]",
            "[\n1\n]",
            "[1]x",
            "[1",
        ];
        for l in lists {
            let doc = format!("{l}]");
            let serde: Result<Vec<f64>, _> = serde_json::from_str(l);
            if let Some((out, n)) = f64_list(doc.as_bytes()) {
                assert_eq!(n, l.len(), "{l}");
                let want = serde.unwrap();
                assert_eq!(
                    out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    "{l}"
                );
            }
        }
        assert_eq!(f64_list(b"[0.5, 1e-3],"), Some((vec![0.5, 0.001], 11)));
        for s in [
            "\"\"",
            "\"HTTP Error 503\"",
            "\"a\\\"b\"",
            "null",
            "\"\u{e9}\"",
            "1",
            "\"x",
        ] {
            let doc = format!("{s},");
            let serde: Result<Option<String>, _> = serde_json::from_str(s);
            if let Some((v, n)) = opt_string(doc.as_bytes()) {
                assert_eq!(n, s.len(), "{s}");
                assert_eq!(v, serde.unwrap(), "{s}");
            }
        }
        assert_eq!(opt_string(b"\"x\","), Some((Some("x".to_owned()), 3)));
        assert_eq!(opt_string(b"\"a\\nb\","), None);
    }
}
