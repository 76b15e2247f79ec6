//! How a typed agent's output reaches it: through an output tool, the
//! provider's native response schema, or JSON in the answer's text.

/// How a typed agent gets its output from the model: the output tool by
/// default, or the mode chosen with
/// [`native_output`](crate::AgentBuilder::native_output),
/// [`prompted_output`](crate::AgentBuilder::prompted_output) or
/// [`auto_output`](crate::AgentBuilder::auto_output) (what
/// [`Agent::output_mode`](crate::Agent::output_mode) reports, `Auto`
/// resolved). Options of one mode do not compile in another: the output
/// tool's name in the native mode, say.
///
/// In every mode the model may call the agent's tools first; only its final
/// answer is the output, and it is validated the same way (deserialisation
/// with field paths, the schema's constraints, your validators), with the
/// errors fed back for the next attempt.
///
/// | mode | the model answers | feedback on a rejected output |
/// |---|---|---|
/// | [`Tool`](Self::Tool) | by calling the output tool | the output call's error result |
/// | [`Native`](Self::Native) | with text the provider holds to the schema | a user message |
/// | [`Prompted`](Self::Prompted) | with JSON text, as the system prompt asks | a user message |
///
/// Native output per provider: OpenAI Chat Completions `response_format`,
/// the Responses API `text.format` (both strict when the schema can be
/// made strict, else `strict: false`), Anthropic `output_config.format`
/// (Claude Opus/Sonnet 4.5 and Haiku 4.5 and later), Ollama `format`
/// (only without tools: its grammar leaves no room for a tool call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OutputMode {
    /// The model calls an output tool whose input schema is the output
    /// type's (the default: it works on every provider that has tools).
    #[default]
    Tool,
    /// The provider's native structured output: the request carries the
    /// output type's schema ([`ResponseSchema`](crate::model::ResponseSchema)) and
    /// the final text answer follows it. `build()` fails when the model says
    /// it cannot ([`BuildError::NativeOutputUnsupported`](crate::BuildError::NativeOutputUnsupported)).
    /// With reflection, each answer is rendered back to the model as a user
    /// message, and `submit` submits the last one.
    Native,
    /// The schema and instructions go in the system prompt, and the output
    /// is read from the final text answer, bare JSON or one fenced block:
    /// for servers that enforce neither tools nor schemas well.
    Prompted,
    /// [`Native`](Self::Native) when the model follows a response schema
    /// together with tools (or has no tools to call), else [`Tool`](Self::Tool).
    Auto,
}

impl OutputMode {
    /// Whether the output is read from the answer's text.
    pub(crate) fn reads_text(self) -> bool {
        matches!(self, Self::Native | Self::Prompted)
    }
}
