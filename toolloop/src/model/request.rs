//! What a model is asked.

use std::borrow::Cow;
use std::fmt;

use super::body_cache::BodyCache;
use super::{PromptCache, ReasoningConfig, ResponseSchema};
use crate::conversation::{view_for, view_without_tools};
use crate::message::Message;
use crate::tool::ToolDefinition;

/// What a model is asked: borrowed from the run, so building a request copies
/// nothing.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct ModelRequest<'a> {
    /// The system prompt.
    pub system: Option<&'a str>,
    /// The raw conversation, oldest message first. A model sends its
    /// provider [`view_for`](Self::view_for) its provider, not these as they are.
    pub messages: &'a [Message],
    /// The tools the model may call.
    pub tools: &'a [ToolDefinition],
    /// Overrides the model's configured maximum output tokens.
    pub max_tokens: Option<u32>,
    /// Overrides the model's configured sampling temperature.
    pub temperature: Option<f32>,
    /// Ask the provider to enforce tool input schemas strictly (OpenAI
    /// `strict: true`, sending [`ToolDefinition::strict_input_schema`] for every
    /// tool that has one).
    pub strict_tools: bool,
    /// Overrides the model's prompt-cache breakpoints (see [`PromptCache`];
    /// providers that cache on their own ignore it).
    pub prompt_cache: Option<PromptCache>,
    /// Overrides the model's configured reasoning setting for this request.
    pub reasoning: Option<ReasoningConfig>,
    /// The schema the model's final answer must follow (native structured
    /// output); the model may still call tools before it answers.
    pub response_schema: Option<&'a ResponseSchema>,
    /// Where the run keeps the wire bytes of the messages it has sent, for
    /// a model that renders them to reuse (`None`: render every message).
    pub(crate) body_cache: Option<&'a BodyCache>,
}

impl fmt::Debug for ModelRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The run's body cache is how the request is sent, not what it asks.
        f.debug_struct("ModelRequest")
            .field("system", &self.system)
            .field("messages", &self.messages)
            .field("tools", &self.tools)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("strict_tools", &self.strict_tools)
            .field("prompt_cache", &self.prompt_cache)
            .field("reasoning", &self.reasoning)
            .field("response_schema", &self.response_schema)
            .finish_non_exhaustive()
    }
}

impl<'a> ModelRequest<'a> {
    /// A request for `messages` with no system prompt, no tools and the
    /// model's default settings.
    pub fn new(messages: &'a [Message]) -> Self {
        Self {
            system: None,
            messages,
            tools: &[],
            max_tokens: None,
            temperature: None,
            strict_tools: false,
            prompt_cache: None,
            reasoning: None,
            response_schema: None,
            body_cache: None,
        }
    }

    /// The messages as `provider` is sent them: tool calls made through
    /// another provider, and their results, shown as text (providers reject
    /// each other's tool-call artifacts); and when the request offers no
    /// tools, every tool call and result shown as text (providers reject tool
    /// blocks in a request that defines no tools). Borrows
    /// [`messages`](Self::messages) when nothing needs rewriting, which is
    /// the usual case.
    pub fn view_for(&self, provider: &str) -> Cow<'a, [Message]> {
        if self.tools.is_empty() {
            view_without_tools(self.messages, provider)
        } else {
            view_for(self.messages, provider)
        }
    }

    /// Sets the system prompt.
    pub fn with_system(mut self, system: &'a str) -> Self {
        self.system = Some(system);
        self
    }

    /// Sets the tools.
    pub fn with_tools(mut self, tools: &'a [ToolDefinition]) -> Self {
        self.tools = tools;
        self
    }

    /// Overrides the maximum output tokens.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Overrides the temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Overrides the model's prompt-cache breakpoints for this request.
    pub fn with_prompt_cache(mut self, prompt_cache: PromptCache) -> Self {
        self.prompt_cache = Some(prompt_cache);
        self
    }

    /// Turns strict tool schemas on or off.
    pub fn with_strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// Asks for an answer following `schema` (see [`ResponseSchema`]).
    pub fn with_response_schema(mut self, schema: &'a ResponseSchema) -> Self {
        self.response_schema = Some(schema);
        self
    }

    /// Lends the request the run's cache of rendered messages.
    pub(crate) fn with_body_cache(mut self, cache: &'a BodyCache) -> Self {
        self.body_cache = Some(cache);
        self
    }

    /// Overrides the model's reasoning setting for this request: an effort
    /// or a whole [`ReasoningConfig`]. Turn reasoning off for one request
    /// with `with_reasoning(ReasoningEffort::Off)` (or
    /// [`ReasoningConfig::off`]); a request that says nothing uses the
    /// model's setting.
    ///
    /// ```
    /// use toolloop::{Message, ModelRequest};
    /// use toolloop::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
    ///
    /// let history = [Message::user("Plan the trip.")];
    /// let deep = ModelRequest::new(&history)
    ///     .with_reasoning(ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto));
    /// assert!(deep.reasoning.is_some_and(|r| r.is_on()));
    /// let quick = ModelRequest::new(&history).with_reasoning(ReasoningEffort::Off);
    /// assert_eq!(quick.reasoning, Some(ReasoningConfig::off()));
    /// assert_eq!(ModelRequest::new(&history).reasoning, None, "the model's setting");
    /// ```
    pub fn with_reasoning(mut self, reasoning: impl Into<ReasoningConfig>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }
}
