//! Ollama's chat API (`POST {host}/api/chat` with `"stream": false`).
//!
//! ```no_run
//! use toolloop::providers::ollama::Ollama;
//!
//! // OLLAMA_HOST from the environment, else http://localhost:11434:
//! let model = Ollama::from_env()?.with_model("qwen3:8b");
//! # Ok::<(), toolloop::BuildError>(())
//! ```

mod convert;
mod reasoning;
mod stream;

use stream::ChatStreamDecoder;
mod wire;

use convert::OllamaChat;

use super::http::{HttpModel, HttpModelBuilder};

/// The provider name, as [`Model::provider`](crate::Model::provider) returns it.
pub const PROVIDER: &str = "ollama";
/// Where requests go unless a host is set.
pub const DEFAULT_HOST: &str = "http://localhost:11434";
/// The model used unless another is set.
pub const DEFAULT_MODEL: &str = "llama3.2";

/// A model served by Ollama (`POST {host}/api/chat`): [`Ollama::builder`],
/// [`Ollama::from_env`] (the host from `OLLAMA_HOST`, else
/// [`DEFAULT_HOST`]), [`Ollama::builder_from_env`], and the rest of
/// [`HttpModel`]. Tool calls go with object arguments, results as `tool`
/// messages naming their tool; tool results that failed are sent as
/// `Error: <message>`, since the format has no error flag. Ollama needs no
/// key, but one can be set for servers behind an authenticating proxy; it
/// is sent as a bearer token.
pub type Ollama = HttpModel<OllamaChat>;

/// Settings of [`Ollama`] models only.
impl HttpModelBuilder<OllamaChat> {
    /// Sets the context window, in tokens, the server loads the model with
    /// (`options.num_ctx`; default: the server's, often 2048 to 4096).
    ///
    /// A prompt is never truncated silently: every request asks the server
    /// to fail rather than truncate (`"truncate": false`, which servers
    /// answer with a [`ContextOverflow`](crate::model::ModelErrorKind::ContextOverflow)
    /// error), and for servers that truncate anyway, a response to a request
    /// that cannot have fit this window (at least one token per six bytes
    /// of body, a conservative estimate) is turned into that error too.
    pub fn num_ctx(mut self, num_ctx: u32) -> Self {
        self.format.num_ctx = Some(num_ctx);
        self
    }
}

/// `OLLAMA_HOST` as a URL: it is often written without a scheme
/// (`127.0.0.1:11434`) or without a port (`http://gpu-box`).
fn host_url(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    let (scheme, rest) = match host.split_once("://") {
        Some((scheme, rest)) => (scheme, rest),
        None => ("http", host),
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let has_port = authority.rsplit_once(':').is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    if has_port || scheme == "https" { format!("{scheme}://{rest}") } else { format!("{scheme}://{rest}:11434") }
}

#[cfg(test)]
mod tests {
    use super::host_url;

    #[test]
    fn ollama_host_is_completed_to_a_url() {
        let cases = [
            ("127.0.0.1:11434", "http://127.0.0.1:11434"),
            ("gpu-box", "http://gpu-box:11434"),
            ("http://gpu-box/", "http://gpu-box:11434"),
            ("https://ollama.example.com", "https://ollama.example.com"),
            ("http://10.0.0.2:8080", "http://10.0.0.2:8080"),
        ];
        for (host, url) in cases {
            assert_eq!(host_url(host), url);
        }
    }
}
