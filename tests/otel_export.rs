//! End to end through the real OTLP exporter (HTTP/protobuf) into a receiver
//! on 127.0.0.1 that this test starts: the spans arrive decodable, named,
//! parented and attributed as the GenAI conventions say.

mod common;

use common::*;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::{Span, span::SpanKind};
use opentelemetry_sdk::trace::SdkTracerProvider;
use prost::Message as _;
use serde_json::json;
use toolloop::Agent;
use toolloop::testing::ScriptedModel;
use toolloop_workspace::{Reply, TestServer};
use tracing_subscriber::layer::SubscriberExt as _;

fn string(span: &Span, key: &str) -> Option<String> {
    let attribute = span.attributes.iter().find(|kv| kv.key == key)?;
    match attribute.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(value) => Some(value.clone()),
        any_value::Value::IntValue(value) => Some(value.to_string()),
        other => Some(format!("{other:?}")),
    }
}

// Multi-threaded: the exporter's batch thread posts to the receiver, which
// must keep running while this thread waits for the flush.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_reaches_an_otlp_receiver_as_an_agent_trace() {
    // The exporter's HTTP client (reqwest without a default TLS backend) needs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let receiver = TestServer::start([Reply::raw(200, "application/x-protobuf", Vec::new())]).await;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{}/v1/traces", receiver.url()))
        .build()
        .unwrap();
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("toolloop")));

    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "rust"}))]).with_usage(usage(12, 3)))
        .respond(toolloop::ModelResponse::from_text("done").with_usage(usage(20, 2)));
    let agent = Agent::builder().name("e2e").model(model).tool::<Search>().build().unwrap();
    {
        let _guard = tracing::subscriber::set_default(subscriber);
        agent.run(&mut ask("go")).await.unwrap();
    }
    tokio::task::spawn_blocking(move || provider.shutdown()).await.unwrap().unwrap();

    let requests = receiver.requests();
    assert!(!requests.is_empty(), "the exporter posted nothing");
    let mut spans = Vec::new();
    for request in &requests {
        assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/traces"));
        assert_eq!(request.header("content-type"), Some("application/x-protobuf"));
        let export = ExportTraceServiceRequest::decode(&*request.body).unwrap();
        for resource in export.resource_spans {
            for scope in resource.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }
    let find = |name: &str| spans.iter().find(|span| span.name == name).unwrap_or_else(|| panic!("no `{name}`"));
    let run = find("invoke_agent e2e");
    let chat = spans.iter().filter(|span| span.name == "chat scripted").collect::<Vec<_>>();
    let tool = find("execute_tool search");
    assert!(run.parent_span_id.is_empty(), "the run is the root");
    assert_eq!(chat.len(), 2);
    assert!(spans.iter().all(|span| span.trace_id == run.trace_id), "one trace");

    assert_eq!(chat[0].kind, SpanKind::Client as i32);
    assert_eq!(string(chat[0], "gen_ai.operation.name").as_deref(), Some("chat"));
    assert_eq!(string(chat[0], "gen_ai.provider.name").as_deref(), Some("test"));
    let iteration = spans.iter().find(|span| span.span_id == tool.parent_span_id).unwrap();
    assert_eq!(iteration.name, "iteration 1");
    let attempt = spans.iter().find(|span| span.span_id == iteration.parent_span_id).unwrap();
    assert_eq!(attempt.parent_span_id, run.span_id);
    assert_eq!(string(tool, "gen_ai.tool.name").as_deref(), Some("search"));
    assert_eq!(string(tool, "gen_ai.tool.call.id").as_deref(), Some("s1"));
    assert_eq!(string(run, "gen_ai.usage.input_tokens").as_deref(), Some("32"));
    assert_eq!(string(run, "gen_ai.usage.output_tokens").as_deref(), Some("5"));
}
