//! The tools a typed agent adds: the output tool and, with reflection, `submit`.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::state::{OutputType, ReflectionHandler};
use crate::message::{FailureKind, ToolCall};
use crate::model::BoxFuture;
use crate::run::{Control, ExecutedCall, LimitDecision, LimitReached};
use crate::tool::{DynTool, ToolDefinition, ToolError, ToolOutput};

/// The name of the output tool unless configured otherwise.
pub const DEFAULT_OUTPUT_TOOL: &str = "final_output";

/// The name of the tool injected with reflection.
pub const SUBMIT_TOOL: &str = "submit";

/// The description of the injected `submit` tool.
pub const SUBMIT_DESCRIPTION: &str =
    "Submit your final output for validation. Call this when you are satisfied with your output.";

/// The default description of the output tool.
pub(crate) const DEFAULT_OUTPUT_DESCRIPTION: &str = "Provide your final output. Its arguments are the output itself.";

/// What the agent's loop ends with.
#[derive(Debug)]
pub(crate) enum AgentSignal {
    /// A text agent's terminal check or iteration-limit hook.
    Text(String),
    /// A typed output to validate.
    Output(Value),
    /// `submit` came before any output.
    SubmitBeforeOutput,
}

/// The output tool: its schema is the output type's.
pub(crate) struct OutputTool<T> {
    pub(crate) definition: ToolDefinition,
    pub(crate) reflection: Option<Arc<dyn ReflectionHandler<T>>>,
    pub(crate) proposed: Arc<AtomicBool>,
}

impl<T: OutputType> DynTool for OutputTool<T> {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let Some(handler) = &self.reflection else {
                // Without reflection the call ends the loop; validation reports any problem.
                return Ok(ToolOutput::from("Output received; it will be validated."));
            };
            let output: T = crate::__private::parse_arguments(input, &self.definition)?;
            let rendering = handler.render(&output);
            self.proposed.store(true, Ordering::SeqCst);
            Ok(ToolOutput::from(rendering))
        })
    }
}

/// The `submit` tool injected with reflection.
pub(crate) struct SubmitTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) output_tool: Cow<'static, str>,
    pub(crate) proposed: Arc<AtomicBool>,
}

impl SubmitTool {
    pub(crate) fn definition() -> ToolDefinition {
        ToolDefinition::from_schema(
            SUBMIT_TOOL,
            SUBMIT_DESCRIPTION,
            serde_json::json!({"type": "object", "properties": {}}),
        )
    }
}

impl DynTool for SubmitTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call<'a>(&'a self, _input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if self.proposed.load(Ordering::SeqCst) {
                Ok(ToolOutput::from("Submitted for validation."))
            } else {
                Err(ToolError::Rejected(format!(
                    "there is no output to submit: call `{}` with your output first",
                    self.output_tool
                )))
            }
        })
    }
}

type TerminalCheck = dyn Fn(&[ExecutedCall]) -> Option<String> + Send + Sync;
type LimitHook = dyn Fn(&LimitReached) -> LimitDecision<String> + Send + Sync;

/// The text-only settings of an agent.
#[derive(Clone, Default)]
pub(crate) struct TextSpec {
    pub(crate) confirmation: Option<String>,
    pub(crate) terminal: Option<Arc<TerminalCheck>>,
    pub(crate) on_limit: Option<Arc<LimitHook>>,
}

/// How an agent's loop decides it is done.
pub(crate) enum AgentControl<'a> {
    /// A text agent with its optional closures.
    Text(&'a TextSpec),
    /// A typed agent: watches for its output tool (and `submit`).
    Typed { output_tool: &'a str, reflective: bool, last_output: Option<Value> },
}

impl Control<AgentSignal> for AgentControl<'_> {
    fn terminal(&mut self, batch: &[ExecutedCall]) -> Option<AgentSignal> {
        match self {
            Self::Text(spec) => spec.terminal.as_ref().and_then(|check| check(batch)).map(AgentSignal::Text),
            Self::Typed { output_tool, reflective: false, .. } => {
                // The last output call of the batch wins; one the model was
                // told failed (denied, say) is not an output.
                let last =
                    batch.iter().rev().find(|done| done.call.name == **output_tool && !done.result.is_error())?;
                Some(AgentSignal::Output(last.call.input.clone()))
            }
            Self::Typed { output_tool, reflective: true, last_output } => {
                for done in batch {
                    if done.call.name == **output_tool && !done.result.is_error() {
                        *last_output = Some(done.call.input.clone());
                    } else if done.call.name == SUBMIT_TOOL {
                        match (done.result.failure, last_output.take()) {
                            (None, Some(output)) => return Some(AgentSignal::Output(output)),
                            (None | Some(FailureKind::Rejected), None) => {
                                return Some(AgentSignal::SubmitBeforeOutput);
                            }
                            // Denied, say: not a submission, and the model was told why.
                            (Some(_), kept) => *last_output = kept,
                        }
                    }
                }
                None
            }
        }
    }

    fn sequential(&self, calls: &[ToolCall]) -> bool {
        // `submit` depends on the output calls before it in the batch: run
        // such a batch in order, so parallelism cannot change the outcome.
        matches!(self, Self::Typed { reflective: true, .. }) && calls.iter().any(|call| call.name == SUBMIT_TOOL)
    }

    fn counts_as_execution(&self, call: &ToolCall) -> bool {
        match self {
            Self::Text(_) => true,
            // `submit` is the framework's only with reflection; otherwise it may be a user's tool.
            Self::Typed { output_tool, reflective, .. } => {
                call.name != **output_tool && !(*reflective && call.name == SUBMIT_TOOL)
            }
        }
    }

    fn on_limit(&mut self, reached: &LimitReached) -> LimitDecision<AgentSignal> {
        let Self::Text(TextSpec { on_limit: Some(hook), .. }) = self else { return LimitDecision::Stop };
        match hook(reached) {
            LimitDecision::Stop => LimitDecision::Stop,
            LimitDecision::Extend(more) => LimitDecision::Extend(more),
            LimitDecision::End(signal) => LimitDecision::End(AgentSignal::Text(signal)),
        }
    }
}
