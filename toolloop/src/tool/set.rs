//! A set of tools looked up by name, and the execution of one tool call.

use std::fmt;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::{CallScope, ToolContext};
use super::{Tool, ToolDefinition, ToolError, ToolOutput};
use crate::build_error::BuildError;
use crate::cancel::{BoxFuture, Cancelled};
use crate::message::{FailureKind, ToolCall, ToolResult};
use crate::panic::panic_message;

/// How long a tool may run when neither it nor its set says otherwise.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// An object-safe tool: a definition and a call from JSON arguments.
///
/// Derived tools become one when added to a [`ToolSet`]. Implement it
/// directly for tools whose names or schemas are only known at run time.
pub trait DynTool: Send + Sync {
    /// Name, description and input schema.
    fn definition(&self) -> &ToolDefinition;

    /// Parses `input` and runs the tool.
    fn call<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// A typed tool together with the state it runs with.
struct Registered<T: Tool> {
    state: Arc<T::State>,
    tool: PhantomData<fn() -> T>,
}

impl<T: Tool> DynTool for Registered<T> {
    fn definition(&self) -> &ToolDefinition {
        T::definition()
    }

    fn call<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { T::parse(input)?.call(&self.state).await })
    }
}

/// A tool that needs no state, so it is added without one: with
/// [`ToolSet::add`] or the agent builder's `.tool::<T>()`.
///
/// Every tool whose [`State`](Tool::State) is `()` is one; the bound exists
/// so that adding a tool that needs state, or a type that is not a tool,
/// fails to compile with a message that says what to do.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool: add `#[derive(Tool)]` to it",
    label = "not a tool",
    note = "a tool is a struct whose fields are its arguments, with a doc comment for its description and an \
            `async fn run(self) -> Result<T, E>`; see the documentation of `#[derive(Tool)]`"
)]
// Hidden from the docs only (`cfg(doc)`): a bound of `add`/`.tool()`, not written by users.
#[cfg_attr(doc, doc(hidden))]
pub trait Stateless: Tool {
    /// The state it runs with: `()`.
    fn no_state() -> Self::State;
}

impl<T: Tool> Stateless for T
where
    T::State: NoStateNeeded<T>,
{
    fn no_state() -> T::State {
        <T::State as NoStateNeeded<T>>::no_state()
    }
}

/// Implemented by `()` only: the state of a tool that needs none. A tool
/// whose state is anything else is added with its state.
#[diagnostic::on_unimplemented(
    message = "`{T}` needs state of type `{Self}`, so it is added together with its state",
    label = "`{T}` declares `#[tool(state = {Self})]`",
    note = "on an agent builder: `.tool_with_state::<{T}>(state)`; on a `ToolSet`: `.add_with_state::<{T}>(state)`; \
            the state is a `{Self}` or an `Arc<{Self}>` shared with other tools"
)]
// Hidden from the docs only (`cfg(doc)`): a bound (see `Stateless`).
#[cfg_attr(doc, doc(hidden))]
pub trait NoStateNeeded<T> {
    /// The unit state.
    fn no_state() -> Self;
}

#[diagnostic::do_not_recommend]
impl<T> NoStateNeeded<T> for () {
    fn no_state() -> Self {}
}

/// What a tool's state can be given as: the state itself, or an `Arc` of
/// it to share one value between several tools (anything that converts
/// into `Arc<S>`).
#[diagnostic::on_unimplemented(
    message = "this tool's state is `{S}`, not `{Self}`",
    label = "expected a `{S}` or an `Arc<{S}>`",
    note = "the tool set keeps the state for as long as it lives, so it takes it by value, not by reference; \
            share one value between tools (or with your code) through an `Arc<{S}>`",
    note = "the state type is the one in the tool's `#[tool(state = ...)]`; a tool without one is added \
            without state: `.add::<T>()` on a `ToolSet`, `.tool::<T>()` on an agent builder"
)]
// Hidden from the docs only (`cfg(doc)`): a bound of `add_with_state`/`.tool_with_state()` (see `Stateless`).
#[cfg_attr(doc, doc(hidden))]
pub trait IntoState<S> {
    /// The state, shared.
    fn into_state(self) -> Arc<S>;
}

#[diagnostic::do_not_recommend]
impl<S, X: Into<Arc<S>>> IntoState<S> for X {
    fn into_state(self) -> Arc<S> {
        self.into()
    }
}

/// The tools a model may call, looked up by name.
///
/// ```
/// use toolloop::{Tool, ToolSet};
///
/// /// Add two numbers.
/// #[derive(Tool)]
/// struct Add { a: i64, b: i64 }
///
/// impl Add {
///     async fn run(self) -> Result<i64, std::convert::Infallible> { Ok(self.a + self.b) }
/// }
///
/// let mut tools = ToolSet::new();
/// tools.add::<Add>()?;
/// assert_eq!(tools.definitions()[0].name, "add");
/// # Ok::<(), toolloop::BuildError>(())
/// ```
#[derive(Clone)]
pub struct ToolSet {
    tools: Vec<Arc<dyn DynTool>>,
    definitions: Vec<ToolDefinition>,
    default_timeout: Duration,
    /// The names of the external tools (see [`ToolSet::add_external`]).
    external: Vec<String>,
}

/// A tool the caller executes: a definition and no handler.
struct External(ToolDefinition);

impl DynTool for External {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn call<'a>(&'a self, _input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let message = format!("`{}` is an external tool: the caller executes it and resumes the run", self.0.name);
        Box::pin(async move { Err(ToolError::Failed(message)) })
    }
}

impl Default for ToolSet {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("default_timeout", &self.default_timeout)
            .finish_non_exhaustive()
    }
}

impl ToolSet {
    /// An empty set with the [default timeout](DEFAULT_TOOL_TIMEOUT).
    pub fn new() -> Self {
        Self { tools: Vec::new(), definitions: Vec::new(), default_timeout: DEFAULT_TOOL_TIMEOUT, external: Vec::new() }
    }

    /// Adds a tool that needs no state. A tool whose name the set already
    /// holds is refused with [`BuildError::DuplicateToolName`] (so is one
    /// added by the other `add_*` methods).
    pub fn add<T: Stateless>(&mut self) -> Result<&mut Self, BuildError> {
        self.add_with_state::<T>(T::no_state())
    }

    /// Adds a tool together with the state it runs with: the state by value,
    /// or an `Arc` of it to share one value between several tools.
    pub fn add_with_state<T: Tool>(&mut self, state: impl IntoState<T::State>) -> Result<&mut Self, BuildError> {
        self.add_dyn(Arc::new(Registered::<T> { state: state.into_state(), tool: PhantomData }))
    }

    /// Adds a tool defined at run time.
    pub fn add_dyn(&mut self, tool: Arc<dyn DynTool>) -> Result<&mut Self, BuildError> {
        let definition = tool.definition();
        if self.get(&definition.name).is_some() {
            return Err(BuildError::DuplicateToolName(definition.name.to_string()));
        }
        self.definitions.push(definition.clone());
        self.tools.push(tool);
        Ok(self)
    }

    /// Adds an *external* tool: offered to the model with `definition`'s
    /// name, description and schema, and executed by the caller, not here
    /// (in a browser, on a device, by another service). A run that gets a
    /// call to it pauses with the call pending
    /// ([`DeferralReason::External`](crate::run::DeferralReason::External));
    /// the caller executes it and resumes the run with its result
    /// ([`Resolution::Output`](crate::run::Resolution::Output)). Governance
    /// sees the call first, as any other.
    pub fn add_external(&mut self, definition: ToolDefinition) -> Result<&mut Self, BuildError> {
        let name = definition.name.to_string();
        self.add_dyn(Arc::new(External(definition)))?;
        self.external.push(name);
        Ok(self)
    }

    /// Whether `name` is an [external](Self::add_external) tool.
    pub fn is_external(&self, name: &str) -> bool {
        self.external.iter().any(|external| external == name)
    }

    /// Sets how long tools without a timeout of their own may run.
    pub fn set_default_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.default_timeout = timeout;
        self
    }

    /// The definitions of every tool, in the order they were added.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&dyn DynTool> {
        // A linear scan beats hashing for the handful of tools an agent has.
        self.tools.iter().find(|tool| tool.definition().name == name).map(|tool| &**tool)
    }

    /// The names of every tool, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.definitions.iter().map(|d| &*d.name)
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Executes one tool call.
    ///
    /// Every failure of the call becomes an error result the model can read
    /// (unknown tool, arguments that do not parse, the handler's error, a
    /// panic, a timeout). Only cancellation is not a result: it returns
    /// `Err(Cancelled)`, promptly, also while the tool runs.
    ///
    /// The tool sees a [`ToolContext`] with the call's id, `cancel` and
    /// its timeout (nested below the tool call running on this task, if any).
    pub async fn execute(&self, call: &ToolCall, cancel: &CancellationToken) -> Result<ToolExecution, Cancelled> {
        self.execute_in(call, CallScope::new(cancel, None, None, None).context(call)).await
    }

    /// Executes one tool call as [`execute`](Self::execute) does, with the
    /// context the engine made for it (which the tool's timeout narrows).
    pub(crate) async fn execute_in(&self, call: &ToolCall, context: ToolContext) -> Result<ToolExecution, Cancelled> {
        let started = Instant::now();
        let Some(tool) = self.get(&call.name) else {
            let message = format!("unknown tool `{}`; the tools are: {}", call.name, self.name_list());
            return Ok(ToolExecution::failed(call, FailureKind::UnknownTool, message, started));
        };
        let timeout = tool.definition().timeout.unwrap_or(self.default_timeout);
        // The context's scope ends the call when the run's token is cancelled.
        // Boxed: it holds the context, and keeping it out of the call's
        // future keeps that future (allocated per call by the batch) small.
        let run = AssertUnwindSafe(Box::pin(context.within(timeout).scope(tool.call(&call.input)))).catch_unwind();
        let outcome = match tokio::time::timeout(timeout, run).await {
            Ok(Ok(Err(Cancelled))) => return Err(Cancelled),
            Ok(Ok(Ok(result))) => Ok(Ok(result)),
            Ok(Err(panic)) => Ok(Err(panic)),
            Err(elapsed) => Err(elapsed),
        };
        Ok(match outcome {
            Ok(Ok(Ok(output))) => ToolExecution {
                call: call.clone(),
                result: ToolResult::success(&call.id, output.text()),
                output: Some(output),
                elapsed: started.elapsed(),
                nested: None,
            },
            Ok(Ok(Err(error @ ToolError::InvalidArguments { .. }))) => {
                ToolExecution::failed(call, FailureKind::InvalidArguments, error.to_string(), started)
            }
            Ok(Ok(Err(ToolError::Failed(message)))) => {
                ToolExecution::failed(call, FailureKind::ToolFailed, message, started)
            }
            Ok(Ok(Err(ToolError::Rejected(message)))) => {
                ToolExecution::failed(call, FailureKind::Rejected, message, started)
            }
            Ok(Err(panic)) => {
                let message = format!("tool `{}` panicked: {}", call.name, panic_message(&*panic));
                ToolExecution::failed(call, FailureKind::Panicked, message, started)
            }
            Err(_elapsed) => {
                let message = format!("tool `{}` did not finish within {timeout:?}", call.name);
                ToolExecution::failed(call, FailureKind::TimedOut, message, started)
            }
        })
    }

    fn name_list(&self) -> String {
        if self.is_empty() {
            return "(none)".to_owned();
        }
        self.names().collect::<Vec<_>>().join(", ")
    }
}

/// One tool call with its result and the tool's structured output: what
/// [`ToolSet::execute`] returns, and what a run's terminal check sees of
/// each call of a batch. It serialises (a durable
/// [journal](crate::run::journal) records it), without the call: the
/// journal's step names the call, and the run fills it in on replay.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolExecution {
    /// The call.
    #[serde(skip, default = "unnamed_call")]
    pub call: ToolCall,
    /// What the model will see.
    pub result: ToolResult,
    /// The tool's structured output, when it succeeded.
    pub output: Option<ToolOutput>,
    /// How long the call ran (zero when no tool ran: a call answered by the
    /// run itself, denied, or cut off).
    pub elapsed: Duration,
    /// What the call left in the run beside its result, as a journal
    /// records it (see [`Nested`]); `None` everywhere else. Boxed: it is
    /// rare, and every call in flight holds an execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nested: Option<Box<Nested>>,
}

/// What a journaled call of an agent used as a tool leaves in the run
/// beside its result, recorded with it so that a replayed call (whose
/// sub-run does not run again) restores it: the sub-runs it started, and
/// what it added to the conversation the tool keeps. As JSON: the run
/// layer's types are not the tool layer's.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Nested {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) sub_runs: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kept: Option<serde_json::Value>,
}

/// The call of a deserialised [`ToolExecution`], before the run fills it in.
fn unnamed_call() -> ToolCall {
    ToolCall::new("", "", serde_json::Value::Null)
}

impl ToolExecution {
    fn failed(call: &ToolCall, kind: FailureKind, message: String, started: Instant) -> Self {
        let result = ToolResult::failure(&call.id, kind, message);
        Self { call: call.clone(), result, output: None, elapsed: started.elapsed(), nested: None }
    }

    /// `call` answered with `result` without running a tool (no output, no
    /// time): what the run records for a call it answers itself, and what a
    /// [journal](crate::run::journal) of your own may return for a tool
    /// step it cannot replay.
    pub fn answered(call: &ToolCall, result: ToolResult) -> Self {
        Self { call: call.clone(), result, output: None, elapsed: Duration::ZERO, nested: None }
    }
}
