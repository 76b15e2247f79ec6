//! The requests a tool loop sends as its conversation grows (rendered with the
//! run's cache of the messages it already sent) are byte for byte the
//! requests the same model sends for copies of the same messages, which it
//! renders from scratch, for every provider.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolloop::model::{BoxFuture, BoxStream, StreamEvent};
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::OpenAi;
use toolloop::run::ToolLoop;
use toolloop::{Conversation, Message, Model, ModelError, ModelRequest, ModelResponse, ToolSet};
use toolloop_workspace::{Reply, TestServer, replies};

/// `M`, recording the messages of every request it is sent.
struct Recording<M> {
    inner: M,
    sent: Arc<Mutex<Vec<Vec<Message>>>>,
}

impl<M: Model> Model for Recording<M> {
    fn provider(&self) -> &str {
        self.inner.provider()
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.sent.lock().unwrap().push(request.messages.to_vec());
        self.inner.complete(request)
    }
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        self.sent.lock().unwrap().push(request.messages.to_vec());
        self.inner.stream(request)
    }
}

/// Look a key up.
#[derive(toolloop::Tool)]
struct Lookup {
    /// The key.
    key: String,
}

impl Lookup {
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("value of {}: \"42\"\n", self.key))
    }
}

const SYSTEM: &str = "You look keys up.";

/// Two runs on one conversation against a server answering `script`, then
/// every request replayed from scratch (a request not built from a
/// conversation) against a second server: the bodies must be identical.
async fn check<M: Model + 'static>(model: impl Fn(String) -> M, script: Vec<Reply>, runs: [usize; 2]) {
    let server = TestServer::start(script).await;
    let mut tools = ToolSet::new();
    tools.add::<Lookup>().unwrap();
    let sent: Arc<Mutex<Vec<Vec<Message>>>> = Arc::default();
    let recording = Recording { inner: model(server.url()), sent: Arc::clone(&sent) };
    let mut tool_loop = ToolLoop::new(recording, tools).system(SYSTEM);

    let mut conversation = Conversation::new();
    conversation.push_user("Look up every key.");
    tool_loop.run(&mut conversation).await.unwrap();
    conversation.push_user("Once more, please.");
    conversation.push_user("Both keys again.");
    tool_loop.run(&mut conversation).await.unwrap();
    let sent = sent.lock().unwrap().clone();
    assert_eq!(sent.len(), runs[0] + runs[1]);

    let replay_server = TestServer::start((0..sent.len()).map(|_| server_text_reply(&server))).await;
    let replay = model(replay_server.url());
    let mut tools = ToolSet::new();
    tools.add::<Lookup>().unwrap();
    for messages in &sent {
        let request = ModelRequest::new(messages).with_system(SYSTEM).with_tools(tools.definitions());
        replay.complete(request).await.unwrap();
    }
    let (cached, fresh) = (server.requests(), replay_server.requests());
    assert_eq!(cached.len(), fresh.len());
    for (index, (cached, fresh)) in cached.iter().zip(&fresh).enumerate() {
        assert_eq!(
            String::from_utf8_lossy(&cached.body),
            String::from_utf8_lossy(&fresh.body),
            "request {index} differs from the same request built from scratch"
        );
    }
}

/// A text reply in the format of whichever server `server` is (its first request's path tells).
fn server_text_reply(server: &TestServer) -> Reply {
    let path = server.requests()[0].path.clone();
    if path.ends_with("/messages") {
        replies::anthropic::text("ok")
    } else if path.ends_with("/chat/completions") {
        replies::openai::text("ok")
    } else {
        replies::ollama::text("ok")
    }
}

fn lookups(count: usize, per_call: usize) -> Vec<Vec<(String, Value)>> {
    (0..count)
        .map(|call| (0..per_call).map(|i| (format!("c{call}_{i}"), json!({"key": format!("k{call}{i}")}))).collect())
        .collect()
}

#[tokio::test]
async fn openai_requests_from_the_cache_equal_fresh_ones() {
    let mut script = Vec::new();
    for run in [lookups(3, 2), lookups(2, 1)] {
        for calls in run {
            let calls: Vec<(&str, &str, String)> =
                calls.iter().map(|(id, input)| (id.as_str(), "lookup", input.to_string())).collect();
            let calls: Vec<(&str, &str, &str)> = calls.iter().map(|(id, n, a)| (*id, *n, a.as_str())).collect();
            script.push(replies::openai::tool_calls(&calls));
        }
        script.push(replies::openai::text("done"));
    }
    check(|url| OpenAi::builder().api_key("k").base_url(url).build().unwrap(), script, [4, 3]).await;
}

#[tokio::test]
async fn anthropic_requests_from_the_cache_equal_fresh_ones() {
    let mut script = Vec::new();
    for run in [lookups(3, 2), lookups(2, 1)] {
        for calls in run {
            let calls: Vec<(&str, &str, Value)> =
                calls.iter().map(|(id, input)| (id.as_str(), "lookup", input.clone())).collect();
            script.push(replies::anthropic::tool_use(&calls));
        }
        script.push(replies::anthropic::text("done"));
    }
    check(|url| Anthropic::builder().api_key("k").base_url(url).build().unwrap(), script, [4, 3]).await;
}

#[tokio::test]
async fn ollama_requests_from_the_cache_equal_fresh_ones() {
    let mut script = Vec::new();
    for run in [lookups(3, 2), lookups(2, 1)] {
        for calls in run {
            let calls: Vec<(&str, Value)> = calls.iter().map(|(_, input)| ("lookup", input.clone())).collect();
            script.push(replies::ollama::tool_calls(&calls));
        }
        script.push(replies::ollama::text("done"));
    }
    check(|url| Ollama::builder().base_url(url).build().unwrap(), script, [4, 3]).await;
}
