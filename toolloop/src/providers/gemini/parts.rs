//! Gemini response parts turned into neutral [`StreamEvent`]s: one path for
//! a whole response and for each chunk of a streamed one, so that a
//! streamed call accumulates to exactly the response of the same call not
//! streamed (the same blocks, signatures and synthesised call ids).
//!
//! Each part the model writes gets a *slot* `k`: its content (text, a
//! thought, a function call) takes the neutral index `2k + 1`, and the
//! `thoughtSignature` it carried, as its own reasoning block
//! ([`ReasoningState::ThoughtSignature`]), the index `2k` right before it.
//! So a signature that arrives after the text it signs (streams send it on
//! the last chunk of a text, or on an empty text part after it) still sits
//! before that text, where the request writer puts it back on the part.
//!
//! Text arriving in several parts in a row is one part, as streamed chunks
//! are, until a signature closes it (two signed parts are never merged);
//! thoughts (`thought: true`) likewise, their summary text in
//! [`Reasoning::summary`] and their signature, if any, inside the block
//! ([`ReasoningState::Thought`]).

use serde_json::{Map, Value};

use super::PROVIDER;
use super::wire::{GenerateContentResponse, ResponsePart, UsageMetadata};
use crate::model::StreamEvent;
use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// The events of one response so far.
#[derive(Debug, Default)]
pub(super) struct Parts {
    started: bool,
    finished: bool,
    model: Option<String>,
    response_id: Option<String>,
    /// The next free slot.
    next_slot: usize,
    open: Open,
    calls: usize,
}

/// The part being written, which the next part of the same kind extends.
#[derive(Debug, Default)]
enum Open {
    #[default]
    Nothing,
    Text {
        slot: usize,
    },
    Thought {
        slot: usize,
        summary: String,
    },
}

impl Parts {
    /// Whether the response has finished (a candidate gave its `finishReason`).
    pub(super) fn is_finished(&self) -> bool {
        self.finished
    }

    /// Appends to `out` the events of one response body or streamed chunk.
    pub(super) fn chunk(&mut self, chunk: GenerateContentResponse, out: &mut Vec<StreamEvent>) {
        if self.model.is_none() {
            self.model.clone_from(&chunk.model_version);
        }
        if self.response_id.is_none() {
            self.response_id.clone_from(&chunk.response_id);
        }
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Started {
                model: chunk.model_version.clone(),
                provider: Some(PROVIDER.to_owned()),
                id: chunk.response_id.clone(),
            });
        }
        // Only the first candidate is asked for (`candidateCount` is never set).
        let mut candidate = chunk.candidates.into_iter().next();
        for part in candidate.as_mut().and_then(|c| c.content.take()).map(|c| c.parts).unwrap_or_default() {
            self.part(part, out);
        }
        if let Some(usage) = chunk.usage_metadata {
            out.push(StreamEvent::Usage(usage_from(usage)));
        }
        let finish = candidate.and_then(|c| c.finish_reason);
        let blocked = chunk.prompt_feedback.and_then(|feedback| feedback.block_reason);
        if let Some(reason) = finish.as_deref().or(blocked.as_ref().map(|_| "PROMPT_BLOCKED")) {
            self.close(out);
            self.finished = true;
            out.push(StreamEvent::Finished { stop_reason: stop_reason_from(reason, self.calls > 0) });
        }
    }

    /// Ends a whole (non-streamed) response: a body without a
    /// `finishReason` (compatible servers) ends as its content implies.
    pub(super) fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if !self.finished {
            self.close(out);
            self.finished = true;
            let stop_reason = if self.calls > 0 { StopReason::ToolUse } else { StopReason::EndTurn };
            out.push(StreamEvent::Finished { stop_reason });
        }
    }

    fn part(&mut self, part: ResponsePart, out: &mut Vec<StreamEvent>) {
        let ResponsePart { text, thought, thought_signature, function_call } = part;
        if let Some(call) = function_call {
            self.close(out);
            let slot = self.new_slot();
            if let Some(signature) = thought_signature {
                self.signature(slot, signature, out);
            }
            let id = call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| synthetic_id(self.response_id.as_deref(), self.calls, &call.name));
            self.calls += 1;
            let index = 2 * slot + 1;
            out.push(StreamEvent::ToolCallStarted { index, id, name: call.name });
            let input = Value::Object(call.args.unwrap_or_else(Map::new));
            out.push(StreamEvent::ToolCallFinished { index, input: Some(input) });
            return;
        }
        let text = text.unwrap_or_default();
        if thought {
            let slot = if let Open::Thought { slot, summary } = &mut self.open {
                summary.push_str(&text);
                *slot
            } else {
                self.close(out);
                let slot = self.new_slot();
                self.open = Open::Thought { slot, summary: text.clone() };
                slot
            };
            if !text.is_empty() {
                out.push(StreamEvent::ReasoningDelta { index: 2 * slot + 1, text });
            }
            if let Some(signature) = thought_signature {
                self.close_thought(Some(signature), out);
            }
            return;
        }
        if !text.is_empty() {
            let slot = if let Open::Text { slot } = self.open {
                slot
            } else {
                self.close(out);
                let slot = self.new_slot();
                self.open = Open::Text { slot };
                slot
            };
            out.push(StreamEvent::TextDelta { index: 2 * slot + 1, text });
        }
        if let Some(signature) = thought_signature {
            // It signs the text being written, or stands alone as an empty part.
            let slot = if let Open::Text { slot } = self.open {
                slot
            } else {
                self.close(out);
                self.new_slot()
            };
            self.open = Open::Nothing;
            self.signature(slot, signature, out);
        }
    }

    fn new_slot(&mut self) -> usize {
        self.next_slot += 1;
        self.next_slot - 1
    }

    fn signature(&self, slot: usize, signature: String, out: &mut Vec<StreamEvent>) {
        let state = ReasoningState::ThoughtSignature { signature };
        out.push(StreamEvent::ReasoningFinished { index: 2 * slot, reasoning: self.reasoning(Vec::new(), state) });
    }

    fn reasoning(&self, summary: Vec<String>, state: ReasoningState) -> Reasoning {
        Reasoning::with_opaque(Vec::new(), summary, OpaqueReasoning::new(PROVIDER, self.model.clone(), state))
    }

    /// Closes the open part: a thought gets its finished block.
    fn close(&mut self, out: &mut Vec<StreamEvent>) {
        self.close_thought(None, out);
        self.open = Open::Nothing;
    }

    fn close_thought(&mut self, signature: Option<String>, out: &mut Vec<StreamEvent>) {
        if let Open::Thought { slot, summary } = std::mem::take(&mut self.open) {
            let summary = if summary.is_empty() { Vec::new() } else { vec![summary] };
            let reasoning = self.reasoning(summary, ReasoningState::Thought { signature });
            out.push(StreamEvent::ReasoningFinished { index: 2 * slot + 1, reasoning });
        }
    }
}

/// An id for call number `n` of a response that numbered none: from the
/// response's id when it has one (so the same response gives the same ids,
/// streamed or not), else unique in this process.
fn synthetic_id(response_id: Option<&str>, n: usize, name: &str) -> String {
    match response_id.map(|id| id.chars().filter(char::is_ascii_alphanumeric).collect::<String>()) {
        Some(id) if !id.is_empty() => format!("call_{n}_{id}"),
        _ => crate::providers::convert::synthetic_call_id("call_", n, name),
    }
}

/// Neutral usage: the prompt's cached tokens are cache reads (implicit
/// caching needs no marks), the rest input; thoughts are output tokens and
/// reported as reasoning tokens too.
pub(super) fn usage_from(usage: UsageMetadata) -> Usage {
    let cached = usage.cached_content_token_count.min(usage.prompt_token_count);
    Usage {
        input_tokens: usage.prompt_token_count - cached + usage.tool_use_prompt_token_count,
        output_tokens: usage.candidates_token_count + usage.thoughts_token_count,
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        reasoning_tokens: usage.thoughts_token_count,
    }
}

/// The neutral stop reason of a `finishReason` (or a blocked prompt).
pub(super) fn stop_reason_from(reason: &str, has_calls: bool) -> StopReason {
    match reason {
        "STOP" if has_calls => StopReason::ToolUse,
        "STOP" => StopReason::EndTurn,
        "MAX_TOKENS" => StopReason::MaxTokens,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" | "PROMPT_BLOCKED" => {
            StopReason::ContentFilter
        }
        other => StopReason::Other(other.to_ascii_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::stop_reason_from;
    use crate::stop_reason::StopReason;

    #[test]
    fn finish_reasons_map() {
        assert_eq!(stop_reason_from("STOP", false), StopReason::EndTurn);
        assert_eq!(stop_reason_from("STOP", true), StopReason::ToolUse);
        assert_eq!(stop_reason_from("MAX_TOKENS", true), StopReason::MaxTokens);
        assert_eq!(stop_reason_from("SAFETY", false), StopReason::ContentFilter);
        assert_eq!(
            stop_reason_from("MALFORMED_FUNCTION_CALL", false),
            StopReason::Other("malformed_function_call".into())
        );
    }
}
