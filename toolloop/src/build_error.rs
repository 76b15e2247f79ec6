//! What building something can reject: an agent, a provider, a tool set.

/// A configuration problem found when something is built: an agent
/// ([`AgentBuilder::build`](crate::AgentBuilder::build)), a provider
/// ([`HttpModelBuilder::build`](crate::providers::HttpModelBuilder::build),
/// `from_env`), or a tool added to a [`ToolSet`](crate::ToolSet). Its
/// message says what to change.
///
/// ```
/// use toolloop::{BuildError, ToolSet};
///
/// /// Add two numbers.
/// #[derive(toolloop::Tool)]
/// struct Add { a: i64, b: i64 }
///
/// impl Add {
///     async fn run(self) -> Result<i64, std::convert::Infallible> { Ok(self.a + self.b) }
/// }
///
/// let mut tools = ToolSet::new();
/// tools.add::<Add>()?;
/// let error = tools.add::<Add>().unwrap_err();
/// assert_eq!(error, BuildError::DuplicateToolName("add".to_owned()));
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools share a name: in a [`ToolSet`](crate::ToolSet), or among
    /// the tools you gave an agent. (A clash with a tool the agent adds
    /// itself is [`OutputToolNameTaken`](Self::OutputToolNameTaken) or
    /// [`SubmitNameTaken`](Self::SubmitNameTaken).)
    #[error("two tools are named `{0}`: tool names must be unique within an agent")]
    DuplicateToolName(String),
    /// A tool you added has the name of the agent's output tool
    /// (`final_output` unless renamed with
    /// [`output_tool_name`](crate::AgentBuilder::output_tool_name)).
    #[error(
        "tool `{0}` has the name of this agent's output tool, through which the model answers: \
         rename your tool (`#[tool(name = \"...\")]`) or the output tool (`.output_tool_name(\"...\")`)"
    )]
    OutputToolNameTaken(String),
    /// An agent with a reflection handler adds a tool named `submit`, which
    /// ends the loop; a tool you added, or the output tool, has that name.
    #[error("{}", submit_taken(*output_tool))]
    SubmitNameTaken {
        /// `true` when the output tool was named `submit`, `false` when one of your tools is.
        output_tool: bool,
    },
    /// The output type's schema is not a JSON object, so it cannot be a tool's input.
    #[error("the output type `{0}` must be a struct or map (its schema is not a JSON object); wrap it in a struct")]
    OutputNotAnObject(String),
    /// The input schema of a tool defined at run time (a
    /// [`DynTool`](crate::tool::DynTool), an MCP tool) is not a JSON object
    /// (`"type": "object"`), which providers require of every tool's input.
    #[error(
        "tool `{tool}` cannot be offered to a model: its input schema must be a JSON object \
         (`\"type\": \"object\"` with `properties`), as providers require, but it is {schema}"
    )]
    ToolInputNotAnObject {
        /// The tool's name.
        tool: String,
        /// Its input schema, as JSON.
        schema: String,
    },
    /// A tool name set at run time (the output tool's, a [`DynTool`](crate::tool::DynTool)'s)
    /// is one providers reject.
    #[error("tool name `{0}` is not accepted by providers: use 1 to 64 letters, digits, `_` or `-`")]
    InvalidToolName(String),
    /// The output tool's description is empty or blank (the model would not
    /// know what to put in it). Derived tools need a description too.
    #[error(
        "the output tool's description is empty: say what the output is, or leave \
         `.output_tool_description(..)` out to describe it with the output type's doc comment"
    )]
    EmptyOutputToolDescription,
    /// [`OutputMode::Native`](crate::agent::OutputMode::Native) was asked
    /// for, and the model says it cannot follow the output type's schema
    /// ([`Model::response_schema_support`](crate::Model::response_schema_support)).
    #[error(
        "`{model}` ({provider}) cannot give this agent's output natively: {reason}; use `OutputMode::Tool` \
         (the output tool), `OutputMode::Prompted` (the schema in the system prompt), or `OutputMode::Auto`"
    )]
    NativeOutputUnsupported {
        /// The model's provider.
        provider: String,
        /// The model's name.
        model: String,
        /// Why.
        reason: String,
    },
    /// A limit is zero, or a number is negative or not finite: every limit
    /// must be positive and finite (leave it unset for no limit).
    #[error("`{setting}` must be positive and finite, got {value}: leave it unset for no limit")]
    InvalidSetting {
        /// The builder method.
        setting: &'static str,
        /// The value it was given.
        value: String,
    },
    /// A timeout of zero, which would fail every call: a provider's
    /// `timeout` or `idle_timeout`, or an agent's `tool_timeout`.
    #[error("`{setting}` must be longer than zero (leave it unset for the default)")]
    ZeroTimeout {
        /// The builder method: `timeout`, `idle_timeout` or `tool_timeout`.
        setting: &'static str,
    },
    /// A provider was built without an API key, in code or in the environment.
    #[error("no API key: set the {variable} environment variable or pass a key to the builder")]
    MissingApiKey {
        /// The environment variable that would hold it.
        variable: &'static str,
    },
    /// The API key cannot be sent in an HTTP header (it holds control characters).
    #[error(
        "the API key holds characters that cannot be sent in an HTTP header: check that it was copied whole, \
         without a line break"
    )]
    InvalidApiKey,
    /// A provider's base URL is not an absolute `http` or `https` URL.
    #[error("invalid base URL `{url}`: {reason}; give an absolute `http` or `https` URL")]
    InvalidBaseUrl {
        /// The URL as given (without any user name or password it held).
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An extra header of a provider has an invalid name or value.
    #[error("invalid header `{name}`: names must be tokens and values printable")]
    InvalidHeader {
        /// The header's name as given.
        name: String,
    },
    /// A provider's HTTP client could not be built (for example, TLS setup failed).
    #[error("could not build the HTTP client: {0}")]
    HttpClient(String),
}

fn submit_taken(output_tool: bool) -> &'static str {
    if output_tool {
        "the output tool cannot be named `submit` on an agent with a reflection handler, which adds a `submit` \
         tool of its own to end the loop: choose another name in `.output_tool_name(..)`"
    } else {
        "a tool named `submit` cannot be added to an agent with a reflection handler, which adds a `submit` \
         tool of its own to end the loop: rename your tool"
    }
}
