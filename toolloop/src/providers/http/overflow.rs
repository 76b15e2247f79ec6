//! Recognising "the prompt does not fit the context window" in the error
//! bodies of every API this crate speaks, so that it reaches users as
//! [`ModelErrorKind::ContextOverflow`](crate::model::ModelErrorKind::ContextOverflow)
//! with the numbers, instead of a generic invalid request.
//!
//! The shapes recognised:
//! - Anthropic: `invalid_request_error`, "prompt is too long: 208310 tokens > 200000 maximum".
//! - OpenAI Chat and Responses: code `context_length_exceeded`, "This model's
//!   maximum context length is 128000 tokens. However, your messages
//!   resulted in 130000 tokens..." (or "Your input exceeds the context window
//!   of this model").
//! - vLLM: "This model's maximum context length is 4096 tokens. However, you
//!   requested 5000 tokens (...)", and "... (length 5000) is longer than the
//!   maximum model length of 4096".
//! - llama.cpp server and Ollama with `truncate: false`:
//!   `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx` fields,
//!   "request (351 tokens) exceeds the available context size (256 tokens)".
//! - Gemini: `INVALID_ARGUMENT`, "The input token count (1196265) exceeds the
//!   maximum number of tokens allowed (1048575)." (also without the counts).
//! - LM Studio: "... the model is loaded with context length of only 4096
//!   tokens, which is not enough ..." and "Context size has been exceeded".

use crate::model::ContextOverflow;

/// The overflow `message` (with the provider's `error_type`, and the raw
/// error `body` for fields outside the message) describes, if it is one.
pub(crate) fn recognise(message: &str, error_type: Option<&str>, body: &[u8]) -> Option<ContextOverflow> {
    let lower = message.to_ascii_lowercase();
    let body = String::from_utf8_lossy(body);
    let typed = matches!(error_type, Some("context_length_exceeded" | "exceed_context_size_error"))
        || body.contains("exceed_context_size_error")
        || body.contains("context_length_exceeded");
    let worded = [
        "prompt is too long",
        "maximum context length",
        "exceeds the context window",
        "exceeds the available context size",
        "longer than the maximum model length",
        "context size has been exceeded",
        "context length of only",
        "context window exceeded",
        "exceeds the maximum number of tokens allowed",
    ]
    .iter()
    .any(|phrase| lower.contains(phrase));
    if !typed && !worded {
        return None;
    }
    // The fields sit in the body, or in the message when a server wraps
    // another's error body in its own (Ollama).
    let field = |name: &str| {
        let key = format!("\"{name}\":");
        number_after(&body, &key).or_else(|| number_after(message, &key))
    };
    let (prompt_tokens, limit) = if let Some(numbers) = anthropic(&lower) {
        numbers
    } else if let Some(limit) = number_after(&lower, "maximum context length is ") {
        let prompt = number_after(&lower, "resulted in ").or_else(|| number_after(&lower, "you requested "));
        (prompt, Some(limit))
    } else if lower.contains("exceeds the maximum number of tokens allowed") {
        let allowed = &lower[lower.find("tokens allowed").unwrap_or(0)..];
        (
            number_after(&lower, "input token count ("),
            number_after(allowed, "allowed (").or_else(|| number_after(allowed, "allowed ")),
        )
    } else if let Some(limit) = number_after(&lower, "maximum model length of ") {
        (number_after(&lower, "(length "), Some(limit))
    } else if field("n_ctx").is_some() || field("n_prompt_tokens").is_some() {
        (field("n_prompt_tokens"), field("n_ctx"))
    } else if let Some(limit) = number_after(&lower, "available context size (") {
        (number_after(&lower, "request ("), Some(limit))
    } else {
        (None, number_after(&lower, "context length of only "))
    };
    Some(ContextOverflow::new(prompt_tokens, limit))
}

/// "prompt is too long: 208310 tokens > 200000 maximum".
fn anthropic(lower: &str) -> Option<(Option<u64>, Option<u64>)> {
    let rest = &lower[lower.find("prompt is too long")?..];
    let prompt = number_after(rest, "too long: ");
    let limit = number_after(rest, "> ");
    Some((prompt, limit))
}

/// The decimal number right after the first `prefix` in `text` (skipping
/// spaces and `\"` escapes), ignoring thousands separators.
fn number_after(text: &str, prefix: &str) -> Option<u64> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    let rest = rest.trim_start_matches([' ', '\\', '"']);
    let digits: String =
        rest.chars().take_while(|c| c.is_ascii_digit() || *c == ',').filter(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::recognise;
    use crate::model::ContextOverflow;

    fn numbers(message: &str, error_type: Option<&str>, body: &str) -> Option<(Option<u64>, Option<u64>)> {
        recognise(message, error_type, body.as_bytes()).map(|o: ContextOverflow| (o.prompt_tokens, o.limit))
    }

    #[test]
    fn every_known_shape_is_recognised_with_its_numbers() {
        let cases = [
            (
                "prompt is too long: 208310 tokens > 200000 maximum",
                Some("invalid_request_error"),
                "",
                (Some(208_310), Some(200_000)),
            ),
            (
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
                Some("context_length_exceeded"),
                "",
                (Some(130_532), Some(128_000)),
            ),
            (
                "Your input exceeds the context window of this model. Please adjust your input and try again.",
                Some("context_length_exceeded"),
                "",
                (None, None),
            ),
            (
                "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
                Some("BadRequestError"),
                "",
                (Some(5000), Some(4096)),
            ),
            (
                "The decoder prompt (length 5000) is longer than the maximum model length of 4096.",
                None,
                "",
                (Some(5000), Some(4096)),
            ),
            (
                "the request exceeds the available context size. try increasing the context size or enable context shift",
                Some("exceed_context_size_error"),
                r#"{"error":{"code":400,"message":"...","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}"#,
                (Some(1407), Some(256)),
            ),
            (
                r#"{"error":{"code":400,"message":"request (351 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":351,"n_ctx":256}}"#,
                None,
                r#"{"error":"{\"error\":{\"code\":400,\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":351,\"n_ctx\":256}}"}"#,
                (Some(351), Some(256)),
            ),
            (
                "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.",
                None,
                "",
                (None, Some(4096)),
            ),
            ("Context size has been exceeded.", None, "", (None, None)),
            (
                "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
                Some("INVALID_ARGUMENT"),
                "",
                (Some(1_196_265), Some(1_048_575)),
            ),
            (
                "The input token count exceeds the maximum number of tokens allowed 1048576.",
                Some("INVALID_ARGUMENT"),
                "",
                (None, Some(1_048_576)),
            ),
        ];
        for (message, error_type, body, expected) in cases {
            assert_eq!(numbers(message, error_type, body), Some(expected), "{message}");
        }
    }

    #[test]
    fn other_errors_are_not_overflows() {
        assert_eq!(
            numbers("max_tokens: 100000 > 64000, which is the maximum allowed", Some("invalid_request_error"), ""),
            None
        );
        assert_eq!(numbers("Invalid API key", Some("authentication_error"), ""), None);
        assert_eq!(numbers("messages: roles must alternate", None, "{}"), None);
    }
}
