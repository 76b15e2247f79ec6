//! The same conversations driven by toolloop: a text agent with one derived
//! tool, on the OpenAI (Chat or Responses), Anthropic or Gemini provider pointed at
//! the stub server.

use toolloop::model::BoxFuture;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::gemini::Gemini;
use toolloop::providers::openai::OpenAi;
use toolloop::reasoning::ReasoningEffort;
use toolloop::{Agent, Conversation, Model, ModelError, ModelRequest, ModelResponse};

use crate::Format;
use crate::bare;

/// Look a key up.
#[derive(toolloop::Tool)]
pub(crate) struct Lookup {
    /// The key.
    key: String,
}

impl Lookup {
    #[allow(clippy::unused_async)] // tool handlers are async by contract
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(bare::lookup(&self.key))
    }
}

/// A text agent on `format`'s provider at `base`, allowed `iterations` iterations.
pub(crate) fn agent(format: Format, base: &str, iterations: u32) -> Agent {
    let model: Box<dyn Model> = match format {
        Format::OpenAi => Box::new(
            OpenAi::builder().api_key("sk-bench").base_url(format!("{base}/v1")).model("stub").build().unwrap(),
        ),
        Format::Responses => Box::new(
            OpenAi::responses()
                .api_key("sk-bench")
                .base_url(format!("{base}/v1"))
                .model("stub")
                .reasoning(ReasoningEffort::Low)
                .build()
                .unwrap(),
        ),
        Format::Anthropic => Box::new(
            Anthropic::builder().api_key("sk-bench").base_url(base).model("stub").max_tokens(1024).build().unwrap(),
        ),
        Format::Gemini => {
            Box::new(Gemini::builder().api_key("bench-key").base_url(base).model("stub").build().unwrap())
        }
    };
    Agent::builder()
        .model(Stamped(model))
        .system("You look keys up.")
        .tool::<Lookup>()
        .max_iterations(iterations)
        .build()
        .unwrap()
}

/// Runs one conversation; returns model calls.
pub(crate) async fn conversation(agent: &Agent) -> usize {
    let mut conversation = Conversation::new();
    conversation.push_user("Look up every key.");
    let done = agent.run(&mut conversation).await.expect("the scripted conversation completes");
    done.metadata.model_calls as usize
}

/// Stamps the CPU time as each model request starts (see `measure::stamp`).
struct Stamped(Box<dyn Model>);

impl Model for Stamped {
    fn provider(&self) -> &str {
        self.0.provider()
    }

    fn name(&self) -> &str {
        self.0.name()
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        crate::measure::stamp();
        self.0.complete(request)
    }
}
