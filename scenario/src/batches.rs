//! The `[[force]]` tables cut out of a scenario's text, to be parsed in batches of at most
//! [`FORCE_BATCH`] tables after the rest of the file: a file of a million force tables never
//! holds the parsed form of all of them at once.

use std::ops::Range;

/// How many `[[force]]` tables one batch parses at most.
const FORCE_BATCH: usize = 1024;

/// headers are found with the TOML lexer (so a `[` in a string or an array is not one).
pub(crate) fn force_batches(text: &str) -> Vec<Range<usize>> {
    use toml_parser::lexer::TokenKind;
    let source = toml_parser::Source::new(text);
    let mut tokens = source.lex().peekable();
    // (start, whether it is a force table) of every top-level header, in order.
    let mut headers: Vec<(usize, bool)> = Vec::new();
    let (mut depth, mut line_start) = (0usize, true);
    while let Some(t) = tokens.next() {
        match t.kind() {
            TokenKind::LeftSquareBracket if line_start && depth == 0 => {
                let start = t.span().start();
                let mut end = t.span().end();
                while let Some(next) =
                    tokens.next_if(|n| !matches!(n.kind(), TokenKind::Newline | TokenKind::Comment))
                {
                    end = next.span().end();
                }
                let header = text.get(start..end).unwrap_or("");
                let array = header.starts_with("[[");
                let inner =
                    header.trim_matches(|c: char| c == '[' || c == ']' || c.is_whitespace());
                let first = inner.split('.').next().unwrap_or("").trim();
                let force = if first != "force" {
                    false
                } else if array && inner == "force" {
                    true
                } else {
                    // `[force.x]`: part of the force table before it, if there is one.
                    headers.last().is_some_and(|&(_, f)| f)
                };
                headers.push((start, force));
                line_start = false;
            }
            TokenKind::LeftSquareBracket | TokenKind::LeftCurlyBracket => {
                depth += 1;
                line_start = false;
            }
            TokenKind::RightSquareBracket | TokenKind::RightCurlyBracket => {
                depth = depth.saturating_sub(1);
                line_start = false;
            }
            TokenKind::Newline => line_start = true,
            TokenKind::Whitespace | TokenKind::Comment => {}
            _ => line_start = false,
        }
    }
    let mut batches: Vec<Range<usize>> = Vec::new();
    let mut tables = 0;
    for (i, &(start, force)) in headers.iter().enumerate() {
        if !force {
            continue;
        }
        let end = headers.get(i + 1).map_or(text.len(), |h| h.0);
        let new_table = text[start..].starts_with("[[");
        match batches.last_mut() {
            Some(last) if last.end == start && (!new_table || tables < FORCE_BATCH) => {
                last.end = end;
                tables += usize::from(new_table);
            }
            _ => {
                batches.push(start..end);
                tables = 1;
            }
        }
    }
    batches
}

/// `text` without the byte ranges `ranges` (in order; each starts at a top-level header,
/// so what is left is still whole lines of TOML).
pub(crate) fn leave_out(text: &str, ranges: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len() - ranges.iter().map(Range::len).sum::<usize>());
    let mut at = 0;
    for r in ranges {
        out.push_str(&text[at..r.start]);
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}
