//! Agents as tools: an orchestrator calls sub-agents through tool calls.
//! Usage and counts roll up into the parent's metadata, the parent's
//! cancellation, deadline, token budget, tool timeout and governance bound
//! the sub-run, a failed sub-run is an error result naming its termination,
//! self-recursion stops at the depth limit, and a streamed parent carries
//! the sub-run's events tagged with the call.

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use toolloop::model::{BoxFuture, ModelErrorKind};
use toolloop::run::Event;
use toolloop::run::{Decision, Governance, Phase, Termination};
use toolloop::testing::ScriptedModel;
use toolloop::tool::{DynTool, ToolDefinition};
use toolloop::{Agent, CancellationToken, FailureKind, ModelError, ModelResponse, ToolContext, ToolError, ToolOutput};

fn text(answer: &str, input: u64, output: u64) -> ModelResponse {
    ModelResponse::from_text(answer).with_usage(usage(input, output))
}

fn research(id: &str, prompt: &str) -> toolloop::ToolCall {
    call(id, "research", json!({ "prompt": prompt }))
}

/// A text agent named `name` on `model`.
fn named(name: &str, model: &ScriptedModel) -> Agent {
    Agent::builder().name(name).model(model.clone()).build().unwrap()
}

#[tokio::test]
async fn usage_and_counts_roll_up_and_each_sub_run_is_listed() {
    let researcher_model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "paris"}))]).with_usage(usage(30, 5)))
        .respond(text("Paris: 2.1 million.", 40, 8))
        .respond(text("Berlin: 3.7 million.", 20, 6));
    let researcher =
        Agent::builder().name("researcher").model(researcher_model.clone()).tool::<Search>().build().unwrap();
    let orchestrator_model = ScriptedModel::new()
        .respond(calls([research("r1", "Paris?"), research("r2", "Berlin?")]).with_usage(usage(100, 10)))
        .respond(text("Berlin is larger.", 200, 20));
    let orchestrator = Agent::builder()
        .name("orchestrator")
        .model(orchestrator_model.clone())
        .tool_dyn(researcher.as_tool("research", "Research a question.").into())
        .build()
        .unwrap();

    let mut conversation = ask("Which is larger?");
    let done = orchestrator.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "Berlin is larger.");
    assert_consistent(&conversation);

    let metadata = &done.metadata;
    // Own: 300 in, 30 out; first sub-run 70/13, second 20/6.
    assert_eq!((metadata.usage.input_tokens, metadata.usage.output_tokens), (390, 49));
    assert_eq!(metadata.model_calls, 2 + 3);
    // Two research calls and the researcher's search.
    assert_eq!(metadata.tool_calls, 3);
    assert_eq!(metadata.tools_used.get("search"), Some(&1));
    assert_eq!(metadata.tools_used.get("research"), Some(&2));
    assert_eq!(metadata.iterations, 2, "iterations are the run's own");

    let listed: Vec<_> = metadata
        .sub_runs
        .iter()
        .map(|run| (run.call_id.as_str(), run.agent.as_str(), run.termination().clone(), run.usage().total()))
        .collect();
    assert_eq!(listed, [("r1", "researcher", Termination::Answer, 83), ("r2", "researcher", Termination::Answer, 26)]);
    assert_eq!(metadata.sub_runs[0].metadata.tool_calls, 1);

    // The parent model read each sub-run's answer as the call's result.
    let results = results(&conversation);
    assert_eq!(results[0].content, "Paris: 2.1 million.");
    assert_eq!(results[1].content, "Berlin: 3.7 million.");
    // Each call ran on a fresh conversation holding the prompt.
    let requests = researcher_model.requests();
    assert_eq!(requests[0].messages.len(), 1);
    assert_eq!(requests[0].messages[0].text(), "Paris?");
    assert_eq!(requests[2].messages.len(), 1);
    assert_eq!(requests[2].messages[0].text(), "Berlin?");
    // The parent model saw the prompt schema.
    let offered = &orchestrator_model.requests()[0].tools[0];
    assert_eq!(offered.name, "research");
    assert_eq!(offered.input_schema["required"], json!(["prompt"]));
}

#[tokio::test]
async fn the_parents_token_budget_counts_sub_runs_and_bounds_them() {
    // The sub-run may use only what is left of the parent's 1000 tokens
    // (900 after the first call): it stops before its second model call.
    let researcher_model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "x"}))]).with_usage(usage(850, 100)))
        .respond(text("never sent", 1, 1));
    let orchestrator_model = ScriptedModel::new()
        .respond(calls([research("r1", "dig")]).with_usage(usage(90, 10)))
        .respond(text("never sent either", 1, 1));
    let researcher =
        Agent::builder().name("researcher").model(researcher_model.clone()).tool::<Search>().build().unwrap();
    let orchestrator = Agent::builder()
        .model(orchestrator_model.clone())
        .token_budget(1000)
        .tool_dyn(researcher.as_tool("research", "Research.").into())
        .build()
        .unwrap();

    let mut conversation = ask("go");
    let error = orchestrator.run(&mut conversation).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::TokenBudget { used: 1050, limit: 1000 });
    assert_consistent(&conversation);
    let sub_run = &error.metadata().sub_runs[0];
    assert_eq!(sub_run.termination(), &Termination::TokenBudget { used: 950, limit: 900 });
    assert_eq!(researcher_model.requests().len(), 1);
    assert_eq!(orchestrator_model.requests().len(), 1, "the parent stopped before its next model call");
    let result = &results(&conversation)[0];
    assert_eq!(result.failure, Some(FailureKind::ToolFailed));
    assert!(result.content.contains("token_budget"), "{}", result.content);
}

#[tokio::test]
async fn a_failed_sub_run_is_an_error_result_naming_its_termination_and_the_parent_goes_on() {
    let researcher_model =
        ScriptedModel::new().fail(ModelError::new(ModelErrorKind::Overloaded, "test", "the model is overloaded"));
    let limited_model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "a"}))]))
        .respond(calls([call("s2", "search", json!({"query": "b"}))]));
    let limited =
        Agent::builder().name("digger").model(limited_model).tool::<Search>().max_model_calls(2).build().unwrap();
    let orchestrator_model = ScriptedModel::new()
        .respond(calls([research("r1", "dig"), call("d1", "dig", json!({"prompt": "deeper"}))]))
        .respond(text("I could not find out.", 5, 5));
    let orchestrator = Agent::builder()
        .model(orchestrator_model.clone())
        .tool_dyn(named("researcher", &researcher_model).as_tool("research", "Research.").into())
        .tool_dyn(limited.as_tool("dig", "Dig deeper.").into())
        .build()
        .unwrap();

    let mut conversation = ask("go");
    let done = orchestrator.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "I could not find out.");
    assert_consistent(&conversation);
    let results = results(&conversation);
    assert_eq!(results[0].failure, Some(FailureKind::ToolFailed));
    assert_eq!(
        results[0].content,
        "agent `researcher` ended without a result (model_error): the model call failed: test error (overloaded): \
         the model is overloaded"
    );
    assert_eq!(results[1].failure, Some(FailureKind::ToolFailed));
    assert!(
        results[1].content.contains("(max_model_calls): reached the limit of 2 model calls"),
        "{}",
        results[1].content
    );
    let terminations: Vec<_> = done.metadata.sub_runs.iter().map(|run| run.termination().clone()).collect();
    assert_eq!(terminations, [Termination::ModelError, Termination::MaxModelCalls { limit: 2 }]);
    // The sub-run's tool calls still count in the parent's totals.
    assert_eq!(done.metadata.tools_used.get("search"), Some(&2));
}

/// A typed input for the writer.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Brief {
    /// The topic.
    topic: String,
    /// The facts to use.
    facts: Vec<String>,
}

/// The writer's typed output.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Article {
    title: String,
    body: String,
}

#[tokio::test]
async fn a_typed_input_is_rendered_and_a_typed_output_returned_as_json() {
    let writer_model = ScriptedModel::new().respond(calls([call(
        "o1",
        "final_output",
        json!({"title": "Cities", "body": "Berlin is larger."}),
    )]));
    let writer = Agent::builder().name("writer").model(writer_model.clone()).output::<Article>().build().unwrap();
    let brief = json!({"topic": "cities", "facts": ["Berlin 3.7M", "Paris 2.1M"]});
    let orchestrator_model = ScriptedModel::new()
        .respond(calls([call("w1", "write", brief.clone()), call("w2", "write_plain", brief.clone())]))
        .respond(calls([call("w3", "write", json!({"topic": "x"}))]))
        .respond(text("Done.", 1, 1));
    let writer_model_plain = ScriptedModel::new().respond(text("plain", 1, 1));
    let plain = Agent::builder().model(writer_model_plain.clone()).build().unwrap();
    let orchestrator = Agent::builder()
        .model(orchestrator_model.clone())
        .tool_dyn(
            writer
                .as_tool("write", "Write an article from a brief.")
                .input::<Brief>()
                .render(|brief: &Brief| format!("Write about {} using: {}", brief.topic, brief.facts.join("; ")))
                .into(),
        )
        .tool_dyn(plain.as_tool("write_plain", "Write plainly.").input::<Brief>().into())
        .build()
        .unwrap();

    let mut conversation = ask("Write it");
    orchestrator.run(&mut conversation).await.unwrap();
    assert_consistent(&conversation);
    let offered = &orchestrator_model.requests()[0].tools;
    assert_eq!(offered[0].description, "Write an article from a brief.");
    assert_eq!(offered[0].input_schema["required"], json!(["topic", "facts"]));
    assert_eq!(writer_model.requests()[0].messages[0].text(), "Write about cities using: Berlin 3.7M; Paris 2.1M");
    // Without `render`, the input as pretty JSON.
    let sent: Value = serde_json::from_str(&writer_model_plain.requests()[0].messages[0].text()).unwrap();
    assert_eq!(sent, brief);
    let results = results(&conversation);
    let article: Value = serde_json::from_str(&results[0].content).unwrap();
    assert_eq!(article, json!({"title": "Cities", "body": "Berlin is larger."}));
    assert_eq!(results[1].content, "plain");
    // Arguments that do not fit the input never start a sub-run.
    assert_eq!(results[2].failure, Some(FailureKind::InvalidArguments));
    assert!(results[2].content.contains("facts"), "{}", results[2].content);
    assert_eq!(writer_model.requests().len(), 1);
}

#[tokio::test]
async fn a_kept_conversation_lasts_for_one_parent_run() {
    let researcher_model =
        ScriptedModel::new().respond(text("first", 1, 1)).respond(text("second", 1, 1)).respond(text("third", 1, 1));
    let orchestrator_model = ScriptedModel::new()
        .respond(calls([research("r1", "one")]))
        .respond(calls([research("r2", "two")]))
        .respond(text("done", 1, 1))
        .respond(calls([research("r3", "three")]))
        .respond(text("done again", 1, 1));
    let orchestrator = Agent::builder()
        .model(orchestrator_model)
        .tool_dyn(named("researcher", &researcher_model).as_tool("research", "Research.").keep_conversation().into())
        .build()
        .unwrap();

    orchestrator.run(&mut ask("go")).await.unwrap();
    orchestrator.run(&mut ask("again")).await.unwrap();
    let texts = |index: usize| -> Vec<String> {
        researcher_model.requests()[index].messages.iter().map(toolloop::Message::text).collect()
    };
    assert_eq!(texts(0), ["one"]);
    assert_eq!(texts(1), ["one", "first", "two"], "the second call continues the first's conversation");
    assert_eq!(texts(2), ["three"], "a new parent run starts afresh");
}

/// A sub-run that pauses (its call waits for the caller) cannot be resumed
/// by anyone: the tool call is an error result, and the kept conversation
/// answers the waiting call as not executed, so that the next call of the
/// tool goes on from it instead of being refused.
#[tokio::test]
async fn a_kept_conversation_goes_on_after_its_sub_run_paused() {
    let location = ToolDefinition::from_schema("location", "The user's location.", json!({"type": "object"}));
    let researcher_model = ScriptedModel::new()
        .respond(calls([call("l1", "location", json!({})), call("l2", "location", json!({"precise": true}))]))
        .respond(text("second", 1, 1));
    let researcher =
        Agent::builder().name("researcher").model(researcher_model.clone()).external_tool(location).build().unwrap();
    let orchestrator_model = ScriptedModel::new()
        .respond(calls([research("r1", "one")]))
        .respond(calls([research("r2", "two")]))
        .respond(text("done", 1, 1));
    let orchestrator = Agent::builder()
        .model(orchestrator_model)
        .tool_dyn(researcher.as_tool("research", "Research.").keep_conversation().into())
        .build()
        .unwrap();

    let mut conversation = ask("go");
    let done = orchestrator.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "done");
    let results: Vec<&toolloop::ToolResult> = conversation.iter().flat_map(toolloop::Message::tool_results).collect();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0].content,
        "agent `researcher` ended without a result (deferred): its calls of `location` wait for approval or for the \
         caller, which no one can give inside a tool call; they were not executed"
    );
    assert!(!results[1].is_error() && results[1].content.contains("second"), "{:?}", results[1]);

    // The second call continued the kept conversation, its waiting call answered.
    let second = &researcher_model.requests()[1].messages;
    assert_eq!(second.len(), 4, "{second:?}");
    let answers: Vec<_> = second[2].tool_results().collect();
    assert_eq!(answers.len(), 2, "both waiting calls are answered: {answers:?}");
    for (answer, id) in answers.iter().zip(["l1", "l2"]) {
        assert_eq!((answer.call_id.as_str(), answer.failure), (id, Some(FailureKind::NotExecuted)));
        assert!(answer.content.contains("a sub-run cannot wait"), "{answer:?}");
    }
    assert_eq!(second[3].text(), "two");
}

#[tokio::test]
async fn cancelling_the_parent_cancels_the_sub_run_and_keeps_its_usage() {
    let cancel = CancellationToken::new();
    let researcher_model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "x"}))]).with_usage(usage(12, 3)))
        .hang();
    // The parent is cancelled from another task once the sub-run waits for
    // its second model call.
    let (second_call, waiting) = tokio::sync::oneshot::channel::<()>();
    let second_call = Mutex::new(Some(second_call));
    let researcher = Agent::builder()
        .name("researcher")
        .model(researcher_model)
        .tool::<Search>()
        .on_event(move |event: &Event| {
            if let Event::IterationStarted { iteration: 2, .. } = event
                && let Some(sender) = second_call.lock().unwrap().take()
            {
                sender.send(()).unwrap();
            }
        })
        .build()
        .unwrap();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        waiting.await.unwrap();
        canceller.cancel();
    });
    let orchestrator = Agent::builder()
        .model(ScriptedModel::new().respond(calls([research("r1", "dig")]).with_usage(usage(5, 1))))
        .tool_dyn(researcher.as_tool("research", "Research.").into())
        .build()
        .unwrap();

    let mut conversation = ask("go");
    let error = orchestrator.run_with_cancel(&mut conversation, &cancel).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::Cancelled { attempt: 1, iteration: 1, phase: Phase::ToolExecution });
    assert_consistent(&conversation);
    assert_eq!(failures(&conversation), [Some(FailureKind::NotExecuted)]);
    let sub_run = &error.metadata().sub_runs[0];
    assert_eq!(sub_run.agent, "researcher");
    assert_eq!(sub_run.termination(), &Termination::Cancelled { attempt: 1, iteration: 2, phase: Phase::ModelCall });
    // What the sub-run had done before it was cut short still counts.
    assert_eq!(sub_run.usage().total(), 15);
    assert_eq!(error.metadata().usage.total(), 21);
    assert_eq!((sub_run.metadata.model_calls, sub_run.metadata.tool_calls), (2, 1));
    assert_eq!(error.metadata().model_calls, 3);
}

#[tokio::test(start_paused = true)]
async fn the_parents_deadline_bounds_the_sub_run() {
    let orchestrator = Agent::builder()
        .model(ScriptedModel::new().respond(calls([research("r1", "dig")])))
        .max_duration(Duration::from_secs(30))
        .tool_dyn(named("researcher", &ScriptedModel::new().hang()).as_tool("research", "Research.").into())
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let error = orchestrator.run(&mut conversation).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::MaxDuration { limit: Duration::from_secs(30) });
    assert_consistent(&conversation);
    let sub_run = &error.metadata().sub_runs[0];
    assert_eq!(sub_run.termination(), &Termination::MaxDuration { limit: Duration::from_secs(30) });
    assert_eq!(sub_run.metadata.model_calls, 1);
}

#[tokio::test(start_paused = true)]
async fn a_sub_runs_time_limit_is_cut_to_the_parents_remaining_time() {
    // The sub-agent's own limit is an hour; the parent has 20 s left after
    // its first model call, and the tool's timeout is a minute.
    let researcher = Agent::builder()
        .name("researcher")
        .model(ScriptedModel::new().hang())
        .max_duration(Duration::from_secs(3600))
        .build()
        .unwrap();
    let orchestrator = Agent::builder()
        .model(ScriptedModel::new().respond_after(Duration::from_secs(10), calls([research("r1", "dig")])))
        .max_duration(Duration::from_secs(30))
        .tool_dyn(researcher.as_tool("research", "Research.").into())
        .build()
        .unwrap();
    let error = orchestrator.run(&mut ask("go")).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::MaxDuration { limit: Duration::from_secs(30) });
    let sub_run = &error.metadata().sub_runs[0];
    assert_eq!(sub_run.termination(), &Termination::MaxDuration { limit: Duration::from_secs(20) });
}

#[tokio::test(start_paused = true)]
async fn the_tool_timeout_applies_to_the_sub_run() {
    let orchestrator_model = ScriptedModel::new().respond(calls([research("r1", "dig")])).respond(text("ok", 1, 1));
    let researcher_model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "x"}))]).with_usage(usage(7, 2)))
        .hang();
    let researcher = Agent::builder().name("researcher").model(researcher_model).tool::<Search>().build().unwrap();
    let orchestrator = Agent::builder()
        .model(orchestrator_model)
        .tool_dyn(researcher.as_tool("research", "Research.").timeout(Duration::from_secs(5)).into())
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = orchestrator.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "ok");
    // The sub-run's own time limit is cut to the timeout, so it ends by
    // itself (the timeout future polls the call before its clock) and the
    // model reads why; cut off from outside instead, it would be `timed_out`.
    assert_eq!(failures(&conversation), [Some(FailureKind::ToolFailed)]);
    let result = &results(&conversation)[0].content;
    assert!(result.starts_with("agent `researcher` ended without a result (max_duration)"), "{result}");
    let sub_run = &done.metadata.sub_runs[0];
    assert_eq!(sub_run.termination(), &Termination::MaxDuration { limit: Duration::from_secs(5) });
    assert_eq!(sub_run.usage().total(), 9);
    assert_eq!(done.metadata.usage.total(), 11);
}

/// An agent tool bound after the agent is built: lets an agent call itself.
struct Later(OnceLock<Arc<dyn DynTool>>, ToolDefinition);

impl DynTool for Later {
    fn definition(&self) -> &ToolDefinition {
        &self.1
    }

    fn call<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.0.get().expect("bound").call(input)
    }
}

#[tokio::test]
async fn an_agent_that_calls_itself_stops_at_the_depth_limit() {
    let delegate = |id: &str| calls([call(id, "delegate", json!({"prompt": "do it"}))]);
    // One script for every level, in the order the levels call it.
    let model = ScriptedModel::new()
        .respond(delegate("d0"))
        .respond(delegate("d1"))
        .respond(delegate("d2"))
        .respond(text("level 2 gives up", 1, 1))
        .respond(text("level 1 done", 1, 1))
        .respond(text("level 0 done", 1, 1));
    let definition = ToolDefinition::for_input::<toolloop::agent::Prompt>("delegate", "Delegate to yourself.");
    let later = Arc::new(Later(OnceLock::new(), definition));
    let agent = Agent::builder().name("looper").model(model.clone()).tool_dyn(later.clone()).build().unwrap();
    later.0.set(agent.as_tool("delegate", "Delegate to yourself.").max_depth(2).into()).ok().unwrap();

    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "level 0 done");
    model.assert_consumed();
    // The third level's call was refused with the chain of calls.
    let refused = model.requests()[3].messages.last().unwrap().tool_results().next().unwrap().clone();
    assert_eq!(refused.failure, Some(FailureKind::Rejected));
    assert!(
        refused.content.starts_with(
            "not run: this call is nested 2 tool calls deep (delegate → delegate → delegate), and `delegate` starts \
             no sub-run 2 or more deep"
        ),
        "{}",
        refused.content
    );
    // Nested sub-runs are listed under their parents, usage rolled up.
    let level1 = &done.metadata.sub_runs[0];
    let level2 = &level1.metadata.sub_runs[0];
    assert_eq!(level2.termination(), &Termination::Answer);
    assert!(level2.metadata.sub_runs.is_empty());
    assert_eq!(level1.usage().total(), 4);
    assert_eq!(done.metadata.usage.total(), 6);
    assert_eq!(done.metadata.model_calls, 6);
}

/// Records the context its call saw.
struct Probe {
    seen: Arc<Mutex<Option<ToolContext>>>,
}

impl DynTool for Probe {
    fn definition(&self) -> &ToolDefinition {
        static DEFINITION: OnceLock<ToolDefinition> = OnceLock::new();
        DEFINITION.get_or_init(|| ToolDefinition::from_schema("probe", "Probe.", json!({"type": "object"})))
    }

    fn call<'a>(&'a self, _: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            *self.seen.lock().unwrap() = ToolContext::current();
            Ok(ToolOutput::from("probed"))
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_tool_sees_its_context_nested_under_the_agent_tool() {
    let seen = Arc::new(Mutex::new(None));
    let researcher = Agent::builder()
        .name("researcher")
        .model(ScriptedModel::new().respond(calls([call("p1", "probe", json!({}))])).respond(text("ok", 1, 1)))
        .tool_dyn(Arc::new(Probe { seen: Arc::clone(&seen) }))
        .build()
        .unwrap();
    let orchestrator = Agent::builder()
        .model(
            ScriptedModel::new()
                .respond(calls([research("r1", "dig")]).with_usage(usage(60, 40)))
                .respond(text("done", 1, 1)),
        )
        .token_budget(500)
        .max_duration(Duration::from_secs(90))
        .tool_dyn(researcher.as_tool("research", "Research.").into())
        .build()
        .unwrap();
    orchestrator.run(&mut ask("go")).await.unwrap();
    let context = seen.lock().unwrap().take().expect("the probe ran in a context");
    assert_eq!((context.call_id(), context.tool(), context.depth()), ("p1", "probe", 1));
    assert_eq!(context.path(), ["research"]);
    assert_eq!(context.remaining_tokens(), Some(400), "the parent's 500 less its first call's 100");
    let left = context.remaining_time().unwrap();
    assert!(left <= Duration::from_secs(60) && left > Duration::ZERO, "bounded by the tool timeout: {left:?}");
    assert!(!context.cancel().is_cancelled());
}

#[tokio::test]
async fn the_parents_governance_and_hooks_see_the_call_like_any_other() {
    let researcher_model = ScriptedModel::new().respond(text("never", 1, 1));
    let audited = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&audited);
    let orchestrator = Agent::builder()
        .model(ScriptedModel::new().respond(calls([research("r1", "dig")])).respond(text("fine", 1, 1)))
        .governance(Governance::new().policy(|call| {
            if call.name == "research" { Decision::Deny("no research today".into()) } else { Decision::Allow }
        }))
        .on_event(move |event: &toolloop::run::Event| {
            if let toolloop::run::Event::ToolExecutionFinished { call, .. } = event {
                log.lock().unwrap().push(call.name.clone());
            }
        })
        .tool_dyn(named("researcher", &researcher_model).as_tool("research", "Research.").into())
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = orchestrator.run(&mut conversation).await.unwrap();
    assert_eq!(failures(&conversation), [Some(FailureKind::Denied)]);
    assert!(researcher_model.requests().is_empty(), "a denied call starts no sub-run");
    assert!(done.metadata.sub_runs.is_empty());
    assert_eq!(*audited.lock().unwrap(), ["research"]);
}

#[tokio::test]
async fn a_streamed_parent_carries_the_sub_runs_events_tagged_with_the_call() {
    let researcher_model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "x"}))]))
        .respond(text("Found it.", 3, 2));
    let researcher = Agent::builder().name("researcher").model(researcher_model).tool::<Search>().build().unwrap();
    let orchestrator = Agent::builder()
        .model(ScriptedModel::new().respond(calls([research("r1", "dig")])).respond(text("All done.", 1, 1)))
        .tool_dyn(researcher.as_tool("research", "Research.").into())
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let mut stream = orchestrator.run_stream(&mut conversation);
    let mut names = Vec::new();
    let mut sub_text = String::new();
    while let Some(event) = stream.next().await {
        match event {
            Event::SubRun { call_id, agent, event } => {
                assert_eq!((call_id.as_str(), agent.as_str()), ("r1", "researcher"));
                if let Event::TextDelta { text } = &*event {
                    sub_text.push_str(text);
                }
                names.push(format!("sub_run/{}", event.name()));
            }
            other => names.push(other.name().to_owned()),
        }
    }
    assert_eq!(sub_text, "Found it.");
    let position =
        |name: &str| names.iter().position(|seen| seen == name).unwrap_or_else(|| panic!("{name}: {names:?}"));
    let started = position("tool_execution_started");
    let finished_at = position("tool_execution_finished");
    let inside: Vec<_> = names[started + 1..finished_at].iter().map(String::as_str).collect();
    assert!(inside.iter().all(|name| name.starts_with("sub_run/")), "{inside:?}");
    for expected in ["sub_run/attempt_started", "sub_run/tool_execution_started", "sub_run/tool_execution_finished"] {
        assert!(inside.contains(&expected), "{expected} in {inside:?}");
    }
    // The sub-run's end is its own fact, inside the call that ran it.
    assert_eq!(inside.last(), Some(&"sub_run/run_finished"));
    let done = stream.output().await.unwrap();
    assert_eq!(done.output, "All done.");
    assert_eq!(done.metadata.sub_runs.len(), 1);
}

#[tokio::test]
async fn a_sub_agents_own_token_cancels_only_its_sub_run() {
    let own = CancellationToken::new();
    own.cancel();
    let researcher =
        Agent::builder().name("researcher").model(ScriptedModel::new().hang()).cancel_token(own).build().unwrap();
    let orchestrator = Agent::builder()
        .model(ScriptedModel::new().respond(calls([research("r1", "dig")])).respond(text("ok", 1, 1)))
        .tool_dyn(researcher.as_tool("research", "Research.").into())
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = orchestrator.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "ok");
    assert!(matches!(done.metadata.sub_runs[0].termination(), Termination::Cancelled { .. }));
    assert!(results(&conversation)[0].content.contains("(cancelled)"), "{}", results(&conversation)[0].content);
}

#[tokio::test(start_paused = true)]
async fn sub_runs_running_at_once_are_listed_in_call_order() {
    // The first call's sub-run answers after the second's.
    let researcher_model = ScriptedModel::new()
        .respond_after(Duration::from_secs(20), text("slow", 1, 1))
        .respond_after(Duration::from_secs(1), text("fast", 2, 2));
    let answered = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&answered);
    let researcher = Agent::builder()
        .name("researcher")
        .model(researcher_model)
        .on_iteration_finished(move |response: &ModelResponse| log.lock().unwrap().push(response.text()))
        .build()
        .unwrap();
    let orchestrator = Agent::builder()
        .model(
            ScriptedModel::new()
                .respond(calls([research("r1", "first"), research("r2", "second")]))
                .respond(text("done", 1, 1)),
        )
        .parallel_tool_calls(std::num::NonZeroUsize::new(2).unwrap())
        .tool_dyn(researcher.as_tool("research", "Research.").into())
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = orchestrator.run(&mut conversation).await.unwrap();
    assert_eq!(*answered.lock().unwrap(), ["fast", "slow"], "the sub-runs overlapped");
    let listed: Vec<_> = done.metadata.sub_runs.iter().map(|run| (run.call_id.as_str(), run.usage().total())).collect();
    assert_eq!(listed, [("r1", 2), ("r2", 4)]);
    let contents: Vec<_> = results(&conversation).into_iter().map(|result| result.content).collect();
    assert_eq!(contents, ["slow", "fast"]);
}

#[tokio::test]
async fn a_tool_loop_can_call_an_agent_too() {
    let researcher_model = ScriptedModel::new().respond(text("facts", 4, 4));
    let mut tools = toolloop::ToolSet::new();
    tools.add_dyn(named("researcher", &researcher_model).as_tool("research", "Research.").into()).unwrap();
    let mut tool_loop = toolloop::run::ToolLoop::new(
        ScriptedModel::new().respond(calls([research("r1", "dig")])).respond(text("done", 1, 1)),
        tools,
    );
    let done = tool_loop.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.metadata.sub_runs[0].agent, "researcher");
    assert_eq!(done.metadata.usage.total(), 10);
}

#[tokio::test]
async fn a_sub_run_whose_validation_is_exhausted_is_an_error_result() {
    let writer = Agent::builder()
        .name("writer")
        .model(ScriptedModel::new().respond(calls([call("o1", "final_output", json!({"title": "", "body": "x"}))])))
        .output::<Article>()
        .validator(|article: &Article| if article.title.is_empty() { Err("the title is empty") } else { Ok(()) })
        .max_attempts(1)
        .build()
        .unwrap();
    let orchestrator = Agent::builder()
        .model(
            ScriptedModel::new()
                .respond(calls([call("w1", "write", json!({"prompt": "write"}))]))
                .respond(text("sorry", 1, 1)),
        )
        .tool_dyn(writer.as_tool("write", "Write.").into())
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = orchestrator.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "sorry");
    let result = &results(&conversation)[0];
    assert_eq!(result.failure, Some(FailureKind::ToolFailed));
    assert_eq!(
        result.content,
        "agent `writer` ended without a result (validation_failed): no valid output after 1 attempt(s): attempt 1: \
         the title is empty"
    );
    assert_eq!(done.metadata.sub_runs[0].termination(), &Termination::ValidationFailed { attempts: 1 });
}

#[tokio::test]
async fn an_agent_tool_executed_outside_a_run_runs_on_its_own() {
    // `ToolSet::execute` (an MCP server serving the tool, say) gives no run
    // to report to: the sub-run still gets the token and the timeout.
    let mut tools = toolloop::ToolSet::new();
    let researcher = named("researcher", &ScriptedModel::new().respond(text("facts", 1, 1)));
    tools.add_dyn(researcher.as_tool("research", "Research.").into()).unwrap();
    let execution = tools.execute(&research("r1", "dig"), &CancellationToken::new()).await.unwrap();
    assert_eq!(execution.result.content, "facts");

    let cancel = CancellationToken::new();
    cancel.cancel();
    let hanging = named("researcher", &ScriptedModel::new().hang());
    let mut tools = toolloop::ToolSet::new();
    tools.add_dyn(hanging.as_tool("research", "Research.").into()).unwrap();
    assert!(tools.execute(&research("r2", "dig"), &cancel).await.is_err(), "cancelled");
}

/// The names a hook saw: a sub-run's events as `sub_run CALL AGENT NAME`.
fn seen_by_hooks(event: &Event) -> String {
    match event {
        Event::SubRun { call_id, agent, event } => format!("sub_run {call_id} {agent} {}", seen_by_hooks(event)),
        event => event.name().to_owned(),
    }
}

#[tokio::test]
async fn the_parents_hooks_see_each_sub_run_event_once_streamed_or_not() {
    for streamed in [false, true] {
        let researcher = named("researcher", &ScriptedModel::new().respond(text("Paris.", 10, 2)));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let orchestrator = Agent::builder()
            .name("orchestrator")
            .model(ScriptedModel::new().respond(calls([research("r1", "capital?")])).respond(text(
                "Paris it is.",
                5,
                1,
            )))
            .tool_dyn(researcher.as_tool("research", "Research a question.").into())
            .on_event(move |event| record.lock().unwrap().push(seen_by_hooks(event)))
            .build()
            .unwrap();
        let mut conversation = ask("What is the capital?");
        let mut streamed_events = Vec::new();
        if streamed {
            let mut stream = orchestrator.run_stream(&mut conversation);
            while let Some(event) = stream.next().await {
                streamed_events.push(seen_by_hooks(&event));
            }
            assert_eq!(stream.output().await.unwrap().output, "Paris it is.");
        } else {
            orchestrator.run(&mut conversation).await.unwrap();
        }
        let seen = seen.lock().unwrap().clone();
        let sub_run: Vec<_> = seen.iter().filter(|name| name.starts_with("sub_run")).cloned().collect();
        let mut expected = vec!["attempt_started", "iteration_started", "iteration_finished", "run_finished"];
        if streamed {
            expected.insert(2, "text_delta");
        }
        let expected: Vec<_> = expected.iter().map(|name| format!("sub_run r1 researcher {name}")).collect();
        assert_eq!(sub_run, expected, "streamed: {streamed}; the hooks saw {seen:?}");
        // The sub-run's events sit between the call's start and finish, once each.
        let start = seen.iter().position(|name| name == "tool_execution_started").unwrap();
        let finish = seen.iter().position(|name| name == "tool_execution_finished").unwrap();
        assert!(seen[start + 1..finish].iter().all(|name| name.starts_with("sub_run")), "{seen:?}");
        assert_eq!(finish - start - 1, sub_run.len());
        if streamed {
            // What the hooks saw is what the stream yielded.
            assert_eq!(seen, streamed_events);
        }
    }
}

/// A durable run replayed from its journal: the sub-run's model calls
/// (inside the recorded `research` step) do not shift the names of the
/// parent's later steps, so the replay finds every step recorded and
/// makes no model call, the parent's or the sub-run's.
#[tokio::test]
async fn a_replayed_run_finds_its_steps_after_a_sub_run() {
    use toolloop::run::journal::MemoryJournal;

    let orchestrator = |orchestrator_model: &ScriptedModel, researcher_model: &ScriptedModel| {
        Agent::builder()
            .name("orchestrator")
            .model(orchestrator_model.clone())
            .tool_dyn(named("researcher", researcher_model).as_tool("research", "Research.").into())
            .build()
            .unwrap()
    };
    let researcher_model = ScriptedModel::new().respond(text("Paris: 2.1 million.", 40, 8));
    let orchestrator_model = ScriptedModel::new()
        .respond(calls([research("r1", "Paris?")]).with_usage(usage(100, 10)))
        .respond(text("Paris has 2.1 million.", 200, 20));
    let journal = MemoryJournal::new();
    let mut conversation = ask("How large is Paris?");
    let cancel = CancellationToken::new();
    let agent = orchestrator(&orchestrator_model, &researcher_model);
    let done = agent.run_journaled(&mut conversation, &journal, &cancel).await.unwrap();
    assert_eq!(done.metadata.model_calls, 2 + 1);
    assert_eq!(journal.steps(), ["model call 1", "tool research r1", "model call 2"], "the parent's own calls");

    // After a crash at its end: the same run on models that answer nothing.
    let (silent_orchestrator, silent_researcher) = (ScriptedModel::new(), ScriptedModel::new());
    let mut replayed = ask("How large is Paris?");
    let replay = MemoryJournal::replay(&journal);
    let again = orchestrator(&silent_orchestrator, &silent_researcher)
        .run_journaled(&mut replayed, &replay, &cancel)
        .await
        .expect("every step is replayed");
    assert_eq!(again.output, done.output);
    assert_eq!(replayed.messages(), conversation.messages());
    assert!(silent_orchestrator.requests().is_empty() && silent_researcher.requests().is_empty());
    // The sub-run is counted from its recorded step, as the original run counted it.
    let (original, replay) = (&done.metadata, &again.metadata);
    assert_eq!((replay.usage, replay.model_calls, replay.tool_calls), (original.usage, 3, original.tool_calls));
    assert_eq!(replay.usage, usage(340, 38));
    assert_eq!(replay.sub_runs, original.sub_runs);
    assert_eq!(replay.models_used, original.models_used);
}

/// A paused run's checkpoint keeps the sub-runs before the pause: the
/// resumed run lists them beside the totals that count them.
#[tokio::test]
async fn a_resumed_run_lists_the_sub_runs_before_the_pause() {
    use toolloop::run::Resolution;

    let researcher_model = ScriptedModel::new().respond(text("Paris: 2.1 million.", 40, 8));
    let orchestrator_model = ScriptedModel::new()
        .respond(
            calls([research("r1", "Paris?"), call("d1", "delete", json!({"path": "/tmp/notes"}))])
                .with_usage(usage(100, 10)),
        )
        .respond(text("Done.", 200, 20));
    let deletions = Arc::new(Deletions::default());
    let orchestrator = Agent::builder()
        .model(orchestrator_model)
        .tool_dyn(named("researcher", &researcher_model).as_tool("research", "Research.").into())
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().needs_approval("delete"))
        .build()
        .unwrap();
    let mut conversation = ask("Research, then clean up.");
    let paused = orchestrator.run(&mut conversation).await.unwrap_err();
    assert!(paused.is_deferred());
    assert_eq!(paused.metadata().sub_runs.len(), 1);

    let json = serde_json::to_string(&conversation).unwrap();
    let mut conversation: toolloop::Conversation = serde_json::from_str(&json).unwrap();
    let done = orchestrator.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    let listed: Vec<_> = done.metadata.sub_runs.iter().map(|run| (run.call_id.as_str(), run.usage())).collect();
    assert_eq!(listed, [("r1", usage(40, 8))]);
    assert_eq!(done.metadata.usage, usage(340, 38));
    assert_eq!(deletions.0.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// An agent tool's kept conversation goes through a pause: after the
/// resume, its next call continues the conversation of its calls before
/// the pause.
#[tokio::test]
async fn a_kept_conversation_goes_on_after_a_pause() {
    use toolloop::run::Resolution;

    let researcher_model = ScriptedModel::new().respond(text("first", 1, 1)).respond(text("second", 1, 1));
    let orchestrator_model = ScriptedModel::new()
        .respond(calls([research("r1", "one"), call("d1", "delete", json!({"path": "/tmp/notes"}))]))
        .respond(calls([research("r2", "two")]))
        .respond(text("done", 1, 1));
    let deletions = Arc::new(Deletions::default());
    let orchestrator = Agent::builder()
        .model(orchestrator_model)
        .tool_dyn(named("researcher", &researcher_model).as_tool("research", "Research.").keep_conversation().into())
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().needs_approval("delete"))
        .build()
        .unwrap();
    let mut conversation = ask("go");
    assert!(orchestrator.run(&mut conversation).await.unwrap_err().is_deferred());
    let json = serde_json::to_string(&conversation).unwrap();
    let mut conversation: toolloop::Conversation = serde_json::from_str(&json).unwrap();
    let done = orchestrator.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, "done");
    let texts: Vec<String> = researcher_model.requests()[1].messages.iter().map(toolloop::Message::text).collect();
    assert_eq!(texts, ["one", "first", "two"], "the call after the pause continues the conversation before it");
}

/// Under a journal, each call of an agent tool that keeps its conversation
/// records only the messages it added (the records of a run's calls grow
/// with the conversation, not with its square), and a replay puts them
/// back together for the next live call.
#[tokio::test]
async fn a_kept_conversations_calls_record_only_what_they_added() {
    use toolloop::run::journal::MemoryJournal;

    let orchestrator = |orchestrator_model: ScriptedModel, researcher_model: &ScriptedModel| {
        Agent::builder()
            .model(orchestrator_model)
            .tool_dyn(named("researcher", researcher_model).as_tool("research", "Research.").keep_conversation().into())
            .build()
            .unwrap()
    };
    let asks = ["one", "two", "three"];
    let mut script = ScriptedModel::new();
    for (n, ask) in asks.iter().enumerate() {
        script = script.respond(calls([research(&format!("r{}", n + 1), ask)]));
    }
    let researcher_model =
        ScriptedModel::new().respond(text("1", 1, 1)).respond(text("2", 1, 1)).respond(text("3", 1, 1));
    let journal = IssuedJournal::new(MemoryJournal::new(), false);
    let cancel = CancellationToken::new();
    orchestrator(script.respond(text("done", 1, 1)), &researcher_model)
        .run_journaled(&mut ask("go"), &journal, &cancel)
        .await
        .unwrap();
    let records: Vec<Value> =
        journal.executions().iter().map(|execution| execution["nested"]["kept"].clone()).collect();
    assert_eq!(records.len(), 3);
    for (n, record) in records.iter().enumerate() {
        assert_eq!(record["from"], 2 * n, "{record}");
        let texts: Vec<&str> =
            record["messages"].as_array().unwrap().iter().map(|m| m["content"][0]["text"].as_str().unwrap()).collect();
        assert_eq!(texts, [asks[n], &(n + 1).to_string()], "{record}");
    }

    // A crash after the second call: both calls replay, the third runs live on what they left.
    let replay = MemoryJournal::replay_first(&journal.inner, 4);
    let live_researcher = ScriptedModel::new().respond(text("3", 1, 1));
    let live = ScriptedModel::new().respond(calls([research("r3", "three")])).respond(text("done", 1, 1));
    orchestrator(live, &live_researcher).run_journaled(&mut ask("go"), &replay, &cancel).await.unwrap();
    let texts: Vec<String> = live_researcher.requests()[0].messages.iter().map(toolloop::Message::text).collect();
    assert_eq!(texts, ["one", "1", "two", "2", "three"]);
}

/// A journaled run replayed after a crash between two calls of an agent
/// tool that keeps its conversation: the replayed first call (whose
/// sub-run does not run again) leaves the kept conversation as it left it,
/// so the second call, made live, continues it.
#[tokio::test]
async fn a_replayed_call_restores_the_kept_conversation() {
    use toolloop::run::journal::MemoryJournal;

    let orchestrator = |orchestrator_model: &ScriptedModel, researcher_model: &ScriptedModel| {
        Agent::builder()
            .model(orchestrator_model.clone())
            .tool_dyn(named("researcher", researcher_model).as_tool("research", "Research.").keep_conversation().into())
            .build()
            .unwrap()
    };
    let script = || {
        ScriptedModel::new()
            .respond(calls([research("r1", "one")]))
            .respond(calls([research("r2", "two")]))
            .respond(text("done", 1, 1))
    };
    let researcher_model = ScriptedModel::new().respond(text("first", 1, 1)).respond(text("second", 1, 1));
    let journal = MemoryJournal::new();
    let cancel = CancellationToken::new();
    let mut conversation = ask("go");
    orchestrator(&script(), &researcher_model).run_journaled(&mut conversation, &journal, &cancel).await.unwrap();
    assert_eq!(journal.steps()[..3], ["model call 1", "tool research r1", "model call 2"]);

    // The crash came after model call 2: the second research call runs again, live.
    let replay = MemoryJournal::replay_first(&journal, 3);
    let live_researcher = ScriptedModel::new().respond(text("second", 1, 1));
    let mut replayed = ask("go");
    let done = orchestrator(&ScriptedModel::new().respond(text("done", 1, 1)), &live_researcher)
        .run_journaled(&mut replayed, &replay, &cancel)
        .await
        .unwrap();
    assert_eq!(done.output, "done");
    let texts: Vec<String> = live_researcher.requests()[0].messages.iter().map(toolloop::Message::text).collect();
    assert_eq!(texts, ["one", "first", "two"]);
}

/// Two calls of one agent tool that keeps its conversation, in parallel
/// under a journal, the first held up by its approver so that it takes the
/// conversation second: replayed in call order, the first call's record
/// (the longer conversation) is not overwritten by the second's, and the
/// next call, made live, continues the whole conversation.
#[tokio::test]
async fn parallel_calls_replay_the_latest_kept_conversation() {
    use std::num::NonZeroUsize;
    use toolloop::run::journal::MemoryJournal;

    let orchestrator = |orchestrator_model: &ScriptedModel, researcher_model: &ScriptedModel| {
        let approver = |call: toolloop::ToolCall| async move {
            if call.id == "r1" {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Decision::Allow
        };
        Agent::builder()
            .model(orchestrator_model.clone())
            .tool_dyn(named("researcher", researcher_model).as_tool("research", "Research.").keep_conversation().into())
            .governance(Governance::new().policy(|_| Decision::Ask).approver(approver))
            .parallel_tool_calls(NonZeroUsize::new(2).unwrap())
            .build()
            .unwrap()
    };
    let script = ScriptedModel::new()
        .respond(calls([research("r1", "one"), research("r2", "two")]))
        .respond(calls([research("r3", "three")]))
        .respond(text("done", 1, 1));
    let researcher_model =
        ScriptedModel::new().respond(text("first", 1, 1)).respond(text("second", 1, 1)).respond(text("third", 1, 1));
    let journal = MemoryJournal::new();
    let cancel = CancellationToken::new();
    orchestrator(&script, &researcher_model).run_journaled(&mut ask("go"), &journal, &cancel).await.unwrap();
    let texts = |model: &ScriptedModel, index: usize| -> Vec<String> {
        model.requests()[index].messages.iter().map(toolloop::Message::text).collect()
    };
    assert_eq!(texts(&researcher_model, 1), ["two", "first", "one"], "r2 took the conversation first");

    // A crash after both research calls: r3 is made again, live.
    let steps = journal.steps();
    let kept = steps.iter().position(|step| step == "model call 2").unwrap();
    let replay = MemoryJournal::replay_first(&journal, kept + 1);
    let live = ScriptedModel::new().respond(text("third", 1, 1));
    let orchestrator_live = ScriptedModel::new().respond(text("done", 1, 1));
    orchestrator(&orchestrator_live, &live).run_journaled(&mut ask("go"), &replay, &cancel).await.unwrap();
    assert_eq!(texts(&live, 0), ["two", "first", "one", "second", "three"]);
}
