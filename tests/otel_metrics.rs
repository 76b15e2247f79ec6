//! The GenAI client metrics (feature `otel-metrics`): one duration and two
//! token-usage measurements per model call, attributed as the conventions
//! say, into the SDK's in-memory metric exporter. (Its own test binary: the
//! meter provider is process-wide.)

mod common;

use common::*;
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use toolloop::model::ModelErrorKind;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, ModelError, ModelResponse, Usage};

fn has(attributes: &[KeyValue], key: &str, value: &str) -> bool {
    attributes.iter().any(|kv| kv.key.as_str() == key && kv.value.as_str() == value)
}

#[tokio::test]
async fn model_calls_record_duration_and_token_usage() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder().with_reader(PeriodicReader::builder(exporter.clone()).build()).build();
    opentelemetry::global::set_meter_provider(provider.clone());

    let model = ScriptedModel::new()
        .respond(ModelResponse::from_text("hi").with_model("scripted-2025").with_usage(Usage {
            input_tokens: 10,
            output_tokens: 4,
            cache_read_tokens: 5,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
        }))
        .fail(ModelError::new(ModelErrorKind::Overloaded, "test", "busy"));
    let agent = Agent::builder().model(model).build().unwrap();
    agent.run(&mut ask("one")).await.unwrap();
    agent.run(&mut ask("two")).await.unwrap_err();
    provider.force_flush().unwrap();

    let finished = exporter.get_finished_metrics().unwrap();
    let metrics: Vec<_> = finished
        .iter()
        .flat_map(opentelemetry_sdk::metrics::data::ResourceMetrics::scope_metrics)
        .flat_map(opentelemetry_sdk::metrics::data::ScopeMetrics::metrics)
        .collect();
    let duration = metrics.iter().find(|m| m.name() == "gen_ai.client.operation.duration").unwrap();
    assert_eq!(duration.unit(), "s");
    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = duration.data() else { panic!("{duration:?}") };
    let points: Vec<_> = histogram.data_points().collect();
    assert_eq!(points.len(), 2, "a success and an error, told apart by error.type");
    let failed: Vec<_> = points
        .iter()
        .filter(|point| has(&point.attributes().cloned().collect::<Vec<_>>(), "error.type", "overloaded"))
        .collect();
    assert_eq!(failed.len(), 1);
    for point in &points {
        let attributes: Vec<KeyValue> = point.attributes().cloned().collect();
        assert!(has(&attributes, "gen_ai.operation.name", "chat"));
        assert!(has(&attributes, "gen_ai.provider.name", "test"));
        assert!(has(&attributes, "gen_ai.request.model", "scripted"));
        assert_eq!(point.count(), 1);
    }

    let tokens = metrics.iter().find(|m| m.name() == "gen_ai.client.token.usage").unwrap();
    assert_eq!(tokens.unit(), "{token}");
    let AggregatedMetrics::U64(MetricData::Histogram(histogram)) = tokens.data() else { panic!("{tokens:?}") };
    let mut sums: Vec<(String, u64)> = histogram
        .data_points()
        .map(|point| {
            let attributes: Vec<KeyValue> = point.attributes().cloned().collect();
            assert!(has(&attributes, "gen_ai.response.model", "scripted-2025"));
            let kind = attributes.iter().find(|kv| kv.key.as_str() == "gen_ai.token.type").unwrap();
            (kind.value.as_str().into_owned(), point.sum())
        })
        .collect();
    sums.sort();
    // Input includes the cached tokens; the failed call used none.
    assert_eq!(sums, [("input".to_owned(), 15), ("output".to_owned(), 4)]);
}
