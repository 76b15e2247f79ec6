//! One HTTP model for every wire format: the client, retries, timeouts,
//! secrets, tracing, error mapping and the reuse of a run's rendered
//! messages live here once; a provider module adds only its wire format
//! ([`WireFormat`]).
//!
//! A request flows one way: [`HttpModel::complete`](crate::Model::complete)
//! opens the call's trace (`trace`), the format writes the body (`format`,
//! `body`) with the messages from the run's cache (`body_cache`), the
//! client posts it with retries (`client`, `retry`) and maps failures to
//! typed errors (`error`), and the format parses the response.

mod body;
mod body_cache;
mod bounded;
mod builder;
mod client;
mod decoder;
mod error;
mod events;
mod format;
mod model;
mod ndjson;
mod overflow;
mod retry;
mod secret;
mod shared;
mod sse;
mod trace;
mod transport;

use std::time::Duration;

pub(crate) use body::{Body, write_element};
pub use builder::HttpModelBuilder;
pub use client::DEFAULT_MAX_RESPONSE_BYTES;
#[cfg_attr(not(feature = "mcp"), allow(unused_imports))] // MCP's clients, and tests
pub(crate) use client::client_builder;
pub(crate) use secret::is_credential;
// Only formats with per-request headers (Anthropic's beta flags) name it.
#[cfg(test)]
pub(crate) use error::status_error;
pub(crate) use error::{ApiError, kind_for_status, stream_error};
#[cfg_attr(not(feature = "anthropic"), allow(unused_imports))]
pub(crate) use format::RequestHeaders;
pub use format::WireFormat;
pub(crate) use format::{ApiKey, BodyResult, CallSettings, Format, Framing};
pub(crate) use secret::Secret;
pub(crate) use transport::{BodyStream, Incoming, Network, Outgoing, Recorder, Transport};

pub use model::HttpModel;
pub use retry::RetryPolicy;

#[cfg(test)]
pub(crate) use decoder::testing;
#[allow(unused_imports)] // some are named by tests only
pub(crate) use {
    bounded::bounded_body,
    decoder::{Frame, FrameSource, StreamDecoder, decode_frames, ended_early, malformed_frame},
    ndjson::{LineSplitter, MAX_LINE_BYTES, ndjson_frames},
    sse::{MAX_EVENT_BYTES, body_bytes, sse_frames},
};

/// How long one HTTP attempt may take by default (as in the official SDKs):
/// see [`HttpModelBuilder::timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a streamed response may send nothing (not even a keep-alive
/// ping) before the call fails with a timeout: see
/// [`HttpModelBuilder::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Reads environment variables; a function so that tests can pass their own.
pub(crate) type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, ignoring empty variables.
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.trim().is_empty())
}
