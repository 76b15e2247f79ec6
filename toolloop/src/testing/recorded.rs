//! A request a test model received, kept as owned data.

use crate::message::Message;
use crate::model::{ModelRequest, ResponseSchema};
use crate::tool::ToolDefinition;

/// A copy of one [`ModelRequest`], for assertions after the run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The system prompt.
    pub system: Option<String>,
    /// The messages, as the model was sent them: the view of the request's
    /// history for the provider the test model plays
    /// ([`ModelRequest::view_for`]).
    pub messages: Vec<Message>,
    /// The tools the model was offered.
    pub tools: Vec<ToolDefinition>,
    /// The maximum output tokens override.
    pub max_tokens: Option<u32>,
    /// The temperature override.
    pub temperature: Option<f32>,
    /// Whether strict tool schemas were asked for.
    pub strict_tools: bool,
    /// The schema the answer was asked to follow (native structured output).
    pub response_schema: Option<ResponseSchema>,
}

impl RecordedRequest {
    /// The names of the offered tools, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|tool| &*tool.name).collect()
    }

    /// The text of the last message, or `""` when there is none.
    pub fn last_text(&self) -> String {
        self.messages.last().map(Message::text).unwrap_or_default()
    }

    /// The last tool result sent, if any: where a typed agent's verdict on
    /// an output (or, with reflection, on `submit`) arrives.
    pub fn last_tool_result(&self) -> Option<&crate::message::ToolResult> {
        self.messages.iter().rev().find_map(|message| message.tool_results().last())
    }
}

impl RecordedRequest {
    /// `request` as a model playing `provider` is sent it.
    pub(crate) fn sent_to(provider: &str, request: &ModelRequest<'_>) -> Self {
        Self {
            system: request.system.map(str::to_owned),
            messages: request.view_for(provider).into_owned(),
            tools: request.tools.to_vec(),
            max_tokens: request.max_tokens,
            temperature: request.temperature,
            strict_tools: request.strict_tools,
            response_schema: request.response_schema.cloned(),
        }
    }
}
