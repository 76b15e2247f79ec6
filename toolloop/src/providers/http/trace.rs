//! The `tracing` span of one model call and the debug dump of what was sent.

use std::time::Instant;

use futures_util::FutureExt as _;
use tracing::Instrument as _;
use tracing::{Level, Span, field};

use crate::message::summarize;
use crate::model::{BoxFuture, ModelError, ModelRequest, ModelResponse, StreamEvent};

/// Tracks one model call: a `model_call` span carrying provider, model,
/// usage, stop reason and latency, and at debug level a line per message
/// sent (role, block kinds, tool call ids and names; never contents or keys).
pub(crate) struct CallTrace {
    span: Span,
    started: Instant,
}

impl CallTrace {
    pub(crate) fn start(provider: &'static str, model: &str, request: &ModelRequest<'_>) -> Self {
        let span = tracing::info_span!(
            "model_call",
            provider,
            model,
            input_tokens = field::Empty,
            output_tokens = field::Empty,
            cache_read_tokens = field::Empty,
            cache_write_tokens = field::Empty,
            stop_reason = field::Empty,
            latency_ms = field::Empty,
            error = field::Empty,
        );
        if tracing::enabled!(Level::DEBUG) {
            let _entered = span.enter();
            let tools: Vec<&str> = request.tools.iter().map(|tool| &*tool.name).collect();
            tracing::debug!(
                messages = request.messages.len(),
                system_chars = request.system.map_or(0, str::len),
                ?tools,
                strict_tools = request.strict_tools,
                "model request",
            );
            for (index, message) in request.messages.iter().enumerate() {
                tracing::debug!(index, role = ?message.role, from = message.provider.as_deref(), blocks = %summarize(&message.content), "message");
            }
        }
        Self { span, started: Instant::now() }
    }

    /// The span to run the call in.
    /// Runs one model call inside this trace's span and records how it ended:
    /// what every provider's `Model::complete` does around its own call.
    pub(crate) fn run<'a>(
        self,
        call: impl Future<Output = Result<ModelResponse, ModelError>> + Send + 'a,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        // `inspect`, not an `async move` block awaiting `call`: such a block
        // keeps room for `call` twice (the captured future and the one being
        // awaited), and every call in flight holds this box.
        let span = self.span();
        Box::pin(call.inspect(move |result| self.finish(result)).instrument(span))
    }

    pub(crate) fn span(&self) -> Span {
        self.span.clone()
    }

    /// Records what a streamed call's `event` tells: its usage, and at the
    /// end its stop reason or error, with the latency.
    pub(crate) fn observe(&self, event: &Result<StreamEvent, ModelError>) {
        match event {
            Ok(StreamEvent::Usage(usage)) => {
                self.span.record("input_tokens", usage.input_tokens);
                self.span.record("output_tokens", usage.output_tokens);
                self.span.record("cache_read_tokens", usage.cache_read_tokens);
                self.span.record("cache_write_tokens", usage.cache_write_tokens);
            }
            Ok(StreamEvent::Finished { stop_reason }) => {
                self.record_latency();
                self.span.record("stop_reason", field::debug(stop_reason));
            }
            Err(error) => {
                self.record_latency();
                self.span.record("error", field::display(error));
            }
            Ok(_) => {}
        }
    }

    fn record_latency(&self) {
        let latency = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.span.record("latency_ms", latency);
    }

    /// Records the outcome of a whole call on the span.
    pub(crate) fn finish(&self, result: &Result<ModelResponse, ModelError>) {
        let latency = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.span.record("latency_ms", latency);
        match result {
            Ok(response) => {
                let usage = response.usage;
                self.span.record("input_tokens", usage.input_tokens);
                self.span.record("output_tokens", usage.output_tokens);
                self.span.record("cache_read_tokens", usage.cache_read_tokens);
                self.span.record("cache_write_tokens", usage.cache_write_tokens);
                self.span.record("stop_reason", field::debug(&response.stop_reason));
                let _entered = self.span.enter();
                tracing::debug!(blocks = %summarize(&response.content), "model response");
            }
            Err(error) => {
                self.span.record("error", field::display(error));
            }
        }
    }
}
