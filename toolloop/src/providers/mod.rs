//! Models behind the neutral [`Model`](crate::Model) trait: HTTP clients for
//! real APIs (one module per provider, each behind a cargo feature of the same
//! name) and [`Fallback`], which tries models in order.
//!
//! Each provider module keeps its wire types (`wire.rs`) and the conversions
//! between them and the neutral types (`convert.rs`) to itself; the rest of
//! the crate sees only [`ModelRequest`](crate::ModelRequest) and
//! [`ModelResponse`](crate::ModelResponse).
//!
//! | provider | module | cargo feature | environment |
//! |---|---|---|---|
//! | Anthropic Messages | [`anthropic`] | `anthropic` | `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` |
//! | OpenAI Chat Completions and compatible servers | [`openai`] | `openai` | `OPENAI_API_KEY`, `OPENAI_BASE_URL` |
//! | Ollama | [`ollama`] | `ollama` | `OLLAMA_HOST` |
//!
//! All three features are on by default; [`from_env`] picks whichever the
//! environment configures. Every HTTP provider retries failed requests
//! ([`RetryPolicy`]), maps the API's error bodies to typed
//! [`ModelError`](crate::ModelError)s, and never shows its API key in
//! `Debug` output, errors or logs.
//!
//! The HTTP clients use reqwest over rustls with the `ring` crypto provider,
//! given to each client, so nothing is installed process-wide. Cargo unifies
//! features, so reqwest's `rustls-no-provider` reaches your own reqwest
//! clients too: if your crate builds reqwest clients with no TLS feature of
//! its own, install a provider once at start-up
//! (`rustls::crypto::ring::default_provider().install_default()`) or enable
//! one of reqwest's TLS features.
//!
//! Each call runs in a `model_call` [`tracing`] span (provider, model, token
//! usage, stop reason, latency); at debug level it also logs every message
//! sent (role, block kinds, tool call ids and names, not contents). With a
//! subscriber such as `tracing_subscriber`'s `EnvFilter`, turn this on with
//! `RUST_LOG=toolloop=debug`.

#[cfg(all(test, feature = "http"))]
mod cache_checks;
mod fallback;

#[cfg(feature = "http")]
mod detect;
#[cfg(feature = "http")]
mod http;

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(feature = "ollama")]
pub mod ollama;
#[cfg(feature = "openai")]
pub mod openai;
#[cfg(feature = "openai")]
mod responses;

#[cfg(feature = "http")]
pub use detect::{from_env, from_env_or};
pub use fallback::Fallback;
#[cfg(feature = "http")]
pub use http::{ConfigError, DEFAULT_TIMEOUT, RetryPolicy};

#[cfg(feature = "http")]
mod shared {
    use std::borrow::Cow;

    use serde::Serialize;

    use crate::conversation::{RenderRun, write_array, write_uncached};
    use crate::model::ModelRequest;

    #[cfg(any(feature = "anthropic", feature = "ollama"))]
    use serde_json::{Map, Value};

    #[cfg(any(feature = "openai", feature = "ollama"))]
    use crate::message::ToolResult;

    #[cfg(any(feature = "anthropic", feature = "ollama"))]
    /// A tool call's input as a JSON object, for wire formats that only take
    /// objects (Anthropic `input`, Ollama `arguments`). Arguments another
    /// provider kept as raw text are parsed when they are an object, and sent
    /// as `{}` otherwise; the call's error result already told the model what
    /// was wrong with them.
    pub(crate) fn object_input(input: &Value) -> Cow<'_, Value> {
        match input {
            Value::Object(_) => Cow::Borrowed(input),
            Value::String(raw) => match serde_json::from_str::<Value>(raw) {
                Ok(parsed @ Value::Object(_)) => Cow::Owned(parsed),
                _ => Cow::Owned(Value::Object(Map::new())),
            },
            _ => Cow::Owned(Value::Object(Map::new())),
        }
    }

    #[cfg(any(feature = "openai", feature = "ollama"))]
    /// A tool result as text, for wire formats without an error flag (OpenAI,
    /// Ollama): error results are prefixed with `Error: ` so the model can tell.
    pub(crate) fn result_text(result: &ToolResult) -> Cow<'_, str> {
        if result.is_error() {
            Cow::Owned(format!("Error: {}", result.content))
        } else {
            Cow::Borrowed(&result.content)
        }
    }

    /// Writes `head`, a struct serialising to a non-empty JSON object, as
    /// the start of a request body: its fields without the closing brace.
    /// The body is built in pieces so that the messages can be copied from a
    /// conversation's wire cache; every piece is written by `serde_json`, so
    /// the bytes are those of serialising the whole request at once.
    pub(crate) fn open_body(out: &mut Vec<u8>, head: &impl Serialize) -> serde_json::Result<()> {
        serde_json::to_writer(&mut *out, head)?;
        out.pop();
        Ok(())
    }

    /// Writes `,"messages":[...]`: the system element when there is one,
    /// then the request's messages, each run rendered by `render` (the
    /// conversation's settled runs come from its wire cache for `format`).
    pub(crate) fn write_messages(
        out: &mut Vec<u8>,
        format: &'static str,
        request: &ModelRequest<'_>,
        system: Option<&impl Serialize>,
        render: RenderRun<'_>,
    ) -> serde_json::Result<()> {
        out.extend_from_slice(b",\"messages\":");
        write_array(out, |out| {
            if let Some(system) = system {
                write_element(out, system)?;
            }
            match request.wire_cache() {
                Some(cache) => cache.write(format, request.messages, out, render),
                None => write_uncached(request.messages, out, render),
            }
        })
    }

    /// Ends the body begun by [`open_body`] with the fields of `tail`.
    pub(crate) fn close_body(out: &mut Vec<u8>, tail: &impl Serialize) -> serde_json::Result<()> {
        let start = out.len();
        serde_json::to_writer(&mut *out, tail)?;
        if out.len() - start == 2 {
            // `{}`: no fields, only the closing brace.
            out.truncate(start + 1);
            out[start] = b'}';
        } else {
            out[start] = b',';
        }
        Ok(())
    }

    /// Writes `value` as an element of the messages array: a comma, then its JSON.
    pub(crate) fn write_element(out: &mut Vec<u8>, value: &impl Serialize) -> serde_json::Result<()> {
        out.push(b',');
        serde_json::to_writer(out, value)
    }
}
