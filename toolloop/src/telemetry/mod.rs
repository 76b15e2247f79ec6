//! Traces (and, with the `otel-metrics` feature, metrics) on the
//! [OpenTelemetry GenAI semantic conventions](https://opentelemetry.io/docs/specs/semconv/gen-ai/),
//! through `tracing` spans that `tracing-opentelemetry` turns into OTel spans.
//!
//! A run is one tree:
//!
//! ```text
//! invoke_agent {agent name}         gen_ai.operation.name = invoke_agent, usage totals, error.type
//! └─ attempt                        toolloop.attempt (1, 2, ... after a validation retry)
//!    └─ iteration                   toolloop.iteration
//!       ├─ chat {model}             (client) provider, request model and settings, response model/id,
//!       │                           finish reasons, token usage, error.type
//!       └─ execute_tool {tool}      gen_ai.tool.name / call.id / type, error.type
//! ```
//!
//! A `chat` span names its provider (`gen_ai.provider.name`) when it
//! starts, except behind a model that chooses the provider per call
//! ([`Model::provider_is_fixed`](crate::Model::provider_is_fixed) is
//! `false`: a [`Fallback`](crate::providers::Fallback) over several
//! providers), where it is recorded once the call is over: the provider
//! that answered or failed, the model's own when the call was cut short. An
//! attribute is never recorded twice (`tracing-opentelemetry` would keep both).
//! The `invoke_agent` span names the provider of the model the run was given
//! (a `Fallback`'s first model's); its `chat` spans name who answered each call.
//!
//! Span names, kinds and error status go in the fields `tracing-opentelemetry`
//! reads (`otel.name`, `otel.kind`, `otel.status_code`). With no subscriber
//! the spans are disabled and cost a relaxed atomic load each.
//!
//! Message content (system instructions, input and output messages, tool
//! definitions, tool arguments and results) is recorded only when
//! [`set_capture_content`] turned it on (or the environment variable
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`): it may
//! hold personal data. Credentials are never recorded — the spans see the
//! conversation, never the HTTP request.

mod capture;
mod content;
#[cfg(feature = "otel-metrics")]
mod metrics;
pub(crate) mod spans;

pub use capture::{capture_content, set_capture_content};
