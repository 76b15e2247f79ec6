//! A typed agent's output as a streamed response forms it: the output
//! tool's arguments (tool mode) or the answer's JSON text (native and
//! prompted modes), reported as `Event::OutputDelta`.

use super::event::Event;
use super::partial::PartialArguments;
use crate::model::{ResponseAccumulator, StreamEvent, parse_partial_json};

/// Where a typed agent's output forms in a response.
#[derive(Clone, Copy, Debug)]
pub(crate) enum OutputSource<'a> {
    /// In the arguments of calls to the output tool of this name.
    Tool(&'a str),
    /// In the answer's text.
    Text,
}

/// Follows one streamed model call.
pub(super) struct OutputStream<'a> {
    source: OutputSource<'a>,
    attempt: u32,
    /// The blocks that are calls to the output tool.
    calls: Vec<usize>,
    text: String,
    due: PartialArguments,
}

/// The `PartialArguments` key of the answer's text.
const TEXT: usize = usize::MAX;

impl<'a> OutputStream<'a> {
    pub(super) fn new(source: OutputSource<'a>, attempt: u32) -> Self {
        Self { source, attempt, calls: Vec::new(), text: String::new(), due: PartialArguments::default() }
    }

    /// The output so far, when `event` (already pushed to `accumulator`)
    /// moved it and it is due to be parsed again.
    pub(super) fn see(&mut self, event: &StreamEvent, accumulator: &ResponseAccumulator) -> Option<Event> {
        let partial = match (self.source, event) {
            (OutputSource::Tool(tool), StreamEvent::ToolCallStarted { index, name, .. }) => {
                if name == tool {
                    self.calls.push(*index);
                }
                return None;
            }
            (OutputSource::Tool(_), StreamEvent::ToolCallArgumentsDelta { index, .. }) => {
                if !self.calls.contains(index) || !self.due.due(*index, accumulator.arguments_len(*index)) {
                    return None;
                }
                accumulator.partial_input(*index)?
            }
            (OutputSource::Text, StreamEvent::TextDelta { text, .. }) => {
                self.text.push_str(text);
                // Bare JSON, or a fenced block: the value starts at its first bracket.
                let start = self.text.find(['{', '['])?;
                if !self.due.due(TEXT, self.text.len() - start) {
                    return None;
                }
                parse_partial_json(&self.text[start..])?
            }
            _ => return None,
        };
        Some(Event::OutputDelta { attempt: self.attempt, partial })
    }
}
