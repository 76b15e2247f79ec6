//! Plumbing of [`AgentBuilder`](crate::AgentBuilder): its type states, and
//! the sealed traits that turn a wrong configuration into a compile error
//! that says what to do.
//!
//! You do not need these to build or run an agent: they appear in the
//! builder's type parameters and bounds, and by name in its compile errors.
//! So the module is hidden from the documentation (`#[cfg_attr(doc,
//! doc(hidden))]`: no page, not counted by `.ci/public-types`) rather than
//! private: rustc names these types and traits in its messages, by their
//! short names, and lists the ones that would do. (A plain `#[doc(hidden)]`
//! would also hide them from rustc's short names: its messages would print
//! `toolloop::agent::state::NativeOutput` and drop the lists.) The traits
//! are sealed (`Sealed` is implemented only in this crate), so they are not
//! extension points.

use std::sync::Arc;

use super::handlers::{AsyncValidator, NoReflection, ReflectionHandler, Reflective, Validator};
pub use super::handlers::{ReflectionText, ValidationError, ValidationFuture, ValidationResult};
use super::output::{AgentOutput, OutputType, Text};
pub use super::output_bounds::{OutputDeserialize, OutputSchema, OutputSend, OutputSync};
use super::sealed::Sealed;

/// A text agent on which a text-only option was set, so its output can no
/// longer become typed. Builds an `Agent<Text, NoReflection>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextConfigured;

/// The output comes through the output tool (the default mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputTool;

/// The output tool was named or described, so the output mode stays the
/// output tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputToolConfigured;

/// The output comes as the provider's native structured output (`.native_output()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NativeOutput;

/// The output comes as JSON in the answer, as the system prompt asks (`.prompted_output()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PromptedOutput;

/// Native output where the model supports it, else the output tool (`.auto_output()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AutoOutput;

/// The builder has no model yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoModel;

/// The builder has a model.
#[derive(Clone)]
pub struct WithModel(pub(crate) Arc<dyn crate::Model>);

impl std::fmt::Debug for WithModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WithModel").field(&self.0.name()).finish()
    }
}

impl Sealed for TextConfigured {}

// Not an output type, but [`OutputDeserialize`] says so, once (as for `Text`).
#[diagnostic::do_not_recommend]
impl OutputSchema for TextConfigured {}
impl Sealed for OutputTool {}
impl Sealed for OutputToolConfigured {}
impl Sealed for NativeOutput {}
impl Sealed for PromptedOutput {}
impl Sealed for AutoOutput {}
impl Sealed for NoReflection {}
impl Sealed for Reflective {}
impl Sealed for NoModel {}
impl Sealed for WithModel {}

/// The builder's output is still open, so `.output::<T>()` may choose it.
#[diagnostic::on_unimplemented(
    message = "the output of this agent is already decided (`{Self}`), so `.output::<T>()` cannot be called here",
    label = "output already decided",
    note = "call `.output::<T>()` once, before any text-only option (`.double_confirmation()`, `.terminal_check(..)`, `.on_iteration_limit(..)`)"
)]
pub trait OutputUnset: Sealed {}

impl OutputUnset for Text {}

/// The builder makes a typed agent (`.output::<T>()` was called).
///
/// Implemented for every type that reads JSON, not only for complete
/// output types: an output type that `.output::<T>()` rejected for another
/// reason (no `JsonSchema`, not `Send`) is reported there, once, and not
/// again as "needs a typed output" at each typed option after it.
#[diagnostic::on_unimplemented(
    message = "this option needs a typed output, but this agent answers with `{Self}`",
    label = "only available on typed agents",
    note = "call `.output::<YourType>()` first; reflection, validators, the output mode and the output tool's name belong to typed agents",
    note = "if `.output::<{Self}>()` is there and was rejected, this error follows from that one: fix it first"
)]
pub trait Typed: Sealed {}

#[diagnostic::do_not_recommend]
impl<T: OutputDeserialize> Typed for T {}

/// The builder makes a text agent.
#[diagnostic::on_unimplemented(
    message = "this option only applies to text agents, but this agent's output is `{Self}`",
    label = "only available on text agents",
    note = "a typed agent ends through its output tool: use `.reflection(..)`, `.validator(..)` and `.max_attempts(..)` instead"
)]
pub trait TextMode: Sealed {}

impl TextMode for Text {}
impl TextMode for TextConfigured {}

/// The output mode is still the default, so `.native_output()`,
/// `.prompted_output()` or `.auto_output()` may choose another.
#[diagnostic::on_unimplemented(
    message = "the output mode of this agent is already decided (`{Self}`)",
    label = "output mode already decided",
    note = "choose the output mode once (`.native_output()`, `.prompted_output()` or `.auto_output()`), before the options of a mode (`.output_tool_name(..)` and `.output_tool_description(..)` keep the output tool)"
)]
pub trait ModeUnset: Sealed {}

impl ModeUnset for OutputTool {}

/// The output may come through the output tool (the tool and auto modes),
/// so the output tool's name and description mean something.
#[diagnostic::on_unimplemented(
    message = "this option configures the output tool, but this agent's output mode is `{Self}`, which offers none",
    label = "only available in the output tool (or auto) mode",
    note = "the native and prompted modes read the output from the answer's text: remove `.output_tool_name(..)`/`.output_tool_description(..)`, or use the output tool (the default) or `.auto_output()`"
)]
pub trait ToolOptions: Sealed {
    /// The mode once the output tool is configured.
    type Configured;
}

impl ToolOptions for OutputTool {
    type Configured = OutputToolConfigured;
}

impl ToolOptions for OutputToolConfigured {
    type Configured = OutputToolConfigured;
}

impl ToolOptions for AutoOutput {
    type Configured = AutoOutput;
}

/// The output comes as JSON in the answer, as the system prompt asks.
#[diagnostic::on_unimplemented(
    message = "this option applies to the prompted output mode, but this agent's output mode is `{Self}`",
    label = "only available in the prompted mode",
    note = "call `.prompted_output()` first: the instructions are the system prompt's request for the output"
)]
pub trait PromptedMode: Sealed {}

impl PromptedMode for PromptedOutput {}

/// No reflection handler has been set yet.
#[diagnostic::on_unimplemented(
    message = "a reflection handler is already set on this agent",
    label = "second reflection handler",
    note = "an agent has one reflection handler: remove one of the `.reflection(..)` calls"
)]
pub trait ReflectionUnset: Sealed {}

impl ReflectionUnset for NoReflection {}

/// The builder has no model yet, so `.model(..)` may set it.
#[diagnostic::on_unimplemented(
    message = "this agent already has a model",
    label = "second `.model(..)`",
    note = "an agent has one model: remove one of the `.model(..)` calls (to fall back to another model when one fails, use `toolloop::providers::Fallback`)"
)]
pub trait ModelUnset: Sealed {}

impl ModelUnset for NoModel {}

/// The builder has a model.
#[diagnostic::on_unimplemented(
    message = "this agent has no model yet",
    label = "`.model(..)` was not called",
    note = "call `.model(your_model)` before `.build()`"
)]
pub trait HasModel: Sealed {
    #[doc(hidden)]
    fn into_model(self) -> Arc<dyn crate::Model>;
}

impl HasModel for WithModel {
    fn into_model(self) -> Arc<dyn crate::Model> {
        self.0
    }
}

/// Never implemented: an [`AgentBuilder`](crate::AgentBuilder) is not an agent.
#[diagnostic::on_unimplemented(
    message = "an agent builder cannot run: it must be built first",
    label = "this is an `AgentBuilder`, not an `Agent`",
    note = "finish the builder with `.build()?` and run the `Agent` it returns (`.run(..)`, `.run_stream(..)`)"
)]
pub trait Built {}

/// Never implemented: a built [`Agent`](crate::Agent) takes no more options.
#[diagnostic::on_unimplemented(
    message = "this agent is already built: its options are set on the builder, before `.build()`",
    label = "an `Agent` cannot be configured",
    note = "call the option on `Agent::builder()` before `.build()?`; to run with other options, build another \
            agent (agents that share a model and tools are cheap to build)"
)]
pub trait Configurable {}

/// Links a handler's argument type `T` to the agent's output type, so that
/// a reflection handler or validator taking anything else does not compile.
/// (No message of its own: rustc infers `T` from the output type and reports
/// a closure taking another type as a signature mismatch, naming both.)
pub trait OutputIs<T>: Sealed + Sized {
    #[doc(hidden)]
    fn reflection(handler: Arc<dyn ReflectionHandler<T>>) -> Option<Arc<dyn ReflectionHandler<Self>>>;
    #[doc(hidden)]
    fn validator(validator: Arc<dyn Validator<T>>) -> Option<Arc<dyn Validator<Self>>>;
    #[doc(hidden)]
    fn async_validator(validator: Arc<dyn AsyncValidator<T>>) -> Option<Arc<dyn AsyncValidator<Self>>>;
}

#[diagnostic::do_not_recommend]
impl<T: OutputDeserialize> OutputIs<T> for T {
    fn reflection(handler: Arc<dyn ReflectionHandler<T>>) -> Option<Arc<dyn ReflectionHandler<T>>> {
        Some(handler)
    }
    fn validator(validator: Arc<dyn Validator<T>>) -> Option<Arc<dyn Validator<T>>> {
        Some(validator)
    }
    fn async_validator(validator: Arc<dyn AsyncValidator<T>>) -> Option<Arc<dyn AsyncValidator<T>>> {
        Some(validator)
    }
}

// A text agent has no output to hand to a handler; the `Typed` bound next to
// `OutputIs` reports that, so this impl only keeps a second error away.
impl<T> OutputIs<T> for Text {
    fn reflection(_: Arc<dyn ReflectionHandler<T>>) -> Option<Arc<dyn ReflectionHandler<Self>>> {
        None
    }
    fn validator(_: Arc<dyn Validator<T>>) -> Option<Arc<dyn Validator<Self>>> {
        None
    }
    fn async_validator(_: Arc<dyn AsyncValidator<T>>) -> Option<Arc<dyn AsyncValidator<Self>>> {
        None
    }
}

impl<T> OutputIs<T> for TextConfigured {
    fn reflection(_: Arc<dyn ReflectionHandler<T>>) -> Option<Arc<dyn ReflectionHandler<Self>>> {
        None
    }
    fn validator(_: Arc<dyn Validator<T>>) -> Option<Arc<dyn Validator<Self>>> {
        None
    }
    fn async_validator(_: Arc<dyn AsyncValidator<T>>) -> Option<Arc<dyn AsyncValidator<Self>>> {
        None
    }
}

/// What `.build()` turns the builder's output state into: [`Text`] for text
/// agents, the output type for typed ones. (No message of its own: an output
/// type that is not one is reported at `.output::<T>()`.)
pub trait Buildable: Sealed + Sized + 'static {
    /// The agent's output.
    type Output: AgentOutput + OutputIs<Self>;
}

impl Buildable for Text {
    type Output = Text;
}

impl Buildable for TextConfigured {
    type Output = Text;
}

#[diagnostic::do_not_recommend]
impl<T: OutputType> Buildable for T {
    type Output = T;
}
