//! Python's `str` rules on text: `repr()` of a string, `isspace()`,
//! `strip()`, `splitlines()` and universal newlines.

/// Python `repr(str)`: single quotes unless the text has `'` and no `"`;
/// `\\`, `\n`, `\r`, `\t` and the quote escaped, any other character that
/// is not printable (`str.isprintable`) as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !py_printable(c) => {
                let n = c as u32;
                let esc = if n < 0x100 {
                    format!("\\x{n:02x}")
                } else if n < 0x10000 {
                    format!("\\u{n:04x}")
                } else {
                    format!("\\U{n:08x}")
                };
                out.push_str(&esc);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

fn py_printable(c: char) -> bool {
    crate::py::printable::is_printable(c)
}

/// Python's `str.isspace()` of one character: Unicode White_Space plus the
/// four information separators U+001C..U+001F (CPython counts characters of
/// bidirectional class B and S as spaces; Rust's `char::is_whitespace` does
/// not count those four).
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The name the vLLM parsers use for [`is_space`].
pub fn is_py_space(c: char) -> bool {
    is_space(c)
}

/// Python's `s.strip()` (no argument): [`is_space`] characters off both ends.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `not s.strip()`: empty or only [`is_space`] characters.
pub fn is_blank(s: &str) -> bool {
    s.chars().all(is_space)
}

/// Whether Python's `str.splitlines()` ends a line at `c`: `\n`, `\r`, `\v`,
/// `\f`, U+001C..U+001E (not U+001F), U+0085, U+2028 and U+2029.
pub fn is_line_boundary(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python's `str.splitlines()` (line ends not kept; `\r\n` is one end; no
/// empty last line after a final end).
pub fn splitlines(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !is_line_boundary(c) {
            continue;
        }
        lines.push(&s[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r' {
            if let Some(&(j, '\n')) = chars.peek() {
                chars.next();
                end = j + 1;
            }
        }
        start = end;
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

/// The lines of a file read in Python's text mode (universal newlines:
/// `\n`, `\r\n` and a lone `\r` end a line, nothing else does), without their
/// ends; no empty last line after a final end. This is what `for line in f`
/// and `f.read().split("\n")` after decoding see, unlike [`splitlines`].
pub fn universal_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                i += 1;
                start = i;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                i += if bytes.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The text Python's text mode hands over: `\r\n` and a lone `\r` become `\n`.
pub fn universal_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// The first code point (the digit zero) of each run of ten Unicode decimal
/// digits (category Nd), which Python's `int()` and `float()` read as 0-9.
/// Every Nd character lies in one such run (Unicode 14, as in Python 3.11).
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The value 0-9 of a Unicode decimal digit.
pub fn decimal_digit(c: char) -> Option<u8> {
    let cp = u32::from(c);
    let at = DIGIT_ZEROS.partition_point(|&z| z <= cp).checked_sub(1)?;
    let d = cp - DIGIT_ZEROS[at];
    (d < 10).then_some(d as u8)
}

/// What CPython's `int(s)` and `float(s)` parse: every non-ASCII decimal
/// digit becomes its ASCII digit and every non-ASCII space a blank, then the
/// ASCII spaces ` \t\n\v\f\r` (only those: U+001C..U+001F stay and make the
/// text invalid) come off both ends. `None` for any other non-ASCII
/// character, which no number may hold.
pub fn number_text(s: &str) -> Option<String> {
    let mut ascii = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else if let Some(d) = decimal_digit(c) {
            ascii.push(char::from(b'0' + d));
        } else if is_space(c) {
            ascii.push(' ');
        } else {
            return None;
        }
    }
    let trimmed = ascii.trim_matches([' ', '\t', '\n', '\u{b}', '\u{c}', '\r']);
    Some(trimmed.to_owned())
}

/// Python's `repr(s)` of a string.
pub fn repr_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_str_repr(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code point where CPython 3.11's `chr(c).isspace()` is true
    /// (generated once with python3 and pasted).
    const PY_SPACES: [u32; 29] = [
        0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
        0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029,
        0x202f, 0x205f, 0x3000,
    ];

    #[test]
    fn is_space_is_cpythons_isspace_on_every_character() {
        for cp in 0..=0x10FFFFu32 {
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(is_space(c), PY_SPACES.contains(&cp), "U+{cp:04X}");
            }
        }
        assert_eq!(strip("\u{3000}\u{1c} a \u{85}\u{1f}"), "a");
        assert!(is_blank("\u{1c}\u{1f} \u{a0}") && is_blank("") && !is_blank(" x"));
    }

    #[test]
    fn splitlines_and_universal_newlines_match_cpython() {
        // (text, text.splitlines(), the lines of io.StringIO(text, newline=None)
        // without their "\n"): generated once with CPython 3.11.7 and pasted.
        #[rustfmt::skip]
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("a\u{d}\u{a}b\u{d}c\u{a}\u{a}d\u{a}", &["a", "b", "c", "", "d"], &["a", "b", "c", "", "d"]),
            ("a\u{1c}b\u{1d}c\u{1e}d\u{1f}e", &["a", "b", "c", "d\u{1f}e"], &["a\u{1c}b\u{1d}c\u{1e}d\u{1f}e"]),
            ("a\u{85}b\u{2028}c\u{2029}d", &["a", "b", "c", "d"], &["a\u{85}b\u{2028}c\u{2029}d"]),
            ("a\u{b}b\u{c}c", &["a", "b", "c"], &["a\u{b}b\u{c}c"]),
            ("x\u{d}", &["x"], &["x"]),
            ("", &[], &[]),
            ("\u{a}", &[""], &[""]),
            ("a\u{a}\u{d}\u{a}b\u{d}\u{d}", &["a", "", "b", ""], &["a", "", "b", ""]),
        ];
        for &(text, split, universal) in cases {
            assert_eq!(splitlines(text), split, "splitlines({text:?})");
            assert_eq!(universal_lines(text), universal, "universal({text:?})");
            let translated = universal_newlines(text);
            assert!(!translated.contains('\r'), "{text:?}");
            assert_eq!(universal_lines(&translated), universal, "{text:?}");
        }
        for c in [
            '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
            '\u{2029}',
        ] {
            assert!(is_line_boundary(c), "{c:?}");
        }
        assert!(!is_line_boundary('\u{1f}'));
    }

    #[test]
    fn repr_str_matches_cpython() {
        // Generated once with CPython 3.11.7 (python3 on the build machine) and pasted.
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("ttft", "'ttft'"),
            ("it's:5", "\"it's:5\""),
            ("ttft:a\"b'", "'ttft:a\"b\\''"),
            ("tab\u{9}x:5", "'tab\\tx:5'"),
            ("\u{e9}:5", "'\u{e9}:5'"),
            ("a\\b", "'a\\\\b'"),
            ("\u{0}\u{1f}\u{7f}\u{80}\u{a0}\u{ad}", "'\\x00\\x1f\\x7f\\x80\\xa0\\xad'"),
            ("\u{2028}\u{3000}\u{feff}", "'\\u2028\\u3000\\ufeff'"),
            ("\u{1f600}", "'\u{1f600}'"),
            ("\u{e0001}", "'\\U000e0001'"),
            ("\u{e000}", "'\\ue000'"),
            ("\u{378}", "'\\u0378'"),
            ("a\u{d}b\u{a}c", "'a\\rb\\nc'"),
        ];
        for &(s, want) in cases {
            assert_eq!(repr_str(s), want, "repr({s:?})");
        }
    }

    #[test]
    fn number_text_keeps_only_what_int_and_float_read() {
        assert_eq!(
            number_text(" \u{661}\u{ff12}\u{3000}").as_deref(),
            Some("12")
        );
        assert_eq!(number_text("1\u{1c}").as_deref(), Some("1\u{1c}"));
        assert_eq!(number_text("\u{b2}"), None);
    }
}
