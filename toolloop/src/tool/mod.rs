//! Tools: what a model can call, and how a call is executed.
//!
//! [`Tool`] (with its derive), [`ToolSet`], [`ToolContext`], [`ToolOutput`]
//! and [`ToolError`] are also at the crate root. The rest is for tools
//! beyond the derive and for code that executes calls itself: a tool's
//! [`ToolDefinition`], tools known only at run time ([`DynTool`]), the
//! [`ToolExecution`] of one call, and [`run_blocking`] for blocking work inside a tool.

pub(crate) mod arguments;
mod blocking;
pub(crate) mod constraints;
mod context;
mod definition;
mod doc;
mod error;
mod output;
pub(crate) mod schema;
mod set;

use std::future::Future;

use serde_json::Value;

pub use blocking::run_blocking;
pub(crate) use context::CallScope;
pub use context::ToolContext;
pub use definition::ToolDefinition;
pub(crate) use definition::is_valid_tool_name;
pub(crate) use doc::doc_summary;
pub use error::ToolError;
pub use output::ToolOutput;
pub(crate) use set::Nested;
pub use set::{DEFAULT_TOOL_TIMEOUT, DynTool, IntoState, NoStateNeeded, Stateless, ToolExecution, ToolSet};

/// A tool whose arguments are the fields of `Self`.
///
/// Implement it with `#[derive(Tool)]` and an inherent `async fn run`; see
/// the [derive's documentation](macro@crate::Tool). Hand-written
/// implementations are possible too.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool: add `#[derive(Tool)]` to it",
    label = "not a tool",
    note = "a tool is a struct whose fields are its arguments, with a doc comment for its description and an \
            `async fn run(self) -> Result<T, E>`; see the documentation of `#[derive(Tool)]`"
)]
pub trait Tool: Sized + Send + 'static {
    /// The name the model calls the tool by.
    const NAME: &'static str;

    /// What the tool can reach while it runs (a database pool, an HTTP
    /// client, a counter...); `()` for none. It is given to the tool set when
    /// the tool is added, by value or as an `Arc` shared with other tools.
    type State: Send + Sync + 'static;

    /// Name, description and input schema; built once per type.
    fn definition() -> &'static ToolDefinition;

    /// Parses the model's arguments; arguments that do not fit are a
    /// [`ToolError::InvalidArguments`].
    fn parse(input: &Value) -> Result<Self, ToolError>;

    /// Runs the tool.
    fn call(self, state: &Self::State) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}
