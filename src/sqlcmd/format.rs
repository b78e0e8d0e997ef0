//! How `stormlog sql` prints a result: an aligned table for a terminal, CSV
//! (RFC 4180 quoting) and JSON lines for pipes, a markdown table for notes.
//!
//! Values keep their SQLite type: a REAL always shows a fraction or an
//! exponent (so `250.0` is not mistaken for an INTEGER), NULL is `NULL` in
//! the table and markdown forms, an empty field in CSV and `null` in JSON.

use std::io::{self, Write};

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Columns aligned for a terminal, numbers right-aligned.
    #[default]
    Table,
    /// Comma-separated values with a header line (RFC 4180 quoting).
    Csv,
    /// JSON lines: one object per row, keys in column order.
    Json,
    /// A GitHub-flavoured markdown table.
    Markdown,
}

/// One value of a result row, and a statement's result (`db::adhoc`).
pub use crate::db::adhoc::{Cell, ResultSet};

impl Cell {
    fn is_number(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::Real(_))
    }

    /// The value as text, NULL as `null_as`.
    fn text(&self, null_as: &str) -> String {
        match self {
            Cell::Null => null_as.to_owned(),
            Cell::Int(i) => i.to_string(),
            Cell::Real(f) => real(*f),
            Cell::Text(s) => s.clone(),
            Cell::Blob(b) => {
                let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                format!("x'{hex}'")
            }
        }
    }
}

/// A REAL as the shortest text that reads back to the same value, with a
/// fraction or exponent so it never looks like an INTEGER.
pub fn real(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Inf".into() } else { "-Inf".into() };
    }
    let s = format!("{f}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else if s.len() > 17 {
        // Rust's `Display` spells large values out digit by digit.
        format!("{f:e}")
    } else {
        format!("{s}.0")
    }
}

/// Writes `rs` to `out` in `format`.
pub fn write(format: Format, rs: &ResultSet, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Table => table(rs, out),
        Format::Csv => csv(rs, out),
        Format::Json => json_lines(rs, out),
        Format::Markdown => markdown(rs, out),
    }
}

/// Whether column `i` holds numbers only (NULLs aside) and at least one.
fn numeric_column(rs: &ResultSet, i: usize) -> bool {
    let mut any = false;
    for row in &rs.rows {
        match row.get(i) {
            Some(Cell::Null) | None => {}
            Some(c) if c.is_number() => any = true,
            Some(_) => return false,
        }
    }
    any
}

/// Text for one line of a table cell: control characters would break the
/// alignment, so line breaks and tabs are shown escaped.
fn one_line(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\t', "\\t")
}

fn table(rs: &ResultSet, out: &mut dyn Write) -> io::Result<()> {
    let n = rs.columns.len();
    let cells: Vec<Vec<String>> = rs
        .rows
        .iter()
        .map(|r| r.iter().map(|c| one_line(&c.text("NULL"))).collect())
        .collect();
    let right: Vec<bool> = (0..n).map(|i| numeric_column(rs, i)).collect();
    let mut widths: Vec<usize> = rs.columns.iter().map(|c| c.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |out: &mut dyn Write, row: &[String]| -> io::Result<()> {
        let mut parts = Vec::with_capacity(n);
        for (i, c) in row.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            parts.push(crate::util::pad(
                c,
                w,
                right.get(i).copied().unwrap_or(false),
            ));
        }
        writeln!(out, "{}", parts.join("  ").trim_end())
    };
    line(out, &rs.columns)?;
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    writeln!(out, "{}", rule.join("  "))?;
    for row in &cells {
        line(out, row)?;
    }
    Ok(())
}

/// One CSV field (`output::csv_field`).
pub use crate::output::csv_field;

fn csv(rs: &ResultSet, out: &mut dyn Write) -> io::Result<()> {
    let header: Vec<String> = rs.columns.iter().map(|c| csv_field(c)).collect();
    writeln!(out, "{}", header.join(","))?;
    for row in &rs.rows {
        let fields: Vec<String> = row.iter().map(|c| csv_field(&c.text(""))).collect();
        writeln!(out, "{}", fields.join(","))?;
    }
    Ok(())
}

fn json_value(c: &Cell) -> serde_json::Value {
    use serde_json::Value;
    match c {
        Cell::Null => Value::Null,
        Cell::Int(i) => Value::from(*i),
        // JSON has no Inf or NaN: they become null.
        Cell::Real(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Blob(_) => Value::String(c.text("")),
    }
}

fn json_lines(rs: &ResultSet, out: &mut dyn Write) -> io::Result<()> {
    for row in &rs.rows {
        // Written by hand so keys keep the column order (and a repeated
        // column name stays repeated, as the query asked).
        let mut parts = Vec::with_capacity(row.len());
        for (name, c) in rs.columns.iter().zip(row) {
            parts.push(format!(
                "{}:{}",
                serde_json::Value::String(name.clone()),
                json_value(c)
            ));
        }
        writeln!(out, "{{{}}}", parts.join(","))?;
    }
    Ok(())
}

fn md_cell(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

fn markdown(rs: &ResultSet, out: &mut dyn Write) -> io::Result<()> {
    let header: Vec<String> = rs.columns.iter().map(|c| md_cell(c)).collect();
    writeln!(out, "| {} |", header.join(" | "))?;
    let rule: Vec<&str> = (0..rs.columns.len())
        .map(|i| if numeric_column(rs, i) { "---:" } else { "---" })
        .collect();
    writeln!(out, "| {} |", rule.join(" | "))?;
    for row in &rs.rows {
        let cells: Vec<String> = row.iter().map(|c| md_cell(&c.text("NULL"))).collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> ResultSet {
        ResultSet {
            columns: vec!["case".into(), "n".into(), "ttft_ms".into()],
            rows: vec![
                vec![Cell::Text("c1".into()), Cell::Int(24), Cell::Real(19.5)],
                vec![Cell::Text("c10, \"big\"".into()), Cell::Int(7), Cell::Null],
                vec![Cell::Text("a|b\nc".into()), Cell::Null, Cell::Real(250.0)],
            ],
        }
    }

    fn render(f: Format, rs: &ResultSet) -> String {
        let mut out = Vec::new();
        write(f, rs, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn table_aligns_and_right_aligns_numbers() {
        assert_eq!(
            render(Format::Table, &sample()),
            "case           n  ttft_ms\n\
             ----------  ----  -------\n\
             c1            24     19.5\n\
             c10, \"big\"     7     NULL\n\
             a|b\\nc      NULL    250.0\n"
        );
    }

    #[test]
    fn csv_quotes_as_rfc_4180() {
        assert_eq!(
            render(Format::Csv, &sample()),
            "case,n,ttft_ms\nc1,24,19.5\n\"c10, \"\"big\"\"\",7,\n\"a|b\nc\",,250.0\n"
        );
    }

    #[test]
    fn json_lines_keep_column_order_and_types() {
        let text = render(Format::Json, &sample());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], r#"{"case":"c1","n":24,"ttft_ms":19.5}"#);
        assert_eq!(lines[1], r#"{"case":"c10, \"big\"","n":7,"ttft_ms":null}"#);
        assert_eq!(lines[2], r#"{"case":"a|b\nc","n":null,"ttft_ms":250.0}"#);
        let rs = ResultSet {
            columns: vec!["x".into()],
            rows: vec![
                vec![Cell::Real(f64::INFINITY)],
                vec![Cell::Blob(vec![1, 255])],
            ],
        };
        assert_eq!(
            render(Format::Json, &rs),
            "{\"x\":null}\n{\"x\":\"x'01ff'\"}\n"
        );
    }

    #[test]
    fn markdown_escapes_pipes_and_aligns_numeric_columns() {
        assert_eq!(
            render(Format::Markdown, &sample()),
            "| case | n | ttft_ms |\n\
             | --- | ---: | ---: |\n\
             | c1 | 24 | 19.5 |\n\
             | c10, \"big\" | 7 | NULL |\n\
             | a\\|b\\nc | NULL | 250.0 |\n"
        );
    }

    #[test]
    fn reals_never_look_like_integers() {
        assert_eq!(real(250.0), "250.0");
        assert_eq!(real(0.1), "0.1");
        assert_eq!(real(45.322283500001944), "45.322283500001944");
        assert_eq!(real(1e300), "1e300");
        assert_eq!(real(-0.0), "-0.0");
        assert_eq!(real(f64::NEG_INFINITY), "-Inf");
    }

    #[test]
    fn empty_result_prints_the_header() {
        let rs = ResultSet {
            columns: vec!["a".into()],
            rows: vec![],
        };
        assert_eq!(render(Format::Table, &rs), "a\n-\n");
        assert_eq!(render(Format::Csv, &rs), "a\n");
        assert_eq!(render(Format::Json, &rs), "");
    }
}
