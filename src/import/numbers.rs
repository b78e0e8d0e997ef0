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

/// Powers of ten an f64 holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The JSON number at the start of `b` as a finite f64, and its length,
/// in one pass: the digits are gathered as they are checked. A number of
/// at most 2^53 significant value scaled by at most 10^22 is exact in an
/// f64 on both sides, so one multiplication or division rounds it
/// correctly (Clinger's fast path, the first step of the standard
/// library's own parse); any other goes to the standard library (which
/// rounds correctly, as serde_json's `float_roundtrip` does). None: not a
/// number, or out of range.
fn number(b: &[u8]) -> Option<(f64, usize)> {
    /// Gathers the digits from `i` into `m` (wrapping past 19, which
    /// `n` then says), to the first byte that is not a digit.
    fn run(b: &[u8], from: usize, m: &mut u64, n: &mut u32) -> usize {
        // Eight digits at a time while eight are there (a Python float's
        // 17 are two words and a byte): the same `m`, as the arithmetic
        // wraps the same way; the count from the positions, once.
        let (mut i, mut acc) = (from, *m);
        while i + 8 <= b.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&b[i..i + 8]);
            let v = u64::from_le_bytes(word);
            if !eight_digits(v) {
                break;
            }
            acc = acc.wrapping_mul(100_000_000).wrapping_add(eight_value(v));
            i += 8;
        }
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            acc = acc.wrapping_mul(10).wrapping_add(u64::from(d));
            i += 1;
        }
        *m = acc;
        *n = n.saturating_add(u32::try_from(i - from).unwrap_or(u32::MAX));
        i
    }
    let neg = b.first() == Some(&b'-');
    let mut i = usize::from(neg);
    // The significant digits (leading zeros left out) and their count.
    let mut m: u64 = 0;
    let mut digits: u32 = 0;
    let mut exp: i64 = 0;
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = run(b, i, &mut m, &mut digits),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let from = i;
        if m == 0 {
            while b.get(i) == Some(&b'0') {
                i += 1;
            }
        }
        i = run(b, i, &mut m, &mut digits);
        if i == from {
            return None;
        }
        exp -= (i - from) as i64;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let minus = b.get(i) == Some(&b'-');
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let from = i;
        let mut e: i64 = 0;
        while let Some(&c @ b'0'..=b'9') = b.get(i) {
            // Saturated: any exponent this large is out of the fast path.
            if e < 100_000 {
                e = e * 10 + i64::from(c - b'0');
            }
            i += 1;
        }
        if i == from {
            return None;
        }
        exp += if minus { -e } else { e };
    }
    if digits <= 19 && m <= 1 << 53 && (-22..=22).contains(&exp) {
        let v = m as f64;
        let v = if exp < 0 {
            v / POW10[exp.unsigned_abs() as usize]
        } else {
            v * POW10[exp as usize]
        };
        return Some((if neg { -v } else { v }, i));
    }
    if digits <= 19 {
        if let Some(v) = lemire(m, exp).or_else(|| exact(m, exp)) {
            return Some((if neg { -v } else { v }, i));
        }
    }
    Some((float_of(&b[..i])?, i))
}

/// Whether all eight bytes of `v` (little-endian) are ASCII digits
/// (fast_float's test: a byte below `0` borrows into its top bit, one above
/// `9` carries into it; the lowest byte that is not a digit is always
/// caught, as nothing below it carries).
fn eight_digits(v: u64) -> bool {
    (v.wrapping_add(0x4646_4646_4646_4646) | v.wrapping_sub(0x3030_3030_3030_3030))
        & 0x8080_8080_8080_8080
        == 0
}

/// The value of eight ASCII digits, the first in the low byte of `v`
/// (fast_float's parse_eight_digits_unrolled: pairs, then fours, then the
/// two halves, in three multiplications).
fn eight_value(v: u64) -> u64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 0x000F_4240_0000_0064;
    const MUL2: u64 = 0x0000_2710_0000_0001;
    let v = v.wrapping_sub(0x3030_3030_3030_3030);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    (v & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2))
        >> 32
}

/// The decimal exponents [`POW5`] covers: 5^55 is the largest power of
/// five a u128 holds, which [`pow5_128`]'s long division divides by.
const POW5_MIN: i64 = -55;
const POW5_MAX: i64 = 55;

/// 5^q as the 128-bit significand Eisel-Lemire multiplies by (top bit set),
/// defined as fast_float's and the standard library's tables are: for q >= 0
/// 5^q shifted up (exact here); for q < 0 the first 128 bits of 1/5^-q,
/// that is floor(2^(z+127) / 5^-q) with 2^z the least power of two above
/// 5^-q, plus one for q >= -27, and for q < -27 plus the carry of adding
/// one to floor(2^(2z+128) / 5^-q) before keeping its first 128 bits.
/// Computed by long division, one quotient bit a step; the test checks it
/// against big-integer arithmetic.
const fn pow5_128(q: i64) -> u128 {
    if q >= 0 {
        let p = 5u128.pow(q as u32);
        return p << p.leading_zeros();
    }
    let d = 5u128.pow(q.unsigned_abs() as u32);
    // 5^k is not a power of two: the least z with 2^z > d is its length.
    let z = 128 - d.leading_zeros();
    // Remainder and quotient of 2^i / d, bit by bit; `r` < d < 2^128, so
    // 2r may pass 2^128 (its top bit is then the quotient bit) but 2r - d
    // never does.
    let mut r: u128 = 1;
    let mut quo: u128 = 0;
    let mut i = 0;
    while i < z + 127 {
        let top = r >> 127;
        r <<= 1;
        quo <<= 1;
        if top == 1 || r >= d {
            r = r.wrapping_sub(d);
            quo |= 1;
        }
        i += 1;
    }
    if q >= -27 {
        return quo + 1;
    }
    // The next z + 1 bits of the quotient: all ones carry the added one.
    let mut ones = true;
    let mut j = 0;
    while j < z + 1 {
        let top = r >> 127;
        r <<= 1;
        if top == 1 || r >= d {
            r = r.wrapping_sub(d);
        } else {
            ones = false;
        }
        j += 1;
    }
    quo + ones as u128
}

/// [`pow5_128`] for POW5_MIN..=POW5_MAX, computed when compiling.
const POW5: [u128; (POW5_MAX - POW5_MIN + 1) as usize] = {
    let mut t = [0u128; (POW5_MAX - POW5_MIN + 1) as usize];
    let mut k = 0;
    while k < t.len() {
        t[k] = pow5_128(POW5_MIN + k as i64);
        k += 1;
    }
    t
};

/// `w` × 10^`q` rounded to the nearest f64 (ties to even) by the
/// Eisel-Lemire algorithm, as the standard library's parse takes it
/// (core::num::dec2flt::lemire, f64's constants): the digits, normalized,
/// times 5^q's 128-bit significand, of which one 64-bit product nearly
/// always decides the 53 bits and the rounding; where it may not (the
/// truncated product's low word all ones), None, and the exact path
/// decides (the standard library errs there only outside q in -27..=55;
/// this declines them all). For vLLM's 17-digit gaps this replaces a u128
/// division (`exact`, __udivti3) by two multiplications. None as well
/// outside the table and for results that are not normal.
fn lemire(w: u64, q: i64) -> Option<f64> {
    if w == 0 || !(POW5_MIN..=POW5_MAX).contains(&q) {
        return None;
    }
    let lz = w.leading_zeros();
    let w = w << lz;
    let p = POW5[(q - POW5_MIN) as usize];
    let first = u128::from(w) * (p >> 64);
    let (mut lo, mut hi) = (first as u64, (first >> 64) as u64);
    // 52 explicit bits, the hidden one, one to round with and one for a
    // leading zero of the product: the bits below those decide whether
    // the second product may carry into them.
    const MASK: u64 = u64::MAX >> 55;
    if hi & MASK == MASK {
        let second = ((u128::from(w) * (p & u128::from(u64::MAX))) >> 64) as u64;
        lo = lo.wrapping_add(second);
        if second > lo {
            hi = hi.wrapping_add(1);
        }
    }
    if lo == u64::MAX {
        return None;
    }
    let upper = (hi >> 63) as i32;
    let mut mant = hi >> (upper + 64 - 55);
    // floor(q · log2(10)) + 63, as the standard library computes it.
    let pow2 = ((q as i32).wrapping_mul(152_170 + 65536) >> 16) + 63;
    let mut e = pow2 + upper - lz as i32 + 1023;
    if e <= 0 {
        return None;
    }
    // Exactly halfway (possible only where 5^q is exact in 64 bits): ties
    // to even, so an odd result is not rounded up.
    if lo <= 1 && (-4..=23).contains(&q) && mant & 3 == 1 && (mant << (upper + 64 - 55)) == hi {
        mant &= !1;
    }
    mant += mant & 1;
    mant >>= 1;
    if mant >= 2 << 52 {
        mant = 1 << 52;
        e += 1;
    }
    if e >= 0x7FF {
        return None;
    }
    Some(f64::from_bits((mant & !(1 << 52)) | (e as u64) << 52))
}

/// `m` × 10^`exp` rounded to the nearest f64 (ties to even) by integer
/// arithmetic, for the values whose digits the fast path cannot take
/// (17-digit fractions, as Python writes a float): the quotient of `m`
/// shifted by `s` and 10^-exp, or the product `m` × 10^exp, in a u128,
/// then rounded to 53 bits with what is left over. None (the standard
/// library's parse then) when the numbers do not fit a u128.
fn exact(m: u64, exp: i64) -> Option<f64> {
    if m == 0 {
        return Some(0.0);
    }
    let lm = i64::from(64 - m.leading_zeros());
    // The integer to round, a power of two it is scaled by, and whether
    // anything non-zero was left below it.
    let (n, scale, sticky) = if exp >= 0 {
        let p = 10u128.checked_pow(u32::try_from(exp).ok()?)?;
        (u128::from(m).checked_mul(p)?, 0i64, false)
    } else {
        let d = 10u128.checked_pow(u32::try_from(-exp).ok()?)?;
        let ld = i64::from(128 - d.leading_zeros());
        // m·2^s / d lands in [2^54, 2^56): at least 55 bits.
        let s = 55 + ld - lm;
        if s < 0 || lm + s > 127 {
            return None;
        }
        let shifted = u128::from(m) << s;
        (shifted / d, -s, shifted % d != 0)
    };
    let bits = i64::from(128 - n.leading_zeros());
    let (mut mant, mut e) = if bits <= 53 {
        // Exact (no bits dropped, none left below).
        if sticky {
            return None;
        }
        (n as u64, scale)
    } else {
        let drop = bits - 53;
        let kept = (n >> drop) as u64;
        let rest = n & ((1u128 << drop) - 1);
        let half = 1u128 << (drop - 1);
        let up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        (kept + u64::from(up), scale + drop)
    };
    if mant == 1 << 53 {
        mant >>= 1;
        e += 1;
    }
    // mant < 2^53 is exact; × 2^e is exact while 2^e and the result stay
    // normal (always, for what fits the u128 above).
    if !(-1022..=1023).contains(&e) {
        return None;
    }
    let two = f64::from_bits(((1023 + e) as u64) << 52);
    let v = mant as f64 * two;
    v.is_normal().then_some(v)
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
    let (v, n) = number(b)?;
    ends(b, n).then_some(())?;
    Some((Some(v), n))
}

/// An integer (as serde reads an i64: no fraction or exponent) or `null`.
pub fn opt_i64(b: &[u8]) -> Option<(Option<i64>, usize)> {
    if null_at(b) {
        return Some((None, 4));
    }
    // A plain count (`64`): its digits, no text made. 18 digits cannot
    // overflow; any longer, or signed, goes on to the parse below.
    let n = b.iter().take(19).take_while(|c| c.is_ascii_digit()).count();
    if (1..=18).contains(&n) && (n == 1 || b[0] != b'0') && ends(b, n) {
        let v = b[..n]
            .iter()
            .fold(0i64, |v, &c| v * 10 + i64::from(c - b'0'));
        return Some((Some(v), n));
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
    let (out, n) = list_at(b)?;
    ends(b, n).then_some((out, n))
}

/// A list of numbers that is all of `b` (a flat list the walker has
/// delimited, nothing after it); None: anything else, left to serde.
pub fn flat_f64_list(b: &[u8]) -> Option<Vec<f64>> {
    let (out, n) = list_at(b)?;
    (n == b.len()).then_some(out)
}

/// A list of fractions and nulls (`[0.5, null, 1e-3]`) that is all of `b`,
/// as serde_json's `Value` reads it: each number a `Number` of its f64
/// (read as serde reads it, see above), each `null` a `Null`. None for
/// anything else, left to serde: a list holding an integer among them
/// (which `Value` keeps as an integer), or anything serde would refuse.
/// vLLM's `queue_times`, kept whole in the summary, is one such list a
/// request long.
pub fn float_values(b: &[u8]) -> Option<Vec<serde_json::Value>> {
    use serde_json::{Number, Value};
    let (out, n) = list_of(b, |here| {
        if null_at(here) {
            return Some((Value::Null, 4));
        }
        let (v, n) = number(here)?;
        memchr::memchr3(b'.', b'e', b'E', &here[..n])?;
        Some((Value::Number(Number::from_f64(v)?), n))
    })?;
    (n == b.len()).then_some(out)
}

/// The list of numbers at the start of `b` and the bytes it takes, with
/// room for exactly its numbers (one more than its commas).
fn list_at(b: &[u8]) -> Option<(Vec<f64>, usize)> {
    list_of(b, number)
}

/// The list at the start of `b`, each element read by `element` (its value
/// and the bytes it takes), and the bytes the list takes, with room for
/// exactly its elements (one more than its commas). None: no such list.
fn list_of<T>(b: &[u8], element: impl Fn(&[u8]) -> Option<(T, usize)>) -> Option<(Vec<T>, usize)> {
    if b.first() != Some(&b'[') {
        return None;
    }
    let mut i = 1;
    let skip = |i: &mut usize| {
        while *i < b.len() && is_ws(b[*i]) {
            *i += 1;
        }
    };
    skip(&mut i);
    if b.get(i) == Some(&b']') {
        return Some((Vec::new(), i + 1));
    }
    let close = memchr::memchr(b']', b).unwrap_or(b.len());
    let mut out = Vec::with_capacity(memchr::memchr_iter(b',', &b[..close]).count() + 1);
    loop {
        skip(&mut i);
        let (v, n) = element(&b[i..])?;
        out.push(v);
        i += n;
        skip(&mut i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b']') => return Some((out, i + 1)),
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
            "00",
            "-5",
            "123456789012345678",
            "1234567890123456789",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "64e1",
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

    /// The one-pass number read gives the standard library's value, bit for
    /// bit, and the grammar's length, on hand-picked and generated texts.
    #[test]
    fn number_agrees_with_the_standard_parse() {
        fn check(t: &str) {
            let doc = format!("{t},");
            let want = serde_json::from_str::<f64>(t).ok();
            match number(doc.as_bytes()) {
                Some((v, n)) if n == t.len() => {
                    assert_eq!(Some(v.to_bits()), want.map(f64::to_bits), "{t}");
                    assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{t}");
                }
                // A number followed by more (`01`, `1.e3`): not one number.
                Some(_) => assert!(want.is_none(), "{t}"),
                // Declined: not a JSON number, or out of range.
                None => assert!(want.is_none_or(|w| !w.is_finite()), "{t}"),
            }
        }
        for t in [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1",
            "-1",
            "64",
            "875.899437872",
            "0.0017722369999546572",
            "0.1",
            "0.2",
            "0.3",
            "1e22",
            "1e23",
            "9007199254740992",
            "9007199254740993",
            "9007199254740993.0",
            "1234567890123456789",
            "12345678901234567890",
            "1e-22",
            "1.5e-22",
            "4.9e-324",
            "1.7976931348623157e308",
            "1.8e308",
            "1e-400",
            "1E+2",
            "1e+0",
            "-2.5E-3",
            "100e-2",
            "0.000000000000000000000000001",
            "123.456e-5",
            "1e99999999999999999999",
            "1e-99999999999999999999",
            "00",
            "01",
            "1.",
            ".1",
            "-",
            "--1",
            "1e",
            "1e+",
            "+1",
            "0x10",
            "1.e3",
            "-.5",
        ] {
            check(t);
        }
        let mut next = crate::import::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..400_000 {
            let r = next();
            let t = match r % 7 {
                // Gaps of about a millisecond, as vLLM's itls.
                4 => format!("{:?}", f64::from_bits(next()).abs() % 0.01),
                // 19 significant digits, and 16 to 18: the exact path's
                // roundings, near halfway cases included.
                5 => format!(
                    "{:.*e}",
                    15 + (next() % 4) as usize,
                    f64::from_bits(next() >> 2)
                ),
                6 => format!("{}e-{}", next() % 10_000_000_000_000_000_000, next() % 40),
                // Python's repr of a float, as the tools write them.
                0 => format!("{:?}", f64::from_bits(next()).abs() % 1e6),
                1 => format!("{}", (next() % 100_000_000) as f64 / 1e8),
                2 => format!(
                    "{}{}.{}e{}",
                    if r & 16 == 0 { "-" } else { "" },
                    next() % 1_000_000_000_000,
                    next() % 10_000_000,
                    (next() % 60) as i64 - 30
                ),
                _ => format!("{}", next() >> (next() % 64)),
            };
            if !t.contains("NaN") && !t.contains("inf") {
                check(&t);
            }
        }
    }

    /// The table of powers of five is the one Eisel-Lemire's proof is for
    /// (fast_float's table_generation.py, which the standard library's
    /// table is): checked entry by entry with big integers.
    #[test]
    fn powers_of_five_are_the_lemire_table() {
        use num_bigint::BigUint;
        let two = |b: u32| BigUint::from(1u32) << b;
        for q in POW5_MIN..=POW5_MAX {
            let want = if q >= 0 {
                let mut p = BigUint::from(5u32).pow(q as u32);
                while p < two(127) {
                    p <<= 1;
                }
                while p >= two(128) {
                    p >>= 1;
                }
                p
            } else {
                let p5 = BigUint::from(5u32).pow(q.unsigned_abs() as u32);
                let mut z = 0;
                while two(z) < p5 {
                    z += 1;
                }
                let b = if q >= -27 { z + 127 } else { 2 * z + 128 };
                let mut c = two(b) / &p5 + 1u32;
                while c >= two(128) {
                    c >>= 1;
                }
                c
            };
            let got = BigUint::from(POW5[(q - POW5_MIN) as usize]);
            assert_eq!(got, want, "5^{q}");
            assert!(got >= two(127), "5^{q} normalized");
        }
    }

    /// The digits of 15 to 19 significant figures (Python's floats have
    /// 16 or 17) at decimal exponents -25..=25, in scientific and plain
    /// notation, and the halfway points between neighbouring f64s that
    /// have at most 19 digits: read as the standard library reads them,
    /// bit for bit, and where the Eisel-Lemire step answers, it answers
    /// the same.
    #[test]
    fn long_significands_round_as_the_standard_parse() {
        fn check(t: &str) {
            let doc = format!("{t},");
            let want = t.parse::<f64>().unwrap().to_bits();
            let (v, n) = number(doc.as_bytes()).unwrap();
            assert_eq!((v.to_bits(), n), (want, t.len()), "{t}");
        }
        let mut next = crate::import::xorshift(0x1234_5678_9abc_def1u64);
        let mut decided = 0;
        for k in 0..300_000 {
            let len = 15 + (next() % 5) as usize;
            let mut digits: String = (0..len)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            if digits.starts_with('0') {
                digits.replace_range(..1, "7");
            }
            let e = (next() % 51) as i64 - 25;
            let t = match k % 3 {
                0 => format!("{}.{}e{e}", &digits[..1], &digits[1..]),
                1 => format!("-{digits}E{e:+}"),
                // Plain notation, as Python writes 1e-4 <= x < 1e16.
                _ if e < 0 => {
                    format!("0.{}{digits}", "0".repeat(e.unsigned_abs() as usize - 1))
                }
                _ => match e as usize + 1 {
                    at if at >= len => format!("{digits}{}", "0".repeat(at - len)),
                    at => format!("{}.{}", &digits[..at], &digits[at..]),
                },
            };
            check(&t);
            // The step alone, on the digits and exponent as `number`
            // gathers them.
            let m: u64 = digits.parse().unwrap();
            let q = e - (len as i64 - 1);
            if let Some(v) = lemire(m, q) {
                decided += 1;
                let want = format!("{digits}e{q}").parse::<f64>().unwrap();
                assert_eq!(v.to_bits(), want.to_bits(), "{digits}e{q}");
            }
        }
        // It declines only the rare ambiguous products.
        assert!(decided > 299_000, "{decided}");
        // Halfway points: an odd multiple of half an ulp at 2^53..2^54,
        // scaled by 2^s, written out exactly (at most 19 digits).
        for _ in 0..100_000 {
            let mid = (1u64 << 53) + 2 * (next() % (1 << 52)) + 1;
            let s = (next() % 14) as i32 - 3;
            let t = if s >= 0 {
                match mid.checked_mul(1 << s) {
                    Some(v) if v < 10_000_000_000_000_000_000 => v.to_string(),
                    _ => continue,
                }
            } else {
                let scaled = u128::from(mid) * 5u128.pow(s.unsigned_abs());
                let d = scaled.to_string();
                let cut = d.len() - s.unsigned_abs() as usize;
                if d.len() > 19 {
                    continue;
                }
                format!("{}.{}", &d[..cut], &d[cut..])
            };
            check(&t);
        }
    }

    /// Whatever `float_values` reads, serde_json reads as the same
    /// `Value`s (floats of the same bits, nulls); integers and anything
    /// serde refuses are left to serde.
    #[test]
    fn float_values_are_the_values_serde_reads() {
        let same = |t: &str| {
            let got = float_values(t.as_bytes());
            let want: Result<serde_json::Value, _> = serde_json::from_str(t);
            if let Some(got) = got {
                let want = want.unwrap();
                // As text too: what the summary stores.
                let text = serde_json::to_string(&serde_json::Value::Array(got.clone()));
                assert_eq!(text.unwrap(), serde_json::to_string(&want).unwrap(), "{t}");
                let want = want.as_array().unwrap();
                assert_eq!(got.len(), want.len(), "{t}");
                for (g, w) in got.iter().zip(want) {
                    assert_eq!(g.is_f64(), w.is_f64(), "{t}");
                    assert_eq!(g.is_null(), w.is_null(), "{t}");
                    assert_eq!(
                        g.as_f64().map(f64::to_bits),
                        w.as_f64().map(f64::to_bits),
                        "{t}"
                    );
                }
                true
            } else {
                false
            }
        };
        for (t, read) in [
            ("[]", true),
            ("[ ]", true),
            ("[0.5]", true),
            ("[0.0009486060000654106, 0.0010568600000624429]", true),
            ("[\n-0.0 ,\t1e-3,null, 2E+5 ]", true),
            ("[null]", true),
            ("[1]", false),
            ("[0.5, 2]", false),
            ("[-0]", false),
            ("[1e400]", false),
            ("[0.5,]", false),
            ("[,0.5]", false),
            ("[0.5 0.5]", false),
            ("[0.5] ", false),
            ("[0.5", false),
            ("[nul]", false),
            ("[nullnull]", false),
            ("[\"0.5\"]", false),
            ("[[0.5]]", false),
            ("[.5]", false),
            ("[0.5x]", false),
            ("0.5", false),
        ] {
            assert_eq!(same(t), read, "{t}");
        }
        let mut next = crate::import::xorshift(0x5851_f42d_4c95_7f2du64);
        for _ in 0..2_000 {
            let items: Vec<String> = (0..next() % 20)
                .map(|_| match next() % 4 {
                    0 => "null".to_owned(),
                    1 => format!("{:e}", f64::from_bits(next() >> 2)),
                    _ => format!("{:?}", f64::from_bits(next()).abs() % 0.01),
                })
                .filter(|t| !t.contains("NaN") && !t.contains("inf"))
                .collect();
            let t = format!("[{}]", items.join(", "));
            assert!(same(&t), "{t}");
        }
    }

    #[test]
    fn flat_lists_read_whole_slices_only() {
        assert_eq!(flat_f64_list(b"[0.5, 1e-3]"), Some(vec![0.5, 0.001]));
        assert_eq!(flat_f64_list(b"[ ]"), Some(vec![]));
        assert_eq!(flat_f64_list(b"[\n-1 ,\t2\r\n]"), Some(vec![-1.0, 2.0]));
        assert_eq!(flat_f64_list(b"[1,2]"), Some(vec![1.0, 2.0]));
        for bad in [
            &b"[1,]"[..],
            b"[,1]",
            b"[1 2]",
            b"[1e400]",
            b"[01]",
            b"[1",
            b"[1] ",
            b"[1],",
            b"[]]",
            b"",
            b"1",
        ] {
            assert_eq!(flat_f64_list(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        let v = flat_f64_list(b"[1, 2, 3]").unwrap();
        assert_eq!(v.capacity(), 3);
    }
}
