//! Agents: attempts of the iteration loop, a typed output extracted through
//! an output tool, validation, and feedback until the output is valid.
//!
//! Coming from a hand-written loop? [`crate::guide`] maps each part of it to
//! its counterpart here.
//!
//! ```
//! use toolloop::testing::ScriptedModel;
//! use toolloop::{Agent, Conversation, ModelResponse, ToolCall};
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
//! struct Report { title: String }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let model = ScriptedModel::new()
//!     .respond(ModelResponse::from_tool_calls([ToolCall::new("1", "final_output", serde_json::json!({"title": "Q3"}))]));
//! let agent = Agent::builder()
//!     .model(model)
//!     .system("You write reports.")
//!     .output::<Report>()
//!     .validator(|report: &Report| if report.title.is_empty() { Err("title is empty") } else { Ok(()) })
//!     .build()?;
//! let mut conversation = Conversation::new();
//! conversation.push_user("Write the report");
//! let done = agent.run(&mut conversation).await?;
//! assert_eq!(done.output.title, "Q3");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod attempts;
mod builder;
mod builder_hooks;
mod constraints;
mod error;
mod handlers;
mod output;
mod own_tools;
mod spec;
mod state;

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

pub use builder::AgentBuilder;
pub use error::BuildError;
pub use handlers::{AsyncValidator, ReflectionHandler, Validator};
pub use output::{AgentOutput, DEFAULT_OUTPUT_TOOL, OutputType, Text};
pub use own_tools::{SUBMIT_DESCRIPTION, SUBMIT_TOOL};
pub use state::{
    Buildable, Built, HasModel, NoModel, NoReflection, OutputIs, OutputUnset, ReflectionUnset, Reflective,
    TextConfigured, TextMode, Typed, WithModel,
};

use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::model::Model;
use crate::run::{Governance, Hooks, LoopOptions, RunError, RunOutput};
use crate::tool::{ToolDefinition, ToolSet};
use spec::{TextSpec, TypedSpec};

/// An agent: a model, tools, and either a text answer or a typed output
/// (`Output`), with or without a reflection handler (`Reflection`).
///
/// Build one with [`Agent::builder`]; run it with [`Agent::run`] on a
/// conversation you own. An agent is immutable and can serve many runs at
/// once (share it with `Arc`, or clone it: clones share the model and tools).
///
/// A text agent (no `.output::<T>()`) answers with the model's final text:
///
/// ```
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Agent, Conversation, ModelResponse, ToolCall};
///
/// /// Look up the current temperature of a city, in degrees Celsius.
/// #[derive(toolloop::Tool)]
/// struct Temperature {
///     /// The city.
///     city: String,
/// }
///
/// impl Temperature {
///     async fn run(self) -> Result<f64, String> {
///         if self.city == "Paris" { Ok(18.5) } else { Err(format!("no station in {}", self.city)) }
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let model = ScriptedModel::new()
///     .respond(ModelResponse::from_tool_calls([ToolCall::new("1", "temperature", serde_json::json!({"city": "Paris"}))]))
///     .respond(ModelResponse::from_text("18.5 °C in Paris."));
/// let agent = Agent::builder().model(model.clone()).system("Answer briefly.").tool::<Temperature>().build()?;
///
/// let mut conversation = Conversation::new();
/// conversation.push_user("How warm is it in Paris?");
/// let done = agent.run(&mut conversation).await?;
/// assert_eq!(done.output, "18.5 °C in Paris.");
/// assert_eq!(done.metadata.iterations, 2);
/// // The model was sent the tool's result.
/// assert_eq!(model.requests()[1].messages.last().unwrap().tool_results().next().unwrap().content, "18.5");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct Agent<Output = Text, Reflection = NoReflection> {
    model: Arc<dyn Model>,
    tools: ToolSet,
    /// What the model is offered: the tools, then the output tool and `submit`.
    definitions: Arc<[ToolDefinition]>,
    system: Option<String>,
    options: LoopOptions,
    hooks: Hooks,
    governance: Governance,
    cancel: Option<CancellationToken>,
    max_attempts: u32,
    text: TextSpec,
    typed: TypedSpec<Output>,
    output_definition: Option<ToolDefinition>,
    reflection: PhantomData<fn() -> Reflection>,
}

impl<O, R> Clone for Agent<O, R> {
    fn clone(&self) -> Self {
        Self {
            model: Arc::clone(&self.model),
            tools: self.tools.clone(),
            definitions: Arc::clone(&self.definitions),
            system: self.system.clone(),
            options: self.options.clone(),
            hooks: self.hooks.clone(),
            governance: self.governance.clone(),
            cancel: self.cancel.clone(),
            max_attempts: self.max_attempts,
            text: self.text.clone(),
            typed: self.typed.clone(),
            output_definition: self.output_definition.clone(),
            reflection: PhantomData,
        }
    }
}

impl<O, R> fmt::Debug for Agent<O, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.model.name())
            .field("tools", &self.tools)
            .field("output_tool", &self.output_definition.as_ref().map(|d| &d.name))
            .field("max_attempts", &self.max_attempts)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts building an agent.
    pub fn builder() -> AgentBuilder {
        AgentBuilder::new()
    }
}

impl<O: AgentOutput, R> Agent<O, R> {
    /// Runs the agent on `conversation`, which should end with the caller's
    /// message. Everything the run does is appended to it, also when it
    /// fails: partial work is never lost, and every tool call is answered.
    pub async fn run(&self, conversation: &mut Conversation) -> Result<RunOutput<O::Value>, RunError> {
        let cancel = self.cancel.clone().unwrap_or_default();
        self.execute(conversation, &cancel).await
    }

    /// Like [`run`](Self::run), cancelled through `cancel` (instead of the
    /// builder's token).
    pub async fn run_with_cancel(
        &self,
        conversation: &mut Conversation,
        cancel: &CancellationToken,
    ) -> Result<RunOutput<O::Value>, RunError> {
        self.execute(conversation, cancel).await
    }

    /// The tools the model is offered, in order (helpers, then the output
    /// tool and `submit` when the agent has them).
    pub fn tool_definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }
}
