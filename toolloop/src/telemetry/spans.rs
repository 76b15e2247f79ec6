//! The spans of a run, on the GenAI conventions: `invoke_agent`, `chat`,
//! `execute_tool`, and toolloop's own `attempt` and `iteration` between them.
//!
//! Every attribute a span may get is declared when it is made (`tracing`
//! records only declared fields), and recorded only when the span is enabled.

use tracing::{Span, field};

use super::capture::capture_content;
use super::content;
use crate::message::{ToolCall, ToolResult};
use crate::model::{Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// The span of one run: `invoke_agent {name}`, or `invoke_agent` for an unnamed agent or a bare loop.
pub(crate) fn invoke_agent(name: Option<&str>, model: &dyn Model) -> Span {
    tracing::info_span!(
        "invoke_agent",
        otel.name = name.map_or_else(|| "invoke_agent".to_owned(), |name| format!("invoke_agent {name}")),
        otel.kind = "internal",
        otel.status_code = field::Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = name,
        // A run behind a model that picks its provider per call (a
        // `Fallback` over several) may use several: its chat spans name them.
        gen_ai.provider.name = model.provider_is_fixed().then(|| model.provider()),
        gen_ai.request.model = model.name(),
        gen_ai.usage.input_tokens = field::Empty,
        gen_ai.usage.output_tokens = field::Empty,
        gen_ai.usage.cache_read.input_tokens = field::Empty,
        gen_ai.usage.cache_creation.input_tokens = field::Empty,
        toolloop.termination = field::Empty,
        toolloop.deferred_calls = field::Empty,
        toolloop.resumed = field::Empty,
        error.type = field::Empty,
    )
}

/// Records how a run (or the segment of a paused run it resumed, whose
/// `carried` usage was reported by the earlier segment's span) ended: as
/// [`end_run`], a pause not as an error but with
/// `toolloop.deferred_calls`.
/// The run gives plain values (`usage` of this segment, the termination's
/// `name`, whether it `succeeded`, the calls it paused with): telemetry
/// reads nothing of the run's types.
pub(crate) fn end_segment(span: &Span, usage: Usage, name: &str, succeeded: bool, deferred_calls: Option<u32>) {
    end_run(span, usage, name, succeeded);
    if let Some(calls) = deferred_calls {
        span.record("toolloop.deferred_calls", i64::from(calls));
    }
}

/// Marks the span of a run that resumes a paused one.
pub(crate) fn run_resumed(span: &Span) {
    span.record("toolloop.resumed", true);
}

/// Records a tool call deferred instead of executed.
/// `kind`: why it waits (`approval`, `external`, `held`).
pub(crate) fn tool_deferred(span: &Span, kind: &'static str) {
    span.record("toolloop.tool.deferred", kind);
}

/// Records how a run ended: its usage, its termination and, unless it
/// succeeded, `error.type` (the termination's name: `cancelled`, `validation_failed`...).
pub(crate) fn end_run(span: &Span, usage: Usage, termination: &str, success: bool) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, usage);
    span.record("toolloop.termination", termination);
    if !success {
        span.record("error.type", termination);
        span.record("otel.status_code", "ERROR");
    }
}

/// One attempt of an agent run: the first, then one per validation retry.
pub(crate) fn attempt(attempt: u32) -> Span {
    tracing::info_span!("attempt", otel.name = format!("attempt {attempt}"), toolloop.attempt = i64::from(attempt))
}

/// One iteration: a model call and the tool calls it asked for.
pub(crate) fn iteration(attempt: u32, iteration: u32) -> Span {
    tracing::info_span!(
        "iteration",
        otel.name = format!("iteration {iteration}"),
        toolloop.attempt = i64::from(attempt),
        toolloop.iteration = i64::from(iteration),
    )
}

/// Input tokens in the conventions' sense include cached ones; toolloop's
/// [`Usage::input_tokens`] counts only the ones billed at the normal rate.
fn record_usage(span: &Span, usage: Usage) {
    let input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    span.record("gen_ai.usage.input_tokens", int(input));
    span.record("gen_ai.usage.output_tokens", int(usage.output_tokens));
    span.record("gen_ai.usage.cache_read.input_tokens", int(usage.cache_read_tokens));
    span.record("gen_ai.usage.cache_creation.input_tokens", int(usage.cache_write_tokens));
}

/// OTel integers are `i64`, and `tracing-opentelemetry` turns a `u64` into a string.
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The conventions' name of a finish reason: toolloop's neutral spelling.
pub(crate) fn finish_reason(reason: &StopReason) -> String {
    match serde_json::to_value(reason) {
        Ok(serde_json::Value::String(name)) => name,
        _ => match reason {
            StopReason::Other(name) => name.clone(),
            _ => "other".to_owned(),
        },
    }
}

/// The `chat {model}` span of one model call.
pub(crate) struct Chat<'a> {
    span: Span,
    /// Behind a model whose provider is chosen per call (a `Fallback` over
    /// several providers, [`Model::provider_is_fixed`]), `gen_ai.provider.name`
    /// is left out at the start and recorded once, when the call ends, from
    /// the response or the error; this is the provider named when the call
    /// ends without one (cut short, or a response that does not say).
    /// `None`: recorded at the start.
    provider_at_end: Option<&'a str>,
    /// For the duration histogram; the span has its own clock.
    #[cfg(feature = "otel-metrics")]
    started: std::time::Instant,
    #[cfg(feature = "otel-metrics")]
    labels: super::metrics::Labels,
}

impl<'a> Chat<'a> {
    pub(crate) fn start(model: &'a dyn Model, request: &ModelRequest<'_>) -> Self {
        let name = model.name();
        let provider_at_end = (!model.provider_is_fixed()).then(|| model.provider());
        let span = tracing::info_span!(
            "chat",
            otel.name = format!("chat {name}"),
            otel.kind = "client",
            otel.status_code = field::Empty,
            gen_ai.operation.name = "chat",
            // Known now, or recorded once at the end: never twice (each
            // recording is one more attribute to `tracing-opentelemetry`).
            gen_ai.provider.name = provider_at_end.is_none().then(|| model.provider()),
            gen_ai.request.model = name,
            gen_ai.request.max_tokens = request.max_tokens.map(i64::from),
            gen_ai.request.temperature = request.temperature.map(f64::from),
            // Native structured output asks for JSON text.
            gen_ai.output.type = request.response_schema.map(|_| "json"),
            gen_ai.response.model = field::Empty,
            gen_ai.response.id = field::Empty,
            gen_ai.response.finish_reasons = field::Empty,
            gen_ai.usage.input_tokens = field::Empty,
            gen_ai.usage.output_tokens = field::Empty,
            gen_ai.usage.cache_read.input_tokens = field::Empty,
            gen_ai.usage.cache_creation.input_tokens = field::Empty,
            gen_ai.system_instructions = field::Empty,
            gen_ai.input.messages = field::Empty,
            gen_ai.output.messages = field::Empty,
            gen_ai.tool.definitions = field::Empty,
            error.type = field::Empty,
            toolloop.replayed = field::Empty,
        );
        if !span.is_disabled() && capture_content() {
            if let Some(system) = request.system {
                span.record("gen_ai.system_instructions", content::system_instructions(system));
            }
            span.record("gen_ai.input.messages", content::input_messages(request.messages));
            if !request.tools.is_empty() {
                span.record("gen_ai.tool.definitions", content::tool_definitions(request.tools));
            }
        }
        Self {
            span,
            provider_at_end,
            #[cfg(feature = "otel-metrics")]
            started: std::time::Instant::now(),
            #[cfg(feature = "otel-metrics")]
            labels: super::metrics::Labels::new(model),
        }
    }

    /// The span the model call runs in (the HTTP model's own spans nest under it).
    pub(crate) fn span(&self) -> Span {
        self.span.clone()
    }

    /// Records the response or the error. A `replayed` one (read from a
    /// durable run's journal: the model was not called again) is marked
    /// `toolloop.replayed` and left out of the metrics.
    pub(crate) fn finish(mut self, outcome: &Result<ModelResponse, ModelError>, replayed: bool) {
        if replayed {
            self.span.record("toolloop.replayed", true);
        }
        // Behind a model that chooses its provider per call: the one that
        // answered, or the one whose error ended the call (a journal that
        // could not replay the call is no provider: the one asked, then).
        let provider = self.provider_at_end.take().map(|asked| match outcome {
            Ok(response) => response.provider.as_deref().unwrap_or(asked),
            Err(error) if error.kind() == ModelErrorKind::Journal => asked,
            Err(error) => error.provider(),
        });
        if let Some(provider) = provider {
            self.span.record("gen_ai.provider.name", provider);
        }
        match outcome {
            Ok(response) => {
                #[cfg(feature = "otel-metrics")]
                if !replayed {
                    self.labels.record(
                        self.started.elapsed(),
                        provider,
                        response.model.as_deref(),
                        None,
                        Some(response.usage),
                    );
                }
                if self.span.is_disabled() {
                    return;
                }
                let reason = finish_reason(&response.stop_reason);
                if let Some(model) = &response.model {
                    self.span.record("gen_ai.response.model", model.as_str());
                }
                if let Some(id) = &response.id {
                    self.span.record("gen_ai.response.id", id.as_str());
                }
                // `tracing` has no array values: a JSON array of strings.
                self.span.record("gen_ai.response.finish_reasons", serde_json::json!([reason]).to_string());
                record_usage(&self.span, response.usage);
                if capture_content() {
                    self.span.record("gen_ai.output.messages", content::output_messages(&response.content, &reason));
                }
            }
            Err(error) if replayed => {
                self.span.record("error.type", error.kind().as_str());
                self.span.record("otel.status_code", "ERROR");
            }
            Err(error) => self.failed(error.kind().as_str(), provider),
        }
    }

    /// Records a call that ended without an answer: an error kind, or the
    /// termination that interrupted it (`cancelled`, `max_duration`).
    /// Behind a model that chooses its provider per call, no model said
    /// which one it was asking: the span names the one it was asked as.
    pub(crate) fn fail(mut self, error_type: &str) {
        let provider = self.provider_at_end.take();
        if let Some(provider) = provider {
            self.span.record("gen_ai.provider.name", provider);
        }
        self.failed(error_type, provider);
    }

    /// Records `error_type`; `provider`, when it differs from the one the
    /// call was started with, for the metrics.
    #[cfg_attr(not(feature = "otel-metrics"), allow(unused_variables))]
    fn failed(self, error_type: &str, provider: Option<&str>) {
        #[cfg(feature = "otel-metrics")]
        self.labels.record(self.started.elapsed(), provider, None, Some(error_type), None);
        self.span.record("error.type", error_type);
        self.span.record("otel.status_code", "ERROR");
    }
}

/// A call dropped before it ended (the run's future dropped from outside:
/// a `timeout` or `select!` around it) still names a provider, as the
/// conventions require: the one it was asked as.
impl Drop for Chat<'_> {
    fn drop(&mut self) {
        if let Some(provider) = self.provider_at_end.take() {
            self.span.record("gen_ai.provider.name", provider);
        }
    }
}

/// The `execute_tool {name}` span of one tool call.
pub(crate) fn execute_tool(call: &ToolCall, description: impl FnOnce() -> Option<String>) -> Span {
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = format!("execute_tool {}", call.name),
        otel.kind = "internal",
        otel.status_code = field::Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = call.name.as_str(),
        gen_ai.tool.call.id = call.id.as_str(),
        gen_ai.tool.type = "function",
        gen_ai.tool.description = field::Empty,
        gen_ai.tool.call.arguments = field::Empty,
        gen_ai.tool.call.result = field::Empty,
        toolloop.tool.deferred = field::Empty,
        error.type = field::Empty,
        toolloop.replayed = field::Empty,
    );
    if !span.is_disabled() {
        if let Some(description) = description() {
            span.record("gen_ai.tool.description", description);
        }
        if capture_content() {
            span.record("gen_ai.tool.call.arguments", call.input.to_string());
        }
    }
    span
}

/// Records a tool call's result: `error.type` is its failure kind
/// (`tool_failed`, `invalid_arguments`, `denied`...).
pub(crate) fn tool_result(span: &Span, result: &ToolResult) {
    if span.is_disabled() {
        return;
    }
    if capture_content() {
        span.record("gen_ai.tool.call.result", result.content.as_str());
    }
    if let Some(kind) = result.failure {
        span.record("error.type", kind.as_str());
        span.record("otel.status_code", "ERROR");
    }
}

/// Marks a tool execution read from a durable run's journal: the tool did not run again.
pub(crate) fn tool_replayed(span: &Span) {
    span.record("toolloop.replayed", true);
}

/// Records a tool call the run stopped before it had a result.
pub(crate) fn tool_interrupted(span: &Span, termination: &str) {
    span.record("error.type", termination);
    span.record("otel.status_code", "ERROR");
}
