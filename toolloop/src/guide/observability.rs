//! # Observability: hooks, logs and OpenTelemetry
//!
//! A run reports each fact once, as a [`run::Event`](crate::run::Event):
//! an attempt or iteration starting, the model's answer (with who
//! answered: behind a [`Fallback`](crate::providers::Fallback), the model
//! that did), a compaction and what it left out, a view that showed another
//! provider's tool calls as text, a tool call starting (after governance
//! allowed it) and its result with governance's verdict, validation
//! failing, the run's end. Every tool call
//! has exactly one result event, carrying what the model is told (the
//! result as `max_tool_result_chars` cut it, the verdict on an output),
//! calls that never ran included (skipped after a stop, cut off with their
//! response, beyond `max_tool_calls_per_iteration`: a result, no start,
//! [`Verdict::Undecided`](crate::run::Verdict::Undecided)). Hooks see them
//! as they happen: [`on_event`](crate::AgentBuilder::on_event) sees every
//! one, and each typed hook is named for the event it filters and gets its
//! fields ([`on_attempt_started`](crate::AgentBuilder::on_attempt_started),
//! [`on_iteration_finished`](crate::AgentBuilder::on_iteration_finished),
//! [`on_compacted`](crate::AgentBuilder::on_compacted),
//! [`on_tool_execution_started`](crate::AgentBuilder::on_tool_execution_started),
//! [`on_tool_execution_finished`](crate::AgentBuilder::on_tool_execution_finished),
//! [`on_validation_failed`](crate::AgentBuilder::on_validation_failed),
//! [`on_run_finished`](crate::AgentBuilder::on_run_finished)). They are the
//! same on an agent builder and a [`ToolLoop`](crate::run::ToolLoop); to
//! share hooks between agents, give each the same `on_event` closure. A
//! streamed run yields the same events. A hook that fails or panics never
//! breaks the run; its error lands in the metadata. The metadata
//! ([`RunMetadata`](crate::run::RunMetadata)) holds the run's totals and
//! counts; each fact's details are in its event.
//!
//! An event serialises as it is ([its form](crate::run::Event#the-serialised-form)),
//! so the audit record of a tool call is its `ToolExecutionFinished`: the
//! call, the result the model was told, governance's verdict and the time
//! it ran.
//!
//! ```
//! use toolloop::prelude::*;
//! use toolloop::run::Event;
//! use toolloop::testing::ScriptedModel;
//!
//! # tokio_test::block_on(async {
//! let model = ScriptedModel::new()
//!     .respond(ModelResponse::from_tool_calls([ToolCall::new("c1", "lookup", serde_json::json!({}))]))
//!     .respond(ModelResponse::from_text("Done."));
//! let agent = Agent::builder()
//!     .model(model)
//!     // One line of JSON per tool call, for the audit log.
//!     .on_event(|event: &Event| match event {
//!         Event::ToolExecutionFinished { .. } => serde_json::to_string(event).map(|json| println!("{json}")),
//!         _ => Ok(()),
//!     })
//!     .build()?;
//! let mut conversation = Conversation::new();
//! conversation.push_user("Look it up.");
//! agent.run(&mut conversation).await?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! `RUST_LOG=toolloop=debug` logs a summary of every request and response
//! through `tracing` (roles, block kinds, tool call ids and names);
//! `RUST_LOG=toolloop=trace` (or `toolloop::dump=trace` alone) also dumps
//! what every model call is sent and every event with its contents
//! (responses, tool arguments and results), whatever the model, the test
//! models included; never API keys. `examples/observability.rs` shows
//! hooks and logs, with a live progress line per iteration.
//!
//! ## See your runs in your tracing backend
//!
//! Runs emit `tracing` spans on the [OpenTelemetry GenAI semantic
//! conventions](https://opentelemetry.io/docs/specs/semconv/gen-ai/), so
//! Langfuse, Honeycomb, Datadog, Grafana Tempo, Jaeger, Phoenix or Logfire
//! show them as agent traces once `tracing-opentelemetry` forwards them:
//!
//! ```text
//! invoke_agent {agent name}      gen_ai.agent.name, usage totals, error.type when the run failed
//! └─ attempt 1                   a validation retry opens attempt 2
//!    └─ iteration 1
//!       ├─ chat {model}          gen_ai.request.model / max_tokens / temperature, gen_ai.response.model / id /
//!       │                        finish_reasons, gen_ai.usage.input_tokens / output_tokens / cache_read / cache_creation
//!       └─ execute_tool {tool}   gen_ai.tool.name / call.id / type / description, error.type
//! ```
//!
//! A call through a [`Fallback`](crate::providers::Fallback) is one `chat`
//! span, whichever of its models answered; when they are of several
//! providers, its `gen_ai.provider.name` is the one that answered (or
//! failed), recorded when the call ends, and `gen_ai.response.model` names
//! the model.
//!
//! Name the agent with `.name("support")`. Install the bridge once, with
//! the exporter you already use (OTLP here):
//!
//! ```toml
//! tracing-subscriber = "0.3"
//! tracing-opentelemetry = "0.34"
//! opentelemetry_sdk = "0.33"
//! opentelemetry-otlp = "0.33" # reads OTEL_EXPORTER_OTLP_ENDPOINT
//! ```
//!
//! `cargo run --example otel` exports to `OTEL_EXPORTER_OTLP_ENDPOINT` when
//! it is set and prints the span tree otherwise (`examples/otel.rs` is the
//! setup to copy). Message content (system instructions, messages, tool
//! definitions, arguments and results) stays out of spans unless
//! [`telemetry::set_capture_content(true)`](crate::telemetry::set_capture_content)
//! (or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`) turns it
//! on; API keys never enter spans. The `otel-metrics` feature adds the
//! conventions' `gen_ai.client.operation.duration` and
//! `gen_ai.client.token.usage` histograms through the `opentelemetry` API.
//! Without a subscriber the spans cost nothing measurable; with one, see
//! `BENCHMARKS.md` section 7.
