//! stormlog's own words for bad input, for `stormlog ingest`.
//!
//! The readers phrase a refusal as the reference does (Python's `json` and
//! codec messages), because the drop-in `infer analyze` must print exactly
//! those. A person running `stormlog ingest` gets the same fact said plainly:
//! which file, which line, what was expected there. Messages this module does
//! not recognise (the reference's own checks of a record's fields) are
//! already plain and pass through unchanged.

/// `message` (an `IngestError::Invalid` message for `path`, which the caller
/// prints first) in stormlog's words.
pub fn plain(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("'utf-8' codec can't decode ") {
        return utf8(rest);
    }
    if let Some((line, reason)) = line_prefix(message) {
        if let Some(text) = json_syntax(reason) {
            return format!("is not JSON Lines: line {line} is not a JSON object ({text})");
        }
        if let Some(rest) = reason.strip_prefix("'utf-8' codec can't decode ") {
            return utf8_on_line(line, rest);
        }
    }
    message.to_owned()
}

/// Splits `line N: rest`.
fn line_prefix(message: &str) -> Option<(u64, &str)> {
    let rest = message.strip_prefix("line ")?;
    let (n, reason) = rest.split_once(": ")?;
    Some((n.parse().ok()?, reason))
}

/// Python's `json` error (`Expecting value: line 1 column 2 (char 1)`) as
/// what was wrong and where on the line.
fn json_syntax(reason: &str) -> Option<String> {
    let (what, place) = reason.rsplit_once(": line ")?;
    let column = place
        .split_once(" column ")?
        .1
        .split_once(' ')
        .map_or(place, |(c, _)| c);
    let said = match what {
        "Expecting value" => "a value was expected",
        "Extra data" => "more text after the JSON value",
        "Unterminated string starting at" => "a string that never ends starts",
        "Expecting property name enclosed in double quotes" => "a quoted key was expected",
        "Expecting ',' delimiter" => "a ',' was expected",
        "Expecting ':' delimiter" => "a ':' was expected",
        "Invalid control character at" => "a control character inside a string",
        "Invalid \\escape" => "an invalid backslash escape",
        "Invalid \\uXXXX escape" => "an invalid \\u escape",
        _ => return None,
    };
    Some(format!("{said} at column {column}"))
}

/// `byte 0x89 in position 0: invalid start byte` as a sentence.
fn utf8(rest: &str) -> String {
    let (what, reason) = rest.split_once(": ").unwrap_or((rest, ""));
    let at = what
        .split_once(" in position ")
        .map_or(what.to_owned(), |(b, p)| format!("{b} at byte offset {p}"));
    if reason.is_empty() {
        format!("is not UTF-8 text ({at})")
    } else {
        format!("is not UTF-8 text ({at}: {reason})")
    }
}

/// `byte 0xff in position 1623: invalid start byte` on line `line`. The
/// position is Python's, counted from its reading chunk, not from the line
/// or the file, so it is left out: the line and the byte say where.
fn utf8_on_line(line: u64, rest: &str) -> String {
    let (what, reason) = rest.split_once(": ").unwrap_or((rest, ""));
    let bytes = what.split_once(" in position ").map_or(what, |(b, _)| b);
    if reason.is_empty() {
        format!("is not UTF-8 text: line {line}: {bytes}")
    } else {
        format!("is not UTF-8 text: line {line}: {bytes} ({reason})")
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn invalid_utf8_on_a_line_names_the_line_and_the_byte() {
        assert_eq!(
            plain("line 2001: 'utf-8' codec can't decode byte 0xff in position 1623: invalid start byte"),
            "is not UTF-8 text: line 2001: byte 0xff (invalid start byte)"
        );
        assert_eq!(
            plain(
                "line 3: 'utf-8' codec can't decode bytes in position 7-8: unexpected end of data"
            ),
            "is not UTF-8 text: line 3: bytes (unexpected end of data)"
        );
    }

    #[test]
    fn python_messages_become_stormlogs() {
        assert_eq!(
            plain("line 1: Expecting value: line 1 column 2 (char 1)"),
            "is not JSON Lines: line 1 is not a JSON object (a value was expected at column 2)"
        );
        assert_eq!(
            plain("line 30001: Unterminated string starting at: line 1 column 1500 (char 1499)"),
            "is not JSON Lines: line 30001 is not a JSON object (a string that never ends starts at column 1500)"
        );
        assert_eq!(
            plain("'utf-8' codec can't decode byte 0x89 in position 0: invalid start byte"),
            "is not UTF-8 text (byte 0x89 at byte offset 0: invalid start byte)"
        );
        assert_eq!(
            plain("line 3: record 'infer.request' lacks x"),
            "line 3: record 'infer.request' lacks x"
        );
    }
}
