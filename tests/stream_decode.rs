//! Properties of the neutral model stream: partial JSON never panics and
//! agrees with `serde_json` on complete documents; a response cut into stream
//! events accumulates back to exactly itself.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolloop::model::{ModelErrorKind, parse_partial_json};
use toolloop::reasoning::Reasoning;
use toolloop::testing::chunk_response;
use toolloop::{ContentBlock, ModelError, ModelResponse, StopReason, ToolCall, Usage};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        // Quotes, backslashes, control characters and astral-plane characters
        // all need escapes or surrogate pairs in some writers.
        "(\\PC|[\"\\\\\n\t\u{1}]|😀){0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-z\"é]{0,4}", inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Every prefix of `text` that ends on a character boundary.
fn prefixes(text: &str) -> impl Iterator<Item = &str> {
    text.char_indices().map(|(at, _)| &text[..at]).chain(std::iter::once(text))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn partial_json_agrees_with_serde_json_on_complete_documents(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        for prefix in prefixes(&text) {
            // Never panics, and whatever it returns is a value it could show.
            let _ = parse_partial_json(prefix);
        }
        prop_assert_eq!(parse_partial_json(&text), Some(serde_json::from_str::<Value>(&text).unwrap()));
    }

    #[test]
    fn partial_json_never_panics_on_any_text(text in "[\\[\\]{}\":,\\\\0-9.eE+\\-a-z \u{e9}]{0,40}") {
        for prefix in prefixes(&text) {
            let _ = parse_partial_json(prefix);
        }
    }

    #[test]
    fn chunked_responses_accumulate_to_themselves(response in response(), chunk_size in 0usize..12) {
        use futures_util::FutureExt as _;
        let events = chunk_response(&response, chunk_size).into_iter().map(Ok::<_, ModelError>);
        let streamed = ModelResponse::from_stream(futures_util::stream::iter(events)).now_or_never();
        prop_assert_eq!(streamed.expect("a stream of ready events").unwrap(), response);
    }
}

fn response() -> impl Strategy<Value = ModelResponse> {
    let block = prop_oneof![
        "\\PC{0,20}".prop_map(ContentBlock::text),
        ("[a-z0-9_]{1,8}", "[a-z_]{1,8}", prop_oneof![json_value(), "\\PC{0,10}".prop_map(Value::String)])
            .prop_map(|(id, name, input)| ContentBlock::ToolCall(ToolCall::new(id, name, input))),
        reasoning().prop_map(ContentBlock::Reasoning),
    ];
    let stop_reason = prop_oneof![
        Just(StopReason::EndTurn),
        Just(StopReason::ToolUse),
        Just(StopReason::MaxTokens),
        "[a-z]{1,6}".prop_map(StopReason::Other),
    ];
    (
        prop::collection::vec(block, 0..5),
        stop_reason,
        (any::<u32>(), any::<u32>(), any::<u16>(), any::<u16>(), any::<u16>()),
        prop::option::of("[a-z0-9-]{1,10}"),
        prop::option::of("[a-z]{1,8}"),
    )
        .prop_map(|(content, stop_reason, (input, output, read, write, reasoning), model, provider)| {
            let usage = Usage {
                input_tokens: input.into(),
                output_tokens: output.into(),
                cache_read_tokens: read.into(),
                cache_write_tokens: write.into(),
                reasoning_tokens: reasoning.into(),
            };
            let mut response = ModelResponse::new(content).with_stop_reason(stop_reason).with_usage(usage);
            response.model = model;
            response.provider = provider;
            response
        })
}

#[tokio::test]
async fn a_stream_of_events_collects_into_the_response() {
    let response = ModelResponse::new(vec![
        ContentBlock::text("Let me check."),
        ContentBlock::ToolCall(ToolCall::new("call_1", "weather", serde_json::json!({"city": "Paris"}))),
    ])
    .with_usage(Usage::new(12, 7))
    .with_model("m");
    let events = chunk_response(&response, 3).into_iter().map(Ok::<_, ModelError>);
    let collected = ModelResponse::from_stream(futures_util::stream::iter(events)).await.unwrap();
    assert_eq!(collected, response);

    // The stream's own error ends the collection with that error.
    let mut events: Vec<_> = chunk_response(&response, 3).into_iter().map(Ok).collect();
    events.insert(3, Err(ModelError::new(ModelErrorKind::Overloaded, "test", "Overloaded")));
    let error = ModelResponse::from_stream(futures_util::stream::iter(events)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Overloaded);

    // A stream that stops before its last event is cut off, not a response.
    let mut events = chunk_response(&response, 3);
    events.pop();
    let error = ModelResponse::from_stream(futures_util::stream::iter(events.into_iter().map(Ok))).await;
    assert_eq!(error.unwrap_err().kind(), ModelErrorKind::Connection);
}

/// Reasoning as providers return it: plain text, signed thinking, redacted
/// thinking, or a Responses item with a summary. The opaque states are built
/// as a saved conversation holds them (their types are the crate's own).
fn reasoning() -> impl Strategy<Value = Reasoning> {
    let text = prop::collection::vec("\\PC{0,12}", 0..3);
    let state = prop_oneof![
        Just(None),
        "[A-Za-z0-9+/=]{0,12}".prop_map(|signature| Some(json!({"type": "signed", "signature": signature}))),
        "[A-Za-z0-9+/=]{1,12}".prop_map(|data| Some(json!({"type": "redacted", "data": data}))),
        ("rs_[a-z0-9]{1,6}", prop::option::of("[A-Za-z0-9]{1,12}")).prop_map(|(id, encrypted_content)| Some(
            json!({"type": "item", "id": id, "encrypted_content": encrypted_content})
        )),
    ];
    (text.clone(), text, state, prop::option::of("[a-z0-9-]{1,8}")).prop_map(|(text, summary, state, model)| {
        let mut saved = json!({"text": text, "summary": summary});
        if let Some(state) = state {
            saved["opaque"] = json!({"provider": "p", "model": model, "state": state});
        }
        serde_json::from_value(saved).unwrap()
    })
}
