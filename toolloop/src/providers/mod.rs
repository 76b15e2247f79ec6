//! Models behind the neutral [`Model`](crate::Model) trait: HTTP clients for
//! real APIs (one module per provider, each behind a cargo feature of the same
//! name) and [`Fallback`], which tries models in order.
//!
//! Every HTTP provider is one type, [`HttpModel<W>`](HttpModel), configured
//! by one builder, [`HttpModelBuilder<W>`](HttpModelBuilder), for its wire
//! format `W` (a sealed `WireFormat`). Users name the model types, which fix `W`:
//! `Anthropic`, `OpenAi`, `OpenAiResponses`, `Gemini` and `Ollama`
//! (`Anthropic::builder()`, `Anthropic::from_env()`,
//! `Anthropic::builder_from_env()`); the formats themselves stay out of
//! sight. Retries, timeouts, tracing, secrets, error mapping and the reuse
//! of already rendered messages live once in that type; a provider module
//! holds only its wire types (`wire.rs`), the conversions between them and
//! the neutral types (`convert.rs`), its reasoning rules (`reasoning.rs`),
//! its constants and its format's own builder settings. The rest of the
//! crate sees only [`ModelRequest`](crate::ModelRequest) and
//! [`ModelResponse`](crate::ModelResponse).
//!
//! | provider | module | cargo feature | environment |
//! |---|---|---|---|
//! | Anthropic Messages | [`anthropic`] | `anthropic` | `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` |
//! | OpenAI Chat Completions and compatible servers | [`openai`] | `openai` | `OPENAI_API_KEY`, `OPENAI_BASE_URL` |
//! | Ollama | [`ollama`] | `ollama` | `OLLAMA_HOST` |
//! | Google Gemini (and Gemini on Vertex AI) | [`gemini`] | `gemini` | `GEMINI_API_KEY` (or `GOOGLE_API_KEY`), `GEMINI_BASE_URL` |
//!
//! All four features are on by default; [`from_env`] picks whichever the
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
#[cfg(feature = "http")]
mod convert;
#[cfg(feature = "http")]
mod detect;
mod fallback;
#[cfg(feature = "http")]
mod http;

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(feature = "gemini")]
pub mod gemini;
#[cfg(feature = "ollama")]
pub mod ollama;
#[cfg(feature = "openai")]
pub mod openai;
#[cfg(feature = "openai")]
mod responses;

#[cfg(feature = "http")]
pub use detect::{from_env, from_env_or};
pub use fallback::Fallback;
/// MCP's HTTP transport builds its client as the providers do.
#[cfg(feature = "mcp")]
pub(crate) use http::client_builder;
/// What a cassette (`testing`) needs of the HTTP core's seam.
#[cfg(feature = "http")]
pub(crate) use http::{BodyStream, Framing, Incoming, Network, Outgoing, Recorder, Secret, Transport, is_credential};
#[cfg(feature = "http")]
pub use http::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT, HttpModel, HttpModelBuilder, RetryPolicy,
    WireFormat,
};
