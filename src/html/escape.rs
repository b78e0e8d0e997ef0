//! Escaping for each place a string from the data lands in a page. Every run
//! id, model, endpoint, label, case id and error message goes through one of
//! these; nothing from the data is ever written into a page raw.
//!
//! - [`text`]: HTML text content, and SVG text (the same rules: `&` and `<`
//!   start markup, `>` is escaped too for symmetry).
//! - [`attr`]: a double-quoted attribute value (HTML or SVG).
//! - [`json_script`]: JSON inside `<script type="application/json">`, where
//!   `</script` would end the element and `<!--` would open a comment.
//! - [`id`]: an `id`/anchor made from data: only `[A-Za-z0-9_-]`, everything
//!   else spelled as `_xx` hex, so it is both safe and stable.

/// Escapes `s` for HTML (or SVG) text content.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_text(&mut out, s);
    out
}

/// Appends `s` escaped for text content.
pub fn push_text(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// Escapes `s` for a double- or single-quoted attribute value.
pub fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // A newline or tab in an attribute is legal but would be
            // normalised to a space by the parser; keep it visible.
            '\n' => out.push_str("&#10;"),
            c => out.push(c),
        }
    }
    out
}

/// Serializes a JSON value for an inline `<script type="application/json">`:
/// `<`, `>` and `&` are written as `\u003c`-style escapes (still the same
/// JSON), so no `</script>` or `<!--` can appear; U+2028/U+2029 too, which
/// older JavaScript parsers take for line ends.
pub fn json_script(v: &serde_json::Value) -> String {
    let raw = serde_json::to_string(v).unwrap_or_else(|_| "null".to_owned());
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// An element id (and `#anchor`) made from data: ASCII letters, digits, `-`
/// and `_` kept, every other byte written `_xx` (hex), and a prefix so it
/// never starts with a digit. Distinct inputs give distinct ids (the `_` of
/// the input is itself escaped).
pub fn id(prefix: &str, s: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + s.len() + 1);
    out.push_str(prefix);
    out.push('-');
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' => out.push(b as char),
            _ => out.push_str(&format!("_{b:02x}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: [&str; 2] = [
        "<script>alert(1)</script>",
        "\"><img src=x onerror=alert(1)>",
    ];

    #[test]
    fn text_leaves_no_markup() {
        assert_eq!(text(HOSTILE[0]), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(text("a & b"), "a &amp; b");
        for h in HOSTILE {
            assert!(!text(h).contains('<'));
        }
    }

    #[test]
    fn attr_cannot_close_the_quote() {
        assert_eq!(
            attr(HOSTILE[1]),
            "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(attr("it's"), "it&#39;s");
        for h in HOSTILE {
            let a = attr(h);
            assert!(!a.contains('"') && !a.contains('<') && !a.contains('\''));
        }
    }

    #[test]
    fn json_cannot_end_the_script() {
        let v = serde_json::json!({"run": HOSTILE[0], "x": "<!-- & \u{2028}"});
        let s = json_script(&v);
        assert!(!s.contains("</script"));
        assert!(!s.contains("<!--"));
        assert!(!s.contains('\u{2028}'));
        // Still the same JSON.
        let back: serde_json::Value = serde_json::from_str(&s).expect("valid JSON");
        assert_eq!(back, v);
    }

    #[test]
    fn ids_are_safe_stable_and_distinct() {
        assert_eq!(id("run", "fixed_rate"), "run-fixed_5frate");
        assert_eq!(id("case", "c1-a"), "case-c1-a");
        let h = id("run", HOSTILE[1]);
        assert!(h
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_ne!(id("r", "a b"), id("r", "a_20b"));
        assert_eq!(id("r", "é"), "r-_c3_a9");
    }
}
