//! Content capture, opt-in: with it on, spans carry the conversation in the
//! GenAI conventions' JSON shape; the API key appears nowhere. (Its own test
//! binary: the switch is process-wide.)

mod common;

use common::*;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use toolloop::Agent;
use toolloop::providers::anthropic::Anthropic;
use toolloop_workspace::{Reply, TestServer};
use tracing_subscriber::layer::SubscriberExt as _;

fn raw(span: &SpanData, key: &str) -> String {
    let value = span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string());
    value.unwrap_or_else(|| panic!("no `{key}` on `{}`", span.name))
}

/// A JSON-string attribute, parsed.
fn attribute(span: &SpanData, key: &str) -> Value {
    serde_json::from_str(&raw(span, key)).unwrap()
}

#[tokio::test]
async fn captured_content_follows_the_conventions_and_never_holds_the_key() {
    assert!(!toolloop::telemetry::capture_content(), "off by default");
    toolloop::telemetry::set_capture_content(true);
    let server = TestServer::start([
        Reply::json(
            200,
            &json!({"id": "msg_1", "model": "claude-test", "stop_reason": "tool_use",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"query": "rust"}}],
                    "usage": {"input_tokens": 11, "output_tokens": 3}}),
        ),
        Reply::json(
            200,
            &json!({"id": "msg_2", "model": "claude-test", "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": "Rust is fine."}],
                    "usage": {"input_tokens": 20, "output_tokens": 4}}),
        ),
    ])
    .await;
    let model = Anthropic::builder()
        .api_key("sk-ant-very-secret")
        .base_url(server.url())
        .model("claude-test")
        .max_tokens(64)
        .build()
        .unwrap();
    let agent = Agent::builder().model(model).system("Be brief.").tool::<Search>().build().unwrap();

    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let guard = tracing::subscriber::set_default(subscriber);
    agent.run(&mut ask("Is Rust fine?")).await.unwrap();
    drop(guard);
    let spans = exporter.get_finished_spans().unwrap();

    let chats: Vec<_> = spans.iter().filter(|span| span.name == "chat claude-test").collect();
    assert_eq!(chats.len(), 2);
    let second = chats.iter().find(|span| raw(span, "gen_ai.response.id") == "msg_2").unwrap();
    assert_eq!(attribute(second, "gen_ai.system_instructions"), json!([{"type": "text", "content": "Be brief."}]));
    assert_eq!(
        attribute(second, "gen_ai.input.messages"),
        json!([
            {"role": "user", "parts": [{"type": "text", "content": "Is Rust fine?"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "toolu_1", "name": "search", "arguments": {"query": "rust"}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_1", "response": "results for rust"}]},
        ])
    );
    assert_eq!(
        attribute(second, "gen_ai.output.messages"),
        json!([{"role": "assistant", "parts": [{"type": "text", "content": "Rust is fine."}], "finish_reason": "end_turn"}])
    );
    let definitions = attribute(second, "gen_ai.tool.definitions");
    assert_eq!(definitions[0]["type"], "function");
    assert_eq!(definitions[0]["name"], "search");
    assert_eq!(definitions[0]["description"], "Search the web.");
    assert_eq!(definitions[0]["parameters"]["properties"]["query"]["type"], "string");

    let tool = spans.iter().find(|span| span.name == "execute_tool search").unwrap();
    assert_eq!(attribute(tool, "gen_ai.tool.call.arguments"), json!({"query": "rust"}));
    assert_eq!(raw(tool, "gen_ai.tool.call.result"), "results for rust");

    for span in &spans {
        for kv in &span.attributes {
            assert!(
                !kv.value.to_string().contains("very-secret"),
                "the key leaked into `{}` of `{}`",
                kv.key,
                span.name
            );
        }
        for event in &span.events.events {
            for kv in &event.attributes {
                assert!(
                    !kv.value.to_string().contains("very-secret"),
                    "the key leaked into an event of `{}`",
                    span.name
                );
            }
        }
    }
}
