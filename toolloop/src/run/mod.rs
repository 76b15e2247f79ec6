//! The iteration loop: one model call and the whole batch of its tool calls
//! per iteration, until an answer, a terminal signal or a stop.
//!
//! Usable on its own through [`ToolLoop`]; [`Agent`](crate::Agent) runs it
//! once per attempt. Both return a [`RunOutput`] or a
//! [`RunError`], and say why they ended with one
//! vocabulary, [`Termination`]. Every stop (limits, `max_duration`, token
//! budget, failures, policy, cancellation) goes through one path that
//! answers pending tool calls with synthetic
//! [`NotExecuted`](crate::FailureKind::NotExecuted) results, so the
//! conversation can always be sent to a model again.
//!
//! Coming from a hand-written loop? [`crate::guide`] maps each part of it to
//! its counterpart here.

mod batch;
mod context;
mod control;
pub(crate) mod deferral;
mod engine;
mod event;
mod governance;
mod hooks;
mod iteration;
pub mod journal;
mod link;
mod metadata;
mod model_call;
mod options;
pub(crate) mod outcome;
mod output_stream;
mod partial;
mod pending;
mod resume;
mod segment;
mod sink;
mod sub_runs;
mod tally;
mod termination;
mod tool_loop;

// Its modules reach the crate's one `panic_message` as `super::panic`.
use crate::panic;

pub use crate::conversation::{CompactionReason, ELIDED_RESULT, estimate_tokens};
pub use context::{ContextPolicy, Summariser};
pub use control::LimitDecision;
pub use deferral::{DeferralReason, DeferredCall, Resolution, ResumeError};
pub use event::Event;
pub use governance::{Approver, Decision, Governance, Verdict};
pub use hooks::HookOutcome;
pub(crate) use hooks::Hooks;
pub(crate) use hooks::{event_hooks, hook_setters};
pub use iteration::LoopOutput;
pub use journal::Journal;
pub use metadata::{RunMetadata, SubRun};
pub use options::{DEFAULT_CONFIRMATION_PROMPT, DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_TOOL_RESULT_CHARS};
pub(crate) use options::{LoopOptions, loop_settings, setters};
pub use termination::{AttemptFailure, Phase, Termination};
pub use tool_loop::ToolLoop;

pub(crate) use control::Control;
pub(crate) use engine::Engine;
pub(crate) use link::RunLink;
pub(crate) use outcome::{RunError, RunOutput, Stop};
pub(crate) use output_stream::OutputSource;
pub(crate) use pending::abandon_pending;
pub(crate) use resume::Resume;
pub(crate) use segment::{Segment, Setup};
pub(crate) use sink::EventSink;
pub(crate) use tally::Tally;
