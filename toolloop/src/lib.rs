#![doc = include_str!("../../README.md")]
#![forbid(unsafe_code)]

mod cancel;
mod conversation;
mod message;
mod model;
pub mod providers;
mod stop_reason;
mod tool;
mod usage;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use cancel::{CancellationToken, Cancelled};
pub use conversation::Conversation;
pub use message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
pub use model::{BoxFuture, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse};
pub use stop_reason::StopReason;
pub use tool::{
    ArgumentError, DEFAULT_TOOL_TIMEOUT, DuplicateToolName, DynTool, Stateless, Tool, ToolDefinition, ToolError,
    ToolExecution, ToolOutput, ToolSet,
};
pub use toolloop_macros::Tool;

/// The common imports: `use toolloop::prelude::*;`.
pub mod prelude {
    pub use crate::{Conversation, Message, Model, ModelResponse, Tool, ToolCall, ToolSet, Usage};
}

pub use usage::Usage;
