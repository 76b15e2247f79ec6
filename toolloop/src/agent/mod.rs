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

// The agent is the module's subject; its file is named after it.
#[allow(clippy::module_inception)]
pub(crate) mod agent;
mod answer_json;
mod as_tool;
mod attempts;
pub(crate) mod builder;
mod built;
mod constraints;
mod handlers;
mod output;
mod output_bounds;
mod output_mode;
mod own_tools;
mod sealed;
mod spec;
// Hidden from the docs only (`cfg(doc)`): the builder's type-state markers and bounds: see the module docs.
#[cfg_attr(doc, doc(hidden))]
pub mod state;
mod sub_run;

pub use as_tool::{AgentTool, DEFAULT_MAX_DEPTH, Prompt, ToolResultOutput};
pub use handlers::{NoReflection, Reflective};
pub use output::{AgentOutput, DEFAULT_OUTPUT_TOOL, OutputType, Text};
pub use output_mode::OutputMode;
pub use own_tools::{SUBMIT_DESCRIPTION, SUBMIT_TOOL};
