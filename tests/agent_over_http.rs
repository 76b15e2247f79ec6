//! A full agent run (helper tool, typed output, reflection + submit) over
//! HTTP for every provider, against a local scripted server.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use serde_json::{Value, json};
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::OpenAi;
use toolloop::{Agent, Conversation, Model};
use toolloop_workspace::{Reply, TestServer, replies};

/// Look up the population of a city, in millions.
#[derive(toolloop::Tool)]
struct Population {
    /// The city's name.
    city: String,
}

impl Population {
    async fn run(self) -> Result<f64, String> {
        match self.city.as_str() {
            "Paris" => Ok(2.1),
            "Berlin" => Ok(3.7),
            other => Err(format!("no data for {other}")),
        }
    }
}

/// The report.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    /// The largest city compared.
    largest: String,
}

async fn run(model: impl Model + 'static) -> Report {
    let agent = Agent::builder()
        .model(model)
        .system("Compare cities.")
        .tool::<Population>()
        .output::<Report>()
        .reflection(|report| format!("Draft: {report:?}. Check it, then submit."))
        .build()
        .unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let done = agent.run(&mut conversation).await.unwrap();
    assert!(conversation.unanswered_tool_calls().is_empty());
    done.output
}

fn script(tool: impl Fn(&str, &str, Value) -> Reply) -> Vec<Reply> {
    vec![
        tool("c1", "population", json!({"city": "Paris"})),
        tool("c2", "final_output", json!({"largest": "Paris"})),
        tool("c3", "final_output", json!({"largest": "Berlin"})),
        tool("c4", "submit", json!({})),
    ]
}

#[tokio::test]
async fn agent_over_anthropic() {
    let server = TestServer::start(script(|id, name, input| replies::anthropic::tool_use(&[(id, name, input)]))).await;
    let model = Anthropic::builder().api_key("k").base_url(server.url()).build().unwrap();
    assert_eq!(run(model).await.largest, "Berlin");
    let last = server.requests().last().unwrap().json();
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"][0]["tool_use_id"], json!("c3"));
}

#[tokio::test]
async fn agent_over_openai() {
    let server =
        TestServer::start(script(|id, name, input| replies::openai::tool_calls(&[(id, name, &input.to_string())])))
            .await;
    let model = OpenAi::builder().api_key("k").base_url(server.url()).build().unwrap();
    assert_eq!(run(model).await.largest, "Berlin");
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn agent_over_ollama() {
    let server = TestServer::start(script(|_, name, input| replies::ollama::tool_calls(&[(name, input)]))).await;
    let model = Ollama::builder().base_url(server.url()).build().unwrap();
    assert_eq!(run(model).await.largest, "Berlin");
    assert_eq!(server.requests().len(), 4);
}
