//! What an agent run can fail with, and what `build()` can reject.

use std::fmt;

use crate::message::FailureKind;
use crate::model::ModelError;
use crate::run::{Phase, RunMetadata, Stop, TerminationReason};

/// Why one attempt did not produce a valid output; fed back to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptFailure {
    /// The output failed deserialisation, a schema constraint or a validator.
    Invalid {
        /// The attempt (1-based).
        attempt: u32,
        /// Every error found.
        errors: Vec<String>,
    },
    /// The model answered with text instead of calling the output tool.
    NoOutputCall {
        /// The attempt.
        attempt: u32,
        /// What it wrote.
        text: String,
    },
}

impl AttemptFailure {
    /// The errors, as fed back to the model.
    pub fn errors(&self) -> Vec<String> {
        match self {
            Self::Invalid { errors, .. } => errors.clone(),
            Self::NoOutputCall { .. } => vec!["answered with text instead of calling the output tool".to_owned()],
        }
    }
}

impl fmt::Display for AttemptFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { attempt, errors } => write!(f, "attempt {attempt}: {}", errors.join("; ")),
            Self::NoOutputCall { attempt, .. } => {
                write!(f, "attempt {attempt}: answered with text instead of calling the output tool")
            }
        }
    }
}

fn list(failures: &[AttemptFailure]) -> String {
    failures.iter().map(ToString::to_string).collect::<Vec<_>>().join(" | ")
}

/// What went wrong in a run.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunErrorKind {
    /// An attempt used every iteration it was allowed.
    #[error("attempt {attempt} reached the limit of {limit} iterations after {iterations}")]
    MaxIterations {
        /// The attempt.
        attempt: u32,
        /// Iterations made in it.
        iterations: u32,
        /// The limit.
        limit: u32,
    },
    /// Every attempt produced an output that failed validation.
    #[error("no valid output after {} attempt(s): {}", failures.len(), list(failures))]
    ValidationFailed {
        /// Every attempt's failure, in order.
        failures: Vec<AttemptFailure>,
    },
    /// The last attempt ended without calling the output tool.
    #[error("the model did not call the output tool (attempts: {})", list(failures))]
    InvalidResponse {
        /// Every attempt's failure, in order.
        failures: Vec<AttemptFailure>,
    },
    /// `submit` was called before any output.
    #[error("attempt {attempt}: `submit` was called before the output tool")]
    SubmitBeforeOutput {
        /// The attempt.
        attempt: u32,
    },
    /// The run was cancelled.
    #[error("cancelled during {phase}")]
    Cancelled {
        /// What it was doing.
        phase: Phase,
    },
    /// A model call failed.
    #[error(transparent)]
    Model(ModelError),
    /// The run's deadline passed.
    #[error("the run's deadline passed")]
    DeadlineExceeded,
    /// A budget ran out: model calls, tool executions, tokens or consecutive tool failures.
    #[error("budget exceeded: {0}")]
    BudgetExceeded(Stop),
    /// A tool call was denied or failed and the stop policy ends the run.
    #[error("tool `{tool}` ended with `{kind}` and the stop policy ends the run")]
    ToolPolicy {
        /// The tool.
        tool: String,
        /// How its call ended.
        kind: FailureKind,
    },
}

impl RunErrorKind {
    pub(crate) fn from_stop(stop: Stop, attempt: u32) -> Self {
        match stop {
            Stop::MaxIterations { iterations, limit } => Self::MaxIterations { attempt, iterations, limit },
            Stop::Cancelled { phase } => Self::Cancelled { phase },
            Stop::Model(error) => Self::Model(error),
            Stop::Deadline => Self::DeadlineExceeded,
            Stop::ToolPolicy { tool, kind } => Self::ToolPolicy { tool, kind },
            other => Self::BudgetExceeded(other),
        }
    }

    pub(crate) fn termination(&self) -> TerminationReason {
        match self {
            Self::MaxIterations { .. } => TerminationReason::MaxIterations,
            Self::ValidationFailed { .. } => TerminationReason::ValidationFailed,
            Self::InvalidResponse { .. } => TerminationReason::InvalidResponse,
            Self::SubmitBeforeOutput { .. } => TerminationReason::SubmitBeforeOutput,
            Self::Cancelled { .. } => TerminationReason::Cancelled,
            Self::Model(_) => TerminationReason::ModelError,
            Self::DeadlineExceeded => TerminationReason::Deadline,
            Self::BudgetExceeded(stop) => stop.termination(),
            Self::ToolPolicy { .. } => TerminationReason::ToolPolicy,
        }
    }
}

/// A failed run. It carries the run's [metadata](RunMetadata) (usage,
/// attempts, hook errors, ...); the conversation passed to the run holds
/// everything done so far, with every tool call answered.
#[derive(thiserror::Error)]
#[error("{}", self.inner.0)]
pub struct RunError {
    inner: Box<(RunErrorKind, RunMetadata)>,
}

impl fmt::Debug for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunError").field("kind", self.kind()).field("metadata", self.metadata()).finish()
    }
}

impl RunError {
    pub(crate) fn new(kind: RunErrorKind, metadata: RunMetadata) -> Self {
        Self { inner: Box::new((kind, metadata)) }
    }

    /// What went wrong.
    pub fn kind(&self) -> &RunErrorKind {
        &self.inner.0
    }

    /// What the run did before it failed.
    pub fn metadata(&self) -> &RunMetadata {
        &self.inner.1
    }

    /// The kind and the metadata, by value.
    pub fn into_parts(self) -> (RunErrorKind, RunMetadata) {
        *self.inner
    }
}

/// A configuration problem only visible when the agent is built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools share a name (including the output tool and `submit`).
    #[error("two tools are named `{0}`: tool names must be unique within an agent")]
    DuplicateToolName(String),
    /// The output type's schema is not a JSON object, so it cannot be a tool's input.
    #[error("the output type `{0}` must be a struct or map (its schema is not a JSON object); wrap it in a struct")]
    OutputNotAnObject(String),
    /// A tool name set at run time (the output tool's, a [`DynTool`](crate::DynTool)'s)
    /// is one providers reject.
    #[error("tool name `{0}` is not accepted by providers: use 1 to 64 letters, digits, `_` or `-`")]
    InvalidToolName(String),
    /// `max_attempts` or `max_iterations` is zero.
    #[error("`{0}` must be at least 1")]
    Zero(&'static str),
}
