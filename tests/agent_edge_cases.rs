//! Edge cases found in review: outputs the model was told failed are never
//! accepted, callbacks that panic never break a run, parallelism never
//! changes an outcome, and what strict mode, budgets and limits do at the
//! edges.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

mod common;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Gauge, Report, Search, Wait, ask, assert_consistent, call, calls, failures, output, results, submit};
use serde_json::json;
use toolloop::run::Termination;
use toolloop::run::{Decision, Governance};
use toolloop::testing::ScriptedModel;
use toolloop::{
    Agent, BuildError, CancellationToken, ContentBlock, FailureKind, Message, ModelResponse, Role, StopReason,
    ToolCall, ToolResult, Usage,
};

#[tokio::test]
async fn an_output_call_cut_off_at_the_token_limit_is_not_the_output() {
    let model = ScriptedModel::new()
        .respond(output("o1", "cut off", 5).with_stop_reason(StopReason::MaxTokens))
        .respond(output("o2", "complete", 5));
    let agent = Agent::builder().model(model.clone()).output::<Report>().build().unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "complete");
    assert_eq!(failures(&conversation), [Some(FailureKind::Incomplete), None]);
    model.assert_consumed();
}

#[tokio::test]
async fn a_denied_output_call_is_not_the_output() {
    let model = ScriptedModel::new().respond(output("o1", "denied", 5)).respond(output("o2", "allowed", 5));
    let denied_once = AtomicUsize::new(0);
    let governance = Governance::new().policy(move |call| {
        if call.name == "final_output" && denied_once.fetch_add(1, Ordering::SeqCst) == 0 {
            Decision::Deny("not yet".into())
        } else {
            Decision::Allow
        }
    });
    let agent = Agent::builder().model(model).output::<Report>().governance(governance).build().unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "allowed");
    assert_eq!(failures(&conversation), [Some(FailureKind::Denied), None]);
}

#[tokio::test]
async fn a_denied_submit_does_not_submit() {
    let model = ScriptedModel::new()
        .respond(output("o1", "draft", 5))
        .respond(submit("s1"))
        .respond(ModelResponse::from_text("giving up"));
    let governance = Governance::new()
        .policy(|call| if call.name == "submit" { Decision::Deny("no".into()) } else { Decision::Allow });
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .reflection(|report: &Report| format!("{report:?}"))
        .governance(governance)
        .max_attempts(1)
        .build()
        .unwrap();
    let error = agent.run(&mut ask("go")).await.unwrap_err();
    assert!(matches!(error.termination(), Termination::NoOutputCall { .. }), "{error}");
}

/// `[final_output, submit]` in one batch, the output waiting on an approver.
async fn output_then_submit_in_one_batch(parallel: usize) -> Result<Report, toolloop::RunError> {
    let model = ScriptedModel::new().respond(calls([
        call("o1", "final_output", json!({"title": "t", "score": 5})),
        call("s1", "submit", json!({})),
    ]));
    let governance = Governance::new()
        .policy(|call| if call.name == "final_output" { Decision::Ask } else { Decision::Allow })
        .approver(|_call| async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Decision::Allow
        });
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .reflection(|report: &Report| format!("{report:?}"))
        .governance(governance)
        .parallel_tool_calls(NonZeroUsize::new(parallel).unwrap())
        .build()
        .unwrap();
    agent.run(&mut ask("go")).await.map(|done| done.output)
}

#[tokio::test(start_paused = true)]
async fn parallel_execution_does_not_change_what_submit_sees() {
    assert_eq!(output_then_submit_in_one_batch(1).await.unwrap().title, "t");
    assert_eq!(output_then_submit_in_one_batch(4).await.unwrap().title, "t");
}

#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Priority {
    #[default]
    Low,
    High,
}

/// A support ticket.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Ticket {
    title: String,
    #[serde(default)]
    priority: Priority,
}

#[tokio::test]
async fn strict_mode_nulls_for_defaulted_fields_pass_validation() {
    // Strict mode makes the model send every field, `null` for the ones it leaves out.
    let model =
        ScriptedModel::new().respond(calls([call("o1", "final_output", json!({"title": "t", "priority": null}))]));
    let agent = Agent::builder().model(model).output::<Ticket>().strict_tools().max_attempts(1).build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, Ticket { title: "t".into(), priority: Priority::Low });
    assert_eq!(Priority::High, serde_json::from_value(json!("high")).unwrap());
}

#[tokio::test]
async fn the_response_that_spends_the_token_budget_still_delivers_its_output() {
    let model = ScriptedModel::new().respond(output("o1", "done", 5).with_usage(Usage::new(90, 20)));
    let agent = Agent::builder().model(model).output::<Report>().token_budget(100).build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output.title, "done");
    assert_eq!(done.metadata.usage.total(), 110);
}

#[tokio::test]
async fn a_text_answer_cut_off_at_the_token_limit_says_so_in_the_metadata() {
    let model =
        ScriptedModel::new().respond(ModelResponse::from_text("The answer is").with_stop_reason(StopReason::MaxTokens));
    let agent = Agent::builder().model(model).build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, "The answer is");
    assert_eq!(done.metadata.stop_reason, Some(StopReason::MaxTokens));
}

#[tokio::test]
async fn a_panicking_policy_denies_the_call_instead_of_breaking_the_run() {
    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "x"}))]))
        .respond(ModelResponse::from_text("done"));
    let governance = Governance::new().policy(|_call| -> Decision { panic!("policy bug") });
    let agent = Agent::builder().model(model).tool::<Search>().governance(governance).build().unwrap();
    let mut conversation = ask("go");
    let done = tokio::spawn(async move { (agent.run(&mut conversation).await, conversation) }).await.unwrap();
    let (result, conversation) = done;
    assert_eq!(result.unwrap().output, "done");
    let denial = &conversation.messages()[2].tool_results().next().unwrap().content;
    assert_eq!(denial, "tool call denied: the tool policy panicked: policy bug");
}

#[tokio::test]
async fn a_panicking_approver_rejects_the_call() {
    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "x"}))]))
        .respond(ModelResponse::from_text("done"));
    let governance = Governance::new().policy(|_call| Decision::Ask).approver(|_call: ToolCall| async {
        panic!("approver bug");
        #[allow(unreachable_code)]
        Decision::Allow
    });
    let agent = Agent::builder().model(model).tool::<Search>().governance(governance).build().unwrap();
    let mut conversation = ask("go");
    agent.run(&mut conversation).await.unwrap();
    assert_eq!(failures(&conversation), [Some(FailureKind::ApprovalDenied)]);
}

#[tokio::test]
async fn a_panicking_terminal_check_is_collected_like_a_failing_hook() {
    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "q"}))]))
        .respond(ModelResponse::from_text("done"));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .terminal_check(|_batch| -> Option<String> { panic!("bug in check") })
        .build()
        .unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output, "done");
    assert_eq!(done.metadata.hook_errors, ["hook for `terminal_check` failed: panicked: bug in check"]);
}

#[tokio::test]
async fn the_output_tool_does_not_count_toward_max_tool_executions() {
    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "q"}))]))
        .respond(output("o1", "t", 5));
    let agent =
        Agent::builder().model(model).tool::<Search>().output::<Report>().max_tool_executions(1).build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output.title, "t");
    assert_eq!(done.metadata.tool_calls, 2, "the metadata still counts every executed call");
}

#[test]
fn tool_names_providers_reject_are_build_errors() {
    let built =
        Agent::builder().model(ScriptedModel::new()).output::<Report>().output_tool_name("final output!").build();
    assert_eq!(built.unwrap_err(), BuildError::InvalidToolName("final output!".into()));
}

/// A weekly report.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct Weekly {
    summary: String,
}

#[test]
fn the_output_types_doc_comment_describes_the_output_tool() {
    let agent = Agent::builder().model(ScriptedModel::new()).output::<Weekly>().build().unwrap();
    let definition = &agent.tool_definitions()[0];
    assert_eq!(
        definition.description,
        "Provide your final output. Its arguments are the output itself. The output: A weekly report."
    );
    let custom = Agent::builder()
        .model(ScriptedModel::new())
        .output::<Weekly>()
        .output_tool_description("Hand in the report.")
        .build()
        .unwrap();
    assert_eq!(custom.tool_definitions()[0].description, "Hand in the report.");
}

#[tokio::test(start_paused = true)]
async fn a_tool_interrupted_while_running_still_gets_its_result_event_and_audit_record() {
    let results = Arc::new(AtomicUsize::new(0));
    let audits = Arc::new(AtomicUsize::new(0));
    let (seen_results, seen_audits) = (results.clone(), audits.clone());
    let gauge = Gauge::default();
    let model = ScriptedModel::new().respond(calls([call("w1", "wait", json!({"millis": 60_000, "label": "slow"}))]));
    let agent = Agent::builder()
        .model(model)
        .tool_with_state::<Wait>(gauge.clone())
        .on_tool_execution_finished(move |_call, result| {
            assert_eq!(result.failure, Some(FailureKind::NotExecuted));
            seen_results.fetch_add(1, Ordering::SeqCst);
        })
        .on_event(move |event: &toolloop::run::Event| {
            if let toolloop::run::Event::ToolExecutionFinished { .. } = event {
                seen_audits.fetch_add(1, Ordering::SeqCst);
            }
        })
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.cancel();
    });
    let mut conversation = ask("go");
    agent.run_with_cancel(&mut conversation, &cancel).await.unwrap_err();
    assert_eq!(gauge.running.load(Ordering::SeqCst), 1, "the tool had started");
    assert_eq!(results.load(Ordering::SeqCst), 1);
    assert_eq!(audits.load(Ordering::SeqCst), 1);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_request_without_tools_carries_no_tool_blocks() {
    // A text agent without tools continues a conversation in which a typed
    // agent called its output tool: providers reject tool blocks in a request
    // that defines no tools, so the view shows them as text.
    let mut conversation = ask("write the report");
    conversation.push(
        Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolCall(ToolCall::new("toolu_1", "final_output", json!({"title": "t"})))],
        )
        .with_provider("test"),
    );
    conversation.push(Message::from_tool_results([ToolResult::success("toolu_1", "Output received")]));
    conversation.push_user("now summarise it in one line");
    let model = ScriptedModel::new().respond(ModelResponse::from_text("A one-line summary."));
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    agent.run(&mut conversation).await.unwrap();
    let sent = &model.requests()[0].messages;
    assert!(sent.iter().all(|m| m.tool_calls().next().is_none() && m.tool_results().next().is_none()));
    assert_eq!(sent[1].text(), "[called tool `final_output` with {\"title\":\"t\"}]");
    assert!(conversation.messages()[1].tool_calls().next().is_some(), "the raw history keeps its tool call");
}

/// A run-time tool that happens to be called `submit` (loaded from another
/// system): without reflection it is the user's, with side effects.
struct SubmitOrder {
    definition: toolloop::tool::ToolDefinition,
    orders: Arc<AtomicUsize>,
}

impl toolloop::tool::DynTool for SubmitOrder {
    fn definition(&self) -> &toolloop::tool::ToolDefinition {
        &self.definition
    }
    fn call<'a>(
        &'a self,
        _input: &'a serde_json::Value,
    ) -> toolloop::model::BoxFuture<'a, Result<toolloop::ToolOutput, toolloop::ToolError>> {
        self.orders.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(toolloop::ToolOutput::from("ordered")) })
    }
}

#[tokio::test]
async fn without_reflection_a_user_tool_named_submit_counts_toward_max_tool_executions() {
    let orders = Arc::new(AtomicUsize::new(0));
    let schema = json!({"type": "object", "properties": {"id": {"type": "string"}}});
    let tool = SubmitOrder {
        definition: toolloop::tool::ToolDefinition::from_schema("submit", "Submit an order.", schema),
        orders: orders.clone(),
    };
    let order = |id: &str| calls([call(id, "submit", json!({"id": id}))]);
    let model = ScriptedModel::new().respond(order("1")).respond(order("2")).respond(output("o", "t", 5));
    let agent = Agent::builder()
        .model(model)
        .tool_dyn(Arc::new(tool))
        .output::<Report>()
        .max_tool_executions(1)
        .build()
        .unwrap();
    let error = agent.run(&mut ask("go")).await.unwrap_err();
    assert!(matches!(error.termination(), Termination::MaxToolExecutions { .. }), "{error}");
    assert_eq!(orders.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_panicking_reflection_handler_is_an_error_result_and_the_model_can_retry() {
    let model =
        ScriptedModel::new().respond(output("o1", "boom", 5)).respond(output("o2", "fine", 5)).respond(submit("s1"));
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .reflection(|report: &Report| {
            assert!(report.title != "boom", "the handler cannot render this");
            format!("{report:?}")
        })
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "fine");
    assert_eq!(failures(&conversation), [Some(FailureKind::Panicked), None, None]);
    assert!(results(&conversation)[0].content.contains("the handler cannot render this"));
    assert_consistent(&conversation);
}
