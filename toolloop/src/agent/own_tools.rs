//! The tools a typed agent answers itself: the output tool and, with
//! reflection, `submit`.
//!
//! They are not in the tool set: the agent's [`Control`] owns them, so the
//! loop offers them, runs governance and hooks on their calls like any
//! other, and then hands each call (in call order) to [`OwnTools::answer`].
//! The proposed output lives here and nowhere else, parsed once.

use serde_json::{Value, json};

use super::answer_json::answer_json;
use super::handlers::ReflectionHandler;
use super::output::AgentOutput;
use super::spec::TextSpec;
use crate::conversation::Conversation;
use crate::message::{FailureKind, Message, Role, ToolCall, ToolResult};
use crate::run::{Control, LimitDecision};
use crate::stop_reason::StopReason;
use crate::tool::ToolExecution;
use crate::tool::{ToolDefinition, arguments};

/// The name of the tool injected with reflection.
pub const SUBMIT_TOOL: &str = "submit";

/// The description of the injected `submit` tool.
pub const SUBMIT_DESCRIPTION: &str =
    "Submit your final output for validation. Call this when you are satisfied with your output.";

/// The definition of the injected `submit` tool.
pub(crate) fn submit_definition() -> ToolDefinition {
    ToolDefinition::from_schema(SUBMIT_TOOL, SUBMIT_DESCRIPTION, json!({"type": "object", "properties": {}}))
}

/// An output the model proposed through the output tool, parsed once.
pub(crate) struct Proposal<O> {
    /// The call whose result carries the verdict: the output call, or with
    /// reflection the `submit` call that submitted it.
    pub(crate) call_id: String,
    /// The arguments as the schema reads them, for the constraint checks.
    pub(crate) value: Value,
    /// The output, or why it does not deserialise.
    pub(crate) parsed: Result<O, String>,
}

impl<O: AgentOutput> Proposal<O> {
    fn from_call(call: &ToolCall, definition: &ToolDefinition) -> Self {
        Self::from_input(call.id.clone(), &call.input, definition)
    }

    /// An output read from `input`: a call's arguments, or (native and
    /// prompted modes, with no call to answer: `call_id` is empty) the JSON
    /// of a text answer.
    pub(crate) fn from_input(call_id: String, input: &Value, definition: &ToolDefinition) -> Self {
        match arguments::normalize(input, &definition.input_schema) {
            Ok(value) => {
                let parsed = O::parse(&value).map_err(|error| error.to_string());
                Self { call_id, value: value.into_owned(), parsed }
            }
            Err(error) => Self { call_id, value: input.clone(), parsed: Err(error.to_string()) },
        }
    }
}

/// How an attempt's loop ended, besides an answer.
pub(crate) enum AgentSignal<O> {
    /// A text agent's terminal check or iteration-limit hook.
    Text(String),
    /// A typed output to validate.
    Output(Proposal<O>),
    /// `submit` came before any output.
    SubmitBeforeOutput,
}

/// What `submit` decided in the current batch (the first decisive call wins).
enum Submission<O> {
    Submitted(Proposal<O>),
    Early,
}

/// A typed agent's output tool and `submit`, for one attempt.
pub(crate) struct OwnTools<'a, O> {
    output: &'a ToolDefinition,
    /// Whether the output tool is offered (tool mode); in the native and
    /// prompted modes the output arrives as the answer's text.
    offered: bool,
    /// `Some` with reflection: the output tool returns the rendering and
    /// `submit` ends the loop.
    reflection: Option<&'a dyn ReflectionHandler<O>>,
    /// The latest proposed output of this attempt.
    proposal: Option<Proposal<O>>,
    submission: Option<Submission<O>>,
}

impl<'a, O: AgentOutput> OwnTools<'a, O> {
    pub(crate) fn new(
        output: &'a ToolDefinition,
        offered: bool,
        reflection: Option<&'a dyn ReflectionHandler<O>>,
    ) -> Self {
        Self { output, offered, reflection, proposal: None, submission: None }
    }

    /// Takes back what the control of a paused run held, from the run's
    /// messages (from `first`) before its paused batch: with reflection,
    /// the last output proposed and not submitted since: a successful
    /// output call, or in the native and prompted modes a text answer that
    /// read as an output (the one [`answered`](Self::answered) rendered
    /// back). An earlier run's proposal is not the run's, as a control is
    /// new with each run.
    pub(crate) fn recall(&mut self, conversation: &Conversation, first: usize) {
        if self.reflection.is_none() {
            return;
        }
        let messages = conversation.messages();
        let before_batch = &messages[..messages.len().saturating_sub(1)];
        let before_batch = &before_batch[first.min(before_batch.len())..];
        let succeeded = |id: &str| {
            before_batch.iter().flat_map(Message::tool_results).any(|result| result.call_id == id && !result.is_error())
        };
        let mut proposed = None;
        for message in before_batch.iter().filter(|message| message.role == Role::Assistant) {
            if !self.offered && message.tool_calls().next().is_none() {
                let proposal = answer_json(&message.text())
                    .ok()
                    .map(|value| Proposal::<O>::from_input(String::new(), &value, self.output))
                    .filter(|proposal| proposal.parsed.is_ok());
                if proposal.is_some() {
                    proposed = proposal;
                }
            }
            for call in message.tool_calls() {
                if call.name == self.output.name && succeeded(&call.id) {
                    proposed = Some(Proposal::from_call(call, self.output));
                } else if call.name == SUBMIT_TOOL {
                    proposed = None;
                }
            }
        }
        self.proposal = proposed;
    }

    fn owns(&self, name: &str) -> bool {
        (self.offered && name == self.output.name) || (self.reflection.is_some() && name == SUBMIT_TOOL)
    }

    /// With reflection in the native and prompted modes: a text answer is a
    /// proposed output, rendered back to the model as a user message (or,
    /// when it cannot be read, why); `submit` then submits it. A refusal
    /// ends the loop.
    fn answered(&mut self, text: &str, stop_reason: &StopReason) -> Option<String> {
        let handler = self.reflection.filter(|_| !self.offered && *stop_reason != StopReason::Refusal)?;
        let again = "answer again with your output as one JSON value";
        let proposal = match answer_json(text) {
            Ok(value) => Proposal::<O>::from_input(String::new(), &value, self.output),
            Err(error) => return Some(format!("Your output could not be read: {error}. Please {again}.")),
        };
        let rendering = match &proposal.parsed {
            Ok(output) => handler.render(output),
            Err(error) => return Some(format!("Your output could not be read: {error}. Please {again}.")),
        };
        self.proposal = Some(proposal);
        Some(format!(
            "{rendering}\n\nIf this is your final output, call `{SUBMIT_TOOL}` to submit it; otherwise {again}."
        ))
    }

    fn answer(&mut self, call: &ToolCall) -> ToolResult {
        if call.name == self.output.name { self.propose(call) } else { self.submit(call) }
    }

    fn propose(&mut self, call: &ToolCall) -> ToolResult {
        let proposal = Proposal::from_call(call, self.output);
        let Some(handler) = self.reflection else {
            // Without reflection the call ends the loop (the last one of the
            // batch wins). This result is a placeholder: once validation has
            // run, after the batch, the verdict replaces it (and is what its
            // result event carries: `settles_later`).
            self.proposal = Some(proposal);
            return ToolResult::success(&call.id, "Output received; it will be validated.");
        };
        match &proposal.parsed {
            // The model fixes its arguments within the attempt.
            Err(error) => ToolResult::failure(&call.id, FailureKind::InvalidArguments, error.clone()),
            Ok(output) => {
                let rendering = handler.render(output);
                self.proposal = Some(proposal);
                ToolResult::success(&call.id, rendering)
            }
        }
    }

    fn submit(&mut self, call: &ToolCall) -> ToolResult {
        if self.submission.is_none() {
            self.submission = Some(match self.proposal.take() {
                // The verdict will answer this `submit` call.
                Some(proposal) => Submission::Submitted(Proposal { call_id: call.id.clone(), ..proposal }),
                None => Submission::Early,
            });
        }
        if let Some(Submission::Submitted(_)) = self.submission {
            ToolResult::success(&call.id, "Submitted for validation.")
        } else {
            let message = if self.offered {
                format!("there is no output to submit: call `{}` with your output first", self.output.name)
            } else {
                "there is no output to submit: answer with your output as one JSON value first".to_owned()
            };
            ToolResult::failure(&call.id, FailureKind::Rejected, message)
        }
    }

    /// Whether `call` is the call whose result the verdict on an output
    /// will be: the `submit` call that submitted it, or without reflection
    /// the output call that proposed it (the batch's last).
    fn settles_later(&self, call: &ToolCall) -> bool {
        if self.reflection.is_none() {
            return self.proposal.as_ref().is_some_and(|proposal| proposal.call_id == call.id);
        }
        matches!(&self.submission, Some(Submission::Submitted(proposal)) if proposal.call_id == call.id)
    }

    /// Whether an output was proposed (with reflection) and not yet submitted.
    pub(crate) fn has_unsubmitted_proposal(&self) -> bool {
        self.reflection.is_some() && self.proposal.is_some()
    }

    fn ending(&mut self) -> Option<AgentSignal<O>> {
        if self.reflection.is_some() {
            return match self.submission.take()? {
                Submission::Submitted(proposal) => Some(AgentSignal::Output(proposal)),
                Submission::Early => Some(AgentSignal::SubmitBeforeOutput),
            };
        }
        self.proposal.take().map(AgentSignal::Output)
    }
}

/// How an agent's loop decides it is done.
pub(crate) struct AgentControl<'a, O> {
    /// A text agent's optional closures (empty on a typed agent).
    pub(crate) text: &'a TextSpec,
    /// A typed agent's output tool (and `submit`), which end the loop.
    pub(crate) own_tools: Option<OwnTools<'a, O>>,
}

impl<O: AgentOutput> Control<AgentSignal<O>> for AgentControl<'_, O> {
    fn owns(&self, name: &str) -> bool {
        self.own_tools.as_ref().is_some_and(|tools| tools.owns(name))
    }

    fn answer(&mut self, call: &ToolCall) -> ToolResult {
        match &mut self.own_tools {
            Some(tools) => tools.answer(call),
            None => unreachable!("the loop hands a control only the calls it owns"),
        }
    }

    fn answered(&mut self, text: &str, stop_reason: &StopReason) -> Option<String> {
        self.own_tools.as_mut().and_then(|tools| tools.answered(text, stop_reason))
    }

    fn settles_later(&self, call: &ToolCall) -> bool {
        self.own_tools.as_ref().is_some_and(|tools| tools.settles_later(call))
    }

    fn terminal(&mut self, batch: &[ToolExecution]) -> Option<AgentSignal<O>> {
        match &mut self.own_tools {
            Some(tools) => tools.ending(),
            None => self.text.terminal.as_ref().and_then(|check| check(batch)).map(AgentSignal::Text),
        }
    }

    fn on_limit(&mut self, limit: u32) -> LimitDecision<AgentSignal<O>> {
        match &self.text.on_limit {
            Some(hook) => hook(limit).map(AgentSignal::Text),
            None => LimitDecision::MaxIterations,
        }
    }
}
