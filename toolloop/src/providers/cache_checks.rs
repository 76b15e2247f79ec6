//! Checks every provider runs on its request bodies: built from a
//! conversation's wire cache, they are byte for byte the bodies built from
//! scratch, and the bodies of serialising the whole request at once.

use std::borrow::Cow;

use serde_json::{Value, json};

use crate::conversation::Conversation;
use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
use crate::model::ModelRequest;
use crate::tool::ToolDefinition;

fn assistant(content: Vec<ContentBlock>) -> Message {
    Message { role: Role::Assistant, content, provider: None }
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
                Message {
                    role: Role::User,
                    content: vec![call("u1", "t", json!({"q": "\"quoted\""}))],
                    provider: None,
                },
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

/// Request settings the checks vary between requests, as a provider's
/// client settings and a request's overrides would.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Variant {
    pub(crate) index: usize,
}

impl Variant {
    /// The request for `messages` under this variant.
    pub(crate) fn request<'a>(self, messages: &'a [Message], tools: &'a [ToolDefinition]) -> ModelRequest<'a> {
        let request = ModelRequest::new(messages);
        match self.index % 4 {
            0 => request.with_system(Some("You help.")).with_tools(tools),
            1 => {
                request.with_max_tokens(Some(77)).with_temperature(Some(0.3)).with_strict_tools(true).with_tools(tools)
            }
            2 => request.with_system(Some("")),
            _ => request.with_system(Some("Be \"brief\".\n")).with_temperature(Some(1.0)).with_tools(tools),
        }
    }
}

/// Grows every shape one message at a time on one conversation and, at each
/// step and under varied settings, checks that the body built through the
/// cache equals the body built without it and `reference` (the whole request
/// serialised at once). `body` builds a body for a request and a variant.
/// Also checks each settled run was rendered once, and that a view flattened
/// for another provider does not use the cache.
pub(crate) fn check_bodies(
    format: &str,
    body: &dyn Fn(&ModelRequest<'_>, Variant) -> Vec<u8>,
    reference: &dyn Fn(&ModelRequest<'_>, Variant) -> Vec<u8>,
) {
    let tools = tools();
    for (name, messages) in shapes().into_iter().chain(random_shapes()) {
        let mut conversation = Conversation::new();
        for (step, message) in messages.into_iter().enumerate() {
            conversation.push(message);
            for index in [step, step + 1] {
                let variant = Variant { index };
                let uncached = variant.request(conversation.messages(), &tools);
                let cached = uncached.with_conversation(&conversation);
                assert!(cached.wire_cache().is_some());
                let expected = reference(&uncached, variant);
                let from_cache = body(&cached, variant);
                assert_eq!(
                    String::from_utf8_lossy(&from_cache),
                    String::from_utf8_lossy(&expected),
                    "{name}, step {step}, variant {index}: cached body"
                );
                assert_eq!(body(&uncached, variant), expected, "{name}, step {step}: uncached body");
                serde_json::from_slice::<Value>(&from_cache).expect("the body is JSON");
            }
        }
        let settled_runs = conversation.messages().chunk_by(|a, b| a.role == b.role).count() - 1;
        let (rendered, covered) = conversation.wire_cache().stats(format).expect("the cache was used");
        assert_eq!(rendered, settled_runs, "{name}: every settled run rendered exactly once");
        let open_run = conversation.messages().chunk_by(|a, b| a.role == b.role).last().map_or(0, <[Message]>::len);
        assert_eq!(covered, conversation.len() - open_run, "{name}: the cache covers every settled run");

        // Another format renders into its own entry and leaves this one alone.
        let mut other = |run: &[Message], _: &[Message], out: &mut Vec<u8>| {
            out.push(b',');
            serde_json::to_writer(out, &run.len())
        };
        let mut scratch = Vec::new();
        conversation.wire_cache().write("other", conversation.messages(), &mut scratch, &mut other).unwrap();
        let request = Variant { index: 0 }.request(conversation.messages(), &tools);
        assert_eq!(
            body(&request.with_conversation(&conversation), Variant { index: 0 }),
            reference(&request, Variant { index: 0 })
        );
        assert_eq!(conversation.wire_cache().stats(format), Some((rendered, covered)), "{name}: no re-rendering");
    }
}

/// A conversation whose tool calls came from another provider: its view is
/// flattened, so a request for it must not use the conversation's cache.
pub(crate) fn check_flattened_view(
    body: &dyn Fn(&ModelRequest<'_>, Variant) -> Vec<u8>,
    reference: &dyn Fn(&ModelRequest<'_>, Variant) -> Vec<u8>,
) {
    let tools = tools();
    let mut conversation = Conversation::new();
    conversation.push_user("weather?");
    conversation.push(Message {
        role: Role::Assistant,
        content: vec![call("x1", "weather", json!({"city": "Oslo"}))],
        provider: Some("elsewhere".into()),
    });
    conversation.push(Message::from_tool_results([ToolResult::success("x1", "snow")]));
    conversation.push_user("thanks");
    let view = conversation.view_for("here");
    assert!(matches!(view, Cow::Owned(_)));
    for index in 0..4 {
        let variant = Variant { index };
        let request = variant.request(&view, &tools).with_conversation(&conversation);
        assert!(request.wire_cache().is_none());
        assert_eq!(body(&request, variant), reference(&request, variant));
    }
}
