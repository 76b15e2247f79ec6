//! The settings that distinguish a text agent from a typed one.

use std::borrow::Cow;
use std::sync::Arc;

use super::handlers::{AsyncValidator, ReflectionHandler, Validator};
use super::output::DEFAULT_OUTPUT_TOOL;
use super::output_mode::OutputMode;
use crate::run::LimitDecision;
use crate::tool::ToolExecution;

/// One user check of a typed output.
pub(crate) enum Check<T> {
    Sync(Arc<dyn Validator<T>>),
    Async(Arc<dyn AsyncValidator<T>>),
}

impl<T> Clone for Check<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Sync(check) => Self::Sync(Arc::clone(check)),
            Self::Async(check) => Self::Async(Arc::clone(check)),
        }
    }
}

/// The typed-only settings; empty on a text agent.
pub(crate) struct TypedSpec<T> {
    pub(crate) name: Cow<'static, str>,
    /// `None`: the default, which includes the output type's doc comment.
    pub(crate) description: Option<Cow<'static, str>>,
    pub(crate) reflection: Option<Arc<dyn ReflectionHandler<T>>>,
    pub(crate) checks: Vec<Check<T>>,
    /// How the output reaches the agent (as set; `build()` resolves `Auto`).
    pub(crate) mode: OutputMode,
    /// The prompted mode's request for the output, replacing the default.
    pub(crate) instructions: Option<String>,
}

impl<T> Default for TypedSpec<T> {
    fn default() -> Self {
        Self {
            name: Cow::Borrowed(DEFAULT_OUTPUT_TOOL),
            description: None,
            reflection: None,
            checks: Vec::new(),
            mode: OutputMode::Tool,
            instructions: None,
        }
    }
}

impl<T> Clone for TypedSpec<T> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            description: self.description.clone(),
            reflection: self.reflection.clone(),
            checks: self.checks.clone(),
            mode: self.mode,
            instructions: self.instructions.clone(),
        }
    }
}

type TerminalCheck = dyn Fn(&[ToolExecution]) -> Option<String> + Send + Sync;
type LimitHook = dyn Fn(u32) -> LimitDecision<String> + Send + Sync;

/// The text-only settings of an agent.
#[derive(Clone, Default)]
pub(crate) struct TextSpec {
    pub(crate) confirmation: Option<String>,
    pub(crate) terminal: Option<Arc<TerminalCheck>>,
    pub(crate) on_limit: Option<Arc<LimitHook>>,
}
