//! What a tool call carries of the run that made it, for the sub-runs it starts.

use std::sync::Arc;

use super::hooks::Hooks;
use super::sink::EventSink;
use super::sub_runs::SubRuns;

/// How a sub-run reaches the run whose tool call started it.
#[derive(Clone, Debug)]
pub(crate) struct RunLink {
    /// Where sub-runs report how they ended, and keep conversations.
    pub(crate) sub_runs: Arc<SubRuns>,
    /// The run's event stream, when it is streamed.
    pub(crate) events: Option<EventSink>,
    /// The run's hooks, which see a sub-run's events as [`Event::SubRun`](super::Event::SubRun).
    pub(crate) hooks: Hooks,
    /// Whether the run's steps go through a journal: an agent tool that
    /// keeps its conversation then leaves a copy of it with each call, for
    /// the journal to record (see [`SubRuns::leave`]).
    pub(crate) journaled: bool,
}
