//! `Fallback` over several iterations: each model sees its own tool calls
//! natively and the others' as text; a cool-down skips a failed model.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Search, ask};
use serde_json::json;
use toolloop::model::{BoxFuture, ModelErrorKind};
use toolloop::providers::Fallback;
use toolloop::run::{LoopOutput, ToolLoop};
use toolloop::{Message, Model, ModelError, ModelRequest, ModelResponse, ToolCall, ToolSet};

/// A primary that is always overloaded, counting its calls.
struct Down {
    calls: Arc<AtomicUsize>,
}

impl Model for Down {
    fn provider(&self) -> &'static str {
        "anthropic"
    }
    fn name(&self) -> &'static str {
        "down"
    }
    fn complete<'a>(&'a self, _: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(ModelError::new(ModelErrorKind::Overloaded, "anthropic", "overloaded")) })
    }
}

/// A secondary that calls `search` once, then answers; records what it was sent.
struct Secondary {
    seen: Arc<Mutex<Vec<Vec<Message>>>>,
}

impl Model for Secondary {
    fn provider(&self) -> &'static str {
        "openai"
    }
    fn name(&self) -> &'static str {
        "secondary"
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let mut seen = self.seen.lock().unwrap();
        seen.push(request.messages.to_vec());
        let response = if seen.len() == 1 {
            ModelResponse::from_tool_calls([ToolCall::new("call_1", "search", json!({"query": "q"}))])
        } else {
            ModelResponse::from_text("done")
        };
        Box::pin(async move { Ok(response) })
    }
}

fn tools() -> ToolSet {
    let mut tools = ToolSet::new();
    tools.add::<Search>().unwrap();
    tools
}

#[tokio::test]
async fn the_model_that_answers_sees_its_own_tool_calls_natively() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let primary_calls = Arc::new(AtomicUsize::new(0));
    let model = Fallback::new(Down { calls: primary_calls.clone() }).then(Secondary { seen: seen.clone() });
    let mut tool_loop = ToolLoop::new(model, tools());
    let mut conversation = ask("go");
    let done = tool_loop.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, LoopOutput::Answer("done".into()));
    let seen = seen.lock().unwrap();
    let second = &seen[1];
    assert_eq!(second[1].tool_calls().next().map(|call| call.id.as_str()), Some("call_1"), "{second:#?}");
    assert_eq!(second[2].tool_results().next().map(|result| result.call_id.as_str()), Some("call_1"));
    assert_eq!(conversation.messages()[1].provider.as_deref(), Some("openai"), "tagged with who answered");
    assert_eq!(primary_calls.load(Ordering::SeqCst), 2, "without a cool-down the primary is tried every time");
}

#[tokio::test(start_paused = true)]
async fn a_cool_down_skips_the_failed_model_until_it_has_passed() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let primary_calls = Arc::new(AtomicUsize::new(0));
    let model = Fallback::new(Down { calls: primary_calls.clone() })
        .then(Secondary { seen: seen.clone() })
        .cool_down(Duration::from_secs(30));
    let request_messages = [Message::user("hi")];
    model.complete(ModelRequest::new(&request_messages)).await.unwrap();
    model.complete(ModelRequest::new(&request_messages)).await.unwrap();
    assert_eq!(primary_calls.load(Ordering::SeqCst), 1, "skipped while cooling down");
    tokio::time::advance(Duration::from_secs(31)).await;
    model.complete(ModelRequest::new(&request_messages)).await.unwrap();
    assert_eq!(primary_calls.load(Ordering::SeqCst), 2, "tried again once the cool-down passed");
}

/// Records how many messages each request carried; fails when told to.
struct Counting {
    provider: &'static str,
    fail: bool,
    sizes: Arc<Mutex<Vec<usize>>>,
}

impl Model for Counting {
    fn provider(&self) -> &'static str {
        self.provider
    }
    fn name(&self) -> &'static str {
        self.provider
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.sizes.lock().unwrap().push(request.messages.len());
        let outcome = if self.fail {
            Err(ModelError::new(ModelErrorKind::Overloaded, self.provider, "overloaded"))
        } else {
            Ok(ModelResponse::from_text(self.provider))
        };
        Box::pin(async move { outcome })
    }
}

fn counting(provider: &'static str, fail: bool) -> (Counting, Arc<Mutex<Vec<usize>>>) {
    let sizes = Arc::new(Mutex::new(Vec::new()));
    (Counting { provider, fail, sizes: sizes.clone() }, sizes)
}

/// A wrapper that trims the context to the last message, as a context-window manager would.
struct KeepLast<M>(M);

impl<M: Model> Model for KeepLast<M> {
    fn provider(&self) -> &str {
        self.0.provider()
    }
    fn name(&self) -> &str {
        self.0.name()
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let mut trimmed = request;
        trimmed.messages = &request.messages[request.messages.len() - 1..];
        self.0.complete(trimmed)
    }
}

#[tokio::test]
async fn a_wrapper_that_replaces_the_messages_is_respected() {
    let (primary, sizes) = counting("openai", false);
    let model = KeepLast(Fallback::new(primary));
    let history: Vec<Message> = (0..5).map(|i| Message::user(format!("m{i}"))).collect();
    model.complete(ModelRequest::new(&history)).await.unwrap();
    assert_eq!(*sizes.lock().unwrap(), [1], "the trimmed messages, not the whole history");
}

#[tokio::test(start_paused = true)]
async fn chains_built_from_one_clone_keep_their_own_cool_downs() {
    let (down, _) = counting("down", true);
    let (down_again, _) = counting("down", true);
    let (healthy, healthy_sizes) = counting("healthy", false);
    let (last, _) = counting("last", false);
    let (last_again, _) = counting("last", false);
    let shared = Fallback::new(down).cool_down(Duration::from_secs(60));
    let first = shared.clone().then(down_again).then(last);
    let second = shared.then(healthy).then(last_again);
    let messages = [Message::user("hi")];
    first.complete(ModelRequest::new(&messages)).await.unwrap();
    let response = second.complete(ModelRequest::new(&messages)).await.unwrap();
    assert_eq!(response.provider.as_deref(), Some("healthy"), "one chain's failures must not cool down another's");
    assert_eq!(healthy_sizes.lock().unwrap().len(), 1);
}
