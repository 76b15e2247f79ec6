//! A model stream cut off before it finished: the usage the provider
//! reported before the cut is kept (it is billed), folded by hand or in a
//! streamed run.

mod common;

use common::ask;
use toolloop::{Agent, ModelResponse};

/// `ModelResponse::from_stream` (new) promises: "a `Connection` error for a
/// stream that ends before `Finished`. The error carries the usage
/// reported before it". A stream that reported usage and then ended early
/// gives a `Connection` error without it.
#[tokio::test]
async fn from_stream_an_early_end_carries_the_usage_reported_before_it() {
    use toolloop::Usage;
    use toolloop::model::{ModelErrorKind, StreamEvent};

    let usage = Usage { input_tokens: 120, output_tokens: 7, ..Usage::default() };
    let events: Vec<Result<StreamEvent, toolloop::ModelError>> =
        vec![Ok(StreamEvent::Usage(usage)), Ok(StreamEvent::TextDelta { index: 0, text: "Hel".into() })];
    let error = ModelResponse::from_stream(futures_util::stream::iter(events)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Connection, "{error}");
    assert_eq!(error.usage(), Some(usage), "the usage reported before the stream ended");
}

/// The same gap in a streamed run (the engine folds the stream the same
/// way): the run's usage counts a failed call's reported usage ("its error
/// carries it", run/engine.rs), but not that of a stream cut off before
/// `Finished`; the token budget misses those tokens.
#[tokio::test]
async fn a_streamed_run_counts_the_usage_of_a_stream_cut_before_it_finished() {
    use futures_util::StreamExt as _;
    use toolloop::model::{BoxFuture, BoxStream, StreamEvent};
    use toolloop::{Model, ModelError, ModelRequest, Usage};

    const USAGE: Usage =
        Usage { input_tokens: 120, output_tokens: 7, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };

    struct CutOff;
    impl Model for CutOff {
        fn provider(&self) -> &'static str {
            "cut"
        }
        fn name(&self) -> &'static str {
            "cut-1"
        }
        fn complete<'a>(&'a self, _request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
            unreachable!("streamed")
        }
        fn stream<'a>(&'a self, _request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
            futures_util::stream::iter(vec![
                Ok(StreamEvent::Usage(USAGE)),
                Ok(StreamEvent::TextDelta { index: 0, text: "Hel".into() }),
            ])
            .boxed()
        }
    }

    let agent = Agent::builder().model(CutOff).build().unwrap();
    let mut conversation = ask("Hello");
    let mut stream = agent.run_stream(&mut conversation);
    while stream.next().await.is_some() {}
    let error = stream.output().await.unwrap_err();
    assert_eq!(error.metadata().usage, USAGE, "{error}");
}
