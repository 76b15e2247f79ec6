//! The same conversations driven by toolloop, as a user writes them: one
//! text `Agent` with one `#[derive(Tool)]` tool on the `OpenAi` or
//! `Anthropic` provider pointed at the stub, built once and shared by every
//! run; each conversation a fresh `Conversation` run with `run` or
//! `run_stream` (every event read).

use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::openai::OpenAi;
use toolloop::{Agent, Conversation};

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

/// The size of one model call's future (which `Model::complete` boxes),
/// for `sizes`.
pub(crate) fn model_call_size(anthropic: bool, base: &str) -> usize {
    use toolloop::{Message, Model as _, ModelRequest};

    let messages = [Message::user("Look up every key.")];
    let request = ModelRequest::new(&messages);
    if anthropic {
        let model =
            Anthropic::builder().api_key("sk-bench").base_url(base).model("stub").max_tokens(1024).build().unwrap();
        std::mem::size_of_val(&*model.complete(request))
    } else {
        let model = OpenAi::builder().api_key("sk-bench").base_url(format!("{base}/v1")).model("stub").build().unwrap();
        std::mem::size_of_val(&*model.complete(request))
    }
}

/// A text agent on the stub at `base` (`http://127.0.0.1:PORT/{calls}`).
pub(crate) fn agent(anthropic: bool, base: &str, calls: usize) -> Agent {
    let builder = Agent::builder().system("You look keys up.").tool::<Lookup>().max_iterations(calls as u32 + 1);
    let builder = if anthropic {
        builder.model(
            Anthropic::builder().api_key("sk-bench").base_url(base).model("stub").max_tokens(1024).build().unwrap(),
        )
    } else {
        builder
            .model(OpenAi::builder().api_key("sk-bench").base_url(format!("{base}/v1")).model("stub").build().unwrap())
    };
    builder.build().unwrap()
}

/// One conversation; returns its model calls.
pub(crate) async fn conversation(agent: &Agent) -> usize {
    let mut conversation = Conversation::new();
    conversation.push_user("Look up every key.");
    let done = agent.run(&mut conversation).await.expect("the scripted conversation completes");
    done.metadata.model_calls as usize
}

/// One streamed conversation, every event read; returns its model calls.
pub(crate) async fn streamed(agent: &Agent) -> usize {
    let mut conversation = Conversation::new();
    conversation.push_user("Look up every key.");
    let mut stream = agent.run_stream(&mut conversation);
    while let Some(event) = stream.next().await {
        std::hint::black_box(event);
    }
    let done = stream.output().await.expect("the scripted conversation completes");
    done.metadata.model_calls as usize
}
