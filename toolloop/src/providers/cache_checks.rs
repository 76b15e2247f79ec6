//! Checks every wire format runs on its request bodies: built with a run's
//! body cache, they are byte for byte the bodies built from scratch,
//! and the bodies of serialising the whole request at once; and no change to
//! the messages that the public API allows makes the cache send stale bytes.

use serde_json::{Value, json};

use super::http::{HttpModel, WireFormat};
use crate::conversation::{Conversation, is_blank};
use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
use crate::model::{BodyCache, ModelRequest};
use crate::tool::ToolDefinition;

fn assistant(content: Vec<ContentBlock>) -> Message {
    Message::new(Role::Assistant, content)
}

fn call(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall::new(id, name, input))
}

/// Conversation shapes, each grown one message at a time by the checks.
pub(crate) fn shapes() -> Vec<(&'static str, Vec<Message>)> {
    vec![
        ("text", vec![Message::user("hi"), Message::assistant("hello"), Message::user("how are you?")]),
        (
            "tool calls",
            vec![
                Message::user("weather in Paris?"),
                assistant(vec![ContentBlock::text("checking"), call("c1", "weather", json!({"city": "Paris"}))]),
                Message::from_tool_results([ToolResult::success("c1", "sunny")]),
                Message::assistant("It is sunny."),
                Message::user("and tomorrow?"),
                assistant(vec![call("c2", "weather", json!({"city": "Paris", "day": 1}))]),
                Message::from_tool_results([ToolResult::success("c2", "rain")]),
            ],
        ),
        (
            "parallel calls with error results",
            vec![
                Message::user("look up a, b and c"),
                assistant(vec![
                    call("p1", "lookup", json!({"key": "a"})),
                    call("p2", "lookup", json!({"key": "b"})),
                    call("p3", "lookup", json!("{not json")),
                ]),
                Message::from_tool_results([
                    ToolResult::success("p1", "1"),
                    ToolResult::failure("p2", FailureKind::TimedOut, "timed out"),
                    ToolResult::failure("p3", FailureKind::InvalidArguments, "bad json"),
                ]),
                assistant(vec![call("p4", "lookup", json!("{\"key\": \"d\"}"))]),
                Message::from_tool_results([ToolResult::failure("p4", FailureKind::Denied, "")]),
                Message::assistant("done"),
            ],
        ),
        (
            "consecutive same-role messages and feedback after results",
            vec![
                Message::user("first"),
                Message::user(" \n"),
                Message::user("second"),
                assistant(vec![]),
                Message::assistant(""),
                assistant(vec![ContentBlock::text("calling"), call("f1", "t", json!({}))]),
                Message::assistant("and more"),
                Message::from_tool_results([ToolResult::success("f1", "ok")]),
                Message::user("please continue"),
                Message::from_tool_results([ToolResult::failure("f9", FailureKind::NotExecuted, "orphan")]),
                Message::user("are you done?"),
                Message::assistant("yes"),
            ],
        ),
        (
            "blocks out of place and text to escape",
            vec![
                Message::new(Role::User, vec![call("u1", "t", json!({"q": "\"quoted\""}))]),
                assistant(vec![ContentBlock::ToolResult(ToolResult::success("u1", "in the wrong turn"))]),
                Message::user("tab\t, newline\n, quote \", backslash \\, bell \u{7}, emoji 🦀, é"),
                assistant(vec![call("e1", "t", json!({"nested": {"list": [1, 2.5, null, true], "s": "\u{0}"}}))]),
                Message::from_tool_results([ToolResult::success("e1", "{\"json\": \"as text\"}")]),
            ],
        ),
        (
            "ids reused and results before calls",
            vec![
                Message::user("go"),
                Message::from_tool_results([ToolResult::success("r1", "early")]),
                assistant(vec![call("r1", "first", json!({}))]),
                Message::from_tool_results([ToolResult::success("r1", "answer")]),
                assistant(vec![call("r1", "second", json!({}))]),
                Message::from_tool_results([ToolResult::success("r1", "again")]),
            ],
        ),
    ]
}

/// Conversations drawn from a palette of messages by a fixed-seed generator:
/// any order of roles, calls, results and text, including shapes no run produces.
pub(crate) fn random_shapes() -> Vec<(&'static str, Vec<Message>)> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |bound: usize| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(state >> 33).unwrap() % bound
    };
    (0..60)
        .map(|_| {
            let length = 1 + next(14);
            let messages = (0..length)
                .map(|index| {
                    let id = format!("r{}", next(4));
                    match next(7) {
                        0 => Message::user(format!("user {index}")),
                        1 => Message::assistant(if next(3) == 0 { String::new() } else { format!("text {index}") }),
                        2 => assistant(vec![call(&id, "lookup", json!({"key": index}))]),
                        3 => assistant(vec![
                            ContentBlock::text("two at once"),
                            call(&id, "lookup", json!({"key": "a"})),
                            call(&format!("{id}b"), "other", json!("{raw")),
                        ]),
                        4 => Message::from_tool_results([ToolResult::success(&id, format!("result {index}"))]),
                        5 => Message::from_tool_results([
                            ToolResult::failure(&id, FailureKind::ToolFailed, "failed"),
                            ToolResult::success(format!("{id}b"), ""),
                        ]),
                        _ => Message::user(" "),
                    }
                })
                .collect();
            ("random", messages)
        })
        .collect()
}

/// A tool definition for the requests.
pub(crate) fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "lookup".into(),
        description: "Look a key up.".into(),
        input_schema: json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}),
        strict_input_schema: Some(json!({"type": "object", "properties": {"key": {"type": "string"}},
            "required": ["key"], "additionalProperties": false})),
        timeout: None,
    }]
}

/// The wire messages of every run of `messages`, collected as values rather
/// than rendered to bytes: for the references the cached bodies are
/// compared with. `render` is given a run, the messages up to its end, and
/// where to put the run's wire messages.
pub(crate) fn wire_messages<'a, T>(
    messages: &'a [Message],
    mut render: impl FnMut(
        &'a [Message],
        &'a [Message],
        &mut dyn FnMut(T) -> serde_json::Result<()>,
    ) -> serde_json::Result<()>,
) -> Vec<T> {
    let mut out = Vec::new();
    let mut end = 0;
    for run in messages.chunk_by(|a, b| a.role == b.role) {
        end += run.len();
        render(run, &messages[..end], &mut |message| {
            out.push(message);
            Ok(())
        })
        .unwrap();
    }
    out
}

/// Request settings the checks vary between requests, as a run's overrides would.
#[derive(Clone, Copy, Debug)]
struct Variant {
    index: usize,
}

impl Variant {
    /// The request for `messages` under this variant.
    fn request<'a>(self, messages: &'a [Message], tools: &'a [ToolDefinition]) -> ModelRequest<'a> {
        let request = ModelRequest::new(messages);
        match self.index % 4 {
            0 => request.with_system("You help.").with_tools(tools),
            1 => request.with_max_tokens(77).with_temperature(0.3).with_strict_tools(true).with_tools(tools),
            2 => request.with_system(""),
            _ => request.with_system("Be \"brief\".\n").with_temperature(1.0).with_tools(tools),
        }
    }
}

/// The two checks as tests of a format's module: `models` gives the
/// models to check (the first is checked for stale bytes), `reference`
/// the format's body built from scratch.
macro_rules! body_cache_tests {
    ($models:ident, $reference:ident) => {
        #[test]
        fn cached_bodies_are_byte_identical_and_render_each_settled_run_once() {
            $crate::providers::cache_checks::check_bodies(&$models(), &$reference);
        }

        #[test]
        fn no_change_to_the_messages_reaches_a_stale_body() {
            $crate::providers::cache_checks::check_no_stale_bytes(&$models()[0], &$reference);
        }
    };
}
pub(crate) use body_cache_tests;

/// The body of serialising the whole request at once, for `model` (whose
/// settings the reference reads) and `request`.
pub(crate) type Reference<'r, W> = &'r dyn Fn(&HttpModel<W>, &ModelRequest<'_>) -> Vec<u8>;

/// Grows every shape one message at a time on one conversation and, at each
/// step and under varied request settings, on each of `models` in turn (as
/// a run that switches models), checks that the body built with the cache
/// equals the body built without it and `reference`. Then checks that each
/// model rendered each settled run into the cache exactly once.
pub(crate) fn check_bodies<W: WireFormat>(models: &[HttpModel<W>], reference: Reference<'_, W>) {
    let tools = tools();
    for (name, messages) in shapes().into_iter().chain(random_shapes()) {
        // One run's cache, which its requests to every model share.
        let cache = BodyCache::default();
        let mut conversation = Conversation::new();
        for (step, message) in messages.into_iter().enumerate() {
            conversation.push(message);
            let copies = conversation.messages().to_vec();
            for index in [step, step + 1] {
                let variant = Variant { index };
                let model = &models[index % models.len()];
                let request = variant.request(conversation.messages(), &tools).with_body_cache(&cache);
                let expected = reference(model, &request);
                let cached = model.body(&request, false).unwrap().to_vec();
                assert_eq!(
                    String::from_utf8_lossy(&cached),
                    String::from_utf8_lossy(&expected),
                    "{name}, step {step}, variant {index}: cached body"
                );
                // Copies carry no stamp: rendered from scratch.
                assert_eq!(
                    model.body(&variant.request(&copies, &tools).with_body_cache(&cache), false).unwrap().to_vec(),
                    expected,
                    "{name}, step {step}"
                );
                serde_json::from_slice::<Value>(&cached).expect("the body is JSON");
            }
        }
        let runs: Vec<&[Message]> = conversation.messages().chunk_by(|a, b| a.role == b.role).collect();
        let open_run = runs.last().map_or(0, |run| run.len());
        for model in models {
            // A request offering tools renders every settled run into the cache.
            let request = Variant { index: 0 }.request(conversation.messages(), &tools).with_body_cache(&cache);
            assert_eq!(model.body(&request, false).unwrap().to_vec(), reference(model, &request));
            let stats = model.cache_stats(&cache, &conversation.messages()[0]);
            if conversation.messages().iter().any(|message| is_blank(message, W::PROVIDER)) {
                // Sent through a view that leaves it out, so rendered afresh.
                continue;
            }
            if runs.len() == 1 {
                assert_eq!(stats, None, "{name}: nothing settled, nothing kept");
            } else {
                let (rendered, covered) = stats.expect("the cache was used");
                assert_eq!(rendered, runs.len() - 1, "{name}: every settled run rendered exactly once");
                assert_eq!(covered, conversation.len() - open_run, "{name}: the cache covers every settled run");
            }
        }
    }
}

/// The ways the public API lets messages change, or look alike, checked
/// against one model: every body must equal `reference`.
pub(crate) fn check_no_stale_bytes<W: WireFormat>(model: &HttpModel<W>, reference: Reference<'_, W>) {
    let tools = tools();
    // One cache for every request below: stricter than a run, whose
    // requests all come from one conversation.
    let cache = BodyCache::default();
    let check = |messages: &[Message], what: &str| {
        for index in 0..4 {
            let request = Variant { index }.request(messages, &tools).with_body_cache(&cache);
            let body = model.body(&request, false).unwrap().to_vec();
            assert_eq!(
                String::from_utf8_lossy(&body),
                String::from_utf8_lossy(&reference(model, &request)),
                "{what}, variant {index}"
            );
        }
    };
    let (_, messages) = shapes().swap_remove(1);
    let conversation = Conversation::from(messages.clone());
    check(conversation.messages(), "the conversation");

    // A clone of the messages, changed (pub fields), then sent.
    let mut changed = conversation.messages().to_vec();
    changed[0].content = vec![ContentBlock::text("changed")];
    changed[2] = Message::from_tool_results([ToolResult::success("c1", "changed too")]);
    check(&changed, "changed copies");
    // ...and in a conversation of their own.
    check(Conversation::from(changed.clone()).messages(), "changed copies in a conversation");

    // A clone of the conversation, grown differently.
    let mut clone = conversation.clone();
    clone.push(Message::assistant("only in the clone"));
    check(clone.messages(), "a grown clone");
    check(conversation.messages(), "the original after its clone grew");

    // A round trip through serde, grown differently.
    let json = serde_json::to_string(&conversation).unwrap();
    let mut restored: Conversation = serde_json::from_str(&json).unwrap();
    restored.push(Message::user("only after restoring"));
    check(restored.messages(), "a restored conversation");

    // Slices of the conversation: later starts, shorter ends.
    for start in 0..conversation.len() {
        for end in start + 1..=conversation.len() {
            check(&conversation.messages()[start..end], &format!("messages {start}..{end}"));
        }
    }

    // Conversations dropped and made again with other content, possibly at
    // the same addresses.
    drop(clone);
    drop(restored);
    for round in 0..3 {
        let mut other = Conversation::new();
        for message in &messages {
            let mut message = message.clone();
            if let Some(ContentBlock::Text { text }) = message.content.first_mut() {
                *text = format!("{text} (round {round})");
            }
            other.push(message);
            check(other.messages(), &format!("round {round}"));
        }
    }

    // Tool calls of another provider: the view is flattened and rendered afresh.
    let mut foreign = Conversation::from(messages);
    foreign.push(
        Message::new(Role::Assistant, vec![call("x1", "weather", json!({"city": "Oslo"}))]).with_provider("elsewhere"),
    );
    foreign.push(Message::from_tool_results([ToolResult::success("x1", "snow")]));
    foreign.push(Message::user("thanks"));
    check(foreign.messages(), "a foreign call");
}
