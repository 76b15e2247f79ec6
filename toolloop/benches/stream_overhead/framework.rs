//! The same streamed call made through toolloop: `Model::stream` on the
//! Anthropic or OpenAI provider pointed at the stub, the events folded by
//! `ModelResponse::from_stream` (the accumulator a streamed run uses), text
//! deltas handed to the caller as they arrive.

use futures_util::StreamExt as _;
use toolloop::model::StreamEvent;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::openai::OpenAi;
use toolloop::{Message, Model, ModelRequest, ModelResponse, Tool as _};

/// Look a key up.
#[derive(toolloop::Tool)]
pub(crate) struct Lookup {
    /// The key.
    key: String,
}

impl Lookup {
    #[allow(clippy::unused_async)] // tool handlers are async by contract
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.key)
    }
}

/// The model under test: `base` is the stub's address with the mix's path.
pub(crate) fn model(base: &str, anthropic: bool) -> Box<dyn Model> {
    if anthropic {
        Box::new(
            Anthropic::builder().api_key("sk-bench").base_url(base).model("stub").max_tokens(1024).build().unwrap(),
        )
    } else {
        Box::new(OpenAi::builder().api_key("sk-bench").base_url(format!("{base}/v1")).model("stub").build().unwrap())
    }
}

/// One streamed call; `on_text` sees every text delta as it arrives.
pub(crate) async fn stream_call(model: &dyn Model, on_text: &mut dyn FnMut(&str)) -> ModelResponse {
    let messages = [Message::user("What is the weather in Paris?")];
    let mut request = ModelRequest::new(&messages);
    request.tools = std::slice::from_ref(Lookup::definition());
    let events = model.stream(request).inspect(|event| {
        // An empty first delta only opens the block (Anthropic's `content_block_start`).
        if let Ok(StreamEvent::TextDelta { text, .. }) = event
            && !text.is_empty()
        {
            on_text(text);
        }
    });
    ModelResponse::from_stream(events).await.unwrap()
}
