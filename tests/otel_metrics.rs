//! The GenAI client metrics (feature `otel-metrics`): one duration and two
//! token-usage measurements per model call, attributed as the conventions
//! say (behind a `Fallback`, to the provider that answered), into the SDK's
//! in-memory metric exporter. (Its own test binary: the meter provider is
//! process-wide.)

mod common;

use common::*;
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use toolloop::model::ModelErrorKind;
use toolloop::providers::Fallback;
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
    // Behind a `Fallback` whose first model is down, the call is the answering provider's.
    let fallback = Fallback::new(ScriptedModel::new().with_provider("test").fail(ModelError::new(
        ModelErrorKind::Overloaded,
        "test",
        "busy",
    )))
    .then(ScriptedModel::new().with_provider("standby").respond(
        ModelResponse::from_text("hi").with_usage(Usage { input_tokens: 3, output_tokens: 2, ..Usage::default() }),
    ));
    Agent::builder().model(fallback).build().unwrap().run(&mut ask("three")).await.unwrap();
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
    let (points, standby): (Vec<_>, Vec<_>) = histogram
        .data_points()
        .partition(|point| !has(&point.attributes().cloned().collect::<Vec<_>>(), "gen_ai.provider.name", "standby"));
    assert_eq!(points.len(), 2, "a success and an error, told apart by error.type");
    assert_eq!(standby.len(), 1, "the call the fallback answered, once, as the provider that answered");
    let answered: Vec<KeyValue> = standby[0].attributes().cloned().collect();
    assert!(!answered.iter().any(|kv| kv.key.as_str() == "error.type"), "{answered:?}");
    assert!(has(&answered, "gen_ai.request.model", "scripted"));
    assert_eq!(standby[0].count(), 1);
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
    let mut sums: Vec<(String, String, u64)> = histogram
        .data_points()
        .map(|point| {
            let attributes: Vec<KeyValue> = point.attributes().cloned().collect();
            let value = |key: &str| attributes.iter().find(|kv| kv.key.as_str() == key).unwrap().value.to_string();
            (value("gen_ai.provider.name"), value("gen_ai.token.type"), point.sum())
        })
        .collect();
    sums.sort();
    // Input includes the cached tokens; the failed call used none.
    let expected = [("standby", "input", 3), ("standby", "output", 2), ("test", "input", 15), ("test", "output", 4)];
    assert_eq!(sums, expected.map(|(provider, kind, sum)| (provider.to_owned(), kind.to_owned(), sum)));
    for point in histogram.data_points() {
        let attributes: Vec<KeyValue> = point.attributes().cloned().collect();
        if has(&attributes, "gen_ai.provider.name", "test") {
            assert!(has(&attributes, "gen_ai.response.model", "scripted-2025"));
        }
    }
}
