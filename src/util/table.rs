//! Terminal tables: escaping untrusted text, padding, aligned columns.

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
