//! # Structured output three ways: the output tool, native, prompted
//!
//! A typed agent (`.output::<T>()`) gets its output from the model in one
//! of three modes, chosen per agent on the builder:
//!
//! | mode | builder | the model answers | a rejected output is fed back as |
//! |---|---|---|---|
//! | output tool (default) | — | by calling `final_output` with the output as its arguments | that call's error result |
//! | native | [`.native_output()`](crate::AgentBuilder::native_output) | with text the provider holds to `T`'s schema | a user message |
//! | prompted | [`.prompted_output()`](crate::AgentBuilder::prompted_output) | with JSON text, bare or in one fenced block, as the system prompt asks | a user message |
//! | auto | [`.auto_output()`](crate::AgentBuilder::auto_output) | native where the model follows a schema together with tools, else the output tool | |
//!
//! In every mode the model may call the agent's tools first: only its final
//! answer is the output. Everything else is the same: deserialisation
//! errors name the field path, the schema's constraints and your
//! validators run, failed attempts are fed back, usage and metadata are
//! reported, and a refusal ends the run with
//! [`Termination::Refused`](crate::run::Termination::Refused) instead of
//! being retried, as does an answer the provider's content filter blocked
//! (Gemini `finishReason: SAFETY`, OpenAI `content_filter`). [`Agent::output_mode`](crate::Agent::output_mode) says
//! which mode an agent runs in (auto resolved).
//!
//! ## Which to choose
//!
//! - **The output tool** works wherever tools do, and is the default.
//! - **Native** lets the provider constrain the answer to the schema, which
//!   some models follow more reliably than a forced tool; the output also
//!   streams as plain JSON text.
//! - **Prompted** needs neither tools nor schema support: for small local
//!   models that handle neither well. The output is read from the final
//!   answer: the whole answer as one JSON value, or one fenced block (prose
//!   around the fence is fine).
//!
//! ## What each provider does with a native schema
//!
//! | provider | field | strict | with tools |
//! |---|---|---|---|
//! | OpenAI Chat Completions | `response_format: {type: "json_schema", json_schema: {name, schema, strict}}` | yes, when the schema can be made strict | yes |
//! | OpenAI Responses | `text.format: {type: "json_schema", name, schema, strict}` | yes, when the schema can be made strict | yes |
//! | Anthropic Messages | `output_config.format: {type: "json_schema", schema}` | always (objects closed; numeric bounds, lengths and `maxItems` moved into descriptions) | yes; Claude Opus/Sonnet 4.5, Haiku 4.5 and later only |
//! | Ollama | `format: <schema>` | the server's grammar | **no**: the grammar leaves no room for a tool call |
//! | Gemini (and Vertex AI) | `generationConfig: {responseMimeType: "application/json", responseJsonSchema: <schema>}` | the type's own schema (the API reads `type`, `properties`, `required`, `enum`, `items`, `anyOf`, `$ref`/`$defs`, `minimum`/`maximum`, `minItems`/`maxItems` and a few more; other keywords are ignored, and still checked on the answer) | yes on Gemini 3 and later; **no** before (the API answers 400) |
//! | test models ([`ScriptedModel`](crate::testing::ScriptedModel), scripted or [`from_fn`](crate::testing::ScriptedModel::from_fn)) | [`RecordedRequest::response_schema`](crate::testing::RecordedRequest::response_schema) | | yes |
//!
//! "Strict" comes from the same transformation as OpenAI-strict tool
//! schemas ([`ResponseSchema::strict_schema`](crate::model::ResponseSchema::strict_schema)):
//! every object closed, every property required, optional ones nullable
//! (a `null` the model writes for one is read as absent). A type strict
//! mode cannot express (a map with free keys, a field of any type) is sent
//! with `strict: false` on OpenAI; Anthropic cannot take it at all.
//!
//! What a model cannot do is an error before anything is sent, never an
//! HTTP 400: `.native_output()` asks the model
//! ([`Model::response_schema_support`](crate::Model::response_schema_support))
//! at `build()` and fails with
//! [`BuildError::NativeOutputUnsupported`](crate::BuildError::NativeOutputUnsupported),
//! naming the modes to use instead (an older Claude model, a schema
//! Anthropic cannot express, Ollama or a Gemini model before 3 with
//! tools); a request built by hand
//! that the provider would reject fails with an
//! [`InvalidRequest`](crate::model::ModelErrorKind::InvalidRequest) error that has
//! no HTTP status. Auto mode never picks native output on such a model, nor
//! on a model that does not say (a [`Model`](crate::Model) of your own,
//! unless it implements `response_schema_support`).
//!
//! ## The same agent, three ways
//!
//! ```
//! use toolloop::agent::OutputMode;
//! use toolloop::testing::ScriptedModel;
//! use toolloop::prelude::*;
//!
//! /// A ticket's triage.
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
//! struct Triage {
//!     /// 1 (urgent) to 4.
//!     #[schemars(range(min = 1, max = 4))]
//!     priority: u8,
//!     /// The team that owns it.
//!     team: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let answer = serde_json::json!({"priority": 2, "team": "billing"});
//! let tool = ScriptedModel::new().respond(ModelResponse::from_tool_calls([ToolCall::new("1", "final_output", answer.clone())]));
//! let native = ScriptedModel::new()
//!     // Out of range: fed back, and the next attempt corrects it.
//!     .respond(ModelResponse::from_text(r#"{"priority": 9, "team": "billing"}"#))
//!     .respond(ModelResponse::from_text(answer.to_string()));
//! let prompted = ScriptedModel::new().respond(ModelResponse::from_text(format!("Here:\n```json\n{answer}\n```")));
//!
//! let builder = |model: ScriptedModel| Agent::builder().model(model).system("Triage tickets.").output::<Triage>();
//! let agents = [
//!     builder(tool).build()?,
//!     builder(native.clone()).native_output().build()?,
//!     builder(prompted.clone()).prompted_output().build()?,
//! ];
//! for agent in &agents {
//!     let mut conversation = Conversation::new();
//!     conversation.push_user("The invoice total is wrong.");
//!     let done = agent.run(&mut conversation).await?;
//!     assert_eq!((done.output.priority, done.output.team.as_str()), (2, "billing"));
//! }
//! assert_eq!(agents[1].output_mode(), OutputMode::Native);
//! // Native: the schema rode on the request; the verdict came back as a user message.
//! let second = &native.requests()[1];
//! assert!(second.response_schema.is_some());
//! assert!(second.last_text().contains("priority"));
//! // Prompted: the schema is in the system prompt.
//! assert!(prompted.requests()[0].system.as_deref().unwrap().contains("\"team\""));
//! # Ok(())
//! # }
//! ```
//!
//! ## Answers that are not an output
//!
//! In the native and prompted modes each of these becomes feedback for the
//! next attempt (a user message saying what was wrong), or, once attempts
//! run out, [`Termination::ValidationFailed`](crate::run::Termination::ValidationFailed)
//! with every attempt's errors in
//! [`RunError::attempt_failures`](crate::RunError::attempt_failures); the
//! conversation stays valid throughout:
//!
//! - text that is not JSON, or JSON followed by an explanation;
//! - a fenced block holding two JSON values, or two fenced blocks;
//! - an empty answer;
//! - an answer cut off at the output token limit mid-JSON (the feedback
//!   says it was cut off);
//! - JSON of the wrong shape, breaking a constraint, or failing a validator.
//!
//! ## Streaming
//!
//! A streamed run ([`Agent::run_stream`](crate::Agent::run_stream)) reports
//! the output as it forms with
//! [`Event::OutputDelta`](crate::run::Event::OutputDelta): the
//! partial value completed to valid JSON, from the output tool's arguments
//! in tool mode and from the answer's text in the others.
//!
//! ## Reflection
//!
//! With [`reflection`](crate::AgentBuilder::reflection), the output tool
//! mode returns the rendering as the output call's result. In the native
//! and prompted modes there is no output call: each JSON answer is a
//! proposal, rendered back to the model as a user message, and the model
//! either answers again with a corrected output or calls the injected
//! `submit` tool, which submits the last proposal for validation (the
//! verdict answers the `submit` call).
//!
//! ## Options of one mode
//!
//! The output tool's name and description
//! ([`output_tool_name`](crate::AgentBuilder::output_tool_name),
//! [`output_tool_description`](crate::AgentBuilder::output_tool_description))
//! mean something only with an output tool, and
//! [`output_instructions`](crate::AgentBuilder::output_instructions) only
//! in the prompted mode; in another mode they do not compile, with a
//! message naming the mode. A mode is chosen once, before any option of a
//! mode.
