//! The output in a text answer (native and prompted modes): the whole
//! answer as one JSON value, or one fenced block holding one.

use serde_json::Value;

/// The JSON value an answer holds, or why it holds none, worded for the
/// model (it is fed back).
pub(crate) fn answer_json(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("your answer was empty: it must be the JSON output".to_owned());
    }
    let fences = fenced_blocks(trimmed);
    let (json, within) = match fences.as_slice() {
        [] => (trimmed, None),
        [block] => (block.trim(), Some("the fenced block")),
        _ => {
            return Err(format!(
                "your answer has {} fenced blocks: give the output as one JSON value, bare or in one fenced block",
                fences.len()
            ));
        }
    };
    one_value(json, within.unwrap_or("your answer"))
}

/// The contents of each complete ```` ``` ```` fenced block, without the
/// info string (```` ```json ````).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        // The info string runs to the end of the opening line.
        let body_start = after.find('\n').map_or(after.len(), |newline| newline + 1);
        let body = &after[body_start..];
        let Some(end) = body.find("```") else { break };
        blocks.push(&body[..end]);
        rest = &body[end + 3..];
    }
    blocks
}

/// `json` as exactly one value; `place` names where it was looked for.
fn one_value(json: &str, place: &str) -> Result<Value, String> {
    let mut values = serde_json::Deserializer::from_str(json).into_iter::<Value>();
    let value = match values.next() {
        Some(Ok(value)) => value,
        Some(Err(error)) if error.is_eof() => {
            return Err(format!("{place} ends before its JSON value is complete ({error})"));
        }
        Some(Err(error)) => return Err(format!("{place} is not JSON: {error}")),
        None => return Err(format!("{place} holds no JSON value")),
    };
    let end = values.byte_offset();
    let trailing = json[end..].trim();
    if trailing.is_empty() {
        return Ok(value);
    }
    if serde_json::Deserializer::from_str(trailing).into_iter::<Value>().next().is_some_and(|next| next.is_ok()) {
        return Err(format!("{place} holds more than one JSON value: give exactly one"));
    }
    let shown: String = trailing.chars().take(60).collect();
    Err(format!("{place} has text after the JSON value (`{shown}`): give only the JSON value"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::answer_json;

    #[test]
    fn bare_and_fenced_json_are_read() {
        assert_eq!(answer_json(" {\"a\": 1}\n").unwrap(), json!({"a": 1}));
        assert_eq!(answer_json("Here it is:\n```json\n{\"a\": 1}\n```\nDone.").unwrap(), json!({"a": 1}));
        assert_eq!(answer_json("```\n[1, 2]\n```").unwrap(), json!([1, 2]));
    }

    #[test]
    fn bad_answers_say_what_is_wrong() {
        let error = |text: &str| answer_json(text).unwrap_err();
        assert!(error("").contains("empty"));
        assert!(error("I think the answer is 4.").contains("is not JSON"), "{}", error("I think 4"));
        assert!(error("{\"a\": 1} That is my answer.").contains("text after the JSON value"));
        assert!(error("```json\n{\"a\": 1}\n{\"a\": 2}\n```").contains("more than one JSON value"));
        assert!(error("{\"a\": [1, 2").contains("before its JSON value is complete"));
        assert!(error("```json\n{}\n```\n```json\n{}\n```").contains("2 fenced blocks"));
    }
}
