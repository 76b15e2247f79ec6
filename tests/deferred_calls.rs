//! Deferred tool calls: a run pauses with calls pending (for approval, or
//! for the caller to execute), the conversation goes through JSON, and a
//! resume answers them and finishes the run; every bad resume is a typed
//! error that leaves the conversation as it was.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Delete, Deletions, Report, Search, ask, assert_consistent, call, calls, output, results, submit};
use serde_json::json;
use toolloop::run::Event;
use toolloop::run::{Decision, DeferralReason, Governance, LoopOutput, Resolution, ResumeError, Termination, ToolLoop};
use toolloop::testing::ScriptedModel;
use toolloop::tool::ToolDefinition;
use toolloop::{Agent, Conversation, FailureKind, ModelResponse, ToolSet};

fn delete(id: &str, path: &str) -> toolloop::ToolCall {
    call(id, "delete", json!({ "path": path }))
}

fn search(id: &str) -> toolloop::ToolCall {
    call(id, "search", json!({ "query": "q" }))
}

fn location() -> ToolDefinition {
    let schema = json!({"type": "object", "properties": {"precision": {"type": "string"}}});
    ToolDefinition::from_schema("location", "The user's location, from their browser.", schema)
}

fn agent(model: ScriptedModel, deletions: &Arc<Deletions>) -> Agent {
    Agent::builder()
        .model(model)
        .tool::<Search>()
        .tool_with_state::<Delete>(Arc::clone(deletions))
        .external_tool(location())
        .governance(Governance::new().needs_approval("delete"))
        .build()
        .unwrap()
}

/// Through JSON, as a store or another process would see it.
fn reload(conversation: &Conversation) -> Conversation {
    serde_json::from_str(&serde_json::to_string(conversation).unwrap()).unwrap()
}

/// A typed agent with reflection whose output comes as the answer's text
/// (native or prompted mode), and whose `delete` calls need approval.
fn text_reflective(
    model: &ScriptedModel,
    deletions: &Arc<Deletions>,
    native: bool,
    max_iterations: u32,
) -> Agent<Report, toolloop::agent::Reflective> {
    let builder = Agent::builder()
        .model(model.clone())
        .tool_with_state::<Delete>(Arc::clone(deletions))
        .governance(Governance::new().needs_approval("delete"))
        .output::<Report>()
        .reflection(|report: &Report| format!("{} scores {}", report.title, report.score))
        .max_iterations(max_iterations);
    let agent = if native { builder.native_output().build() } else { builder.prompted_output().build() };
    agent.unwrap()
}

#[tokio::test]
async fn an_approval_pauses_the_run_and_a_resume_after_json_finishes_it() {
    let model = ScriptedModel::new()
        .respond(calls([search("s1"), delete("d1", "/tmp/a")]).with_usage(common::usage(10, 5)))
        .respond(ModelResponse::from_text("Searched and deleted.").with_usage(common::usage(20, 5)));
    let deletions = Arc::new(Deletions::default());
    let agent = agent(model.clone(), &deletions);
    let mut conversation = ask("Clean up.");

    let paused = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(*paused.termination(), Termination::Deferred { calls: 1 });
    assert!(paused.is_deferred() && paused.termination().is_deferred() && !paused.termination().is_success());
    let deferred = paused.deferred_calls();
    assert_eq!(deferred.len(), 1);
    assert_eq!(deferred[0].call, delete("d1", "/tmp/a"));
    assert_eq!(deferred[0].reason, DeferralReason::Approval("`delete` needs approval".into()));
    // The call of the same batch that needs no decision ran; the risky one did not.
    assert_eq!(paused.metadata().tool_calls, 1);
    assert_eq!(paused.metadata().usage, common::usage(10, 5));
    assert_eq!(deletions.0.load(Ordering::SeqCst), 0);
    assert!(conversation.is_pending());
    assert_eq!(conversation.deferred_calls(), deferred);
    // Serialisable, for the web page that shows the request to a person.
    let shown = serde_json::to_value(deferred).unwrap();
    assert_eq!(shown[0]["reason"], json!({"kind": "approval", "reason": "`delete` needs approval"}));

    // Running it again by mistake is refused before the model is called.
    let refused = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(*refused.termination(), Termination::PendingCalls { calls: 1 });
    assert!(refused.to_string().contains("resume"), "{refused}");
    assert_eq!(model.requests().len(), 1);

    // As an earlier toolloop saved it: its checkpoint kept who answered (the
    // events say it now); it still resumes.
    let mut saved = serde_json::to_value(&conversation).unwrap();
    let checkpoint = saved["pending"]["checkpoint"].as_object_mut().unwrap();
    assert!(!checkpoint.contains_key("answered_by"));
    // What it counts of who answered travels with it.
    let answered: Vec<&serde_json::Value> = checkpoint["models_used"].as_object().unwrap().values().collect();
    assert_eq!(answered, [&json!(1)]);
    checkpoint.insert("answered_by".into(), json!([{"provider": "openai", "model": "scripted"}]));
    let mut conversation: Conversation = serde_json::from_value(saved).unwrap();
    assert_eq!(conversation.deferred_calls(), deferred);
    let done = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, "Searched and deleted.");
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1);
    assert!(!conversation.is_pending());
    assert_consistent(&conversation);
    let contents: Vec<_> = results(&conversation).into_iter().map(|result| result.content).collect();
    assert_eq!(contents, ["results for q", "deleted /tmp/a"]);
    // The metadata of the whole run: both segments.
    let metadata = &done.metadata;
    assert_eq!((metadata.model_calls, metadata.iterations, metadata.tool_calls), (2, 2, 2));
    let answered: Vec<(&str, u32)> = metadata.models_used.iter().map(|(model, n)| (model.as_str(), *n)).collect();
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0].1, 2, "both segments' answers are counted: {answered:?}");
    assert_eq!(metadata.usage, common::usage(30, 10));
    assert_eq!(metadata.tools_used.get("delete"), Some(&1));
    // The model saw both results, in call order, in one message.
    let sent = model.requests()[1].messages.clone();
    let answered: Vec<_> = sent.last().unwrap().tool_results().map(|result| result.call_id.clone()).collect();
    assert_eq!(answered, ["s1", "d1"]);
    model.assert_consumed();
}

#[tokio::test]
async fn a_denial_and_external_results_reach_the_model_as_results() {
    let model = ScriptedModel::new()
        .respond(calls([delete("d1", "/etc"), call("l1", "location", json!({})), call("l2", "location", json!({}))]))
        .respond(ModelResponse::from_text("ok"));
    let deletions = Arc::new(Deletions::default());
    let agent = agent(model.clone(), &deletions);
    let mut conversation = ask("Where am I? And delete /etc.");

    let paused = agent.run(&mut conversation).await.unwrap_err();
    let reasons: Vec<_> = paused.deferred_calls().iter().map(|deferred| deferred.reason.clone()).collect();
    assert_eq!(reasons[1..], [DeferralReason::External, DeferralReason::External]);
    assert_eq!(*paused.termination(), Termination::Deferred { calls: 3 });

    let mut conversation = reload(&conversation);
    let resolutions = [
        ("d1", Resolution::deny("not /etc")),
        ("l1", Resolution::output("Lyon")),
        ("l2", Resolution::error("permission refused by the user")),
    ];
    let done = agent.resume(&mut conversation, resolutions).await.unwrap();
    assert_eq!(done.output, "ok");
    assert_eq!(deletions.0.load(Ordering::SeqCst), 0);
    let answered = results(&conversation);
    assert_eq!(answered[0].failure, Some(FailureKind::ApprovalDenied));
    assert_eq!(answered[0].content, "tool call not approved: not /etc");
    assert_eq!((answered[1].content.as_str(), answered[1].failure), ("Lyon", None));
    assert_eq!(answered[2].failure, Some(FailureKind::ToolFailed));
    assert_consistent(&conversation);
    // The caller executed both external calls; the denied one did not run.
    assert_eq!(done.metadata.tool_calls, 2);
}

#[tokio::test]
async fn every_bad_resume_is_a_typed_error_and_changes_nothing() {
    let model =
        ScriptedModel::new().respond(calls([search("s1"), delete("d1", "/tmp/a"), call("l1", "location", json!({}))]));
    let deletions = Arc::new(Deletions::default());
    let agent = agent(model.clone(), &deletions);
    let mut conversation = ask("Go.");
    agent.run(&mut conversation).await.unwrap_err();
    let before = serde_json::to_string(&conversation).unwrap();

    let out = || ("l1", Resolution::output("Lyon"));
    let cases: Vec<(Vec<(&str, Resolution)>, ResumeError)> = vec![
        (vec![("nope", Resolution::Approve), out()], ResumeError::UnknownCall { id: "nope".into() }),
        (vec![("s1", Resolution::Approve), out()], ResumeError::AlreadyAnswered { id: "s1".into() }),
        (
            vec![out()],
            ResumeError::MissingResolution {
                id: "d1".into(),
                reason: DeferralReason::Approval("`delete` needs approval".into()),
            },
        ),
        (
            vec![("d1", Resolution::Approve), ("d1", Resolution::Approve), out()],
            ResumeError::DuplicateResolution { id: "d1".into() },
        ),
        (
            vec![("d1", Resolution::output("deleted")), out()],
            ResumeError::WrongResolution {
                id: "d1".into(),
                reason: DeferralReason::Approval("`delete` needs approval".into()),
                resolution: "output",
            },
        ),
        (
            vec![("d1", Resolution::Approve), ("l1", Resolution::Approve)],
            ResumeError::WrongResolution { id: "l1".into(), reason: DeferralReason::External, resolution: "approve" },
        ),
    ];
    for (resolutions, expected) in cases {
        let error = agent.resume(&mut conversation, resolutions).await.unwrap_err();
        assert_eq!(*error.termination(), Termination::InvalidResume);
        assert_eq!(error.resume_error(), Some(&expected));
        assert_eq!(std::error::Error::source(&error).unwrap().to_string(), expected.to_string());
        assert_eq!(serde_json::to_string(&conversation).unwrap(), before, "{expected:?} changed the conversation");
    }
    assert_eq!(deletions.0.load(Ordering::SeqCst), 0);
    assert_eq!(model.requests().len(), 1);

    // Edited after the pause: a message pushed, or a deferred call changed.
    let mut edited = reload(&conversation);
    edited.push_user("hello?");
    let error = agent.resume(&mut edited, [("d1", Resolution::Approve), out()]).await.unwrap_err();
    assert!(matches!(error.resume_error(), Some(ResumeError::Mismatch { .. })), "{error:?}");
    let mut value: serde_json::Value = serde_json::from_str(&before).unwrap();
    value["messages"][1]["content"][1]["input"]["path"] = json!("/");
    let mut tampered: Conversation = serde_json::from_value(value).unwrap();
    let error = agent.resume(&mut tampered, [("d1", Resolution::Approve), out()]).await.unwrap_err();
    let Some(ResumeError::Mismatch { detail }) = error.resume_error() else { panic!("{error:?}") };
    assert!(detail.contains("d1"), "{detail}");
    // The paused run's checkpoint edited so that it no longer reads.
    let mut value: serde_json::Value = serde_json::from_str(&before).unwrap();
    value["pending"]["checkpoint"]["attempt"] = json!("first");
    let mut broken: Conversation = serde_json::from_value(value).unwrap();
    let kept = serde_json::to_string(&broken).unwrap();
    let error = agent.resume(&mut broken, [("d1", Resolution::Approve), out()]).await.unwrap_err();
    let Some(ResumeError::Mismatch { detail }) = error.resume_error() else { panic!("{error:?}") };
    assert!(detail.contains("checkpoint"), "{detail}");
    assert_eq!(serde_json::to_string(&broken).unwrap(), kept);
    // Or edited past its own iteration limit, where no run pauses (the
    // iteration-limit hook is told the limit as the iterations made).
    let mut value: serde_json::Value = serde_json::from_str(&before).unwrap();
    let limit = value["pending"]["checkpoint"]["iteration_limit"].as_u64().unwrap();
    value["pending"]["checkpoint"]["iteration"] = json!(limit + 1);
    let mut past: Conversation = serde_json::from_value(value).unwrap();
    let error = agent.resume(&mut past, [("d1", Resolution::Approve), out()]).await.unwrap_err();
    let Some(ResumeError::Mismatch { detail }) = error.resume_error() else { panic!("{error:?}") };
    assert!(detail.contains("past its iteration limit"), "{detail}");

    // Nothing to resume.
    let mut plain = ask("hi");
    let error = agent.resume(&mut plain, [("d1", Resolution::Approve)]).await.unwrap_err();
    assert_eq!(error.resume_error(), Some(&ResumeError::NothingPending));
    assert_eq!(plain, ask("hi"));

    // The right resolutions still work after all that.
    let done = agent.resume(&mut conversation, [("d1", Resolution::Approve), out()]).await;
    assert!(done.is_err(), "the script has no second response");
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_policy_defers_and_held_calls_run_on_resume_through_governance() {
    let model = ScriptedModel::new()
        .respond(calls([search("s1"), delete("d1", "/tmp/a"), search("s2")]))
        .respond(ModelResponse::from_text("done"));
    let deletions = Arc::new(Deletions::default());
    let searched = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&searched);
    let governance = Governance::new().policy(move |call| {
        if call.name == "search" {
            seen.fetch_add(1, Ordering::SeqCst);
        }
        if call.name == "delete" { Decision::Defer("a person signs off deletions".into()) } else { Decision::Allow }
    });
    let mut tools = ToolSet::new();
    tools.add::<Search>().unwrap();
    tools.add_with_state::<Delete>(Arc::clone(&deletions)).unwrap();
    let mut tool_loop = ToolLoop::new(model.clone(), tools).governance(governance).hold_batch_on_deferral();
    let mut conversation = ask("Go.");
    let paused = tool_loop.run(&mut conversation).await.unwrap_err();
    let deferred = paused.deferred_calls();
    assert_eq!(deferred.len(), 2);
    assert_eq!(deferred[0].reason, DeferralReason::Approval("a person signs off deletions".into()));
    assert_eq!(deferred[1].reason, DeferralReason::Held);
    assert!(!deferred[1].reason.needs_resolution());
    assert_eq!(*paused.termination(), Termination::Deferred { calls: 1 });
    assert_eq!(searched.load(Ordering::SeqCst), 1, "the held call has not met governance yet");

    let mut conversation = reload(&conversation);
    let error = tool_loop.resume(&mut conversation, [("s2", Resolution::Approve)]).await.unwrap_err();
    assert_eq!(error.resume_error(), Some(&ResumeError::NotDeferred { id: "s2".into() }));
    let done = tool_loop.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, LoopOutput::Answer("done".into()));
    assert_eq!(searched.load(Ordering::SeqCst), 2);
    assert_eq!(done.metadata.tool_calls, 3);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn limits_count_over_both_segments() {
    let model = ScriptedModel::new()
        .respond(calls([delete("d1", "/a")]))
        .respond(calls([search("s1")]))
        .respond(ModelResponse::from_text("never sent"));
    let deletions = Arc::new(Deletions::default());
    let agent = Agent::builder()
        .model(model.clone())
        .tool::<Search>()
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().needs_approval("delete"))
        .max_model_calls(2)
        .build()
        .unwrap();
    let mut conversation = ask("Go.");
    agent.run(&mut conversation).await.unwrap_err();
    let mut conversation = reload(&conversation);
    let error = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap_err();
    assert_eq!(*error.termination(), Termination::MaxModelCalls { limit: 2 });
    assert_eq!(error.metadata().model_calls, 2);
    assert_eq!(model.requests().len(), 2);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_streamed_run_reports_each_deferred_call_and_resumes_streamed() {
    let model = ScriptedModel::new()
        .respond(calls([delete("d1", "/a"), call("l1", "location", json!({}))]))
        .respond(ModelResponse::from_text("finished"));
    let deletions = Arc::new(Deletions::default());
    let agent = agent(model, &deletions);
    let mut conversation = ask("Go.");
    let mut deferred = Vec::new();
    let mut stream = agent.run_stream(&mut conversation);
    while let Some(event) = stream.next().await {
        if let Event::ToolCallDeferred { call, reason, .. } = event {
            deferred.push((call.id, reason));
        }
    }
    let finished = stream.output().await;
    assert_eq!(
        deferred,
        [
            ("d1".to_owned(), DeferralReason::Approval("`delete` needs approval".into())),
            ("l1".to_owned(), DeferralReason::External)
        ]
    );
    assert!(finished.unwrap_err().is_deferred());

    let mut conversation = reload(&conversation);
    let mut names = Vec::new();
    let mut stream =
        agent.resume_stream(&mut conversation, [("d1", Resolution::Approve), ("l1", Resolution::output("Paris"))]);
    while let Some(event) = stream.next().await {
        names.push(event.name());
    }
    let output = stream.output().await.unwrap().output;
    assert_eq!(output, "finished");
    assert!(names.contains(&"tool_execution_finished") && names.ends_with(&["run_finished"]), "{names:?}");
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1);

    // A refused streamed resume ends with the refusal: its only event is
    // `RunFinished`, with the error's termination.
    let mut stream = agent.resume_stream(&mut conversation, [("d1", Resolution::Approve)]);
    let Some(Event::RunFinished { termination }) = stream.next().await else { panic!("a refused resume ends") };
    assert!(stream.next().await.is_none(), "a refused resume reports nothing else");
    let Err(error) = stream.output().await else { panic!("a refused resume fails") };
    assert_eq!(error.resume_error(), Some(&ResumeError::NothingPending));
    assert_eq!(&termination, error.termination());
}

#[tokio::test]
async fn a_typed_output_in_a_paused_batch_is_validated_after_the_resume() {
    let model = ScriptedModel::new()
        .respond(calls([delete("d1", "/a"), call("o1", "final_output", json!({"title": "T", "score": 7}))]));
    let deletions = Arc::new(Deletions::default());
    let agent = Agent::builder()
        .model(model.clone())
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().needs_approval("delete"))
        .output::<Report>()
        .build()
        .unwrap();
    let mut conversation = ask("Report.");
    let paused = agent.run(&mut conversation).await.unwrap_err();
    let reasons: Vec<_> = paused.deferred_calls().iter().map(|deferred| deferred.reason.clone()).collect();
    // The output call waits with the batch: validated once the run goes on.
    assert_eq!(reasons[1], DeferralReason::Held);
    let mut conversation = reload(&conversation);
    let done = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, Report { title: "T".into(), score: 7 });
    assert_eq!(done.metadata.termination, Termination::Output);
    assert_eq!(model.requests().len(), 1);
    assert_eq!(results(&conversation)[1].content, "Output accepted.");
    assert_consistent(&conversation);
}

#[tokio::test]
async fn reflection_remembers_the_proposed_output_across_the_pause() {
    let model = ScriptedModel::new()
        .respond(output("o1", "Draft", 4))
        .respond(calls([delete("d1", "/a"), call("x1", "submit", json!({}))]))
        .respond(submit("unused"));
    let deletions = Arc::new(Deletions::default());
    let agent = Agent::builder()
        .model(model.clone())
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().needs_approval("delete"))
        .output::<Report>()
        .reflection(|report: &Report| format!("{} scores {}", report.title, report.score))
        .build()
        .unwrap();
    let mut conversation = ask("Report.");
    let paused = agent.run(&mut conversation).await.unwrap_err();
    assert!(paused.is_deferred());
    // In another process: the agent's state is rebuilt from the conversation alone.
    let mut conversation = reload(&conversation);
    let done = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, Report { title: "Draft".into(), score: 4 });
    assert_eq!(done.metadata.model_calls, 2);
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1);
    assert_consistent(&conversation);
}

/// The same in the native and prompted modes, where the output is
/// proposed as the answer's text (rendered back to the model) rather than
/// through the output tool.
#[tokio::test]
async fn reflection_remembers_a_text_proposal_across_the_pause() {
    for native in [true, false] {
        let model = ScriptedModel::new()
            .respond(ModelResponse::from_text(r#"{"title": "Draft", "score": 4}"#))
            .respond(calls([delete("d1", "/a"), call("x1", "submit", json!({}))]))
            .respond(ModelResponse::from_text("never sent"));
        let deletions = Arc::new(Deletions::default());
        let agent = text_reflective(&model, &deletions, native, 10);
        let mut conversation = ask("Report.");
        assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
        let mut conversation = reload(&conversation);
        let done = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await;
        let done = done.unwrap_or_else(|error| panic!("native {native}: {:?}", error.termination()));
        assert_eq!(done.output, Report { title: "Draft".into(), score: 4 }, "native {native}");
        assert_eq!(done.metadata.model_calls, 2);
        assert_eq!(deletions.0.load(Ordering::SeqCst), 1);
        assert_consistent(&conversation);
    }
}

/// What a resumed run recalls is its own: an output an earlier run of
/// the same conversation proposed and never submitted is not submitted by
/// a later run's `submit` after a pause (a live run would not either: its
/// control starts empty).
#[tokio::test]
async fn a_resumed_run_does_not_submit_an_earlier_runs_proposal() {
    let model = ScriptedModel::new()
        .respond(ModelResponse::from_text(r#"{"title": "Old draft", "score": 1}"#))
        .respond(calls([delete("d1", "/a"), call("x1", "submit", json!({}))]))
        .respond(ModelResponse::from_text("never sent"));
    let deletions = Arc::new(Deletions::default());
    let agent = text_reflective(&model, &deletions, true, 1);
    let mut conversation = ask("Report.");
    let first = agent.run(&mut conversation).await.unwrap_err();
    assert!(matches!(first.termination(), Termination::MaxIterations { .. }), "{:?}", first.termination());

    conversation.push_user("Clean up, then submit.");
    assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
    let mut conversation = reload(&conversation);
    let error = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap_err();
    assert!(matches!(error.termination(), Termination::SubmitBeforeOutput { .. }), "{:?}", error.termination());
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1);
    assert_consistent(&conversation);
}

/// The run's own messages are counted from the end: compacting the
/// history between the pause and the resume does not lose the run's
/// proposal.
#[tokio::test]
async fn a_compacted_paused_run_still_recalls_its_proposal() {
    let model = ScriptedModel::new()
        // An earlier run: proposed and submitted.
        .respond(ModelResponse::from_text(r#"{"title": "Old", "score": 1}"#))
        .respond(calls([call("x0", "submit", json!({}))]))
        // This run: a proposal, then a batch that pauses.
        .respond(ModelResponse::from_text(r#"{"title": "New", "score": 2}"#))
        .respond(calls([delete("d1", "/a"), call("x1", "submit", json!({}))]));
    let deletions = Arc::new(Deletions::default());
    let agent = text_reflective(&model, &deletions, true, 10);
    let mut conversation = ask("Report.");
    assert_eq!(agent.run(&mut conversation).await.unwrap().output.title, "Old");
    conversation.push_user("Again, after a clean-up.");
    assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
    let removed = conversation.compact(2);
    assert!(!removed.is_empty());
    let mut conversation = reload(&conversation);
    let done = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, Report { title: "New".into(), score: 2 });
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_run_behind_fallback_pauses_and_resumes() {
    let primary = ScriptedModel::new()
        .fail(toolloop::ModelError::new(toolloop::model::ModelErrorKind::Overloaded, "test", "overloaded"))
        .fail(toolloop::ModelError::new(toolloop::model::ModelErrorKind::Overloaded, "test", "overloaded"));
    let secondary =
        ScriptedModel::new().respond(calls([delete("d1", "/a")])).respond(ModelResponse::from_text("deleted"));
    let deletions = Arc::new(Deletions::default());
    let model = toolloop::providers::Fallback::new(primary).then(secondary.clone());
    let agent = Agent::builder()
        .model(model)
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().needs_approval("delete"))
        .build()
        .unwrap();
    let mut conversation = ask("Go.");
    assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
    let mut conversation = reload(&conversation);
    let done = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, "deleted");
    assert_eq!(secondary.requests().len(), 2);
    assert_eq!(done.metadata.model_calls, 2);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_resolution_for_a_call_of_an_earlier_turn_is_already_answered() {
    let model = ScriptedModel::new()
        .respond(calls([search("old")]))
        .respond(ModelResponse::from_text("first turn done"))
        .respond(calls([delete("d1", "/a")]));
    let deletions = Arc::new(Deletions::default());
    let agent = agent(model, &deletions);
    let mut conversation = ask("Search.");
    agent.run(&mut conversation).await.unwrap();
    conversation.push_user("Now delete /a.");
    assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
    let before = conversation.clone();
    let resolutions = [("d1", Resolution::Approve), ("old", Resolution::Approve)];
    let error = agent.resume(&mut conversation, resolutions).await.unwrap_err();
    assert_eq!(error.resume_error(), Some(&ResumeError::AlreadyAnswered { id: "old".into() }));
    assert_eq!(conversation, before);
}

#[tokio::test(start_paused = true)]
async fn the_pause_does_not_count_toward_the_time_limit_but_run_time_does() {
    let model = ScriptedModel::new()
        .respond_after(std::time::Duration::from_secs(40), calls([delete("d1", "/a")]))
        .respond_after(std::time::Duration::from_secs(40), ModelResponse::from_text("done"));
    let deletions = Arc::new(Deletions::default());
    let agent = Agent::builder()
        .model(model)
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().needs_approval("delete"))
        .max_duration(std::time::Duration::from_secs(60))
        .build()
        .unwrap();
    let mut conversation = ask("Go.");
    assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
    // A day passes before the person answers.
    tokio::time::advance(std::time::Duration::from_secs(86_400)).await;
    let mut conversation = reload(&conversation);
    let error = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap_err();
    // 40 s before the pause and 20 s after it: the second model call is cut at the limit.
    assert_eq!(*error.termination(), Termination::MaxDuration { limit: std::time::Duration::from_secs(60) });
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1, "the approved call ran before the limit");
    assert_consistent(&conversation);
}

#[tokio::test]
async fn an_approver_that_cannot_decide_now_defers_the_call() {
    let model = ScriptedModel::new()
        .respond(calls([delete("d1", "/a"), delete("d2", "/b")]))
        .respond(ModelResponse::from_text("done"));
    let deletions = Arc::new(Deletions::default());
    // Approves small paths itself; for the rest, nobody is online.
    let approver = |call: toolloop::ToolCall| async move {
        if call.input["path"] == "/a" { Decision::Allow } else { Decision::Defer("no operator online".into()) }
    };
    let agent = Agent::builder()
        .model(model)
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().policy(|_| Decision::Ask).approver(approver))
        .build()
        .unwrap();
    let mut conversation = ask("Go.");
    let paused = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(paused.deferred_calls().len(), 1);
    assert_eq!(paused.deferred_calls()[0].reason, DeferralReason::Approval("no operator online".into()));
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1);
    let mut conversation = reload(&conversation);
    agent.resume(&mut conversation, [("d2", Resolution::Approve)]).await.unwrap();
    assert_eq!(deletions.0.load(Ordering::SeqCst), 2);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn an_approver_that_asks_passes_the_call_to_a_person() {
    let model = ScriptedModel::new().respond(calls([delete("d1", "/a")])).respond(ModelResponse::from_text("done"));
    let deletions = Arc::new(Deletions::default());
    // The policy asks the approver; the approver asks the next one in line: a person.
    let agent = Agent::builder()
        .model(model)
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().policy(|_| Decision::Ask).approver(|_call| async { Decision::Ask }))
        .build()
        .unwrap();
    let mut conversation = ask("Go.");
    let paused = agent.run(&mut conversation).await.unwrap_err();
    assert!(paused.termination().is_deferred());
    assert_eq!(
        paused.deferred_calls()[0].reason,
        DeferralReason::Approval("the approver asked for a person to decide".into())
    );
    assert_eq!(deletions.0.load(Ordering::SeqCst), 0, "nothing ran before the person decided");
    let mut conversation = reload(&conversation);
    agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1);
    assert_consistent(&conversation);
}

/// A result the caller gives at resume was produced already: a stop that
/// an earlier call of the resumed batch causes keeps it, as it keeps the
/// results of calls answered before the pause.
#[tokio::test]
async fn given_results_are_kept_when_an_earlier_call_stops_the_resumed_batch() {
    let model = ScriptedModel::new()
        .respond(calls([delete("d1", "/etc"), call("l1", "location", json!({}))]))
        .respond(ModelResponse::from_text("never sent"));
    let deletions = Arc::new(Deletions::default());
    let agent = Agent::builder()
        .model(model.clone())
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .external_tool(location())
        .governance(Governance::new().needs_approval("delete"))
        .stop_on_denied_tool()
        .build()
        .unwrap();
    let mut conversation = ask("Where am I? And delete /etc.");
    agent.run(&mut conversation).await.unwrap_err();

    let mut conversation = reload(&conversation);
    let resolutions = [("d1", Resolution::deny("not /etc")), ("l1", Resolution::output("Lyon"))];
    let error = agent.resume(&mut conversation, resolutions).await.unwrap_err();
    assert!(
        matches!(error.termination(), Termination::ToolPolicy { kind: FailureKind::ApprovalDenied, .. }),
        "{:?}",
        error.termination()
    );
    let answered = results(&conversation);
    assert_eq!(answered[0].failure, Some(FailureKind::ApprovalDenied));
    assert_eq!((answered[1].content.as_str(), answered[1].failure), ("Lyon", None), "the caller's result is kept");
    assert_consistent(&conversation);
    assert_eq!(deletions.0.load(Ordering::SeqCst), 0);
    assert_eq!(model.requests().len(), 1);
}

/// A resume through a journal, replayed after a crash at its end: the
/// approved call ran once and the model was called once, however often the
/// resumption is replayed.
#[tokio::test]
async fn a_journaled_resume_replays_without_running_the_approved_call_again() {
    use toolloop::CancellationToken;
    use toolloop::run::journal::MemoryJournal;

    let model =
        ScriptedModel::new().respond(calls([delete("d1", "/tmp/a")])).respond(ModelResponse::from_text("Deleted."));
    let deletions = Arc::new(Deletions::default());
    let agent = agent(model.clone(), &deletions);
    let mut conversation = ask("Clean up.");
    agent.run(&mut conversation).await.unwrap_err();
    let paused = reload(&conversation);

    let journal = MemoryJournal::new();
    let cancel = CancellationToken::new();
    let done = agent.resume_journaled(&mut conversation, [("d1", Resolution::Approve)], &journal, &cancel).await;
    assert_eq!(done.unwrap().output, "Deleted.");
    assert_eq!(journal.steps(), ["tool delete d1", "model call 2"], "numbered on from the paused run's calls");
    assert_eq!((deletions.0.load(Ordering::SeqCst), model.requests().len()), (1, 2));

    let mut again = paused.clone();
    let replay = MemoryJournal::replay(&journal);
    let done = agent.resume_journaled(&mut again, [("d1", Resolution::Approve)], &replay, &cancel).await.unwrap();
    assert_eq!(done.output, "Deleted.");
    assert_eq!(again.messages(), conversation.messages());
    assert_eq!((deletions.0.load(Ordering::SeqCst), model.requests().len()), (1, 2), "nothing done twice");

    // A refused resume changes nothing and records nothing.
    let mut refused = paused;
    let before = serde_json::to_string(&refused).unwrap();
    let empty = MemoryJournal::new();
    let error = agent.resume_journaled(&mut refused, [("nope", Resolution::Approve)], &empty, &cancel).await;
    assert!(error.unwrap_err().resume_error().is_some());
    assert_eq!(serde_json::to_string(&refused).unwrap(), before);
    assert!(empty.steps().is_empty());
}

/// A resumed run's metadata counts both segments: the hook failures of
/// the first are still reported after the resume.
#[tokio::test]
async fn hook_errors_before_the_pause_are_reported_after_the_resume() {
    let model = ScriptedModel::new()
        .respond(calls([search("s1"), delete("d1", "/a")]))
        .respond(ModelResponse::from_text("done"));
    let deletions = Arc::new(Deletions::default());
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .tool_with_state::<Delete>(Arc::clone(&deletions))
        .governance(Governance::new().needs_approval("delete"))
        .on_tool_execution_started(|call| Err(format!("cannot log {}", call.name)))
        .build()
        .unwrap();
    let mut conversation = ask("Go.");
    let paused = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(paused.metadata().hook_errors, ["hook for `tool_execution_started` failed: cannot log search"]);
    let mut conversation = reload(&conversation);
    let done = agent.resume(&mut conversation, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(
        done.metadata.hook_errors,
        [
            "hook for `tool_execution_started` failed: cannot log search",
            "hook for `tool_execution_started` failed: cannot log delete",
        ]
    );
}

/// Two requests resume one stored session (a double click, a retry): each
/// claims the paused conversation before resuming it, so the second one's
/// claim is a conflict and the approved call runs once.
#[tokio::test]
async fn a_claimed_resume_runs_the_approved_call_once() {
    use toolloop::store::{ConversationStore as _, MemoryStore, StoreError};

    let model =
        ScriptedModel::new().respond(calls([delete("d1", "/tmp/a")])).respond(ModelResponse::from_text("Deleted."));
    let deletions = Arc::new(Deletions::default());
    let agent = agent(model, &deletions);
    let store = MemoryStore::new();
    let mut conversation = ask("Clean up.");
    agent.run(&mut conversation).await.unwrap_err();
    store.save("s", &conversation, None).await.unwrap();

    let (mut first, first_loaded) = store.load("s").await.unwrap().unwrap();
    let (second, second_loaded) = store.load("s").await.unwrap().unwrap();
    let claimed = store.save("s", &first, Some(first_loaded)).await.unwrap();
    let conflict = store.save("s", &second, Some(second_loaded)).await.unwrap_err();
    assert!(matches!(conflict, StoreError::Conflict { .. }), "{conflict:?}");

    let done = agent.resume(&mut first, [("d1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, "Deleted.");
    store.save("s", &first, Some(claimed)).await.unwrap();
    assert_eq!(deletions.0.load(Ordering::SeqCst), 1);
    let (stored, _) = store.load("s").await.unwrap().unwrap();
    assert!(!stored.is_pending());
}
