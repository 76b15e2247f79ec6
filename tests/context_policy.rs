//! The context policy: without one, a prompt that does not fit ends the run
//! with a typed `ContextOverflow` and the conversation intact; with one, the
//! view sent to the model is compacted step by step (old tool results
//! elided, then old iterations dropped or summarised) and the call succeeds,
//! the raw conversation untouched, events saying what was compacted and
//! metadata counting it. Property: in every view sent, tool calls and results stay
//! paired and assistant messages (where reasoning lives) are never edited.

#![allow(clippy::unused_async)] // tool handlers are async by contract

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::run::{CompactionReason, ContextPolicy, ELIDED_RESULT, Event, estimate_tokens};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, ContentBlock, Conversation, Message, ModelError, ModelResponse, Role, ToolCall};

/// Fetches a page.
#[derive(toolloop::Tool)]
struct Fetch {
    /// The page.
    page: u32,
    /// How long the page is, in bytes.
    bytes: usize,
}

impl Fetch {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("page {}: {}", self.page, "x".repeat(self.bytes)))
    }
}

/// A model with a context window of `window` estimated tokens that fetches
/// `pages` (each a batch of parallel calls of the given sizes), then answers.
fn model(window: u64, pages: Vec<Vec<usize>>, seen: Arc<Mutex<Vec<Vec<Message>>>>) -> ScriptedModel {
    ScriptedModel::from_fn(move |request| {
        let tokens = estimate_tokens(&request.messages);
        if tokens > window {
            return Err(ModelError::new(
                ModelErrorKind::InvalidRequest,
                "test",
                format!("prompt is too long: {tokens} tokens > {window} maximum"),
            )
            .with_context_overflow(Some(tokens), Some(window)));
        }
        // Counted over the calls that answered: compacted views hold fewer turns.
        let done = {
            let mut seen = seen.lock().unwrap();
            seen.push(request.messages.clone());
            seen.len() - 1
        };
        Ok(match pages.get(done) {
            Some(batch) => ModelResponse::new(
                batch
                    .iter()
                    .enumerate()
                    .map(|(index, bytes)| {
                        ContentBlock::ToolCall(ToolCall::new(
                            format!("c{done}_{index}"),
                            "fetch",
                            json!({"page": done, "bytes": bytes}),
                        ))
                    })
                    .collect(),
            ),
            None => ModelResponse::from_text("summary"),
        })
    })
}

fn agent(model: ScriptedModel, policy: Option<ContextPolicy>) -> Agent {
    let builder = Agent::builder().model(model).system("Read the pages.").tool::<Fetch>().max_iterations(40);
    match policy {
        Some(policy) => builder.context_policy(policy).build().unwrap(),
        None => builder.build().unwrap(),
    }
}

/// What one compaction did, as its event says.
#[derive(Debug, PartialEq)]
struct Compacted {
    reason: CompactionReason,
    tool_results_elided: usize,
    messages_dropped: usize,
    summarised: bool,
    estimated_tokens_before: u64,
    estimated_tokens_after: u64,
}

/// A hook that keeps every compaction the run reports, and what it kept.
fn compactions() -> (Arc<Mutex<Vec<Compacted>>>, impl Fn(&Event) + Send + Sync + 'static) {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&kept);
    let hook = move |event: &Event| {
        if let Event::Compacted {
            reason,
            tool_results_elided,
            messages_dropped,
            summarised,
            estimated_tokens_before,
            estimated_tokens_after,
            ..
        } = event
        {
            sink.lock().unwrap().push(Compacted {
                reason: *reason,
                tool_results_elided: *tool_results_elided,
                messages_dropped: *messages_dropped,
                summarised: *summarised,
                estimated_tokens_before: *estimated_tokens_before,
                estimated_tokens_after: *estimated_tokens_after,
            });
        }
    };
    (kept, hook)
}

fn every_call_answered(conversation: &Conversation) {
    assert!(conversation.unanswered_tool_calls().is_empty());
}

#[tokio::test]
async fn without_a_policy_an_overflow_is_a_typed_error_and_the_conversation_stays_intact() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = agent(model(3000, vec![vec![4000], vec![4000], vec![4000]], Arc::clone(&seen)), None);
    let mut conversation = Conversation::new();
    conversation.push_user("Read three pages.");
    let error = agent.run(&mut conversation).await.unwrap_err();
    let model_error = error.model_error().expect("a model error");
    assert_eq!(model_error.kind(), ModelErrorKind::ContextOverflow);
    assert_eq!(model_error.context_window(), Some(3000));
    assert!(model_error.prompt_tokens().unwrap() > 3000);
    every_call_answered(&conversation);
    assert_eq!(error.metadata().compactions, 0);
}

#[tokio::test]
async fn with_a_policy_old_results_are_elided_then_iterations_dropped_and_the_run_succeeds() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let pages = vec![vec![3000]; 8];
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let from_hook = Arc::clone(&recorded);
    let (compacted, on_event) = compactions();
    let agent = Agent::builder()
        .model(model(4000, pages, Arc::clone(&seen)))
        .system("Read the pages.")
        .tool::<Fetch>()
        .max_iterations(40)
        .context_policy(ContextPolicy::new().keep_iterations(1))
        .on_compacted(move |reason, before, after| from_hook.lock().unwrap().push((reason, before, after)))
        .on_event(on_event)
        .build()
        .unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Read eight pages.");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "summary");
    // The raw history keeps every result whole.
    every_call_answered(&conversation);
    let results: Vec<_> = conversation.iter().flat_map(Message::tool_results).collect();
    assert_eq!(results.len(), 8);
    assert!(results.iter().all(|result| result.content.len() > 3000));
    // The view was compacted: each compaction is an event, the metadata counts them.
    let compactions = compacted.lock().unwrap();
    assert!(!compactions.is_empty());
    assert_eq!(done.metadata.compactions as usize, compactions.len());
    assert!(compactions.iter().all(|c| c.reason == CompactionReason::Overflow));
    assert!(compactions.iter().any(|c| c.tool_results_elided > 0));
    assert!(compactions.iter().all(|c| c.estimated_tokens_after < c.estimated_tokens_before));
    // The typed hook saw each one too.
    let from_events: Vec<_> =
        compactions.iter().map(|c| (c.reason, c.estimated_tokens_before, c.estimated_tokens_after)).collect();
    assert_eq!(*recorded.lock().unwrap(), from_events);
    let last = seen.lock().unwrap().last().unwrap().clone();
    assert!(last.iter().flat_map(Message::tool_results).any(|result| result.content == ELIDED_RESULT));
}

#[tokio::test]
async fn a_window_compacts_ahead_of_time_and_a_summariser_replaces_dropped_iterations() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let policy = ContextPolicy::new()
        .window(20_000)
        .trigger(0.05) // 1,000 tokens
        .keep_iterations(1)
        .summariser(|messages: &[Message]| format!("{} messages about pages", messages.len()));
    let (compacted, on_event) = compactions();
    let agent = Agent::builder()
        .model(model(1_000_000, vec![vec![500, 500]; 24], Arc::clone(&seen)))
        .system("Read the pages.")
        .tool::<Fetch>()
        .max_iterations(40)
        .context_policy(policy)
        .on_event(on_event)
        .build()
        .unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Read the pages.");
    let done = agent.run(&mut conversation).await.unwrap();
    let compactions = compacted.lock().unwrap();
    assert_eq!(done.metadata.compactions as usize, compactions.len());
    assert!(compactions.iter().all(|c| c.reason == CompactionReason::Threshold));
    assert!(compactions.iter().any(|c| c.summarised && c.messages_dropped > 0), "{compactions:?}");
    let last = seen.lock().unwrap().last().unwrap().clone();
    assert!(last.iter().any(|message| message.text().contains("messages about pages")));
    assert_eq!(last[0].text(), "Read the pages.");
    every_call_answered(&conversation);
}

#[test]
fn an_explicit_compaction_returns_what_it_removed() {
    let mut conversation = Conversation::new();
    conversation.push_user("task");
    for turn in 0..4 {
        conversation.push(Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolCall(ToolCall::new(format!("c{turn}"), "fetch", json!({})))],
        ));
        conversation.push(Message::from_tool_results([toolloop::ToolResult::success(format!("c{turn}"), "page")]));
    }
    let removed = conversation.compact(1);
    assert_eq!(removed.len(), 6);
    assert_eq!(conversation.len(), 4);
    every_call_answered(&conversation);
    assert!(conversation.compact(1).is_empty(), "nothing old is left but the note");
}

/// Every tool call has its result in the user turn right after it, every
/// result answers a call of the assistant turn right before it, and every
/// assistant message appears unchanged in the raw history.
fn check_view(view: &[Message], raw: &[Message]) {
    for (index, message) in view.iter().enumerate() {
        match message.role {
            Role::Assistant => {
                assert!(raw.contains(message), "an assistant message was edited: {message:?}");
                let answered: Vec<&str> = view[index + 1..]
                    .iter()
                    .take_while(|next| next.role == Role::User)
                    .flat_map(Message::tool_results)
                    .map(|result| result.call_id.as_str())
                    .collect();
                for call in message.tool_calls() {
                    assert!(
                        index + 1 == view.len() || answered.contains(&call.id.as_str()),
                        "unpaired call {}",
                        call.id
                    );
                }
            }
            Role::User => {
                let previous = view[..index].iter().rev().find(|m| m.role == Role::Assistant);
                for result in message.tool_results() {
                    let call = previous.and_then(|m| m.tool_calls().find(|call| call.id == result.call_id));
                    assert!(call.is_some(), "a result without its call: {}", result.call_id);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn compacted_views_keep_calls_paired_and_assistant_turns_whole(
        pages in prop::collection::vec(prop::collection::vec(50usize..3000, 1..4), 1..10),
        window in 2500u64..8000,
        keep in 0usize..3,
        summarise in any::<bool>(),
        ahead in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let mut policy = ContextPolicy::new().keep_iterations(keep).max_retries(8);
            if summarise {
                policy = policy.summariser(|messages: &[Message]| format!("{} earlier messages", messages.len()));
            }
            if ahead {
                policy = policy.window(window).trigger(0.8);
            }
            let agent = agent(model(window, pages, Arc::clone(&seen)), Some(policy));
            let mut conversation = Conversation::new();
            conversation.push_user("Read the pages.");
            // A run may still fail when even the most compacted view does not fit.
            let result = agent.run(&mut conversation).await;
            if let Err(error) = &result {
                assert_eq!(error.model_error().map(ModelError::kind), Some(ModelErrorKind::ContextOverflow), "{error}");
            }
            every_call_answered(&conversation);
            for view in seen.lock().unwrap().iter() {
                assert_eq!(view[0].text(), "Read the pages.");
                check_view(view, conversation.messages());
            }
        });
    }
}
