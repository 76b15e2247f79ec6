//! The one entry of every run, of an [`Agent`](crate::Agent) or a
//! [`ToolLoop`](super::ToolLoop): what happens before the first iteration
//! and after the last, around what differs (an agent's attempts, a bare
//! loop's one drive).

use tracing::Span;

use super::engine::Engine;
use super::event::Event;
use super::governance::Governance;
use super::hooks::Hooks;
use super::journal::{Journal, Steps};
use super::options::LoopOptions;
use super::outcome::{RunError, RunOutput, Stop};
use super::output_stream::OutputSource;
use super::resume::{Resume, trace_end};
use super::sink::EventSink;
use super::tally::Tally;
use super::termination::Termination;
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::model::{BodyCache, Model, ResponseSchema};
use crate::telemetry::spans;
use crate::tool::{ToolDefinition, ToolSet};
use crate::usage::Usage;

/// What every run of an agent or a loop shares, borrowed from it.
#[derive(Clone, Copy)]
pub(crate) struct Setup<'a> {
    /// The agent's name in traces (`None` for a bare loop).
    pub(crate) name: Option<&'a str>,
    pub(crate) model: &'a dyn Model,
    pub(crate) tools: &'a ToolSet,
    /// What the model is offered: the tools, then an agent's own.
    pub(crate) definitions: &'a [ToolDefinition],
    pub(crate) system: Option<&'a str>,
    pub(crate) options: &'a LoopOptions,
    pub(crate) hooks: &'a Hooks,
    pub(crate) governance: &'a Governance,
    /// The double-confirmation prompt, when that is on.
    pub(crate) confirmation: Option<&'a str>,
    /// A typed agent's schema in native mode.
    pub(crate) response_schema: Option<&'a ResponseSchema>,
    /// Where a typed agent's output forms.
    pub(crate) output: Option<OutputSource<'a>>,
}

/// One segment of a run (the whole run, or the part after a resume),
/// started: the engine that drives it, its tally, its span.
pub(crate) struct Segment<'a> {
    pub(crate) engine: Engine<'a>,
    pub(crate) tally: Tally,
    /// The run's `invoke_agent` span: instrument the segment's work with it.
    pub(crate) span: Span,
    /// The usage of the segments before this one.
    carried: Usage,
}

impl<'a> Segment<'a> {
    /// Starts a segment on `conversation`: refused before anything runs
    /// when a new run has nothing to answer or calls left pending;
    /// `resume` restores the tally of the segments before.
    pub(crate) fn start(
        setup: Setup<'a>,
        conversation: &Conversation,
        cancel: &'a CancellationToken,
        events: Option<EventSink>,
        resume: Option<&Resume>,
        journal: Option<&'a dyn Journal>,
    ) -> Result<Self, RunError> {
        if resume.is_none()
            && let Some(error) = RunError::cannot_start(conversation)
        {
            return Err(error);
        }
        let tally = resume.map_or_else(
            || Tally { first_message: conversation.messages().len(), ..Tally::start() },
            |resume| resume.tally(conversation.messages().len()),
        );
        let carried = resume.map(Resume::carried_usage).unwrap_or_default();
        let engine = Engine {
            model: setup.model,
            tools: setup.tools,
            definitions: setup.definitions,
            system: setup.system,
            options: setup.options,
            hooks: setup.hooks,
            governance: setup.governance,
            cancel,
            deadline: setup.options.max_duration.map(|limit| tally.started + limit),
            confirmation: setup.confirmation,
            events,
            response_schema: setup.response_schema,
            output: setup.output,
            journal: Steps(journal),
            body_cache: BodyCache::default(),
        };
        let span = spans::invoke_agent(setup.name, setup.model);
        if resume.is_some() {
            spans::run_resumed(&span);
        }
        Ok(Self { engine, tally, span, carried })
    }

    /// Ends the segment with `outcome`: tells the hooks how the run ended,
    /// closes the tally and the span.
    pub(crate) fn finish<T>(self, outcome: Result<(T, Termination), Stop>) -> Result<RunOutput<T>, RunError> {
        let termination = match &outcome {
            Ok((_, termination)) => termination.clone(),
            Err(stop) => stop.termination.clone(),
        };
        self.engine.emit(&self.tally, || Event::RunFinished { termination: termination.clone() });
        let metadata = self.tally.finish(termination);
        trace_end(&self.span, &metadata, self.carried);
        tracing::debug!(?metadata, "run finished");
        match outcome {
            Ok((output, _)) => Ok(RunOutput { output, metadata }),
            Err(stop) => Err(RunError::new(stop, metadata)),
        }
    }
}
