//! Agent hooks (order, failures collected) and cancellation (token, drop),
//! plus the text agent's own options.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::json;
use toolloop::run::{LimitDecision, Phase, Termination};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, CancellationToken, FailureKind, ModelResponse};

#[tokio::test]
async fn hooks_fire_in_order_for_helpers_the_reflection_handler_and_submit() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let push = || {
        let log = log.clone();
        move |entry: String| log.lock().unwrap().push(entry)
    };
    let (on_attempt, on_response) = (push(), push());
    let (on_call, on_result, on_invalid, on_run_finished) = (push(), push(), push(), push());
    let model = ScriptedModel::new()
        .respond(calls([call("s", "search", json!({"query": "q"}))]))
        .respond(output("o1", "", 5))
        .respond(submit("x1"))
        .respond(output("o2", "T", 5))
        .respond(submit("x2"));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .output::<Report>()
        .reflection(|r: &Report| format!("preview {}", r.title))
        .validator(|r: &Report| if r.title.is_empty() { Err("empty title") } else { Ok(()) })
        .on_attempt_started(move |attempt| on_attempt(format!("attempt {attempt}")))
        .on_iteration_finished(move |response| {
            on_response(format!("response ({} calls)", response.tool_calls().count()));
        })
        .on_tool_execution_started(move |call| on_call(format!("call {}", call.name)))
        .on_tool_execution_finished(move |call, result| on_result(format!("result {}: {}", call.name, result.content)))
        .on_validation_failed(move |attempt, errors| on_invalid(format!("invalid {attempt}: {}", errors.join(","))))
        .on_run_finished(move |reason| on_run_finished(format!("stop {reason:?}")))
        .build()
        .unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert!(done.metadata.hook_errors.is_empty());
    assert_eq!(
        *log.lock().unwrap(),
        [
            "attempt 1",
            "response (1 calls)",
            "call search",
            "result search: results for q",
            "response (1 calls)",
            "call final_output",
            "result final_output: preview ",
            "response (1 calls)",
            "call submit",
            // What the model was told: the verdict, not a placeholder.
            "result submit: Your output was rejected:\n- empty title\nCall `final_output` again with a corrected \
             output, then call `submit`.",
            "invalid 1: empty title",
            "attempt 2",
            // The verdict is in the submit call's result: no feedback message.
            "response (1 calls)",
            "call final_output",
            "result final_output: preview T",
            "response (1 calls)",
            "call submit",
            "result submit: Output accepted.",
            "stop Output",
        ]
    );
}

#[tokio::test]
async fn failing_and_panicking_hooks_are_collected_and_never_break_the_run() {
    let model =
        ScriptedModel::new().respond(calls([call("s", "search", json!({"query": "q"}))])).respond(output("o", "T", 5));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .output::<Report>()
        .on_tool_execution_started(|call| {
            if call.name == "search" { Err(format!("cannot log {}", call.name)) } else { Ok(()) }
        })
        .on_tool_execution_finished(|_, _| -> Result<(), String> { panic!("hook exploded") })
        .on_run_finished(|_| Err::<(), _>("stop hook failed"))
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "T");
    assert_eq!(
        done.metadata.hook_errors,
        [
            "hook for `tool_execution_started` failed: cannot log search",
            "hook for `tool_execution_finished` failed: panicked: hook exploded",
            "hook for `tool_execution_finished` failed: panicked: hook exploded",
            "hook for `run_finished` failed: stop hook failed",
        ]
    );
    assert_consistent(&conversation);
}

#[tokio::test]
async fn hook_errors_are_reported_on_failed_runs_too() {
    let agent =
        Agent::builder().model(ScriptedModel::new()).on_attempt_started(|_| Err::<(), _>("no")).build().unwrap();
    let error = agent.run(&mut ask("go")).await.unwrap_err();
    assert!(matches!(error.termination(), Termination::ModelError) && error.model_error().is_some());
    assert_eq!(error.metadata().hook_errors, ["hook for `attempt_started` failed: no"]);
}

#[tokio::test(start_paused = true)]
async fn cancelling_while_the_model_call_is_pending_stops_promptly() {
    let cancel = CancellationToken::new();
    let model = ScriptedModel::new().respond(calls([call("s", "search", json!({"query": "q"}))])).hang();
    let agent =
        Agent::builder().model(model).tool::<Search>().output::<Report>().cancel_token(cancel.clone()).build().unwrap();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        trigger.cancel();
    });
    let mut conversation = ask("go");
    let error = agent.run(&mut conversation).await.unwrap_err();
    // The second iteration's model call was pending: attempt, iteration and phase are named.
    let expected = Termination::Cancelled { attempt: 1, iteration: 2, phase: Phase::ModelCall };
    assert_eq!(error.termination(), &expected, "{error}");
    assert_eq!(error.metadata().termination, expected);
    assert!(error.to_string().contains("attempt 1, iteration 2"), "{error}");
    assert_eq!(conversation.len(), 3, "the finished iteration stays");
    assert_consistent(&conversation);
}

#[tokio::test(start_paused = true)]
async fn cancelling_while_a_tool_runs_answers_its_call_and_the_rest_of_the_batch() {
    let gauge = Gauge::default();
    let cancel = CancellationToken::new();
    let model = ScriptedModel::new().respond(calls([
        call("1", "search", json!({"query": "q"})),
        call("2", "wait", json!({"millis": 60_000, "label": "slow"})),
        call("3", "search", json!({"query": "r"})),
    ]));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .tool_with_state::<Wait>(gauge.clone())
        .output::<Report>()
        .build()
        .unwrap();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.cancel();
    });
    let mut conversation = ask("go");
    let error = agent.run_with_cancel(&mut conversation, &cancel).await.unwrap_err();
    let expected = Termination::Cancelled { attempt: 1, iteration: 1, phase: Phase::ToolExecution };
    assert_eq!(error.termination(), &expected, "{error}");
    assert_eq!(failures(&conversation), [None, Some(FailureKind::NotExecuted), Some(FailureKind::NotExecuted)]);
    assert_eq!(gauge.finished.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(error.metadata().tool_calls, 1);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_cancelled_token_stops_before_the_first_model_call() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let model = ScriptedModel::new().respond(ModelResponse::from_text("unused"));
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let error = agent.run_with_cancel(&mut ask("go"), &cancel).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::Cancelled { attempt: 1, iteration: 1, phase: Phase::ModelCall });
    assert_eq!(model.requests().len(), 0);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_run_future_mid_tool_leaves_no_dangling_call() {
    let model = ScriptedModel::new()
        .respond(calls([call("1", "search", json!({"query": "q"}))]))
        .respond(calls([call("2", "wait", json!({"millis": 60_000, "label": "slow"}))]));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .tool_with_state::<Wait>(Gauge::default())
        .output::<Report>()
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let run = tokio::time::timeout(Duration::from_secs(1), agent.run(&mut conversation)).await;
    assert!(run.is_err(), "the run was still waiting for the tool");
    assert_eq!(conversation.len(), 3, "the unfinished batch was never written");
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_text_agent_with_a_terminal_check_returns_the_signal() {
    let model = ScriptedModel::new()
        .respond(calls([call("1", "search", json!({"query": "spec"}))]))
        .respond(ModelResponse::from_text("unused"));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .terminal_check(|batch| batch.iter().find(|d| d.call.name == "search").map(|d| d.result.content.clone()))
        .build()
        .unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, "results for spec");
    assert_eq!(done.metadata.termination, Termination::Signal);
}

#[tokio::test]
async fn a_text_agent_with_double_confirmation_and_an_iteration_limit_hook() {
    let model = ScriptedModel::new()
        .respond(ModelResponse::from_text("draft"))
        .respond(calls([call("1", "search", json!({"query": "more"}))]))
        .respond(calls([call("2", "search", json!({"query": "even more"}))]));
    let agent = Agent::builder()
        .model(model.clone())
        .tool::<Search>()
        .max_iterations(2)
        .double_confirmation()
        .on_iteration_limit(|limit| {
            if limit == 2 { LimitDecision::Extend(1) } else { LimitDecision::Signal("out of budget".into()) }
        })
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "out of budget");
    assert_eq!(model.requests()[1].last_text(), toolloop::run::DEFAULT_CONFIRMATION_PROMPT);
    assert_consistent(&conversation);
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_a_slow_async_validator_reports_the_validation_phase() {
    let cancel = CancellationToken::new();
    let model = ScriptedModel::new().respond(output("o", "T", 5));
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .async_validator(|_| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<(), String>(())
        })
        .build()
        .unwrap();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.cancel();
    });
    let mut conversation = ask("go");
    let error = agent.run_with_cancel(&mut conversation, &cancel).await.unwrap_err();
    assert!(
        matches!(error.termination(), Termination::Cancelled { attempt: 1, iteration: 1, phase: Phase::Validation }),
        "{error}"
    );
    assert_consistent(&conversation);

    let model = ScriptedModel::new().respond(output("o", "T", 5));
    let agent = Agent::builder()
        .model(model)
        .max_duration(Duration::from_secs(10))
        .output::<Report>()
        .async_validator(|_| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<(), String>(())
        })
        .build()
        .unwrap();
    let error = agent.run(&mut ask("go")).await.unwrap_err();
    assert!(matches!(error.termination(), Termination::MaxDuration { .. }), "{error}");
}

#[tokio::test(start_paused = true)]
async fn a_tool_past_its_timeout_fails_and_the_model_sees_it() {
    let model = ScriptedModel::new()
        .respond(calls([call("1", "wait", json!({"millis": 5_000, "label": "slow"}))]))
        .respond(output("o", "T", 5));
    let agent = Agent::builder()
        .model(model)
        .tool_with_state::<Wait>(Gauge::default())
        .tool_timeout(Duration::from_secs(1))
        .output::<Report>()
        .build()
        .unwrap();
    let mut conversation = ask("go");
    agent.run(&mut conversation).await.unwrap();
    assert_eq!(failures(&conversation)[0], Some(FailureKind::TimedOut));
}

#[tokio::test]
async fn a_denied_call_never_reports_that_it_started_and_its_end_carries_the_verdict() {
    use toolloop::run::{Decision, Event, Governance, Verdict};
    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "a"})), call("s2", "search", json!({"query": "b"}))]))
        .respond(ModelResponse::from_text("done"));
    let governance = Governance::new().policy(|call: &toolloop::ToolCall| {
        if call.input["query"] == "a" { Decision::Deny("not this one".into()) } else { Decision::Allow }
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .governance(governance)
        .on_event(move |event: &Event| {
            let entry = match event {
                Event::ToolExecutionStarted { call, .. } => format!("started {}", call.id),
                Event::ToolExecutionFinished { call, verdict, result, .. } => {
                    format!("finished {} {verdict:?} {:?}", call.id, result.failure)
                }
                _ => return,
            };
            log.lock().unwrap().push(entry);
        })
        .build()
        .unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            format!("finished s1 {:?} Some(Denied)", Verdict::Denied("not this one".into())),
            "started s2".to_owned(),
            format!("finished s2 {:?} None", Verdict::Allowed),
        ]
    );
    assert_eq!(done.metadata.tool_calls, 1);
}
