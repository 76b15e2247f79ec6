//! The OpenAI Responses stream (`POST /responses` with `"stream": true`):
//! typed server-sent events decoded into neutral [`StreamEvent`]s.
//!
//! A stream is `response.created`, then for each output item
//! `response.output_item.added`, its deltas (`response.output_text.delta`,
//! `response.refusal.delta`, `response.function_call_arguments.delta`,
//! `response.reasoning_summary_text.delta`, ...) and
//! `response.output_item.done`; it ends with `response.completed` or
//! `response.incomplete` (with the usage), or fails with `response.failed`
//! or an `error` event. There is no `[DONE]`.
//!
//! Neutral indices are given in the order items and their parts first
//! appear, which is the order of the response's `output`: each text or
//! refusal part of a message is a text block, each function call a tool
//! call (its `call_id` is the id results answer), each reasoning item one
//! reasoning block whose summary parts are joined by blank lines.

use serde::Deserialize;

use super::PROVIDER;
use super::convert::{reasoning_from, stop_reason_from, usage};
use super::wire::ResponsesResponse;
use crate::model::{ModelError, ModelErrorKind, StreamEvent};
use crate::providers::http::{StreamDecoder, ended_early, malformed_frame, stream_error};
use crate::providers::openai::error_kind;

/// Decodes one Responses stream.
#[derive(Debug, Default)]
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct ResponsesStreamDecoder {
    phase: Phase,
    /// The answering model, which reasoning items are tied to.
    model: Option<String>,
    /// The neutral index given to each item or message part, in order.
    slots: Vec<(Slot, usize)>,
    /// Bytes of text delivered for each message part, by neutral index.
    delivered: Vec<usize>,
    items: Vec<(usize, Item)>,
    refused: bool,
    has_calls: bool,
}

/// Where a stream is: before `response.created`, streaming, or past its
/// final event.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    #[default]
    Waiting,
    Streaming,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Item(usize),
    Part { output_index: usize, content_index: usize },
}

#[derive(Debug)]
enum Item {
    Message,
    FunctionCall {
        index: usize,
        had_deltas: bool,
    },
    Reasoning {
        index: usize,
        /// The summary part (or reasoning content part) being streamed.
        part: Option<(bool, usize)>,
        has_text: bool,
    },
    /// Items this crate does not use (built-in tool calls): skipped.
    Ignored,
    Done,
}

impl StreamDecoder for ResponsesStreamDecoder {
    fn decode(&mut self, _event: Option<&str>, data: &str, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.phase == Phase::Done {
            return Ok(());
        }
        let event: Event =
            serde_json::from_str(data).map_err(|error| malformed_frame(PROVIDER, "an event", &error, data))?;
        match event {
            Event::Created { response } | Event::InProgress { response } => {
                if self.phase == Phase::Waiting {
                    self.phase = Phase::Streaming;
                    self.model.clone_from(&response.model);
                    out.push(StreamEvent::Started {
                        model: response.model,
                        provider: Some(PROVIDER.to_owned()),
                        id: response.id,
                    });
                }
            }
            Event::OutputItemAdded { output_index, item } => self.item_added(output_index, item, out)?,
            Event::ContentPartAdded { output_index, content_index, part }
                if matches!(self.item(output_index), Some(Item::Reasoning { .. })) =>
            {
                // A `reasoning_text` part of a reasoning item (open-weight
                // models): its text streams as `response.reasoning_text.delta`.
                self.reasoning_text(output_index, (false, content_index), part.text.unwrap_or_default(), out)?;
            }
            Event::ContentPartAdded { output_index, content_index, part } => {
                if self.message(output_index)? {
                    self.refused |= part.kind == "refusal";
                    let index = self.part_index(output_index, content_index);
                    // Opens the block even when no delta follows.
                    let text = part.text.or(part.refusal).unwrap_or_default();
                    self.deliver(index, &text);
                    out.push(StreamEvent::TextDelta { index, text });
                }
            }
            Event::OutputTextDelta { output_index, content_index, delta } => {
                if self.message(output_index)? {
                    let index = self.part_index(output_index, content_index);
                    self.deliver(index, &delta);
                    out.push(StreamEvent::TextDelta { index, text: delta });
                }
            }
            Event::RefusalDelta { output_index, content_index, delta } => {
                if self.message(output_index)? {
                    self.refused = true;
                    let index = self.part_index(output_index, content_index);
                    self.deliver(index, &delta);
                    out.push(StreamEvent::TextDelta { index, text: delta });
                }
            }
            Event::FunctionCallArgumentsDelta { output_index, delta } => {
                if let Some((index, had_deltas)) = self.function_call(output_index)? {
                    *had_deltas = true;
                    out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment: delta });
                }
            }
            Event::FunctionCallArgumentsDone { output_index, arguments } => {
                if let Some((index, had_deltas)) = self.function_call(output_index)? {
                    // Arguments sent whole, without deltas (some servers).
                    if !*had_deltas && !arguments.is_empty() {
                        *had_deltas = true;
                        out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment: arguments });
                    }
                }
            }
            Event::ReasoningSummaryPartAdded { output_index, summary_index } => {
                self.reasoning_text(output_index, (true, summary_index), String::new(), out)?;
            }
            Event::ReasoningSummaryTextDelta { output_index, summary_index, delta } => {
                self.reasoning_text(output_index, (true, summary_index), delta, out)?;
            }
            Event::ReasoningTextDelta { output_index, content_index, delta } => {
                self.reasoning_text(output_index, (false, content_index), delta, out)?;
            }
            Event::OutputItemDone { output_index, item } => self.item_done(output_index, item, out)?,
            Event::Completed { response } | Event::Incomplete { response } => {
                self.require_start("the final event")?;
                // Usage and stop reason as the non-streamed response gives them.
                out.push(StreamEvent::Usage(usage(response.usage.as_ref())));
                let stop_reason = stop_reason_from(
                    response.status.as_deref(),
                    response.incomplete_details.as_ref().and_then(|d| d.reason.as_deref()),
                    self.has_calls,
                    self.refused,
                );
                out.push(StreamEvent::Finished { stop_reason });
                self.phase = Phase::Done;
            }
            Event::Failed { response } => {
                let (code, message) = response.error.map(|e| (e.code, e.message)).unwrap_or_default();
                let message = if message.is_empty() { "the response failed".to_owned() } else { message };
                return Err(api_error(code, message));
            }
            Event::Error { code, message } => return Err(api_error(code, message)),
            Event::Other => {}
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.phase == Phase::Done { Ok(()) } else { Err(ended_early(PROVIDER, "response.completed")) }
    }
}

impl ResponsesStreamDecoder {
    pub(super) fn new() -> Self {
        Self::default()
    }

    fn item_added(
        &mut self,
        output_index: usize,
        item: OutputItem,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        self.require_start("response.output_item.added")?;
        if self.item(output_index).is_some() {
            return Err(malformed(&format!("output item {output_index} was added twice")));
        }
        let state = match item.kind.as_str() {
            "message" => Item::Message,
            "function_call" => {
                let index = self.slot(Slot::Item(output_index));
                self.has_calls = true;
                let (Some(id), Some(name)) = (item.call_id, item.name) else {
                    return Err(malformed(&format!("function call {output_index} has no call_id or name")));
                };
                out.push(StreamEvent::ToolCallStarted { index, id, name });
                let arguments = item.arguments.unwrap_or_default();
                let had_deltas = !arguments.is_empty();
                if had_deltas {
                    out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment: arguments });
                }
                Item::FunctionCall { index, had_deltas }
            }
            "reasoning" => Item::Reasoning { index: self.slot(Slot::Item(output_index)), part: None, has_text: false },
            _ => Item::Ignored,
        };
        self.items.push((output_index, state));
        Ok(())
    }

    fn item_done(
        &mut self,
        output_index: usize,
        item: OutputItem,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        let Some(state) = self.item(output_index) else {
            return Err(malformed(&format!("output item {output_index} is done but was never added")));
        };
        match std::mem::replace(state, Item::Done) {
            Item::FunctionCall { index, had_deltas } => {
                if let Some(arguments) = item.arguments.filter(|a| !had_deltas && !a.is_empty()) {
                    out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment: arguments });
                }
                out.push(StreamEvent::ToolCallFinished { index, input: None });
            }
            Item::Reasoning { index, .. } => {
                let Some(id) = item.id else {
                    return Err(malformed(&format!("reasoning item {output_index} has no id")));
                };
                let text = item.content.unwrap_or_default().into_iter().filter_map(|part| part.text).collect();
                let summary = item.summary.into_iter().filter_map(|part| part.text).collect();
                let reasoning = reasoning_from(self.model.clone(), id, text, summary, item.encrypted_content);
                out.push(StreamEvent::ReasoningFinished { index, reasoning });
            }
            Item::Message => {
                // The whole item: parts, or ends of parts, that came without
                // deltas are delivered now, so the text is the non-streamed one.
                for (content_index, part) in item.content.unwrap_or_default().into_iter().enumerate() {
                    if !matches!(part.kind.as_str(), "output_text" | "refusal") {
                        continue;
                    }
                    self.refused |= part.kind == "refusal";
                    let index = self.part_index(output_index, content_index);
                    let text = part.text.or(part.refusal).unwrap_or_default();
                    let sent = self.delivered.get(index).copied().unwrap_or(0);
                    let opened = self.delivered.len() > index;
                    match text.get(sent..) {
                        Some(rest) if !rest.is_empty() || !opened => {
                            let rest = rest.to_owned();
                            self.deliver(index, &rest);
                            out.push(StreamEvent::TextDelta { index, text: rest });
                        }
                        _ => {}
                    }
                }
            }
            Item::Ignored => {}
            Item::Done => return Err(malformed(&format!("output item {output_index} is done twice"))),
        }
        Ok(())
    }

    /// Appends reasoning text to the item at `output_index`, separating
    /// parts with a blank line.
    fn reasoning_text(
        &mut self,
        output_index: usize,
        key: (bool, usize),
        text: String,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        match self.item(output_index) {
            None => Err(malformed(&format!("reasoning for output item {output_index}, which was never added"))),
            Some(Item::Reasoning { index, part, has_text }) => {
                let index = *index;
                if *part != Some(key) {
                    if *has_text {
                        out.push(StreamEvent::ReasoningDelta { index, text: "\n\n".to_owned() });
                        *has_text = false;
                    }
                    *part = Some(key);
                }
                if !text.is_empty() {
                    *has_text = true;
                    out.push(StreamEvent::ReasoningDelta { index, text });
                }
                Ok(())
            }
            Some(Item::Ignored) => Ok(()),
            Some(_) => Err(malformed(&format!("reasoning for output item {output_index}, which is not reasoning"))),
        }
    }

    /// Whether the item at `output_index` is a message (else it is skipped).
    fn message(&mut self, output_index: usize) -> Result<bool, ModelError> {
        match self.item(output_index) {
            None => Err(malformed(&format!("content for output item {output_index}, which was never added"))),
            Some(Item::Message) => Ok(true),
            Some(Item::Ignored) => Ok(false),
            Some(_) => Err(malformed(&format!("content for output item {output_index}, which is not an open message"))),
        }
    }

    /// The function call at `output_index`, when it is one and open.
    fn function_call(&mut self, output_index: usize) -> Result<Option<(usize, &mut bool)>, ModelError> {
        match self.items.iter_mut().rev().find(|(at, _)| *at == output_index).map(|(_, item)| item) {
            None => Err(malformed(&format!("arguments for output item {output_index}, which was never added"))),
            Some(Item::FunctionCall { index, had_deltas }) => Ok(Some((*index, had_deltas))),
            Some(Item::Ignored) => Ok(None),
            Some(_) => {
                Err(malformed(&format!("arguments for output item {output_index}, which is not an open function call")))
            }
        }
    }

    fn item(&mut self, output_index: usize) -> Option<&mut Item> {
        self.items.iter_mut().rev().find(|(at, _)| *at == output_index).map(|(_, item)| item)
    }

    /// Notes `text` as delivered for the message part at neutral `index`.
    fn deliver(&mut self, index: usize, text: &str) {
        if self.delivered.len() <= index {
            self.delivered.resize(index + 1, 0);
        }
        self.delivered[index] += text.len();
    }

    fn part_index(&mut self, output_index: usize, content_index: usize) -> usize {
        self.slot(Slot::Part { output_index, content_index })
    }

    /// The neutral index of `slot`, given in order of first appearance.
    fn slot(&mut self, slot: Slot) -> usize {
        if let Some((_, index)) = self.slots.iter().rev().find(|(s, _)| *s == slot) {
            return *index;
        }
        let index = self.slots.len();
        self.slots.push((slot, index));
        index
    }

    fn require_start(&self, event: &str) -> Result<(), ModelError> {
        if self.phase == Phase::Waiting {
            Err(malformed(&format!("{event} arrived before response.created")))
        } else {
            Ok(())
        }
    }
}

fn malformed(message: &str) -> ModelError {
    ModelError::new(ModelErrorKind::MalformedResponse, PROVIDER, message.to_owned())
}

fn api_error(code: Option<String>, message: String) -> ModelError {
    stream_error(PROVIDER, error_kind(code.as_deref()), message, code)
}

/// One event of the stream, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "response.created")]
    Created { response: ResponsesResponse },
    #[serde(rename = "response.in_progress")]
    InProgress { response: ResponsesResponse },
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded { output_index: usize, item: OutputItem },
    #[serde(rename = "response.output_item.done")]
    OutputItemDone { output_index: usize, item: OutputItem },
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded { output_index: usize, content_index: usize, part: ContentPart },
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta { output_index: usize, content_index: usize, delta: String },
    #[serde(rename = "response.refusal.delta")]
    RefusalDelta { output_index: usize, content_index: usize, delta: String },
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta { output_index: usize, delta: String },
    #[serde(rename = "response.function_call_arguments.done")]
    FunctionCallArgumentsDone { output_index: usize, arguments: String },
    #[serde(rename = "response.reasoning_summary_part.added")]
    ReasoningSummaryPartAdded { output_index: usize, summary_index: usize },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningSummaryTextDelta { output_index: usize, summary_index: usize, delta: String },
    #[serde(rename = "response.reasoning_text.delta")]
    ReasoningTextDelta { output_index: usize, content_index: usize, delta: String },
    #[serde(rename = "response.completed")]
    Completed { response: ResponsesResponse },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: ResponsesResponse },
    #[serde(rename = "response.failed")]
    Failed { response: ResponsesResponse },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<String>,
        message: String,
    },
    #[serde(other)]
    Other,
}

/// An output item (the fields used here, for every item type).
#[derive(Debug, Deserialize)]
struct OutputItem {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    encrypted_content: Option<String>,
    /// A message's parts, or a reasoning item's `reasoning_text` parts.
    #[serde(default)]
    content: Option<Vec<ContentPart>>,
    /// A reasoning item's `summary_text` parts.
    #[serde(default)]
    summary: Vec<ContentPart>,
}

#[derive(Debug, Deserialize)]
struct ContentPart {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)] // transcripts read best with `json!` arguments
mod tests {
    use std::fmt::Write as _;

    use serde_json::{Value, json};

    use super::super::convert::parse;
    use super::ResponsesStreamDecoder;
    use crate::message::ContentBlock;
    use crate::model::{ModelErrorKind, StreamEvent};
    use crate::providers::http::testing::{Decoded, decode_all_splits};
    use crate::stop_reason::StopReason;
    use crate::usage::Usage;

    /// An SSE body: each event named by its `type`, numbered in order.
    fn sse(events: &[Value]) -> String {
        events.iter().enumerate().fold(String::new(), |mut body, (number, event)| {
            let mut event = event.clone();
            event["sequence_number"] = json!(number);
            let _ = write!(body, "event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap());
            body
        })
    }

    fn response_object(status: &str, extra: Value) -> Value {
        let mut object = json!({"id": "resp_1", "object": "response", "created_at": 1_741_476_542u64,
            "status": status, "model": "gpt-5-2025-08-07", "output": [], "usage": null});
        object.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        object
    }

    fn created() -> Value {
        json!({"type": "response.created", "response": response_object("in_progress", json!({}))})
    }

    fn completed() -> Value {
        json!({"type": "response.completed", "response": response_object("completed", json!({"usage": {
            "input_tokens": 328, "input_tokens_details": {"cached_tokens": 128},
            "output_tokens": 52, "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 380}}))})
    }

    fn added(output_index: usize, item: Value) -> Value {
        json!({"type": "response.output_item.added", "output_index": output_index, "item": item})
    }

    fn done(output_index: usize, item: Value) -> Value {
        json!({"type": "response.output_item.done", "output_index": output_index, "item": item})
    }

    fn text_delta(output_index: usize, delta: &str) -> Value {
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": output_index,
            "content_index": 0, "delta": delta, "logprobs": []})
    }

    fn arguments_delta(output_index: usize, delta: &str) -> Value {
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": output_index, "delta": delta})
    }

    fn function_call(id: &str, call_id: &str, name: &str, arguments: &str, status: &str) -> Value {
        json!({"type": "function_call", "id": id, "call_id": call_id, "name": name, "arguments": arguments, "status": status})
    }

    async fn decode(body: &str) -> Decoded {
        decode_all_splits(ResponsesStreamDecoder::new, body, true).await
    }

    #[tokio::test]
    async fn reasoning_text_and_two_parallel_function_calls() {
        let reasoning_done = json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB", "summary": [
            {"type": "summary_text", "text": "**Weather**"}, {"type": "summary_text", "text": "Two cities."}]});
        let events = [
            created(),
            json!({"type": "response.in_progress", "response": response_object("in_progress", json!({}))}),
            added(0, json!({"type": "reasoning", "id": "rs_1", "summary": []})),
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "**Weather**"}),
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0, "summary_index": 1, "part": {"type": "summary_text", "text": ""}}),
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 1, "delta": "Two cities."}),
            done(0, reasoning_done.clone()),
            added(
                1,
                json!({"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}),
            ),
            json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1, "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": ""}}),
            text_delta(1, "Checking "),
            text_delta(1, "both — ☀️."),
            json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 1, "content_index": 0, "text": "Checking both — ☀️."}),
            done(
                1,
                json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "annotations": [], "text": "Checking both — ☀️."}]}),
            ),
            added(2, function_call("fc_1", "call_a", "get_weather", "", "in_progress")),
            arguments_delta(2, "{\"city\": \"Pa"),
            arguments_delta(2, "ris\"}"),
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 2, "arguments": "{\"city\": \"Paris\"}"}),
            done(2, function_call("fc_1", "call_a", "get_weather", "{\"city\": \"Paris\"}", "completed")),
            added(3, function_call("fc_2", "call_b", "get_weather", "", "in_progress")),
            // No deltas: the arguments arrive whole with `.done`.
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_2", "output_index": 3, "arguments": "{\"city\": \"Oslo\"}"}),
            done(3, function_call("fc_2", "call_b", "get_weather", "{\"city\": \"Oslo\"}", "completed")),
            added(4, json!({"type": "web_search_call", "id": "ws_1", "status": "in_progress"})),
            done(
                4,
                json!({"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search"}}),
            ),
            completed(),
        ];
        let decoded = decode(&sse(&events)).await;
        let response = decoded.result.unwrap();
        // The non-streamed body: the final response with every finished item.
        let mut whole = completed()["response"].clone();
        whole["output"] = events
            .iter()
            .filter(|event| event["type"] == "response.output_item.done")
            .map(|event| event["item"].clone())
            .collect();
        let expected = parse(&serde_json::to_vec(&whole).unwrap()).unwrap();
        assert_eq!(response, expected);
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.id.as_deref(), Some("resp_1"));
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 200,
                output_tokens: 52,
                cache_read_tokens: 128,
                cache_write_tokens: 0,
                reasoning_tokens: 20
            }
        );
        let ContentBlock::Reasoning(reasoning) = &response.content[0] else { panic!("{:?}", response.content) };
        assert_eq!(reasoning.summary, ["**Weather**", "Two cities."]);
        assert!(decoded.events.contains(&StreamEvent::ReasoningDelta { index: 0, text: "\n\n".into() }));
        assert!(
            decoded
                .events
                .contains(&StreamEvent::ToolCallArgumentsDelta { index: 3, fragment: "{\"city\": \"Oslo\"}".into() })
        );
    }

    /// Open-weight reasoning models (gpt-oss behind a Responses server)
    /// stream their reasoning as `reasoning_text` content parts.
    #[tokio::test]
    async fn reasoning_text_parts_stream_as_reasoning() {
        let item = json!({"type": "reasoning", "id": "rs_1", "summary": [],
            "content": [{"type": "reasoning_text", "text": "Think first."}]});
        let events = [
            created(),
            added(0, json!({"type": "reasoning", "id": "rs_1", "summary": [], "content": []})),
            json!({"type": "response.content_part.added", "item_id": "rs_1", "output_index": 0, "content_index": 0,
                "part": {"type": "reasoning_text", "text": ""}}),
            json!({"type": "response.reasoning_text.delta", "item_id": "rs_1", "output_index": 0, "content_index": 0,
                "delta": "Think "}),
            json!({"type": "response.reasoning_text.delta", "item_id": "rs_1", "output_index": 0, "content_index": 0,
                "delta": "first."}),
            done(0, item.clone()),
            completed(),
        ];
        let response = decode(&sse(&events)).await.result.unwrap();
        let mut whole = completed()["response"].clone();
        whole["output"] = json!([item]);
        assert_eq!(response, parse(&serde_json::to_vec(&whole).unwrap()).unwrap());
        assert_eq!(response.reasoning_text(), "Think first.");
    }

    /// Text a server sends only in the done events (no deltas, or not all
    /// of it) still reaches the response.
    #[tokio::test]
    async fn text_sent_only_in_done_events_is_delivered() {
        let item = json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello there", "annotations": []}]});
        let events = [
            created(),
            added(
                0,
                json!({"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}),
            ),
            json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}}),
            text_delta(0, "Hello"),
            json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                "text": "Hello there"}),
            done(0, item.clone()),
            completed(),
        ];
        let response = decode(&sse(&events)).await.result.unwrap();
        let mut whole = completed()["response"].clone();
        whole["output"] = json!([item]);
        assert_eq!(response, parse(&serde_json::to_vec(&whole).unwrap()).unwrap());
        assert_eq!(response.text(), "Hello there");
    }

    #[tokio::test]
    async fn incomplete_refused_and_unstreamed_messages() {
        let events = [
            created(),
            added(0, json!({"type": "message", "id": "msg_1", "role": "assistant", "content": []})),
            json!({"type": "response.content_part.added", "output_index": 0, "content_index": 0, "part": {"type": "refusal", "refusal": ""}}),
            json!({"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "I can't help."}),
            done(
                0,
                json!({"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help."}]}),
            ),
            completed(),
        ];
        let response = decode(&sse(&events)).await.result.unwrap();
        assert_eq!((response.text(), response.stop_reason), ("I can't help.".to_owned(), StopReason::Refusal));

        // A message that arrives only with its `.done`, then the token limit.
        let events = [
            created(),
            added(0, json!({"type": "message", "id": "msg_1", "role": "assistant", "content": []})),
            done(
                0,
                json!({"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Partial"}]}),
            ),
            json!({"type": "response.incomplete", "response": response_object("incomplete", json!({
                "incomplete_details": {"reason": "max_output_tokens"}, "usage": {"input_tokens": 5, "output_tokens": 9}}))}),
        ];
        let response = decode(&sse(&events)).await.result.unwrap();
        assert_eq!((response.text(), response.stop_reason), ("Partial".to_owned(), StopReason::MaxTokens));
        assert_eq!(response.usage, Usage::new(5, 9));
    }

    #[tokio::test]
    async fn failures_and_error_events_are_typed_errors() {
        let failed = json!({"type": "response.failed", "response": response_object("failed", json!({
            "error": {"code": "server_error", "message": "The model failed to generate a response."}}))});
        let error = decode(&sse(&[created(), failed])).await.result.unwrap_err();
        assert_eq!((error.kind(), error.error_type()), (ModelErrorKind::Server, Some("server_error")));
        let event =
            json!({"type": "error", "code": "rate_limit_exceeded", "message": "Rate limit reached", "param": null});
        let error = decode(&sse(&[created(), event])).await.result.unwrap_err();
        assert_eq!((error.kind(), error.message()), (ModelErrorKind::RateLimited, "Rate limit reached"));
    }

    #[tokio::test]
    async fn broken_streams_are_typed_errors() {
        let message = added(0, json!({"type": "message", "id": "msg_1", "role": "assistant", "content": []}));
        let cases = [
            (
                format!("{}event: response.output_text.delta\ndata: {{\"type\": \"response.out\n\n", sse(&[created()])),
                ModelErrorKind::MalformedResponse,
            ),
            // A delta for an item that was never added.
            (sse(&[created(), text_delta(3, "x")]), ModelErrorKind::MalformedResponse),
            (sse(&[created(), arguments_delta(0, "{")]), ModelErrorKind::MalformedResponse),
            // Arguments for a message.
            (sse(&[created(), message.clone(), arguments_delta(0, "{")]), ModelErrorKind::MalformedResponse),
            // An item before response.created.
            (sse(std::slice::from_ref(&message)), ModelErrorKind::MalformedResponse),
            // Cut off before response.completed.
            (sse(&[created(), message, text_delta(0, "Hel")]), ModelErrorKind::Connection),
        ];
        for (body, kind) in cases {
            let error = decode(&body).await.result.unwrap_err();
            assert_eq!(error.kind(), kind, "{body}\n{error}");
        }
    }
}
