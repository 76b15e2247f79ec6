//! The conventions' client metrics, through the `opentelemetry` API (feature
//! `otel-metrics`): `gen_ai.client.operation.duration` (seconds) and
//! `gen_ai.client.token.usage` (tokens, by `gen_ai.token.type`). They go to
//! the global meter provider the application installs; without one they are no-ops.

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;

use crate::model::Model;
use crate::usage::Usage;

struct Instruments {
    duration: Histogram<f64>,
    tokens: Histogram<u64>,
}

/// The bucket boundaries the conventions advise.
const DURATION_BUCKETS: [f64; 14] =
    [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS: [f64; 14] = [
    1.0,
    4.0,
    16.0,
    64.0,
    256.0,
    1024.0,
    4096.0,
    16384.0,
    65536.0,
    262_144.0,
    1_048_576.0,
    4_194_304.0,
    16_777_216.0,
    67_108_864.0,
];

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = opentelemetry::global::meter("toolloop");
        Instruments {
            duration: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .with_description("GenAI operation duration")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Number of input and output tokens used")
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build(),
        }
    })
}

/// The attributes every measurement of one model call shares.
pub(super) struct Labels {
    provider: String,
    model: String,
}

impl Labels {
    pub(super) fn new(model: &dyn Model) -> Self {
        Self { provider: model.provider().to_owned(), model: model.name().to_owned() }
    }

    /// Records one call's measurements; `provider` is the one that answered
    /// (or failed) when the model chooses its provider per call, otherwise
    /// the model's own.
    pub(super) fn record(
        &self,
        elapsed: Duration,
        provider: Option<&str>,
        response_model: Option<&str>,
        error_type: Option<&str>,
        usage: Option<Usage>,
    ) {
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", provider.map_or_else(|| self.provider.clone(), str::to_owned)),
            KeyValue::new("gen_ai.request.model", self.model.clone()),
        ];
        if let Some(model) = response_model {
            attributes.push(KeyValue::new("gen_ai.response.model", model.to_owned()));
        }
        if let Some(error_type) = error_type {
            attributes.push(KeyValue::new("error.type", error_type.to_owned()));
        }
        let instruments = instruments();
        instruments.duration.record(elapsed.as_secs_f64(), &attributes);
        if let Some(usage) = usage {
            let input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
            attributes.push(KeyValue::new("gen_ai.token.type", "input"));
            instruments.tokens.record(input, &attributes);
            attributes.pop();
            attributes.push(KeyValue::new("gen_ai.token.type", "output"));
            instruments.tokens.record(usage.output_tokens, &attributes);
        }
    }
}
