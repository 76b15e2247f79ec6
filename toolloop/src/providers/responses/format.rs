//! The Responses API as a wire format of the shared HTTP model.

use serde::Serialize;

use super::convert::{INCLUDE_ENCRYPTED_REASONING, error_body, function_tool, input_items};
use super::stream::ResponsesStreamDecoder;
use super::wire::{FunctionTool, ResponsesResponse};
use super::{ENDPOINT_PATH, PROVIDER};
use crate::message::Message;
use crate::model::reasoning::openai::{ResponsesReasoning, responses_reasoning};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::providers::http::{ApiError, ApiKey, Body, CallSettings, Format, write_element};
use crate::providers::openai::{DEFAULT_BASE_URL, DEFAULT_MODEL};

/// The OpenAI Responses API wire format (`POST {base}/responses`): the `W`
/// of [`OpenAiResponses`](crate::providers::openai::OpenAiResponses).
///
/// Stateless: every request sends the whole conversation with
/// `store: false` and `include: ["reasoning.encrypted_content"]`, so that
/// reasoning items come back encrypted and go back byte for byte, each
/// directly before the items that followed it.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct OpenAiResponsesApi {}

/// The fields of the request body before `input`.
#[derive(Serialize)]
struct Head<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

/// The fields of the request body after `input`.
#[derive(Serialize)]
struct Tail<'a> {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<FunctionTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<ResponsesReasoning>,
    store: bool,
    include: [&'static str; 1],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

impl Format for OpenAiResponsesApi {
    const PROVIDER: &'static str = PROVIDER;
    const PATH: &'static str = ENDPOINT_PATH;
    const DEFAULT_BASE_URL: &'static str = DEFAULT_BASE_URL;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;
    const API_KEY: ApiKey = ApiKey::RequiredUnlessBaseUrl("OPENAI_API_KEY");
    const BASE_URL_VARIABLE: &'static str = "OPENAI_BASE_URL";

    type Response = ResponsesResponse;
    type Decoder = ResponsesStreamDecoder;

    /// The same bytes as [`render`](super::convert::render) of the whole,
    /// stateless request.
    fn write_body(
        &self,
        call: CallSettings<'_>,
        request: &ModelRequest<'_>,
        body: &mut Body<'_>,
    ) -> serde_json::Result<()> {
        body.open(&Head { model: call.model, instructions: request.system.filter(|s| !s.is_empty()) })?;
        body.messages("input", None::<&()>)?;
        body.close(&Tail {
            tools: request.tools.iter().map(|tool| function_tool(tool, request.strict_tools)).collect(),
            max_output_tokens: call.max_tokens,
            temperature: call.temperature,
            reasoning: call.reasoning.and_then(|config| responses_reasoning(config, call.model)),
            store: false,
            include: [INCLUDE_ENCRYPTED_REASONING],
            stream: call.stream,
        })
    }

    fn render_run(&self, run: &[Message], _: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()> {
        input_items(run).iter().try_for_each(|item| write_element(out, item))
    }

    fn response(&self, wire: ResponsesResponse) -> Result<ModelResponse, ModelError> {
        ModelResponse::try_from(wire)
    }

    fn stream_decoder(&self) -> ResponsesStreamDecoder {
        ResponsesStreamDecoder::new()
    }

    fn error_body(body: &[u8]) -> Option<ApiError> {
        error_body(body)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::convert::{ResponsesInputs, render};
    use crate::message::{ContentBlock, Message, ToolCall, ToolResult};
    use crate::model::{ModelRequest, ReasoningConfig, ReasoningEffort};
    use crate::providers::openai::{OpenAi, OpenAiResponses};
    use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};
    use crate::tool::ToolDefinition;
    use crate::{Conversation, Model};

    #[test]
    fn the_model_body_is_the_stateless_reference_body_and_reuses_settled_bytes() {
        let model: OpenAiResponses =
            OpenAi::responses().api_key("k").model("gpt-5.1").reasoning(ReasoningEffort::Low).build().unwrap();
        assert_eq!(model.provider(), "openai-responses");
        assert!(model.endpoint().ends_with("/v1/responses"));
        let tools = [ToolDefinition::from_schema("weather", "Weather.", json!({"type": "object"}))];
        let opaque = OpaqueReasoning::new(
            "openai-responses",
            Some("gpt-5.1".into()),
            ReasoningState::Item { id: "rs_1".into(), encrypted_content: Some("gAAAA1".into()) },
        );
        let mut conversation = Conversation::new();
        conversation.push_user("weather?");
        conversation.push(
            Message::new(
                crate::message::Role::Assistant,
                vec![
                    ContentBlock::Reasoning(Reasoning::new(Vec::new(), vec!["sum".into()], Some(opaque))),
                    ContentBlock::ToolCall(ToolCall::new("call_1", "weather", json!({"city": "Paris"}))),
                ],
            )
            .with_provider("openai-responses"),
        );
        conversation.push(Message::from_tool_results([ToolResult::success("call_1", "sunny")]));
        for _ in 0..2 {
            let request = ModelRequest::new(conversation.messages()).with_system("be brief").with_tools(&tools);
            let reference = render(&ResponsesInputs::from_request(
                "gpt-5.1",
                None,
                None,
                Some(ReasoningConfig::new(ReasoningEffort::Low)),
                &request,
            ))
            .unwrap();
            assert_eq!(
                String::from_utf8(model.body(&request, false).unwrap().to_vec()).unwrap(),
                String::from_utf8(reference).unwrap()
            );
            conversation.push_user("and tomorrow?");
        }
    }
}
