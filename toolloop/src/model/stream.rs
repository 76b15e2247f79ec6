//! A model's response as a stream of neutral events, and the accumulator
//! that folds those events back into the response a non-streamed call returns.
//!
//! Every wire format (Anthropic Messages, OpenAI Chat Completions and
//! Responses, Ollama) decodes its stream into [`StreamEvent`]s; the run loop
//! forwards them to the user and feeds them to a [`ResponseAccumulator`],
//! whose [`finish`](ResponseAccumulator::finish) is the [`ModelResponse`]
//! that `complete` would have returned for the same answer
//! ([`ModelResponse::from_stream`] folds a whole stream).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{ModelError, ModelErrorKind, ModelResponse};
use crate::message::{ContentBlock, ToolCall};
use crate::reasoning::Reasoning;
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// One piece of a streamed model response, in provider-neutral terms.
///
/// Content arrives in blocks, each identified by an `index`: the position of
/// the block in the finished response. Deltas with the same index extend the
/// same block; blocks are ordered by index, whatever order their events
/// arrive in; a text block, a reasoning block and a tool call never share an
/// index. Indices need not be contiguous.
///
/// A well-formed stream starts with [`Started`](Self::Started) and ends with
/// [`Finished`](Self::Finished); [`ModelResponse::from_stream`] checks the rest.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// The response began.
    Started {
        /// The model that answers, when the provider says.
        model: Option<String>,
        /// The provider that produces the response (see
        /// [`ModelResponse::provider`]).
        provider: Option<String>,
        /// The provider's id for the response, when it gives one (see
        /// [`ModelResponse::id`]).
        id: Option<String>,
    },
    /// More text for the text block at `index`. The first delta of a block
    /// may be empty: it opens the block.
    TextDelta {
        /// The block's position in the response.
        index: usize,
        /// The text to append.
        text: String,
    },
    /// More reasoning text (Anthropic `thinking`, OpenAI Responses reasoning
    /// summaries, `reasoning_content` from OpenAI-compatible servers, Ollama
    /// `thinking`) for the reasoning block at `index`.
    ReasoningDelta {
        /// The block's position in the response.
        index: usize,
        /// The reasoning text to append.
        text: String,
    },
    /// The reasoning block at `index` is complete: `reasoning` is the block
    /// exactly as the non-streamed response would hold it (text or summary,
    /// and the provider state that must be sent back unchanged: Anthropic's
    /// signature or redacted data, an OpenAI Responses item id and
    /// encrypted content). It replaces what the deltas showed. A reasoning
    /// block that never finishes is kept as the text of its deltas.
    ReasoningFinished {
        /// The block's position in the response.
        index: usize,
        /// The complete block.
        reasoning: Reasoning,
    },
    /// The model began a tool call.
    ToolCallStarted {
        /// The call's position in the response.
        index: usize,
        /// The provider's id for the call; its result must carry the same id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's arguments, as raw JSON text. The fragments
    /// joined so far parse with [`parse_partial_json`](crate::model::parse_partial_json)
    /// to show the arguments while they form.
    ToolCallArgumentsDelta {
        /// The call's position in the response.
        index: usize,
        /// The JSON text to append.
        fragment: String,
    },
    /// The tool call at `index` is complete.
    ToolCallFinished {
        /// The call's position in the response.
        index: usize,
        /// The complete arguments, when the provider sent them whole (Ollama
        /// sends a JSON object, not text): they are used exactly, instead of
        /// parsing the fragments.
        input: Option<Value>,
    },
    /// The tokens the response has used so far. Each usage event replaces
    /// the previous one; it does not add to it.
    Usage(Usage),
    /// The response is complete.
    Finished {
        /// Why the model stopped.
        stop_reason: StopReason,
    },
}

/// Folds [`StreamEvent`]s into the [`ModelResponse`] the same answer gives
/// when it is not streamed: text and reasoning blocks, tool calls with their
/// parsed arguments, stop reason, usage, model and provider.
///
/// Tool call arguments are parsed as the providers parse them: empty text is
/// an empty object, text that is not valid JSON is kept as a JSON string (see
/// [`ToolCall::input`]), so executing the call reports the problem to the model.
///
/// Text and reasoning deltas open their block; events that break the
/// stream's rules (a tool call delta before the call started, a block whose
/// kind changes, anything after
/// [`Finished`](StreamEvent::Finished)) are errors of kind
/// [`ModelErrorKind::MalformedResponse`]. [`ModelResponse::from_stream`]
/// is its public face.
#[derive(Clone, Debug, Default)]
pub(crate) struct ResponseAccumulator {
    model: Option<String>,
    provider: Option<String>,
    id: Option<String>,
    /// Blocks in the order they opened; usually in index order already, and
    /// the block receiving deltas is usually the last one.
    blocks: Vec<(usize, Block)>,
    usage: Usage,
    stop_reason: Option<StopReason>,
}

#[derive(Clone, Debug)]
enum Block {
    Text(String),
    Reasoning(PendingReasoning),
    ToolCall(PendingCall),
}

/// A reasoning block while it streams: the text of its deltas, then the
/// complete block once it finishes.
#[derive(Clone, Debug, Default)]
struct PendingReasoning {
    text: String,
    finished: Option<Reasoning>,
}

impl PendingReasoning {
    fn into_reasoning(self) -> Reasoning {
        self.finished.unwrap_or_else(|| Reasoning::from_text(self.text))
    }
}

impl Block {
    fn kind(&self) -> &'static str {
        match self {
            Self::Text(_) => "text",
            Self::Reasoning(_) => "reasoning",
            Self::ToolCall(_) => "tool call",
        }
    }
}

#[derive(Clone, Debug)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
    input: Option<Value>,
    finished: bool,
}

impl PendingCall {
    fn to_call(&self) -> ToolCall {
        let input = match &self.input {
            Some(input) => input.clone(),
            None => tool_input_from_text(&self.arguments),
        };
        ToolCall { id: self.id.clone(), name: self.name.clone(), input }
    }
}

impl ResponseAccumulator {
    /// An accumulator that has seen nothing.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds one event.
    pub(crate) fn push(&mut self, event: &StreamEvent) -> Result<(), ModelError> {
        if self.stop_reason.is_some() {
            return Err(self.malformed("an event arrived after the response finished"));
        }
        match event {
            StreamEvent::Started { model, provider, id } => {
                self.model.clone_from(model);
                self.provider.clone_from(provider);
                self.id.clone_from(id);
            }
            StreamEvent::TextDelta { index, text } => match self.block(*index, || Block::Text(String::new())) {
                Block::Text(block) => block.push_str(text),
                other => {
                    let kind = other.kind();
                    return Err(self.wrong_kind(*index, "text", kind));
                }
            },
            StreamEvent::ReasoningDelta { index, text } => match self.reasoning_block(*index) {
                Ok(part) => part.text.push_str(text),
                Err(kind) => return Err(self.wrong_kind(*index, "reasoning", kind)),
            },
            StreamEvent::ReasoningFinished { index, reasoning } => match self.reasoning_block(*index) {
                Ok(part) => part.finished = Some(reasoning.clone()),
                Err(kind) => return Err(self.wrong_kind(*index, "reasoning", kind)),
            },
            StreamEvent::ToolCallStarted { index, id, name } => {
                if self.position(*index).is_some() {
                    return Err(self.malformed(&format!("tool call {index} started twice")));
                }
                let call = PendingCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                    input: None,
                    finished: false,
                };
                self.blocks.push((*index, Block::ToolCall(call)));
            }
            StreamEvent::ToolCallArgumentsDelta { index, fragment } => {
                let call = self.started_call(*index)?;
                call.arguments.push_str(fragment);
            }
            StreamEvent::ToolCallFinished { index, input } => {
                let call = self.started_call(*index)?;
                if input.is_some() {
                    call.input.clone_from(input);
                }
                call.finished = true;
            }
            StreamEvent::Usage(usage) => self.usage = *usage,
            StreamEvent::Finished { stop_reason } => self.stop_reason = Some(stop_reason.clone()),
        }
        Ok(())
    }

    /// Adds every event of `stream`, then finishes: the response a
    /// non-streamed call returns. The first error, from the stream or from
    /// its events, ends it, carrying the usage reported before it
    /// ([`ModelError::usage`]).
    pub(crate) async fn collect<S>(mut self, stream: S) -> Result<ModelResponse, ModelError>
    where
        S: futures_util::Stream<Item = Result<StreamEvent, ModelError>>,
    {
        use futures_util::StreamExt as _;

        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            let pushed = event.and_then(|event| self.push(&event));
            if let Err(error) = pushed {
                return Err(self.with_usage_seen(error));
            }
        }
        self.finish()
    }

    /// `error` with the usage reported so far, unless it has its own or
    /// none was reported.
    pub(crate) fn with_usage_seen(&self, error: ModelError) -> ModelError {
        if error.usage().is_some() || self.usage == Usage::default() {
            return error;
        }
        error.with_usage(self.usage)
    }

    /// Whether [`Finished`](StreamEvent::Finished) has arrived.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // only the HTTP providers use it
    pub(crate) fn is_finished(&self) -> bool {
        self.stop_reason.is_some()
    }

    /// The tool call at `index`, once [`ToolCallFinished`](StreamEvent::ToolCallFinished)
    /// has arrived for it, with its arguments parsed as in the finished response.
    pub(crate) fn tool_call(&self, index: usize) -> Option<ToolCall> {
        match self.find(index)? {
            Block::ToolCall(call) if call.finished => Some(call.to_call()),
            _ => None,
        }
    }

    /// The arguments of the tool call at `index` as far as they have arrived,
    /// parsed with [`parse_partial_json`](crate::model::parse_partial_json): what a
    /// user interface shows while the call forms.
    pub(crate) fn partial_input(&self, index: usize) -> Option<Value> {
        match self.find(index)? {
            Block::ToolCall(PendingCall { input: Some(input), .. }) => Some(input.clone()),
            Block::ToolCall(call) => super::partial_json::parse_partial_json(&call.arguments),
            _ => None,
        }
    }

    /// How long the argument text of the tool call at `index` is so far.
    pub(crate) fn arguments_len(&self, index: usize) -> usize {
        match self.find(index) {
            Some(Block::ToolCall(call)) => call.arguments.len(),
            _ => 0,
        }
    }

    /// The reasoning text streamed so far for the block at `index`.
    #[cfg(test)]
    fn reasoning_text(&self, index: usize) -> Option<&str> {
        match self.find(index)? {
            Block::Reasoning(part) => Some(&part.text),
            _ => None,
        }
    }

    /// The response, once [`Finished`](StreamEvent::Finished) has arrived.
    /// Tool calls still open when the response finished are closed with the
    /// arguments received. A stream that ended before it is a `Connection`
    /// error carrying the usage reported so far: the provider bills it.
    pub(crate) fn finish(mut self) -> Result<ModelResponse, ModelError> {
        let Some(stop_reason) = self.stop_reason.take() else {
            let error = ModelError::new(
                ModelErrorKind::Connection,
                self.provider_name(),
                "the stream ended before the response finished",
            );
            return Err(self.with_usage_seen(error));
        };
        // Stable: two blocks never share an index, so this is the index order.
        self.blocks.sort_by_key(|(index, _)| *index);
        let content = self
            .blocks
            .into_iter()
            .map(|(_, block)| match block {
                Block::Text(text) => ContentBlock::Text { text },
                Block::ToolCall(call) => ContentBlock::ToolCall(call.to_call()),
                Block::Reasoning(part) => ContentBlock::Reasoning(part.into_reasoning()),
            })
            .collect();
        let mut response = ModelResponse::new(content).with_stop_reason(stop_reason).with_usage(self.usage);
        response.model = self.model;
        response.provider = self.provider;
        response.id = self.id;
        Ok(response)
    }

    fn position(&self, index: usize) -> Option<usize> {
        self.blocks.iter().rposition(|(i, _)| *i == index)
    }

    fn find(&self, index: usize) -> Option<&Block> {
        self.position(index).map(|at| &self.blocks[at].1)
    }

    /// The block at `index`, opened with `open` when it is new.
    fn block(&mut self, index: usize, open: impl FnOnce() -> Block) -> &mut Block {
        let at = if let Some(at) = self.position(index) {
            at
        } else {
            self.blocks.push((index, open()));
            self.blocks.len() - 1
        };
        &mut self.blocks[at].1
    }

    /// The reasoning block at `index` (opened when new), or the kind of the
    /// block that holds the index instead.
    fn reasoning_block(&mut self, index: usize) -> Result<&mut PendingReasoning, &'static str> {
        let open = || Block::Reasoning(PendingReasoning::default());
        match self.block(index, open) {
            Block::Reasoning(part) => Ok(part),
            other => Err(other.kind()),
        }
    }

    /// The open tool call at `index`.
    fn started_call(&mut self, index: usize) -> Result<&mut PendingCall, ModelError> {
        let Some(at) = self.position(index) else {
            return Err(self.malformed(&format!("tool call {index} was never started")));
        };
        match &self.blocks[at].1 {
            Block::ToolCall(call) if call.finished => {
                return Err(self.malformed(&format!("tool call {index} already finished")));
            }
            Block::ToolCall(_) => {}
            other => return Err(self.wrong_kind(index, "tool call", other.kind())),
        }
        let Block::ToolCall(call) = &mut self.blocks[at].1 else { unreachable!("checked above") };
        Ok(call)
    }

    fn wrong_kind(&self, index: usize, expected: &str, found: &str) -> ModelError {
        self.malformed(&format!("a {expected} event for block {index}, which is a {found} block"))
    }

    fn malformed(&self, message: &str) -> ModelError {
        ModelError::new(ModelErrorKind::MalformedResponse, self.provider_name(), message.to_owned())
    }

    fn provider_name(&self) -> Cow<'static, str> {
        Cow::Owned(self.provider.clone().unwrap_or_else(|| "model".to_owned()))
    }
}

/// Reads `events` up to their first content (text, reasoning, a tool call,
/// the end): returns what came before it (`Started`, `Usage`, deltas that
/// add nothing, as the empty text delta that opens a block) with that first
/// content event, or the failure that came before any content — when
/// nothing of the answer has been shown, and the call may be made again or
/// elsewhere. The failure carries the usage reported before it.
pub(crate) async fn until_content<S>(events: &mut S) -> Result<Vec<StreamEvent>, ModelError>
where
    S: futures_util::Stream<Item = Result<StreamEvent, ModelError>> + Unpin,
{
    use futures_util::StreamExt as _;

    let mut held = Vec::new();
    let mut usage = None;
    loop {
        match events.next().await {
            Some(Ok(event)) if !is_content(&event) => {
                if let StreamEvent::Usage(reported) = &event {
                    usage = Some(*reported);
                }
                held.push(event);
            }
            Some(Err(error)) => {
                return Err(match usage {
                    Some(usage) if error.usage().is_none() => error.with_usage(usage),
                    _ => error,
                });
            }
            Some(Ok(event)) => {
                held.push(event);
                return Ok(held);
            }
            None => return Ok(held),
        }
    }
}

/// Whether `event` shows something of the answer: not the start, a usage
/// report, or a delta with nothing in it.
fn is_content(event: &StreamEvent) -> bool {
    match event {
        StreamEvent::Started { .. } | StreamEvent::Usage(_) => false,
        StreamEvent::TextDelta { text, .. } | StreamEvent::ReasoningDelta { text, .. } => !text.is_empty(),
        StreamEvent::ToolCallArgumentsDelta { fragment, .. } => !fragment.is_empty(),
        _ => true,
    }
}

/// A tool call's arguments from the text a provider streamed, parsed as the
/// providers parse arguments sent as text: empty text (tools without
/// parameters) is an empty object, and text that is not valid JSON is kept as
/// a JSON string.
pub(crate) fn tool_input_from_text(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// The arguments of a tool call as the text a provider would stream: raw
/// text kept as a JSON string goes out as that text, anything else as JSON.
fn tool_input_as_text(input: &Value) -> Cow<'_, str> {
    match input {
        Value::String(raw) => Cow::Borrowed(raw),
        other => Cow::Owned(other.to_string()),
    }
}

/// The events a model streaming `response` in pieces of at most
/// `chunk_size` characters (at least one) would send. Folded by
/// [`ModelResponse::from_stream`], they give back `response` exactly; test
/// models use them to stream scripted responses. Tool results, which models
/// do not produce, are left out.
///
/// ```
/// use toolloop::{ModelError, ModelResponse, testing::chunk_response};
///
/// # tokio_test::block_on(async {
/// let response = ModelResponse::from_text("Hello, world");
/// let events = chunk_response(&response, 5);
/// assert_eq!(events.len(), 6); // started, 3 text deltas, usage, finished
/// let stream = futures_util::stream::iter(events.into_iter().map(Ok::<_, ModelError>));
/// assert_eq!(ModelResponse::from_stream(stream).await?, response);
/// # Ok::<(), ModelError>(())
/// # }).unwrap();
/// ```
pub fn chunk_response(response: &ModelResponse, chunk_size: usize) -> Vec<StreamEvent> {
    let chunk_size = chunk_size.max(1);
    let mut events = vec![StreamEvent::Started {
        model: response.model.clone(),
        provider: response.provider.clone(),
        id: response.id.clone(),
    }];
    for (index, block) in response.content.iter().enumerate() {
        match block {
            ContentBlock::Text { text } => {
                // An empty block still gets its opening delta.
                let mut pieces = chunks(text, chunk_size).peekable();
                if pieces.peek().is_none() {
                    events.push(StreamEvent::TextDelta { index, text: String::new() });
                }
                events.extend(pieces.map(|piece| StreamEvent::TextDelta { index, text: piece.to_owned() }));
            }
            ContentBlock::ToolCall(call) => {
                events.push(StreamEvent::ToolCallStarted { index, id: call.id.clone(), name: call.name.clone() });
                let arguments = tool_input_as_text(&call.input);
                events.extend(
                    chunks(&arguments, chunk_size)
                        .map(|piece| StreamEvent::ToolCallArgumentsDelta { index, fragment: piece.to_owned() }),
                );
                // The input itself, so that arguments kept as raw text that
                // happens to be JSON (or is empty) come back as they were.
                events.push(StreamEvent::ToolCallFinished { index, input: Some(call.input.clone()) });
            }
            ContentBlock::Reasoning(reasoning) => {
                let text = reasoning.visible_text();
                events.extend(
                    chunks(&text, chunk_size)
                        .map(|piece| StreamEvent::ReasoningDelta { index, text: piece.to_owned() }),
                );
                events.push(StreamEvent::ReasoningFinished { index, reasoning: reasoning.clone() });
            }
            ContentBlock::ToolResult(_) => {}
        }
    }
    events.push(StreamEvent::Usage(response.usage));
    events.push(StreamEvent::Finished { stop_reason: response.stop_reason.clone() });
    events
}

/// `text` in pieces of at most `size` characters.
fn chunks(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = rest.char_indices().nth(size).map_or(rest.len(), |(at, _)| at);
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ResponseAccumulator, StreamEvent, chunk_response, chunks, tool_input_from_text};
    use crate::message::{ContentBlock, ToolCall};
    use crate::model::{ModelErrorKind, ModelResponse};
    use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};
    use crate::stop_reason::StopReason;
    use crate::usage::Usage;

    fn accumulate(events: &[StreamEvent]) -> Result<ModelResponse, crate::ModelError> {
        let mut accumulator = ResponseAccumulator::new();
        for event in events {
            accumulator.push(event)?;
        }
        accumulator.finish()
    }

    fn text(index: usize, text: &str) -> StreamEvent {
        StreamEvent::TextDelta { index, text: text.into() }
    }

    fn finished(stop_reason: StopReason) -> StreamEvent {
        StreamEvent::Finished { stop_reason }
    }

    #[test]
    fn blocks_come_out_in_index_order_with_arguments_parsed() {
        let events = [
            StreamEvent::Started { model: Some("m".into()), provider: Some("p".into()), id: None },
            StreamEvent::ToolCallStarted { index: 3, id: "b".into(), name: "t".into() },
            StreamEvent::ToolCallStarted { index: 2, id: "a".into(), name: "t".into() },
            text(0, "Hel"),
            StreamEvent::ToolCallArgumentsDelta { index: 2, fragment: "{\"x\":".into() },
            StreamEvent::ToolCallArgumentsDelta { index: 3, fragment: "{\"y\"".into() },
            text(0, "lo"),
            StreamEvent::ToolCallArgumentsDelta { index: 2, fragment: " 1}".into() },
            StreamEvent::ReasoningDelta { index: 1, text: "hmm".into() },
            StreamEvent::ToolCallFinished { index: 2, input: None },
            StreamEvent::Usage(Usage::new(1, 2)),
            StreamEvent::Usage(Usage::new(5, 9)),
            finished(StopReason::ToolUse),
        ];
        let mut accumulator = ResponseAccumulator::new();
        for event in &events {
            accumulator.push(event).unwrap();
        }
        assert_eq!(accumulator.tool_call(2).unwrap().input, json!({"x": 1}));
        assert_eq!(accumulator.tool_call(3), None, "not finished yet");
        assert_eq!(accumulator.partial_input(3), Some(json!({})));
        assert_eq!(accumulator.reasoning_text(1), Some("hmm"));
        let response = accumulator.finish().unwrap();
        let expected = ModelResponse::new(vec![
            ContentBlock::text("Hello"),
            ContentBlock::Reasoning(Reasoning::from_text("hmm")),
            ContentBlock::ToolCall(ToolCall::new("a", "t", json!({"x": 1}))),
            ContentBlock::ToolCall(ToolCall::new("b", "t", json!("{\"y\""))),
        ])
        .with_usage(Usage::new(5, 9))
        .with_model("m")
        .with_provider("p");
        assert_eq!(response, expected);
    }

    #[test]
    fn broken_streams_are_typed_errors() {
        let malformed = |events: &[StreamEvent]| accumulate(events).unwrap_err().kind();
        let start = |index| StreamEvent::ToolCallStarted { index, id: "a".into(), name: "t".into() };
        let delta = |index| StreamEvent::ToolCallArgumentsDelta { index, fragment: "{}".into() };
        assert_eq!(malformed(&[delta(0)]), ModelErrorKind::MalformedResponse);
        assert_eq!(malformed(&[start(0), start(0)]), ModelErrorKind::MalformedResponse);
        assert_eq!(malformed(&[text(0, "a"), delta(0)]), ModelErrorKind::MalformedResponse);
        assert_eq!(malformed(&[start(0), text(0, "a")]), ModelErrorKind::MalformedResponse);
        let finish = StreamEvent::ToolCallFinished { index: 0, input: None };
        assert_eq!(malformed(&[start(0), finish.clone(), delta(0)]), ModelErrorKind::MalformedResponse);
        assert_eq!(malformed(&[finished(StopReason::EndTurn), text(0, "late")]), ModelErrorKind::MalformedResponse);
        let cut = accumulate(&[text(0, "cut")]).unwrap_err();
        assert_eq!(cut.kind(), ModelErrorKind::Connection);
        assert!(cut.message().contains("before the response finished"), "{cut}");
    }

    #[test]
    fn arguments_parse_like_the_providers_parse_them() {
        assert_eq!(tool_input_from_text(""), json!({}));
        assert_eq!(tool_input_from_text("  "), json!({}));
        assert_eq!(tool_input_from_text("{\"a\":[1]}"), json!({"a": [1]}));
        assert_eq!(tool_input_from_text("{\"a\":"), json!("{\"a\":"));
    }

    #[test]
    fn chunks_split_on_characters() {
        assert_eq!(chunks("héllo", 2).collect::<Vec<_>>(), ["hé", "ll", "o"]);
        assert_eq!(chunks("", 2).count(), 0);
    }

    #[test]
    fn chunked_responses_round_trip() {
        let signed = OpaqueReasoning::new("anthropic", None, ReasoningState::Signed { signature: "sig".into() });
        let redacted = OpaqueReasoning::new("anthropic", None, ReasoningState::Redacted { data: "opaque".into() });
        let response = ModelResponse::new(vec![
            ContentBlock::Reasoning(Reasoning::with_opaque(vec!["think, then".into()], Vec::new(), signed)),
            ContentBlock::Reasoning(Reasoning::with_opaque(Vec::new(), Vec::new(), redacted)),
            ContentBlock::text(""),
            ContentBlock::text("two blocks"),
            ContentBlock::ToolCall(ToolCall::new("a", "t", json!("{}"))),
            ContentBlock::ToolCall(ToolCall::new("b", "t", json!({"q": 1.5e-300}))),
        ])
        .with_usage(Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
            reasoning_tokens: 1,
        })
        .with_stop_reason(StopReason::MaxTokens)
        .with_model("m");
        for size in [0, 1, 3, usize::MAX] {
            assert_eq!(accumulate(&chunk_response(&response, size)).unwrap(), response, "{size}");
        }
    }
}
