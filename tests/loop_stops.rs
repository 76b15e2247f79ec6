//! The iteration loop on its own: every stop condition, synthetic results,
//! truncated responses, terminal signals, the iteration-limit hook, double
//! confirmation, parallel execution and governance.

mod common;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::run::{Decision, Event, Governance, LimitDecision, LoopOutput, Termination, ToolLoop, Verdict};
use toolloop::testing::ScriptedModel;
use toolloop::{Conversation, FailureKind, ModelError, ModelResponse, RunError, StopReason, ToolSet};

/// Submit the finished spec.
#[derive(toolloop::Tool)]
struct SpecSubmit {
    /// The spec's title.
    title: String,
}

impl SpecSubmit {
    #[allow(clippy::unused_async)] // tool handlers are async by contract
    async fn run(self) -> Result<serde_json::Value, std::convert::Infallible> {
        Ok(json!({"spec_id": format!("spec-{}", self.title.len())}))
    }
}

fn tools(db: &Db, gauge: &Gauge) -> ToolSet {
    let mut tools = ToolSet::new();
    tools.add::<Search>().unwrap();
    tools.add_with_state::<Lookup>(db.clone()).unwrap();
    tools.add_with_state::<Wait>(gauge.clone()).unwrap();
    tools.add::<SpecSubmit>().unwrap();
    tools
}

fn looped(model: &ScriptedModel) -> ToolLoop {
    ToolLoop::new(model.clone(), tools(&Db::default(), &Gauge::default()))
}

fn searches(ids: &[&str]) -> ModelResponse {
    calls(ids.iter().map(|id| call(id, "search", json!({"query": id}))))
}

fn lookups(ids: &[&str]) -> ModelResponse {
    calls(ids.iter().map(|id| call(id, "lookup", json!({"key": "missing"}))))
}

/// Runs and returns the stop, checking the conversation is consistent.
async fn stop_of(tool_loop: &mut ToolLoop, conversation: &mut Conversation) -> RunError {
    let error = tool_loop.run(conversation).await.unwrap_err();
    assert_consistent(conversation);
    assert_eq!(&error.metadata().termination, error.termination());
    assert!(!error.termination().is_success());
    error
}

#[tokio::test]
async fn max_tool_executions_answers_the_rest_of_the_batch_with_synthetic_results() {
    let model = ScriptedModel::new().respond(searches(&["a", "b", "c"]));
    let mut tool_loop = looped(&model).max_tool_executions(1);
    let mut conversation = ask("go");
    let error = stop_of(&mut tool_loop, &mut conversation).await;
    assert!(matches!(error.termination(), Termination::MaxToolExecutions { limit: 1 }), "{error}");
    assert_eq!(failures(&conversation), [None, Some(FailureKind::NotExecuted), Some(FailureKind::NotExecuted)]);
    assert!(results(&conversation)[1].content.contains("limit of 1 tool executions"));
    assert_eq!(error.metadata().tool_calls, 1);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_stops_a_running_tool_and_a_pending_model_call() {
    let model = ScriptedModel::new().respond(calls([call("w", "wait", json!({"millis": 60_000, "label": "x"}))]));
    let mut tool_loop = looped(&model).max_duration(Duration::from_secs(1));
    let mut conversation = ask("go");
    let error = stop_of(&mut tool_loop, &mut conversation).await;
    assert!(matches!(error.termination(), Termination::MaxDuration { limit } if limit.as_secs() == 1));
    assert_eq!(failures(&conversation), [Some(FailureKind::NotExecuted)]);

    let model = ScriptedModel::new().respond_after(Duration::from_secs(60), ModelResponse::from_text("late"));
    let mut tool_loop = looped(&model).max_duration(Duration::from_secs(1));
    let error = stop_of(&mut tool_loop, &mut ask("go")).await;
    assert!(matches!(error.termination(), Termination::MaxDuration { limit } if limit.as_secs() == 1));
}

#[tokio::test]
async fn the_token_budget_stops_the_next_model_call_after_the_response_that_spent_it() {
    // The response that crossed the budget is paid for: its calls run (they
    // cost no tokens, and an output or terminal call must not be lost), and
    // the budget stops the model call that would come next.
    let db = Db::default();
    let model = ScriptedModel::new().respond(lookups(&["a"]).with_usage(usage(90, 20)));
    let mut tool_loop = ToolLoop::new(model.clone(), tools(&db, &Gauge::default())).token_budget(100);
    let mut conversation = ask("go");
    let error = stop_of(&mut tool_loop, &mut conversation).await;
    assert!(matches!(error.termination(), Termination::TokenBudget { used: 110, limit: 100 }), "{error}");
    assert_eq!(db.lookups.load(Ordering::SeqCst), 1);
    assert_ne!(failures(&conversation), [Some(FailureKind::NotExecuted)], "the call has its real result");
    assert_eq!(error.metadata().usage, usage(90, 20));
    assert_eq!(error.metadata().model_calls, 1, "no model call after the budget ran out");
    model.assert_consumed();
}

#[tokio::test]
async fn consecutive_tool_failures_stop_the_run() {
    let model = ScriptedModel::new().respond(lookups(&["a"])).respond(lookups(&["b", "c", "d"]));
    let mut tool_loop = looped(&model).max_consecutive_tool_failures(3);
    let mut conversation = ask("go");
    let error = stop_of(&mut tool_loop, &mut conversation).await;
    assert!(matches!(error.termination(), Termination::ConsecutiveToolFailures { count: 3 }));
    let kinds = failures(&conversation);
    assert_eq!(kinds[..3], [Some(FailureKind::ToolFailed); 3]);
    assert_eq!(kinds[3], Some(FailureKind::NotExecuted));
}

#[tokio::test]
async fn a_success_resets_the_consecutive_failure_count() {
    let model = ScriptedModel::new()
        .respond(calls([
            call("1", "lookup", json!({"key": "missing"})),
            call("2", "search", json!({"query": "q"})),
            call("3", "lookup", json!({"key": "missing"})),
        ]))
        .respond(ModelResponse::from_text("done"));
    let mut tool_loop = looped(&model).max_consecutive_tool_failures(2);
    let done = tool_loop.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, LoopOutput::Answer("done".into()));
}

#[tokio::test]
async fn the_stop_on_failure_policy_ends_the_run_at_the_first_failed_tool() {
    let model = ScriptedModel::new()
        .respond(calls([call("1", "lookup", json!({"key": "missing"})), call("2", "search", json!({"query": "q"}))]));
    let mut tool_loop = looped(&model).stop_on_failed_tool();
    let mut conversation = ask("go");
    let error = stop_of(&mut tool_loop, &mut conversation).await;
    assert!(
        matches!(error.termination(), Termination::ToolPolicy { tool, kind: FailureKind::ToolFailed } if tool == "lookup")
    );
    assert_eq!(failures(&conversation), [Some(FailureKind::ToolFailed), Some(FailureKind::NotExecuted)]);
}

/// A loop has no `build()` to refuse a zero limit: the run reaches it
/// before calling the model.
#[tokio::test]
async fn a_loop_with_a_zero_limit_reaches_it_at_once() {
    let model = ScriptedModel::new().respond(searches(&["a"]));
    let error = stop_of(&mut looped(&model).max_iterations(0), &mut ask("go")).await;
    assert!(matches!(error.termination(), Termination::MaxIterations { limit: 0, .. }), "{:?}", error.termination());
    let error = stop_of(&mut looped(&model).max_model_calls(0), &mut ask("go")).await;
    assert!(matches!(error.termination(), Termination::MaxModelCalls { limit: 0 }), "{:?}", error.termination());
    assert!(model.requests().is_empty());
}

#[tokio::test]
async fn max_model_calls_max_iterations_and_model_errors_leave_a_consistent_conversation() {
    let model = ScriptedModel::new().respond(searches(&["a"])).respond(searches(&["b"]));
    let mut tool_loop = looped(&model).max_model_calls(1);
    let error = stop_of(&mut tool_loop, &mut ask("go")).await;
    assert!(matches!(error.termination(), Termination::MaxModelCalls { limit: 1 }));
    assert_eq!(error.metadata().model_calls, 1);

    let model = ScriptedModel::new().respond(searches(&["a"])).respond(searches(&["b"]));
    let mut tool_loop = looped(&model).max_iterations(2);
    let error = stop_of(&mut tool_loop, &mut ask("go")).await;
    assert!(matches!(error.termination(), Termination::MaxIterations { attempt: 1, iterations: 2, limit: 2 }));

    let model = ScriptedModel::new().respond(searches(&["a"]));
    let error = stop_of(&mut looped(&model), &mut ask("go")).await;
    assert!(error.model_error().is_some_and(|e| e.kind() == ModelErrorKind::ScriptExhausted));
}

#[tokio::test]
async fn a_truncated_response_gets_incomplete_results_and_its_calls_do_not_run() {
    let db = Db::default();
    let model = ScriptedModel::new()
        .respond(calls([call("1", "lookup", json!({"key": "k"}))]).with_stop_reason(StopReason::MaxTokens))
        .respond(ModelResponse::from_text("ok"));
    let mut tool_loop = ToolLoop::new(model, tools(&db, &Gauge::default()));
    let mut conversation = ask("go");
    tool_loop.run(&mut conversation).await.unwrap();
    assert_eq!(failures(&conversation), [Some(FailureKind::Incomplete)]);
    assert_eq!(db.lookups.load(Ordering::SeqCst), 0);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_paused_turn_is_sent_back_to_continue() {
    let model = ScriptedModel::new()
        .respond(ModelResponse::from_text("thinking").with_stop_reason(StopReason::PauseTurn))
        .respond(ModelResponse::from_text("done"));
    let done = looped(&model).run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, LoopOutput::Answer("done".into()));
    assert_eq!(done.metadata.iterations, 2);
}

#[tokio::test]
async fn a_terminal_check_ends_the_loop_with_a_signal_from_a_tool_result() {
    let model = ScriptedModel::new()
        .respond(searches(&["a"]))
        .respond(calls([call("s", "spec_submit", json!({"title": "auth"}))]))
        .respond(ModelResponse::from_text("never asked"));
    let mut tool_loop = looped(&model).terminal_check(|batch| {
        batch
            .iter()
            .find(|done| done.call.name == "spec_submit" && !done.result.is_error())
            .and_then(|done| done.output.as_ref()?.value()["spec_id"].as_str().map(str::to_owned))
    });
    let mut conversation = ask("go");
    let done = tool_loop.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, LoopOutput::Signal("spec-4".to_owned()));
    assert_eq!(done.metadata.termination, Termination::Signal);
    assert_eq!(model.remaining(), 1);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn the_iteration_limit_hook_grants_more_iterations_then_ends_with_a_signal() {
    let model = ScriptedModel::new().respond(searches(&["a"])).respond(searches(&["b"])).respond(searches(&["c"]));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    // The iterations made so far, counted from the events.
    let iterations = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&iterations);
    let mut tool_loop = looped(&model)
        .terminal_check(|_| None::<&'static str>)
        .on_iteration_finished(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .max_iterations(1)
        .on_iteration_limit(move |limit| {
            seen.lock().unwrap().push((iterations.load(Ordering::SeqCst), limit));
            if limit < 3 { LimitDecision::Extend(1) } else { LimitDecision::Signal("request budget") }
        });
    let done = tool_loop.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, LoopOutput::Signal("request budget"));
    // The hook is told the limit in force, each time as many iterations were made.
    assert_eq!(*asked.lock().unwrap(), [(1, 1), (2, 2), (3, 3)]);
    assert_eq!(done.metadata.iterations, 3);
    model.assert_consumed();
}

#[tokio::test]
async fn double_confirmation_asks_once_and_the_model_may_continue_with_tools() {
    let model = ScriptedModel::new()
        .respond(ModelResponse::from_text("done?"))
        .respond(searches(&["missed"]))
        .respond(ModelResponse::from_text("now done"));
    let mut tool_loop = looped(&model).double_confirmation_prompt("Are you sure?");
    let mut conversation = ask("go");
    let done = tool_loop.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, LoopOutput::Answer("now done".into()));
    assert_eq!(model.requests()[1].last_text(), "Are you sure?");
    assert_eq!(user_texts(&conversation), ["go", "Are you sure?"]);

    let model =
        ScriptedModel::new().respond(ModelResponse::from_text("a")).respond(ModelResponse::from_text("confirmed"));
    let done = looped(&model).double_confirmation().run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, LoopOutput::Answer("confirmed".into()));
    model.assert_consumed();
}

#[tokio::test(start_paused = true)]
async fn parallel_tool_calls_overlap_and_keep_call_order() {
    let batch = || {
        calls([
            call("1", "wait", json!({"millis": 300, "label": "first"})),
            call("2", "wait", json!({"millis": 100, "label": "second"})),
            call("3", "wait", json!({"millis": 200, "label": "third"})),
        ])
    };
    for (parallel, peak) in [(3, 3), (1, 1)] {
        let gauge = Gauge::default();
        let model = ScriptedModel::new().respond(batch()).respond(ModelResponse::from_text("ok"));
        let mut tool_loop = ToolLoop::new(model, tools(&Db::default(), &gauge))
            .parallel_tool_calls(NonZeroUsize::new(parallel).unwrap());
        let mut conversation = ask("go");
        tool_loop.run(&mut conversation).await.unwrap();
        let labels: Vec<_> = results(&conversation).into_iter().map(|r| r.content).collect();
        assert_eq!(labels, ["first", "second", "third"]);
        assert_eq!(gauge.peak.load(Ordering::SeqCst), peak, "parallel = {parallel}");
        assert_consistent(&conversation);
    }
}

#[tokio::test]
async fn governance_denies_asks_an_approver_and_audits_every_call() {
    let db = Db::default();
    let audit = Arc::new(Mutex::new(Vec::new()));
    let log = audit.clone();
    let governance = Governance::new()
        .policy(|call| match call.name.as_str() {
            "lookup" => Decision::Deny("lookups are disabled".into()),
            "wait" => Decision::Ask,
            _ => Decision::Allow,
        })
        .approver(|call: toolloop::ToolCall| async move {
            if call.input["label"] == "ok" { Decision::Allow } else { Decision::Deny("not today".into()) }
        });
    let model = ScriptedModel::new()
        .respond(calls([
            call("1", "lookup", json!({"key": "k"})),
            call("2", "wait", json!({"millis": 1, "label": "no"})),
            call("3", "wait", json!({"millis": 1, "label": "ok"})),
            call("4", "search", json!({"query": "q"})),
        ]))
        .respond(ModelResponse::from_text("done"));
    let mut tool_loop =
        ToolLoop::new(model, tools(&db, &Gauge::default())).governance(governance).on_event(move |event: &Event| {
            if let Event::ToolExecutionFinished { call, verdict, .. } = event {
                log.lock().unwrap().push((call.name.clone(), verdict.clone()));
            }
        });
    let mut conversation = ask("go");
    let done = tool_loop.run(&mut conversation).await.unwrap();
    assert_eq!(failures(&conversation), [Some(FailureKind::Denied), Some(FailureKind::ApprovalDenied), None, None]);
    assert_eq!(results(&conversation)[0].content, "tool call denied: lookups are disabled");
    assert_eq!(db.lookups.load(Ordering::SeqCst), 0, "a denied call never runs");
    assert_eq!(done.metadata.tool_calls, 2);
    assert_eq!(
        *audit.lock().unwrap(),
        [
            ("lookup".to_owned(), Verdict::Denied("lookups are disabled".into())),
            ("wait".to_owned(), Verdict::ApprovalDenied("not today".into())),
            ("wait".to_owned(), Verdict::Approved),
            ("search".to_owned(), Verdict::Allowed),
        ]
    );
}

#[tokio::test]
async fn the_stop_on_denied_policy_ends_the_run() {
    let model = ScriptedModel::new()
        .respond(calls([call("1", "lookup", json!({"key": "k"})), call("2", "search", json!({"query": "q"}))]));
    let governance = Governance::new()
        .policy(|call| if call.name == "lookup" { Decision::Deny("no".into()) } else { Decision::Allow });
    let mut tool_loop = looped(&model).governance(governance).stop_on_denied_tool();
    let mut conversation = ask("go");
    let error = stop_of(&mut tool_loop, &mut conversation).await;
    assert!(matches!(error.termination(), Termination::ToolPolicy { kind: FailureKind::Denied, .. }));
    assert_eq!(failures(&conversation), [Some(FailureKind::Denied), Some(FailureKind::NotExecuted)]);
}

#[tokio::test]
async fn a_model_error_in_the_middle_keeps_earlier_work() {
    let model = ScriptedModel::new()
        .respond(searches(&["a"]))
        .fail(ModelError::new(ModelErrorKind::RateLimited, "test", "slow down").with_status(429));
    let mut conversation = ask("go");
    let error = stop_of(&mut looped(&model), &mut conversation).await;
    assert!(error.model_error().is_some_and(ModelError::is_retryable));
    assert_eq!(conversation.len(), 3, "the first iteration stays in the conversation");
}

#[tokio::test]
async fn a_loop_run_can_be_spawned() {
    let model = ScriptedModel::new().respond(searches(&["a"])).respond(ModelResponse::from_text("done"));
    let mut tool_loop = looped(&model).terminal_check(|_| None::<String>);
    let handle = tokio::spawn(async move { tool_loop.run(&mut ask("go")).await.map(|done| done.output) });
    assert_eq!(handle.await.unwrap().unwrap(), LoopOutput::Answer("done".into()));
}

#[tokio::test]
async fn a_loop_takes_the_typed_hooks_and_each_fires_exactly_on_its_event() {
    let model = ScriptedModel::new()
        .respond(calls([call("1", "search", json!({"query": "a"})), call("2", "lookup", json!({"key": "k"}))]))
        .respond(ModelResponse::from_text("done"));
    let events = Arc::new(Mutex::new(Vec::new()));
    let typed = Arc::new(Mutex::new(Vec::new()));
    let log = |name: &'static str| {
        let typed = Arc::clone(&typed);
        move |detail: String| typed.lock().unwrap().push(format!("{name} {detail}"))
    };
    let (started, finished, audited, answered, ended) = (
        log("tool_execution_started"),
        log("tool_execution_finished"),
        log("audit"),
        log("iteration_finished"),
        log("run_finished"),
    );
    let seen = Arc::clone(&events);
    let mut tool_loop = looped(&model)
        .on_event(move |event: &Event| seen.lock().unwrap().push(event.name()))
        .on_tool_execution_started(move |call| started(call.name.clone()))
        .on_tool_execution_finished(move |call, result| finished(format!("{}: {}", call.name, result.content)))
        .on_event(move |event: &Event| {
            if let Event::ToolExecutionFinished { call, verdict, .. } = event {
                audited(format!("{} {verdict:?}", call.name));
            }
        })
        .on_iteration_finished(move |response| answered(response.text()))
        .on_run_finished(move |termination| ended(format!("{termination:?}")));
    let done = tool_loop.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, LoopOutput::Answer("done".into()));
    let typed = typed.lock().unwrap().clone();
    assert_eq!(
        typed,
        [
            "iteration_finished ",
            "tool_execution_started search",
            "tool_execution_finished search: results for a",
            "audit search Allowed",
            "tool_execution_started lookup",
            "tool_execution_finished lookup: row k",
            "audit lookup Allowed",
            "iteration_finished done",
            "run_finished Answer",
        ]
    );
    // Each typed hook saw its event, once per event, in the order `on_event` saw them.
    let filtered: Vec<_> =
        events.lock().unwrap().iter().copied().filter(|name| typed.iter().any(|line| line.starts_with(name))).collect();
    let named: Vec<_> =
        typed.iter().filter(|line| !line.starts_with("audit")).map(|line| line.split(' ').next().unwrap()).collect();
    assert_eq!(filtered, named);
}
