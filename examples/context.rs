//! Prompt caching and a context window that never surprises:
//! `cargo run --example context`.
//!
//! A research loop reads ten long pages. On Anthropic, prompt caching is on
//! by default: the tools and system prompt, and everything up to the
//! previous call, are read from the cache, and the run reports the share of
//! prompt tokens that were (`RunMetadata::cache_hit_share`). A context
//! policy keeps the loop inside its window: when the model says the prompt
//! no longer fits, old tool results are elided from what it is sent (the
//! conversation keeps them) and the call is made again; a hook prints each
//! compaction's event.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline otherwise, on a model that bills like Anthropic's cache and
//! has a 4,000-token window, and says which.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::prelude::*;
use toolloop::run::{ContextPolicy, Event, estimate_tokens};
use toolloop::testing::ScriptedModel;

const PAGES: u32 = 10;

/// Read one page of the report.
#[derive(toolloop::Tool)]
struct ReadPage {
    /// The page, from 1.
    page: u32,
}

impl ReadPage {
    #[allow(clippy::unused_async)] // a real reader would fetch the page
    async fn run(self) -> Result<String, String> {
        if self.page == 0 || self.page > PAGES {
            return Err(format!("there are pages 1 to {PAGES}"));
        }
        Ok(format!("Page {}: {}", self.page, "Revenue grew in every region this quarter. ".repeat(30)))
    }
}

/// Offline: reads the pages one by one, then answers; bills like a prompt
/// cache that holds everything up to the previous call; rejects prompts
/// over a 4,000-token window like Anthropic does.
fn offline() -> ScriptedModel {
    const WINDOW: u64 = 4_000;
    let previous = AtomicUsize::new(0);
    ScriptedModel::from_fn(move |request| {
        let tokens = estimate_tokens(&request.messages) + 2_000; // system prompt and tools
        if tokens > WINDOW {
            return Err(ModelError::new(
                ModelErrorKind::InvalidRequest,
                "offline",
                format!("prompt is too long: {tokens} tokens > {WINDOW} maximum"),
            )
            .with_context_overflow(Some(tokens), Some(WINDOW)));
        }
        // What the previous call sent is read from the cache, the rest written.
        let cached = u64::try_from(previous.swap(usize::try_from(tokens).unwrap_or(0), Ordering::Relaxed))
            .unwrap_or(0)
            .min(tokens);
        let usage = Usage {
            input_tokens: 0,
            output_tokens: 30,
            cache_read_tokens: cached,
            cache_write_tokens: tokens - cached,
            reasoning_tokens: 0,
        };
        let read = request.messages.iter().flat_map(Message::tool_results).count();
        let read = u32::try_from(read).unwrap_or(PAGES);
        let response = if read < PAGES {
            ModelResponse::new(vec![ContentBlock::ToolCall(ToolCall::new(
                format!("call_{read}"),
                "read_page",
                json!({"page": read + 1}),
            ))])
        } else {
            ModelResponse::from_text("Revenue grew in every region on all ten pages.")
        };
        Ok(response.with_usage(usage))
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = toolloop::providers::from_env_or(offline())?;
    println!("model: {} ({})", model.name(), model.provider());

    let agent = Agent::builder()
        .model(model)
        .system(format!("You summarise reports page by page. {}", "Quote figures exactly. ".repeat(300)))
        .tool::<ReadPage>()
        .max_iterations(PAGES + 5)
        .context_policy(ContextPolicy::new().keep_iterations(2))
        .on_event(|event| {
            if let Event::Compacted {
                reason,
                tool_results_elided,
                messages_dropped,
                estimated_tokens_before,
                estimated_tokens_after,
                ..
            } = event
            {
                println!(
                    "  compacted ({reason:?}): {tool_results_elided} old tool results elided, \
                     {messages_dropped} messages dropped, ~{estimated_tokens_before} -> ~{estimated_tokens_after} tokens"
                );
            }
        })
        .build()?;

    let mut conversation = Conversation::new();
    conversation.push_user(format!("Read pages 1 to {PAGES} of the report one at a time, then summarise it."));
    let done = agent.run(&mut conversation).await?;
    let usage = done.metadata.usage;
    println!("answer: {}", done.output);
    println!(
        "{} model calls; prompt tokens: {} uncached, {} cache reads, {} cache writes; cache-hit share {:.1}%",
        done.metadata.model_calls,
        usage.input_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        100.0 * done.metadata.cache_hit_share().unwrap_or(0.0)
    );
    println!(
        "{} compactions; the conversation still holds all {} tool results in full",
        done.metadata.compactions,
        conversation.iter().flat_map(Message::tool_results).count()
    );
    Ok(())
}
