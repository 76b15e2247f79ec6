//! A sub-run: an agent run by a tool call of another run, within that
//! run's limits, reporting to it however it ends.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::cancel::CancellationToken;
use crate::message::FailureKind;
use crate::run::EventSink;
use crate::run::RunLink;
use crate::run::{Event, Hooks, LoopOptions, Phase, RunMetadata, SubRun, Tally, Termination, Verdict};
use crate::tool::ToolContext;
use crate::usage::Usage;

/// How a sub-run ended: the tool's result (an error text naming the
/// termination when it failed) and what it did.
pub(super) struct Nested {
    pub(super) result: Result<serde_json::Value, String>,
    pub(super) metadata: RunMetadata,
}

/// What a sub-run inherits from the tool call that starts it.
pub(super) struct Setup {
    /// The agent's name, as the parent's metadata and events show it.
    pub(super) agent: String,
    /// A child of the parent run's token.
    pub(super) cancel: CancellationToken,
    /// Time left of the parent's `max_duration` or the call's timeout.
    remaining_time: Option<Duration>,
    /// Tokens left in the parent's budget.
    remaining_tokens: Option<u64>,
    /// The parent's events, when it is streamed, tagged with the call.
    pub(super) events: Option<EventSink>,
    /// The parent's hooks (when it has any) and the call that started the
    /// sub-run: they see its events as [`Event::SubRun`].
    parent_hooks: Option<(Hooks, String)>,
    progress: Arc<Mutex<SoFar>>,
}

impl Setup {
    pub(super) fn new(context: Option<&ToolContext>, agent: &str) -> Self {
        let link = context.and_then(|context| Some((context.run::<RunLink>()?, context.call_id())));
        let events = link.and_then(|(link, call_id)| Some(link.events.as_ref()?.sub_run(call_id, agent)));
        let parent_hooks = link
            .filter(|(link, _)| !link.hooks.is_empty())
            .map(|(link, call_id)| (link.hooks.clone(), call_id.to_owned()));
        Self {
            agent: agent.to_owned(),
            cancel: context.map_or_else(CancellationToken::new, |context| context.cancel().child_token()),
            remaining_time: context.and_then(ToolContext::remaining_time),
            remaining_tokens: context.and_then(ToolContext::remaining_tokens),
            events,
            parent_hooks,
            progress: Arc::new(Mutex::new(SoFar::new())),
        }
    }

    /// Narrows the sub-agent's limits to what the parent has left, and
    /// follows its progress (for a report if it is cut short).
    pub(super) fn bound(&self, options: &mut LoopOptions, hooks: &mut Hooks) {
        if let Some(left) = self.remaining_time {
            options.max_duration = Some(options.max_duration.map_or(left, |own| own.min(left)));
        }
        if let Some(left) = self.remaining_tokens {
            options.token_budget = Some(options.token_budget.map_or(left, |own| own.min(left)));
        }
        let progress = Arc::clone(&self.progress);
        hooks.on_event(move |event| progress.lock().unwrap_or_else(PoisonError::into_inner).see(event));
        if let Some((parent, call_id)) = self.parent_hooks.clone() {
            // The parent's hooks see every event of the sub-run, tagged with
            // the call, as its stream does; their failures are this
            // sub-run's hook errors (in the parent's `sub_runs` metadata).
            let agent = self.agent.clone();
            hooks.on_event(move |event| {
                let tagged =
                    Event::SubRun { call_id: call_id.clone(), agent: agent.clone(), event: Box::new(event.clone()) };
                let errors = Mutex::new(Vec::new());
                parent.fire(&tagged, &errors);
                let errors = errors.into_inner().unwrap_or_else(PoisonError::into_inner);
                match errors.as_slice() {
                    [] => Ok(()),
                    errors => Err(errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")),
                }
            });
        }
    }
}

/// What a sub-run has done so far, seen through its events.
#[derive(Debug)]
struct SoFar {
    started: Instant,
    usage: Usage,
    attempts: u32,
    iterations: u32,
    model_calls: u32,
    tool_calls: u32,
    position: (u32, u32),
    phase: Phase,
}

impl SoFar {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            usage: Usage::default(),
            attempts: 0,
            iterations: 0,
            model_calls: 0,
            tool_calls: 0,
            position: (0, 0),
            phase: Phase::ModelCall,
        }
    }

    fn see(&mut self, event: &Event) {
        match event {
            Event::AttemptStarted { attempt } => self.attempts = *attempt,
            Event::IterationStarted { attempt, iteration } => {
                self.model_calls += 1;
                if self.position != (*attempt, *iteration) {
                    self.iterations += 1;
                    self.position = (*attempt, *iteration);
                }
                self.phase = Phase::ModelCall;
            }
            Event::IterationFinished { response, .. } => {
                self.usage += response.usage;
                self.phase = Phase::ToolExecution;
            }
            // As the engine counts executions: calls governance let through that ran.
            Event::ToolExecutionFinished { result, verdict, .. }
                if matches!(verdict, Verdict::Allowed | Verdict::Approved)
                    && result.failure != Some(FailureKind::NotExecuted) =>
            {
                self.tool_calls += 1;
            }
            _ => {}
        }
    }
}

/// Reports a sub-run to its parent run: how it ended, or, when the parent
/// drops it (cancelled, out of time, the call timed out), what it had done.
pub(super) struct Watch {
    run: Option<RunLink>,
    call_id: String,
    agent: String,
    cancel: Option<CancellationToken>,
    limit: Option<Duration>,
    progress: Arc<Mutex<SoFar>>,
    reported: bool,
}

impl Watch {
    pub(super) fn new(setup: &Setup, context: Option<&ToolContext>, agent: &str) -> Self {
        Self {
            run: context.and_then(|context| context.run::<RunLink>().cloned()),
            call_id: context.map(|context| context.call_id().to_owned()).unwrap_or_default(),
            agent: agent.to_owned(),
            cancel: context.map(|context| context.cancel().clone()),
            limit: setup.remaining_time,
            progress: Arc::clone(&setup.progress),
            reported: false,
        }
    }

    /// Reports the sub-run that ended with `metadata`.
    pub(super) fn finished(mut self, metadata: RunMetadata) {
        self.report(metadata);
    }

    fn report(&mut self, metadata: RunMetadata) {
        self.reported = true;
        if let Some(run) = &self.run {
            run.sub_runs.record(SubRun { call_id: self.call_id.clone(), agent: self.agent.clone(), metadata });
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.reported || self.run.is_none() {
            return;
        }
        let progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let termination = match self.limit {
            Some(limit) if !self.cancel.as_ref().is_some_and(CancellationToken::is_cancelled) => {
                Termination::MaxDuration { limit }
            }
            _ => {
                let (attempt, iteration) = progress.position;
                Termination::Cancelled { attempt, iteration, phase: progress.phase }
            }
        };
        let mut tally = Tally::start();
        tally.started = progress.started;
        tally.usage = progress.usage;
        tally.attempts = progress.attempts;
        tally.iterations = progress.iterations;
        tally.model_calls = progress.model_calls;
        tally.tool_calls = progress.tool_calls;
        drop(progress);
        tracing::debug!(call_id = %self.call_id, agent = %self.agent, %termination, "sub-run cut short");
        self.report(tally.finish(termination));
    }
}
