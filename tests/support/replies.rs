//! Successful model responses in each provider's wire format, ready to
//! script a [`TestServer`](crate::TestServer). Every one reports 10 input
//! and 5 output tokens.

use serde_json::{Value, json};

use crate::Reply;

/// Anthropic Messages responses.
pub mod anthropic {
    use super::{Reply, Value, json};

    /// A text answer (`stop_reason: end_turn`).
    pub fn text(text: &str) -> Reply {
        respond(&json!([{"type": "text", "text": text}]), "end_turn")
    }

    /// Tool calls, each `(id, name, input)` (`stop_reason: tool_use`).
    pub fn tool_use(calls: &[(&str, &str, Value)]) -> Reply {
        let content: Vec<Value> = calls
            .iter()
            .map(|(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            .collect();
        respond(&Value::Array(content), "tool_use")
    }

    fn respond(content: &Value, stop_reason: &str) -> Reply {
        Reply::json(
            200,
            &json!({
                "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
                "content": content, "stop_reason": stop_reason, "stop_sequence": null,
                "usage": {"input_tokens": 10, "output_tokens": 5}
            }),
        )
    }
}

/// OpenAI Chat Completions responses.
pub mod openai {
    use super::{Reply, Value, json};

    /// A text answer (`finish_reason: stop`).
    pub fn text(text: &str) -> Reply {
        respond(&json!({"role": "assistant", "content": text}), "stop")
    }

    /// Tool calls, each `(id, name, arguments)` with the arguments as the
    /// JSON string the API sends (`finish_reason: tool_calls`).
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        respond(&json!({"role": "assistant", "content": null, "tool_calls": calls}), "tool_calls")
    }

    fn respond(message: &Value, finish_reason: &str) -> Reply {
        Reply::json(
            200,
            &json!({
                "id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "gpt-test",
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            }),
        )
    }
}

/// Ollama `/api/chat` responses.
pub mod ollama {
    use super::{Reply, Value, json};

    /// A text answer.
    pub fn text(text: &str) -> Reply {
        respond(&json!({"role": "assistant", "content": text}))
    }

    /// Tool calls, each `(name, arguments)`; Ollama sends no ids.
    pub fn tool_calls(calls: &[(&str, Value)]) -> Reply {
        let calls: Vec<Value> =
            calls.iter().map(|(name, arguments)| json!({"function": {"name": name, "arguments": arguments}})).collect();
        respond(&json!({"role": "assistant", "content": "", "tool_calls": calls}))
    }

    fn respond(message: &Value) -> Reply {
        Reply::json(
            200,
            &json!({
                "model": "llama-test", "created_at": "2026-01-01T00:00:00Z", "message": message,
                "done_reason": "stop", "done": true, "prompt_eval_count": 10, "eval_count": 5
            }),
        )
    }
}
