//! What a derived tool's doc comment tells the model: its summary.
//!
//! A doc comment written for people has more than a model needs (`# Examples`
//! with code, `# Errors`, `# Panics`, notes for maintainers); the model is sent
//! the paragraphs before the first heading or code block.
//! `#[tool(full_doc)]` sends the whole comment instead.

/// The paragraphs of `doc` before its first Markdown heading (`# ...`) or
/// code block (a ```` ``` ```` or `~~~` fence, or a block indented by four
/// spaces), trimmed. A comment that begins with a heading or a code block
/// has no summary and is sent whole.
pub(crate) fn doc_summary(doc: &str) -> &str {
    let mut offset = 0;
    let mut previous_blank = true;
    let mut seen_text = false;
    for line in doc.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let blank = content.trim().is_empty();
        let starts_block =
            !blank && (is_heading(content) || is_fence(content) || (previous_blank && is_indented(content)));
        if starts_block {
            if seen_text {
                return doc[..offset].trim();
            }
            return doc.trim();
        }
        seen_text |= !blank;
        previous_blank = blank;
        offset += line.len();
    }
    doc.trim()
}

/// `# Title` up to `###### Title` (up to three spaces before, as Markdown allows).
fn is_heading(line: &str) -> bool {
    let Some(rest) = leading_spaces(line, 3) else { return false };
    let hashes = rest.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && rest[hashes..].chars().next().is_none_or(char::is_whitespace)
}

fn is_fence(line: &str) -> bool {
    leading_spaces(line, 3).is_some_and(|rest| rest.starts_with("```") || rest.starts_with("~~~"))
}

fn is_indented(line: &str) -> bool {
    line.starts_with('\t') || line.starts_with("    ")
}

/// `line` without up to `max` leading spaces; `None` when it has more.
fn leading_spaces(line: &str, max: usize) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    (spaces <= max).then(|| &line[spaces..])
}

#[cfg(test)]
mod tests {
    use super::doc_summary;

    #[test]
    fn the_summary_ends_at_the_first_heading_or_code_block() {
        let doc = "Look up the weather.\n\nIn a city.\n\n# Examples\n\n```\nlet x = 1;\n```\n\n# Errors\nNever.";
        assert_eq!(doc_summary(doc), "Look up the weather.\n\nIn a city.");
        assert_eq!(doc_summary("Adds.\n```rust\n1 + 1\n```"), "Adds.");
        assert_eq!(doc_summary("Adds.\n~~~\n1 + 1\n~~~"), "Adds.");
        assert_eq!(doc_summary("Adds.\n\n    1 + 1\n"), "Adds.");
        assert_eq!(doc_summary("Adds.\n## Panics\nnever"), "Adds.");
    }

    #[test]
    fn what_is_not_a_heading_or_code_block_stays() {
        let doc = "Adds two numbers.\nThe #1 tool: use it\n    for sums (a continued line).\n#hashtag";
        assert_eq!(doc_summary(doc), doc);
        assert_eq!(doc_summary("  Look up the weather.  \n"), "Look up the weather.");
    }

    #[test]
    fn a_comment_that_begins_with_a_heading_is_sent_whole() {
        assert_eq!(doc_summary("# Weather\nLook it up."), "# Weather\nLook it up.");
        assert_eq!(doc_summary("\n\n```\ncode\n```\nThen text."), "```\ncode\n```\nThen text.");
    }
}
