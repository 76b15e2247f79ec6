//! The Responses API as a wire format of the shared HTTP model.

use serde::Serialize;

use super::chain::ResponseChains;
use super::convert::{INCLUDE_ENCRYPTED_REASONING, error_body, function_tool, input_items};
use super::reasoning::responses_reasoning;
use super::stream::ResponsesStreamDecoder;
use super::wire::{FunctionTool, InputItem, ResponsesReasoning, ResponsesResponse};
use super::{ENDPOINT_PATH, PROVIDER};
use crate::message::Message;
use crate::model::{ModelError, ModelRequest, ModelResponse, ResponseSchema, ResponseSchemaSupport};
use crate::providers::http::{
    ApiError, ApiKey, Body, BodyResult, CallSettings, Format, HttpModelBuilder, write_element,
};
use crate::providers::openai::{DEFAULT_BASE_URL, DEFAULT_MODEL, PromptCacheSettings, PromptCaching};

/// The OpenAI Responses API wire format (`POST {base}/responses`): the `W`
/// of [`OpenAiResponses`](crate::providers::openai::OpenAiResponses),
/// holding its settings. Users never name it (it is public only to be the
/// alias's parameter).
///
/// Stateless by default: every request sends the whole conversation with
/// `store: false` and `include: ["reasoning.encrypted_content"]`, so that
/// reasoning items come back encrypted and go back byte for byte, each
/// directly before the items that followed it. With
/// [`chain_responses`](HttpModelBuilder::chain_responses)
/// responses are stored and continued with `previous_response_id`.
#[derive(Clone, Debug, Default)]
#[allow(unreachable_pub)]
pub struct OpenAiResponsesApi {
    /// `Some` when responses are stored and continued.
    chains: Option<ResponseChains>,
    prompt_cache: PromptCacheSettings,
}

impl PromptCaching for OpenAiResponsesApi {
    fn prompt_cache_settings(&mut self) -> &mut PromptCacheSettings {
        &mut self.prompt_cache
    }
}

/// Settings of [`OpenAiResponses`](crate::providers::openai::OpenAiResponses) models only.
impl HttpModelBuilder<OpenAiResponsesApi> {
    /// Stores each response on OpenAI's side (`store: true`) and continues
    /// it with `previous_response_id`, sending only the items that are new
    /// since (the tool results, a user message) instead of the whole
    /// conversation (default: off, stateless).
    ///
    /// The API continues only a response that was stored, so with this on
    /// every request is sent with `store: true`; OpenAI keeps stored
    /// responses for 30 days (not under Zero Data Retention, where only
    /// the stateless default works). A request is sent whole, as without
    /// this, and continued from then on, whenever the conversation is not
    /// exactly the one the last stored response covers plus what came
    /// after it: the first call, another model or provider answered in
    /// between (a switch, a [`Fallback`](crate::providers::Fallback)), a
    /// history that was compacted, edited, cloned or deserialised, or a
    /// request that offers no tools. Reasoning is still returned encrypted
    /// and kept in the conversation, so a request sent whole works even
    /// once the stored response is gone. A chained request that fails (say
    /// the stored response was deleted: `previous_response_not_found`)
    /// makes the next one go whole. Streamed calls chain the same way.
    ///
    /// Saves the bytes of resending a long conversation; the tokens billed
    /// are the same (the stored input counts as input again, cached or not).
    pub fn chain_responses(mut self, chain: bool) -> Self {
        self.format.chains = chain.then(ResponseChains::default);
        self
    }
}

/// The fields of the request body before `input`.
#[derive(Serialize)]
struct Head<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

/// The fields of a request continuing a stored response, up to and with
/// the new items.
#[derive(Serialize)]
struct ChainedHead<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    previous_response_id: &'a str,
    input: Vec<InputItem<'a>>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_retention: Option<&'static str>,
    /// Native structured output: `{"format": {"type": "json_schema", ...}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<TextConfig<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

/// The `text` setting: the answer's format.
#[derive(Serialize)]
struct TextConfig<'a> {
    format: TextFormat<'a>,
}

/// A `json_schema` text format.
#[derive(Serialize)]
struct TextFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    schema: &'a serde_json::Value,
    strict: bool,
}

/// `text.format` for `schema`: strict when it can be made strict.
fn text_config(schema: &ResponseSchema) -> TextConfig<'_> {
    let (json, strict) = schema.strict_or_plain();
    TextConfig {
        format: TextFormat {
            kind: "json_schema",
            name: &schema.name,
            description: schema.description.as_deref(),
            schema: json,
            strict,
        },
    }
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

    /// The same bytes as [`render`](super::convert::render) of the request:
    /// the whole conversation, or only what is new since the stored
    /// response it continues.
    fn write_body(&self, call: CallSettings<'_>, request: &ModelRequest<'_>, body: &mut Body<'_>) -> BodyResult {
        let instructions = request.system.filter(|s| !s.is_empty());
        let continuation = self
            .chains
            .as_ref()
            .and_then(|chains| chains.continuation(call.model, request.messages, !request.tools.is_empty()));
        if let Some(continuation) = &continuation {
            body.open(&ChainedHead {
                model: call.model,
                instructions,
                previous_response_id: &continuation.previous_response_id,
                input: input_items(&request.messages[continuation.new_from..]),
            })?;
        } else {
            body.open(&Head { model: call.model, instructions })?;
            body.messages("input", None::<&()>)?;
        }
        body.close(&Tail {
            tools: request.tools.iter().map(|tool| function_tool(tool, request.strict_tools)).collect(),
            max_output_tokens: call.max_tokens,
            temperature: call.temperature,
            reasoning: call.reasoning.and_then(|config| responses_reasoning(config, call.model)),
            store: self.chains.is_some(),
            include: [INCLUDE_ENCRYPTED_REASONING],
            prompt_cache_key: self.prompt_cache.key(),
            prompt_cache_retention: self.prompt_cache.retention(),
            text: request.response_schema.map(text_config),
            stream: call.stream,
        })
    }

    /// Every schema: strict when it can be made strict, else `strict: false`.
    fn response_schema_support(&self, _: &str, _: &ResponseSchema) -> ResponseSchemaSupport {
        ResponseSchemaSupport::WithTools
    }

    fn render_run(&self, run: &[Message], _: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()> {
        input_items(run).iter().try_for_each(|item| write_element(out, item))
    }

    fn response(&self, wire: ResponsesResponse) -> Result<ModelResponse, ModelError> {
        ModelResponse::try_from(wire)
    }

    fn answered(&self, call: CallSettings<'_>, request: &ModelRequest<'_>, response: &ModelResponse) {
        if let Some(chains) = &self.chains {
            chains.record(call.model, request.messages, response);
        }
    }

    fn records_answers(&self) -> bool {
        self.chains.is_some()
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
    use crate::model::ModelRequest;
    use crate::providers::openai::{OpenAi, OpenAiResponses};
    use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};
    use crate::reasoning::{ReasoningConfig, ReasoningEffort};
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
                    ContentBlock::Reasoning(Reasoning::with_opaque(Vec::new(), vec!["sum".into()], opaque)),
                    ContentBlock::ToolCall(ToolCall::new("call_1", "weather", json!({"city": "Paris"}))),
                ],
            )
            .with_provider("openai-responses"),
        );
        conversation.push(Message::from_tool_results([ToolResult::success("call_1", "sunny")]));
        let cache = crate::model::BodyCache::default();
        for _ in 0..2 {
            let request = ModelRequest::new(conversation.messages())
                .with_system("be brief")
                .with_tools(&tools)
                .with_body_cache(&cache);
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

    #[test]
    fn a_chained_model_continues_its_stored_response_with_the_reference_body() {
        let model: OpenAiResponses =
            OpenAi::responses().api_key("k").model("gpt-5.1").chain_responses(true).build().unwrap();
        let tools = [ToolDefinition::from_schema("weather", "Weather.", json!({"type": "object"}))];
        let mut conversation = Conversation::new();
        conversation.push_user("weather?");
        let request = ModelRequest::new(conversation.messages()).with_tools(&tools);
        let first = String::from_utf8(model.body(&request, false).unwrap().to_vec()).unwrap();
        let whole = render(&ResponsesInputs {
            store: true,
            ..ResponsesInputs::from_request("gpt-5.1", None, None, None, &request)
        })
        .unwrap();
        assert_eq!(first, String::from_utf8(whole).unwrap(), "nothing stored yet: sent whole, stored");

        let answer = crate::ModelResponse::from_tool_calls([ToolCall::new("call_1", "weather", json!({}))])
            .with_id("resp_1")
            .with_provider("openai-responses");
        let call = model.call_settings(&request, false);
        crate::providers::http::Format::answered(model.format(), call, &request, &answer);
        conversation.push(answer.to_message("openai-responses"));
        conversation.push(Message::from_tool_results([ToolResult::success("call_1", "sunny")]));
        let request = ModelRequest::new(conversation.messages()).with_tools(&tools);
        let chained = String::from_utf8(model.body(&request, false).unwrap().to_vec()).unwrap();
        let reference = render(&ResponsesInputs {
            messages: &conversation.messages()[2..],
            previous_response_id: Some("resp_1"),
            store: true,
            ..ResponsesInputs::from_request("gpt-5.1", None, None, None, &request)
        })
        .unwrap();
        assert_eq!(chained, String::from_utf8(reference).unwrap());
        assert!(chained.contains(r#""previous_response_id":"resp_1","input":[{"type":"function_call_output""#));
    }
}
