//! A journal that takes one step at a time (`Journal::parallel_steps`
//! false, as Restate's does) gets a batch's calls in turn, in call order,
//! each call's approval and execution done before the next call begins,
//! whatever `parallel_tool_calls` says; a journal that allows it gets
//! them at once.

#![allow(clippy::unused_async)] // tool handlers are async by contract

mod common;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Gauge, IssuedJournal, Wait, ask, assert_consistent, call, calls, results};
use serde_json::json;
use toolloop::run::journal::MemoryJournal;
use toolloop::run::{Decision, Governance};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, CancellationToken, Conversation, ModelResponse, ToolCall};

/// How a run of three `wait` calls (the first the slowest), each approved
/// by an approver as slow as its call, went.
struct Ran {
    /// The journal's steps, in the order they finished.
    steps: Vec<String>,
    /// The most tool executions in flight at once.
    executions: usize,
    /// The most approvals in flight at once.
    approvals: usize,
    conversation: Conversation,
}

async fn run(parallel_steps: bool) -> Ran {
    let model = ScriptedModel::new()
        .respond(calls([
            call("w1", "wait", json!({"millis": 60, "label": "first"})),
            call("w2", "wait", json!({"millis": 30, "label": "second"})),
            call("w3", "wait", json!({"millis": 1, "label": "third"})),
        ]))
        .respond(ModelResponse::from_text("done"));
    let gauge = Gauge::default();
    let asking = Arc::new(AtomicUsize::new(0));
    let asked_at_once = Arc::new(AtomicUsize::new(0));
    let approver = {
        let (asking, asked_at_once) = (Arc::clone(&asking), Arc::clone(&asked_at_once));
        move |call: ToolCall| {
            let (asking, asked_at_once) = (Arc::clone(&asking), Arc::clone(&asked_at_once));
            async move {
                let now = asking.fetch_add(1, Ordering::SeqCst) + 1;
                asked_at_once.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(call.input["millis"].as_u64().unwrap_or(0))).await;
                asking.fetch_sub(1, Ordering::SeqCst);
                Decision::Allow
            }
        }
    };
    let agent = Agent::builder()
        .model(model)
        .tool_with_state::<Wait>(gauge.clone())
        .governance(Governance::new().policy(|_: &ToolCall| Decision::Ask).approver(approver))
        .parallel_tool_calls(NonZeroUsize::new(4).unwrap())
        .build()
        .unwrap();
    let journal = IssuedJournal::new(MemoryJournal::new(), parallel_steps);
    let mut conversation = ask("Wait three times.");
    let done = agent.run_journaled(&mut conversation, &journal, &CancellationToken::new()).await.unwrap();
    assert_eq!(done.output, "done");
    let recorded = serde_json::to_value(&journal.inner).unwrap();
    let steps = recorded.as_array().unwrap().iter().map(|entry| entry["step"].as_str().unwrap().to_owned()).collect();
    Ran {
        steps,
        executions: gauge.peak.load(Ordering::SeqCst),
        approvals: asked_at_once.load(Ordering::SeqCst),
        conversation,
    }
}

fn contents(conversation: &Conversation) -> Vec<String> {
    results(conversation).into_iter().map(|result| result.content).collect()
}

#[tokio::test]
async fn a_journal_that_takes_one_step_at_a_time_gets_the_calls_in_turn() {
    let ran = run(false).await;
    assert_eq!(
        ran.steps,
        [
            "model call 1",
            "approval wait w1",
            "tool wait w1",
            "approval wait w2",
            "tool wait w2",
            "approval wait w3",
            "tool wait w3",
            "model call 2",
        ],
        "each call approved and executed before the next began, the slowest first"
    );
    assert_eq!(ran.executions, 1, "one tool execution at a time");
    assert_eq!(ran.approvals, 1, "one approval at a time");
    assert_eq!(contents(&ran.conversation), ["first", "second", "third"]);
    assert_consistent(&ran.conversation);
}

/// The control: the same run on a journal that allows steps at once
/// (the default) has the calls in flight together.
#[tokio::test]
async fn a_journal_that_allows_it_gets_the_calls_at_once() {
    let ran = run(true).await;
    assert!(ran.approvals > 1, "approvals asked at once: {}", ran.approvals);
    assert!(ran.executions > 1, "tools run at once: {}", ran.executions);
    let position = |step: &str| ran.steps.iter().position(|name| name == step).unwrap();
    assert!(position("approval wait w3") < position("approval wait w1"), "the quickest approval finished first");
    assert_eq!(contents(&ran.conversation), ["first", "second", "third"], "results still in call order");
    assert_consistent(&ran.conversation);
}

/// A run in turn replays from its journal: nothing is done again.
#[tokio::test]
async fn a_run_in_turn_replays_from_its_journal() {
    let model = ScriptedModel::new()
        .respond(calls([
            call("w1", "wait", json!({"millis": 5, "label": "first"})),
            call("w2", "wait", json!({"millis": 1, "label": "second"})),
        ]))
        .respond(ModelResponse::from_text("done"));
    let gauge = Gauge::default();
    let agent = Agent::builder()
        .model(model.clone())
        .tool_with_state::<Wait>(gauge.clone())
        .parallel_tool_calls(NonZeroUsize::new(2).unwrap())
        .build()
        .unwrap();
    let first = IssuedJournal::new(MemoryJournal::new(), false);
    let mut conversation = ask("Wait twice.");
    agent.run_journaled(&mut conversation, &first, &CancellationToken::new()).await.unwrap();
    let replay = IssuedJournal::new(MemoryJournal::replay(&first.inner), false);
    let mut again = ask("Wait twice.");
    let done = agent.run_journaled(&mut again, &replay, &CancellationToken::new()).await.unwrap();
    assert_eq!(done.output, "done");
    assert_eq!(replay.inner.replayed_steps(), 4, "two model calls and two tool executions, all replayed");
    assert_eq!(gauge.finished.load(Ordering::SeqCst), 2, "each tool ran once, in the first run");
    assert_eq!(model.requests().len(), 2, "the model was called by the first run only");
    assert_eq!(
        serde_json::to_value(&again).unwrap(),
        serde_json::to_value(&conversation).unwrap(),
        "the same conversation"
    );
}
