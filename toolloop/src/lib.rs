//! Typed, production-grade LLM tool-calling loops.
//!
//! A run calls the model, executes the tools it asked for, feeds the
//! results back and repeats (an *iteration*), until the model answers or
//! produces a typed output that is validated and, on errors, retried with
//! feedback (an *attempt*). The conversation stays valid whatever stops the
//! run, and every result carries the run's usage and metadata.
//!
//! - Tools are structs that [`derive(Tool)`](derive@Tool); a [`ToolSet`]
//!   runs them on its own.
//! - An [`Agent`] is built with [`Agent::builder()`]: a [`Model`], tools,
//!   optionally an output type, validators and reflection. Configurations
//!   that cannot work do not compile.
//! - [`Agent::run`] takes a [`Conversation`] you keep, and returns a
//!   [`RunOutput`] or a [`RunError`]; [`Agent::run_stream`] is the same run
//!   as [events](stream).
//! - [`providers`] holds the HTTP models (Anthropic, OpenAI Chat
//!   Completions and Responses, Ollama, Gemini); [`testing`] the offline
//!   ones and cassettes.
//! - The crate root holds that common path, and `use toolloop::prelude::*;`
//!   brings it in. The rest sits in its module: [`model`] (implementing a
//!   model, streamed responses, prompt caching), [`tool`] (definitions,
//!   dynamic tools), [`reasoning`], [`run`] (limits, hooks, governance,
//!   the journal), [`stream`], [`store`], [`telemetry`].
//!
//! ```
//! use toolloop::prelude::*;
//! use toolloop::testing::ScriptedModel;
//!
//! # tokio_test::block_on(async {
//! let agent = Agent::builder().model(ScriptedModel::new().respond(ModelResponse::from_text("Hello!"))).build()?;
//! let mut conversation = Conversation::new();
//! conversation.push_user("Say hello.");
//! assert_eq!(agent.run(&mut conversation).await?.output, "Hello!");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! ## Where to read next
//!
//! The [`guide`] has a chapter per topic, each with code that compiles:
//! [tools](guide::tools), [compile errors](guide::compile_errors),
//! [structured output](guide::structured_output),
//! [reasoning](guide::reasoning), [streaming](guide::streaming),
//! [context and caching](guide::context), [approvals](guide::approvals),
//! [sub-agents](guide::sub_agents), [MCP](guide::mcp),
//! [observability](guide::observability), [durable runs](guide::durable)
//! and [performance](guide::performance); its first page maps a
//! hand-written loop onto toolloop. The repository's README is the
//! ten-minute tour, with the dependency line, the providers and the
//! examples.
#![forbid(unsafe_code)]

// The README's code blocks are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

pub mod agent;
mod build_error;
mod cancel;
mod conversation;
pub mod guide;
#[cfg(feature = "mcp")]
pub mod mcp;
mod message;
pub mod model;
mod panic;
pub mod providers;
pub mod reasoning;
pub mod run;
mod stop_reason;
pub mod store;
pub mod stream;
pub mod telemetry;
pub mod testing;
pub mod tool;
mod usage;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

// The crate root holds the common path: build an agent, define tools, run
// it on a conversation, read the result. Everything else is one `use` away
// in its module (`model`, `tool`, `reasoning`, `run`, ...); `.ci/public-types`
// keeps the count honest.
pub use agent::agent::Agent;
pub use agent::builder::AgentBuilder;
pub use build_error::BuildError;
pub use cancel::Cancelled;
pub use conversation::Conversation;
pub use message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
pub use model::{Model, ModelError, ModelRequest, ModelResponse};
pub use run::outcome::{RunError, RunOutput};
pub use stop_reason::StopReason;
/// tokio-util's cancellation token, as [`Agent::run_with_cancel`], a
/// [`ToolContext`] and [`ToolSet::execute`] take it: re-exported so that a
/// caller names it without depending on tokio-util.
#[doc(no_inline)]
pub use tokio_util::sync::CancellationToken;
pub use tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSet};
pub use usage::Usage;

/// Derives [`Tool`](trait@Tool) for a struct whose named fields are the
/// tool's arguments.
///
/// - The struct's doc comment is the description the model reads: its
///   summary, the paragraphs before the first heading or code block, so
///   that `# Examples`, `# Errors` and notes written for people stay out of
///   the prompt (`#[tool(full_doc)]` sends the whole comment; one that
///   begins with a heading or code block is sent whole). Or
///   `#[tool(description = "...")]`, for a struct without a doc comment:
///   both at once do not compile, nor does a tool with neither. Field doc
///   comments describe the properties.
/// - The name is the struct's name in `snake_case`, or `#[tool(name = "...")]`.
///   Names must match `[a-zA-Z0-9_-]{1,64}` and may not be `submit`, which
///   reflection agents reserve.
/// - The input schema comes from schemars and honours `#[serde(...)]`
///   (`rename`, `rename_all`, `default`, `skip`, `flatten`,
///   `deny_unknown_fields`...) and `#[schemars(...)]` (`range`, `length`,
///   `regex`...) attributes. You do not derive `Deserialize` or `JsonSchema`
///   yourself, nor depend on serde or schemars; types used *inside* fields do
///   derive them. On the struct, `#[serde(default)]` and `#[serde(default =
///   "path")]` use the struct's `Default` or the function, and `#[serde(from
///   = "Type")]` / `try_from` read another type (whose schema must be an
///   object: a tool that ends up with another schema panics when added);
///   `transparent`, `untagged`, `remote` and the enum-only attributes do not
///   compile, with a message on the attribute.
/// - The schema's constraints are enforced when a call's arguments are
///   parsed, not only shown to the model: ranges, lengths, item counts,
///   `enum`/`const`, `multipleOf`, `uniqueItems`, and `pattern` when the
///   `regex` crate can compile it (not look-around). A call that breaks one
///   gets an [`InvalidArguments`](FailureKind::InvalidArguments) error result
///   naming the field and the constraint; the handler does not run.
/// - The behaviour is an inherent `async fn run(self) -> Result<T, E>` where
///   `T: Serialize` (a `String` reaches the model as plain text, `()` as
///   [`ToolOutput::DONE`], anything else as JSON) and `E: Display` (your own error type; its message becomes the
///   error result the model sees). A missing `run`, or one with another
///   signature (not `async`, `&self`, a missing or extra state parameter),
///   fails to compile with the signature to write.
///
/// Attributes, all optional: `#[tool(name = "...", description = "...",
/// full_doc, state = Type, timeout = "30s", crate = "path")]`. With `state = Type` (or
/// `state = "Type"`), `run` takes the state too: `async fn run(self, state:
/// &Type)`, and the tool is added with [`ToolSet::add_with_state`] (or
/// `.tool_with_state` on an agent builder), given a `Type` or an
/// `Arc<Type>` shared with other tools. `timeout` takes `ms`, `s` or `m`.
/// `crate` names a renamed `toolloop` dependency. Names beginning with
/// `__Tool` are kept for the code the derive generates.
///
/// ```
/// use std::sync::Arc;
/// use toolloop::{CancellationToken, Tool, ToolCall, ToolSet};
///
/// struct Inventory { apples: u32 }
///
/// /// Count the items in stock.
/// #[derive(Tool)]
/// #[tool(state = Inventory, timeout = "5s")]
/// struct CountStock {
///     /// The item to count, e.g. "apples".
///     item: String,
/// }
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("we do not sell {0}")]
/// struct UnknownItem(String);
///
/// impl CountStock {
///     async fn run(self, inventory: &Inventory) -> Result<u32, UnknownItem> {
///         match self.item.as_str() {
///             "apples" => Ok(inventory.apples),
///             _ => Err(UnknownItem(self.item)),
///         }
///     }
/// }
///
/// # tokio_test::block_on(async {
/// let mut tools = ToolSet::new();
/// tools.add_with_state::<CountStock>(Inventory { apples: 3 })?;
///
/// let call = ToolCall::new("call_1", "count_stock", serde_json::json!({"item": "pears"}));
/// let execution = tools.execute(&call, &CancellationToken::new()).await?;
/// assert!(execution.result.is_error());
/// assert_eq!(execution.result.content, "we do not sell pears");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[doc(inline)]
pub use toolloop_macros::Tool;

/// The names of the common path — define tools, build an agent, run it on a
/// conversation, read the result: `use toolloop::prelude::*;` (the
/// [crate docs](crate) show it). Everything else is one `use` away at its
/// own path: the test models in [`testing`], the providers in
/// [`providers`].
pub mod prelude {
    #[doc(no_inline)]
    pub use crate::{
        Agent, CancellationToken, ContentBlock, Conversation, Message, Model, ModelError, ModelResponse, Role,
        RunError, RunOutput, Tool, ToolCall, ToolError, ToolSet, Usage,
    };
}
