//! The iteration loop: one model call and the whole batch of its tool calls
//! per iteration, until an answer, a terminal signal or a stop.
//!
//! Usable on its own through [`ToolLoop`]; [`Agent`](crate::Agent) runs it
//! once per attempt. Every stop (limits, deadline, token budget, failures,
//! policy, cancellation) goes through one path that answers pending tool
//! calls with synthetic [`NotExecuted`](crate::FailureKind::NotExecuted)
//! results, so the conversation can always be sent to a model again.
//!
//! Coming from a hand-written loop? [`crate::guide`] maps each part of it to
//! its counterpart here.

mod batch;
mod control;
mod engine;
mod governance;
mod hooks;
mod metadata;
mod options;
mod stop;
mod tool_loop;

pub use control::{ExecutedCall, LimitDecision, LimitReached};
pub use engine::LoopEnd;
pub use governance::{Approval, Approver, Decision, Governance, Verdict};
pub use hooks::{AuditRecord, Event, HookError, HookOutcome, Hooks};
pub use metadata::{RunMetadata, TerminationReason};
pub use options::{DEFAULT_CONFIRMATION_PROMPT, DEFAULT_MAX_ITERATIONS, LoopOptions};
pub use stop::{Phase, Stop};
pub use tool_loop::{LoopError, LoopOutput, NoSignal, ToolLoop};

pub(crate) use control::Control;
pub(crate) use engine::{Engine, deadline_passed};
pub(crate) use metadata::Tally;
