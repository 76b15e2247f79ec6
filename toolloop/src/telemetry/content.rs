//! Message content in the conventions' JSON shape: messages of `parts`
//! (`text`, `tool_call`, `tool_call_response`, `reasoning`), system instructions as parts,
//! tool definitions as function objects.

use serde_json::{Value, json};

use crate::message::{ContentBlock, Message, Role};
use crate::tool::ToolDefinition;

pub(super) fn parts(content: &[ContentBlock]) -> Vec<Value> {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => json!({"type": "text", "content": text}),
            ContentBlock::ToolCall(call) => {
                json!({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.input})
            }
            ContentBlock::ToolResult(result) => {
                json!({"type": "tool_call_response", "id": result.call_id, "response": result.content})
            }
            // The readable thinking or summary only: signatures and encrypted state stay out.
            ContentBlock::Reasoning(reasoning) => {
                let text = if reasoning.text.is_empty() { &reasoning.summary } else { &reasoning.text };
                json!({"type": "reasoning", "content": text.join("\n")})
            }
        })
        .collect()
}

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// `gen_ai.input.messages`: the history sent; a message of tool results has role `tool`.
pub(super) fn input_messages(messages: &[Message]) -> String {
    let messages: Vec<Value> = messages
        .iter()
        .map(|message| {
            let only_results = !message.content.is_empty()
                && message.content.iter().all(|block| matches!(block, ContentBlock::ToolResult(_)));
            let role = if only_results { "tool" } else { role(message.role) };
            json!({"role": role, "parts": parts(&message.content)})
        })
        .collect();
    Value::Array(messages).to_string()
}

/// `gen_ai.output.messages`: the one assistant message of a response.
pub(super) fn output_messages(content: &[ContentBlock], finish_reason: &str) -> String {
    json!([{"role": "assistant", "parts": parts(content), "finish_reason": finish_reason}]).to_string()
}

/// `gen_ai.system_instructions`.
pub(super) fn system_instructions(system: &str) -> String {
    json!([{"type": "text", "content": system}]).to_string()
}

/// `gen_ai.tool.definitions`.
pub(super) fn tool_definitions(tools: &[ToolDefinition]) -> String {
    let tools: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({"type": "function", "name": tool.name, "description": tool.description, "parameters": tool.input_schema})
        })
        .collect();
    Value::Array(tools).to_string()
}
