//! Why a run ended: one vocabulary for agents and loops, successes and
//! failures alike.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::message::FailureKind;

/// Why a run ended, reported in [`RunMetadata::termination`](super::RunMetadata)
/// on success and by [`RunError::termination`](crate::RunError::termination)
/// on failure. [`Agent`](crate::Agent) and [`ToolLoop`](super::ToolLoop)
/// share it. Not to be confused with [`StopReason`](crate::StopReason): why
/// one *model response* ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
#[non_exhaustive]
pub enum Termination {
    /// A typed output was produced and validated.
    Output,
    /// The model answered with text and no tool calls.
    Answer,
    /// A terminal check or the iteration-limit hook ended the run with a signal.
    Signal,
    /// An attempt used every iteration it was allowed.
    MaxIterations {
        /// The attempt (1-based).
        attempt: u32,
        /// Iterations made in it.
        iterations: u32,
        /// The limit in force (including extensions the iteration-limit hook granted).
        limit: u32,
    },
    /// The run made as many model calls as it may.
    MaxModelCalls {
        /// The limit.
        limit: u32,
    },
    /// The run executed as many tools as it may.
    MaxToolExecutions {
        /// The limit.
        limit: u32,
    },
    /// The run consumed its token budget.
    TokenBudget {
        /// Tokens used.
        used: u64,
        /// The budget.
        limit: u64,
    },
    /// Too many tool calls failed in a row.
    ConsecutiveToolFailures {
        /// How many.
        count: u32,
    },
    /// The run took as long as it may ([`max_duration`](crate::AgentBuilder::max_duration)).
    MaxDuration {
        /// The limit.
        #[serde(serialize_with = "millis", deserialize_with = "from_millis")]
        limit: Duration,
    },
    /// A tool call was denied or failed, and the stop policy ends the run.
    ToolPolicy {
        /// The tool.
        tool: String,
        /// How its call ended.
        kind: FailureKind,
    },
    /// The run was cancelled through its token.
    Cancelled {
        /// The attempt it stopped in (1 for the first).
        attempt: u32,
        /// The iteration of that attempt it stopped in (1 for the first;
        /// with [`Phase::ModelCall`], the iteration whose model call was
        /// cancelled or about to be made).
        iteration: u32,
        /// What it was doing.
        phase: Phase,
    },
    /// A model call failed; [`RunError::model_error`](crate::RunError::model_error)
    /// and `source()` hold the error.
    ModelError,
    /// Every attempt's output failed validation; the errors are in
    /// [`RunError::attempt_failures`](crate::RunError::attempt_failures).
    ValidationFailed {
        /// Attempts made.
        attempts: u32,
    },
    /// The last attempt ended without calling the output tool.
    NoOutputCall {
        /// Attempts made.
        attempts: u32,
    },
    /// The model refused to answer (OpenAI `refusal`, Anthropic
    /// `stop_reason: refusal`), or the provider's content filter blocked
    /// the answer (OpenAI `content_filter`, Gemini `SAFETY` and the other
    /// blocked `finishReason`s): a typed agent ends here rather than
    /// retrying, since asking again rarely changes a refusal.
    Refused {
        /// The attempt.
        attempt: u32,
        /// What the model said instead of an output (for a blocked answer
        /// without text: "the provider's content filter blocked the answer").
        message: String,
    },
    /// `submit` was called before any output was proposed.
    SubmitBeforeOutput {
        /// The attempt.
        attempt: u32,
    },
    /// The run did not start: the conversation was empty or ended with the
    /// model's own message, so there was nothing for the model to answer.
    /// Push the caller's message (`conversation.push_user(..)`) first.
    NothingToAnswer,
    /// The run paused: tool calls wait for approval or for the caller to
    /// execute them. [`RunError::deferred_calls`](crate::RunError::deferred_calls)
    /// lists them, the conversation holds them as pending, and
    /// [`Agent::resume`](crate::Agent::resume) goes on once they are
    /// resolved. Not a failure: [`is_deferred`](Self::is_deferred).
    Deferred {
        /// How many calls wait for a resolution.
        calls: u32,
    },
    /// The run did not start: the conversation has deferred tool calls
    /// ([`Conversation::deferred_calls`](crate::Conversation::deferred_calls)),
    /// so it is resumed with their resolutions, not run.
    PendingCalls {
        /// How many calls wait.
        calls: u32,
    },
    /// A resume was refused before anything ran: a resolution names an
    /// unknown or answered call, one is missing or does not fit, or the
    /// conversation no longer matches its deferred calls.
    /// [`RunError::resume_error`](crate::RunError::resume_error) says which;
    /// the conversation is unchanged.
    InvalidResume,
}

impl Termination {
    /// The `snake_case` name of the variant, as serialised (`cancelled`,
    /// `validation_failed`...): traced as `error.type` when a run fails.
    pub(crate) fn name(&self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(mut fields)) => match fields.remove("reason") {
                Some(serde_json::Value::String(name)) => name,
                _ => String::from("unknown"),
            },
            _ => String::from("unknown"),
        }
    }

    /// Whether the run produced what it was asked for (an output, an
    /// answer or a signal).
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Output | Self::Answer | Self::Signal)
    }

    /// Whether the run paused with tool calls pending ([`Termination::Deferred`]).
    pub fn is_deferred(&self) -> bool {
        matches!(self, Self::Deferred { .. })
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Output => f.write_str("a valid output was produced"),
            Self::Answer => f.write_str("the model answered"),
            Self::Signal => f.write_str("a terminal check ended the run"),
            Self::MaxIterations { attempt, iterations, limit } => {
                write!(f, "attempt {attempt} reached the limit of {limit} iterations after {iterations}")
            }
            Self::MaxModelCalls { limit } => write!(f, "reached the limit of {limit} model calls"),
            Self::MaxToolExecutions { limit } => write!(f, "reached the limit of {limit} tool executions"),
            Self::TokenBudget { used, limit } => write!(f, "used {used} tokens of a budget of {limit}"),
            Self::ConsecutiveToolFailures { count } => write!(f, "{count} tool calls failed in a row"),
            Self::MaxDuration { limit } => write!(f, "reached the run's max_duration of {limit:?}"),
            Self::ToolPolicy { tool, kind } => {
                write!(f, "tool `{tool}` ended with `{kind}` and the stop policy ends the run")
            }
            Self::Cancelled { attempt, iteration, phase } => {
                write!(f, "cancelled during {phase} (attempt {attempt}, iteration {iteration})")
            }
            Self::ModelError => f.write_str("the model call failed"),
            Self::ValidationFailed { attempts } => write!(f, "no valid output after {attempts} attempt(s)"),
            Self::NoOutputCall { attempts } => {
                write!(f, "the model did not call the output tool ({attempts} attempt(s))")
            }
            Self::Refused { attempt, message } => {
                write!(f, "attempt {attempt}: the model refused to answer: {message}")
            }
            Self::SubmitBeforeOutput { attempt } => {
                write!(f, "attempt {attempt}: `submit` was called before the output tool")
            }
            Self::NothingToAnswer => f.write_str(
                "the conversation is empty or ends with the model's own message, so the model has nothing to \
                 answer: push your message with `conversation.push_user(..)` before running",
            ),
            Self::Deferred { calls } => write!(
                f,
                "the run paused: {calls} tool call(s) wait for approval or for the caller; resume it with their \
                 resolutions"
            ),
            Self::PendingCalls { calls } => write!(
                f,
                "the conversation has {calls} deferred tool call(s): resume it with their resolutions (`resume`) \
                 instead of running it"
            ),
            Self::InvalidResume => f.write_str("the resume was refused; the conversation is unchanged"),
        }
    }
}

fn millis<S: serde::Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
}

fn from_millis<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    <u64 as serde::Deserialize>::deserialize(deserializer).map(Duration::from_millis)
}

/// What a run was doing when it was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Phase {
    /// Calling the model, or about to.
    ModelCall,
    /// Running tools (or waiting for an approver).
    ToolExecution,
    /// Validating an output.
    Validation,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ModelCall => "the model call",
            Self::ToolExecution => "tool execution",
            Self::Validation => "validation",
        })
    }
}

/// Why one attempt of an agent did not produce a valid output; fed back to
/// the model, and listed by [`RunError::attempt_failures`](crate::RunError::attempt_failures).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Deserialize, Serialize)]
#[serde(rename_all = "snake_case", tag = "failure")]
#[non_exhaustive]
pub enum AttemptFailure {
    /// The output failed deserialisation, a schema constraint or a validator.
    #[error("attempt {attempt}: {}", errors.join("; "))]
    Invalid {
        /// The attempt (1-based).
        attempt: u32,
        /// Every error found.
        errors: Vec<String>,
    },
    /// The model answered with text instead of calling the output tool.
    #[error("attempt {attempt}: answered with text instead of calling the output tool")]
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
