//! The Gemini stream (`:streamGenerateContent?alt=sse`): each server-sent
//! event is a whole `GenerateContentResponse` holding the next parts, the
//! usage so far, and on the last one the `finishReason`. There is no
//! `[DONE]`: the stream ends after the chunk that finishes. A failure
//! after the answer began arrives as an `{"error": {...}}` event.

use super::PROVIDER;
use super::parts::Parts;
use super::wire::{ErrorResponse, GenerateContentResponse};
use crate::model::ModelError;
use crate::model::{ModelErrorKind, StreamEvent};
use crate::providers::http::{StreamDecoder, ended_early, kind_for_status, malformed_frame, stream_error};

/// Decodes one Gemini stream.
#[derive(Debug, Default)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct GeminiStreamDecoder {
    parts: Parts,
}

impl StreamDecoder for GeminiStreamDecoder {
    fn decode(&mut self, _: Option<&str>, data: &str, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if data.trim().is_empty() {
            return Ok(());
        }
        // An error event is `{"error": {...}}`; a chunk never has that field.
        if data.contains("\"error\"")
            && let Ok(ErrorResponse { error }) = serde_json::from_str::<ErrorResponse>(data)
        {
            let kind = error_kind(error.code, error.status.as_deref());
            return Err(stream_error(PROVIDER, kind, error.message, error.status));
        }
        let chunk: GenerateContentResponse =
            serde_json::from_str(data).map_err(|error| malformed_frame(PROVIDER, "a chunk", &error, data))?;
        self.parts.chunk(chunk, out);
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.parts.is_finished()
    }

    fn finish(&mut self, _: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.parts.is_finished() { Ok(()) } else { Err(ended_early(PROVIDER, "a chunk with a finishReason")) }
    }
}

/// The kind of an error Google names by its status (`UNAVAILABLE`,
/// `RESOURCE_EXHAUSTED`, ...) and HTTP code.
fn error_kind(code: Option<u16>, status: Option<&str>) -> ModelErrorKind {
    match status {
        Some("RESOURCE_EXHAUSTED") => ModelErrorKind::RateLimited,
        Some("UNAVAILABLE") => ModelErrorKind::Overloaded,
        Some("INTERNAL" | "UNKNOWN") => ModelErrorKind::Server,
        Some("DEADLINE_EXCEEDED") => ModelErrorKind::Timeout,
        Some("INVALID_ARGUMENT" | "FAILED_PRECONDITION") => ModelErrorKind::InvalidRequest,
        _ => code.map_or(ModelErrorKind::Server, |code| kind_for_status(code, None)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::GeminiStreamDecoder;
    use crate::model::ModelErrorKind;
    use crate::providers::http::testing::decode_all_splits;
    use crate::reasoning::ReasoningState;

    fn sse(chunks: &[serde_json::Value]) -> String {
        chunks.iter().map(|chunk| format!("data: {chunk}\r\n\r\n")).collect::<Vec<_>>().concat()
    }

    #[tokio::test]
    async fn text_thoughts_and_a_late_signature_accumulate_in_place() {
        let body = sse(&[
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me", "thought": true}]}}], "modelVersion": "gemini-3-flash-preview", "responseId": "r1"}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " think.", "thought": true}]}}], "responseId": "r1"}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}], "responseId": "r1"}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "lo."}]}}], "responseId": "r1"}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "", "thoughtSignature": "c2ln"}]}, "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 10, "cachedContentTokenCount": 4, "candidatesTokenCount": 3, "thoughtsTokenCount": 5}, "responseId": "r1"}),
        ]);
        let decoded = decode_all_splits(GeminiStreamDecoder::default, &body, true).await;
        let response = decoded.result.unwrap();
        assert_eq!(response.text(), "Hello.");
        assert_eq!(response.reasoning_text(), "Let me think.");
        let states: Vec<_> = response.reasoning().map(|r| r.state_for("gemini").unwrap().clone()).collect();
        assert_eq!(
            states,
            [
                ReasoningState::Thought { signature: None },
                ReasoningState::ThoughtSignature { signature: "c2ln".into() }
            ]
        );
        // The signature sits right before the text it signs.
        assert!(matches!(response.content[2], crate::ContentBlock::Text { .. }));
        assert_eq!((response.usage.input_tokens, response.usage.cache_read_tokens), (6, 4));
        assert_eq!((response.usage.output_tokens, response.usage.reasoning_tokens), (8, 5));
        assert_eq!(response.id.as_deref(), Some("r1"));
    }

    #[tokio::test]
    async fn an_error_event_or_a_cut_stream_fails() {
        let body = sse(&[
            json!({"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]}),
            json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
        ]);
        let error = decode_all_splits(GeminiStreamDecoder::default, &body, true).await.result.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Overloaded);
        assert_eq!(error.message(), "The model is overloaded.");
        let cut = sse(&[json!({"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]})]);
        let error = decode_all_splits(GeminiStreamDecoder::default, &cut, true).await.result.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Connection);
    }
}
