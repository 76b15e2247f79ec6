//! Google's Gemini API (`POST {base}/v1beta/models/{model}:generateContent`,
//! and `:streamGenerateContent?alt=sse` for streamed calls), also on
//! Vertex AI ([`HttpModelBuilder::vertex`]).
//!
//! ```no_run
//! use toolloop::providers::gemini::Gemini;
//! use toolloop::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
//!
//! // GEMINI_API_KEY (or GOOGLE_API_KEY), and optionally GEMINI_BASE_URL, from the environment:
//! let model = Gemini::from_env()?;
//! // or everything from code, thinking with its summaries shown:
//! let model = Gemini::builder()
//!     .api_key("AIza...")
//!     .model("gemini-3-flash-preview")
//!     .reasoning(ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto))
//!     .build()?;
//! # Ok::<(), toolloop::BuildError>(())
//! ```
//!
//! Thinking models sign their parts (`thoughtSignature`): the signatures are
//! kept in the conversation as reasoning blocks, in place, and sent back
//! byte for byte on the parts that carried them, which Gemini 3 requires
//! of the function calls in a tool loop. Calls made through another
//! provider are sent as function calls with the placeholder signature the
//! API documents for them; other providers never see Gemini's signatures.

mod convert;
mod output_schema;
mod parts;
mod reasoning;
mod schema;
mod stream;
mod wire;

use std::sync::Arc;

use convert::{GeminiGenerateContent, Token, Vertex};
use stream::GeminiStreamDecoder;

use super::http::{HttpModel, HttpModelBuilder, Secret};

/// The provider name, as [`Model::provider`](crate::Model::provider) returns it.
pub const PROVIDER: &str = "gemini";
/// Where requests go unless a base URL is set.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// The model used unless another is set.
pub const DEFAULT_MODEL: &str = "gemini-3-flash-preview";

/// A Gemini model over the `generateContent` API (key in
/// `x-goog-api-key`): [`Gemini::builder`], [`Gemini::from_env`],
/// [`Gemini::builder_from_env`], and the rest of [`HttpModel`]. Tools go as
/// `functionDeclarations` with full JSON Schema (`parametersJsonSchema`),
/// calls and results as `functionCall` / `functionResponse` parts with ids,
/// consecutive turns of one role merged into one `user` or `model` content.
pub type Gemini = HttpModel<GeminiGenerateContent>;

/// Settings of [`Gemini`] models only.
impl HttpModelBuilder<GeminiGenerateContent> {
    /// Sends requests to Gemini on Vertex AI in `project` and `location`
    /// (`us-central1`, `global`, ...): `{base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`,
    /// the base being the location's endpoint
    /// (`https://{location}-aiplatform.googleapis.com`, or
    /// `https://aiplatform.googleapis.com` for `global`) unless
    /// [`base_url`](Self::base_url) is set after this. Authenticate with
    /// [`vertex_token`](Self::vertex_token) or
    /// [`vertex_token_source`](Self::vertex_token_source) (or an API key,
    /// for Vertex AI express mode).
    pub fn vertex(mut self, project: impl Into<String>, location: impl Into<String>) -> Self {
        let location = location.into();
        let host = if location == "global" {
            "https://aiplatform.googleapis.com".to_owned()
        } else {
            format!("https://{location}-aiplatform.googleapis.com")
        };
        self.format.vertex = Some(Vertex { project: project.into(), location });
        self.base_url(host)
    }

    /// Sets the OAuth access token sent to Vertex AI as a bearer token (it
    /// is never printed). Tokens expire: for a long-lived model, use
    /// [`vertex_token_source`](Self::vertex_token_source).
    pub fn vertex_token(self, token: impl Into<String>) -> Self {
        self.with_token(Token::Fixed(Secret::new(token)))
    }

    /// Asks `source` for the bearer token before every request to Vertex AI
    /// (for example a cache of `gcloud auth print-access-token` that
    /// refreshes it); an `Err` fails the call with an authentication error
    /// carrying its message.
    pub fn vertex_token_source(self, source: impl Fn() -> Result<String, String> + Send + Sync + 'static) -> Self {
        self.with_token(Token::Source(Arc::new(source)))
    }

    /// Sends each tool's parameters as `parameters`, the `OpenAPI` 3.0 subset
    /// Gemini's `Schema` object takes, converted from its JSON Schema
    /// (references inlined, `null` types as `nullable`, unknown keywords
    /// left out), instead of the full JSON Schema in `parametersJsonSchema`
    /// (default): for endpoints and gateways that do not take the latter.
    pub fn openapi_parameters(mut self) -> Self {
        self.format.openapi_parameters = true;
        self
    }

    fn with_token(mut self, token: Token) -> Self {
        self.format.token = Some(token);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::Gemini;

    #[test]
    fn vertex_needs_no_key_and_names_the_project_in_the_path() {
        let model = Gemini::builder().vertex("my-project", "us-central1").vertex_token("ya29.secret").build().unwrap();
        assert_eq!(
            model.endpoint(),
            "https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models"
        );
        let debug = format!("{model:?}");
        assert!(!debug.contains("ya29.secret"), "{debug}");
        let global = Gemini::builder().vertex_token_source(|| Ok("t".into())).vertex("p", "global").build().unwrap();
        assert!(global.endpoint().starts_with("https://aiplatform.googleapis.com/v1/projects/p/locations/global/"));
    }
}
