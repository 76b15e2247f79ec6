//! The typed agent: output tool, reflection and submit, validation and feedback, errors.

mod common;

use common::*;
use serde_json::json;
use toolloop::agent::SUBMIT_DESCRIPTION;
use toolloop::run::{AttemptFailure, Termination};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, FailureKind, ModelResponse};

#[tokio::test]
async fn helper_tools_run_then_the_output_ends_the_run() {
    let db = Db::default();
    let model = ScriptedModel::new()
        .respond(calls([call("s1", "search", json!({"query": "rust"})), call("l1", "lookup", json!({"key": "k"}))]))
        .respond(output("o1", "Rust", 7));
    let agent = Agent::builder()
        .model(model.clone())
        .system("You write reports.")
        .tool::<Search>()
        .tool_with_state::<Lookup>(db.clone())
        .output::<Report>()
        .build()
        .unwrap();
    let mut conversation = ask("Write the report");
    let done = agent.run(&mut conversation).await.unwrap();

    assert_eq!(done.output, Report { title: "Rust".into(), score: 7 });
    assert_eq!(done.metadata.termination, Termination::Output);
    assert_eq!((done.metadata.iterations, done.metadata.tool_calls, done.metadata.attempts), (2, 3, 1));
    assert_eq!(db.lookups.load(std::sync::atomic::Ordering::SeqCst), 1);
    model.assert_consumed();

    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["search", "lookup", "final_output"]);
    assert_eq!(requests[0].system.as_deref(), Some("You write reports."));
    // The second request carries both helper results, in call order.
    let second = &requests[1].messages;
    let fed_back: Vec<_> = second.last().unwrap().tool_results().map(|r| r.content.clone()).collect();
    assert_eq!(fed_back, ["results for rust", "row k"]);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn output_called_immediately_without_reflection_ends_after_one_iteration() {
    let model = ScriptedModel::new().respond(output("o1", "Now", 3));
    let agent = Agent::builder().model(model.clone()).output::<Report>().build().unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "Now");
    assert_eq!(done.metadata.iterations, 1);
    assert_eq!(model.requests()[0].tool_names(), ["final_output"], "no submit without reflection");
    // The output call is answered too, so the conversation can go on.
    assert_eq!(failures(&conversation), [None]);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn reflection_renders_each_output_and_submit_ends_with_the_last() {
    let model =
        ScriptedModel::new().respond(output("o1", "Draft", 2)).respond(output("o2", "Final", 9)).respond(submit("s1"));
    let agent = Agent::builder()
        .model(model.clone())
        .output::<Report>()
        .reflection(|report: &Report| format!("Preview: {} ({}/10)", report.title, report.score))
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, Report { title: "Final".into(), score: 9 });
    assert_eq!(done.metadata.iterations, 3);

    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["final_output", "submit"]);
    let submit_tool = requests[0].tools.iter().find(|t| t.name == "submit").unwrap();
    assert_eq!(submit_tool.description, SUBMIT_DESCRIPTION);
    assert_eq!(submit_tool.input_schema["properties"], json!({}));
    let rendered: Vec<_> = results(&conversation).into_iter().map(|r| r.content).collect();
    // The verdict after validation answers the submit call.
    assert_eq!(rendered, ["Preview: Draft (2/10)", "Preview: Final (9/10)", "Output accepted."]);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn submit_before_any_output_is_an_error_and_the_call_is_answered() {
    let model = ScriptedModel::new().respond(submit("s1"));
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .reflection(|report: &Report| report.title.clone())
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert!(matches!(error.termination(), Termination::SubmitBeforeOutput { attempt: 1 }), "{error}");
    assert_eq!(error.metadata().termination, Termination::SubmitBeforeOutput { attempt: 1 });
    assert_eq!(failures(&conversation), [Some(FailureKind::Rejected)]);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn helper_output_helper_in_one_response_runs_the_whole_batch_then_ends() {
    let model = ScriptedModel::new().respond(calls([
        call("a", "search", json!({"query": "one"})),
        call("b", "final_output", json!({"title": "T", "score": 5})),
        call("c", "search", json!({"query": "two"})),
    ]));
    let agent = Agent::builder().model(model.clone()).tool::<Search>().output::<Report>().build().unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "T");
    assert_eq!(done.metadata.tool_calls, 3);
    let contents: Vec<_> = results(&conversation).into_iter().map(|r| r.content).collect();
    // The output call's result carries the verdict.
    assert_eq!(contents, ["results for one", "Output accepted.", "results for two"]);
    model.assert_consumed();
    assert_consistent(&conversation);
}

#[tokio::test]
async fn the_last_output_call_of_a_batch_wins() {
    let model = ScriptedModel::new().respond(calls([
        call("a", "final_output", json!({"title": "first", "score": 1})),
        call("b", "final_output", json!({"title": "second", "score": 2})),
    ]));
    let agent = Agent::builder().model(model).output::<Report>().build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output.title, "second");
}

#[tokio::test]
async fn unknown_tools_and_handler_errors_are_fed_back_and_the_model_recovers() {
    let model = ScriptedModel::new()
        .respond(calls([call("u", "no_such_tool", json!({})), call("l", "lookup", json!({"key": "missing"}))]))
        .respond(calls([call("l2", "lookup", json!({"key": "present"}))]))
        .respond(output("o", "ok", 4));
    let agent = Agent::builder()
        .model(model.clone())
        .tool_with_state::<Lookup>(Db::default())
        .output::<Report>()
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "ok");
    let all = results(&conversation);
    assert_eq!(all[0].failure, Some(FailureKind::UnknownTool));
    assert!(all[0].content.contains("lookup, final_output"), "{}", all[0].content);
    assert_eq!(all[1].failure, Some(FailureKind::ToolFailed));
    assert_eq!(all[1].content, "no row for `missing`");
    assert_eq!(all[2].failure, None);
    // The model saw the errors marked as errors.
    assert!(model.requests()[1].messages.last().unwrap().tool_results().all(toolloop::ToolResult::is_error));
    assert_consistent(&conversation);
}

#[tokio::test]
async fn a_failed_validation_is_fed_back_and_attempt_two_succeeds() {
    let model = ScriptedModel::new()
        .respond(output("o1", "", 5).with_usage(usage(10, 1)))
        .respond(output("o2", "Fixed", 5).with_usage(usage(20, 2)));
    let agent = Agent::builder()
        .model(model.clone())
        .output::<Report>()
        .validator(|report: &Report| if report.title.is_empty() { Err("title is empty") } else { Ok(()) })
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "Fixed");
    assert_eq!(done.metadata.attempts, 2);
    // The verdict is the output call's own error result, not a separate message.
    let requests = model.requests();
    let verdict = requests[1].last_tool_result().unwrap();
    assert_eq!(verdict.call_id, "o1");
    assert_eq!(verdict.failure, Some(FailureKind::Rejected));
    assert!(verdict.content.contains("title is empty"), "{}", verdict.content);
    assert!(verdict.content.contains("Call `final_output` again"), "{}", verdict.content);
    assert_eq!(requests[1].messages.len(), 3, "no feedback message after the result");
    assert_consistent(&conversation);
}

#[tokio::test]
async fn schema_constraints_and_field_paths_are_checked_before_validators() {
    let model = ScriptedModel::new()
        .respond(output("o1", "T", 11))
        .respond(calls([call("o2", "final_output", json!({"title": 3, "score": 2}))]))
        .respond(output("o3", "T", 10));
    let validated = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = validated.clone();
    let agent = Agent::builder()
        .model(model.clone())
        .output::<Report>()
        .validator(move |_: &Report| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok::<(), String>(())
        })
        .build()
        .unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(done.output.score, 10);
    assert_eq!(validated.load(std::sync::atomic::Ordering::SeqCst), 1, "validators only see outputs that parse");
    let requests = model.requests();
    let verdict = requests[1].last_tool_result().unwrap();
    assert!(verdict.content.contains("at `score`: 11 is greater than the maximum 10"), "{}", verdict.content);
    assert_eq!(verdict.failure, Some(FailureKind::Rejected));
    let verdict = requests[2].last_tool_result().unwrap();
    assert!(verdict.content.contains("`title`"), "{}", verdict.content);
    // Arguments that do not parse are marked as such.
    assert_eq!(verdict.failure, Some(FailureKind::InvalidArguments));
}

#[tokio::test]
async fn async_validators_run_and_every_attempts_errors_are_reported() {
    let model = ScriptedModel::new().respond(output("o1", "a", 1)).respond(output("o2", "b", 2));
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .async_validator(|report: &Report| {
            let title = report.title.clone();
            async move { Err::<(), _>(format!("`{title}` is taken")) }
        })
        .max_attempts(2)
        .build()
        .unwrap();
    let error = agent.run(&mut ask("go")).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::ValidationFailed { attempts: 2 }, "{error}");
    let failures = error.attempt_failures();
    assert_eq!(
        failures,
        &[
            AttemptFailure::Invalid { attempt: 1, errors: vec!["`a` is taken".into()] },
            AttemptFailure::Invalid { attempt: 2, errors: vec!["`b` is taken".into()] },
        ]
    );
    assert_eq!(error.metadata().attempts, 2);
    assert!(error.to_string().contains("attempt 2: `b` is taken"), "{error}");
}

#[tokio::test]
async fn a_text_answer_in_typed_mode_is_fed_back_and_then_reported_as_invalid_response() {
    let model = ScriptedModel::new()
        .respond(ModelResponse::from_text("Here it is"))
        .respond(ModelResponse::from_text("Really"));
    let agent = Agent::builder().model(model.clone()).output::<Report>().max_attempts(2).build().unwrap();
    let mut conversation = ask("go");
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert!(
        matches!(error.termination(), Termination::NoOutputCall { attempts: 2 }) && error.attempt_failures().len() == 2,
        "{error}"
    );
    assert!(std::error::Error::source(&error).is_none(), "the attempts are listed in the message, not as a cause");
    let feedback = model.requests()[1].last_text();
    assert!(feedback.contains("Call the `final_output` tool"), "{feedback}");
}

#[tokio::test]
async fn max_iterations_reports_attempt_iterations_and_limit() {
    let model = ScriptedModel::new()
        .respond(calls([call("1", "search", json!({"query": "a"}))]))
        .respond(calls([call("2", "search", json!({"query": "b"}))]));
    let agent = Agent::builder().model(model).tool::<Search>().max_iterations(2).output::<Report>().build().unwrap();
    let mut conversation = ask("go");
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert!(
        matches!(error.termination(), Termination::MaxIterations { attempt: 1, iterations: 2, limit: 2 }),
        "{error}"
    );
    assert_eq!(error.termination(), &error.metadata().termination);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn usage_is_summed_over_every_iteration_and_attempt() {
    let model = ScriptedModel::new()
        .respond(calls([call("1", "search", json!({"query": "a"}))]).with_usage(usage(100, 10)))
        .respond(output("o1", "bad", 0).with_usage(usage(200, 20)))
        .respond(output("o2", "good", 5).with_usage(toolloop::Usage {
            input_tokens: 300,
            output_tokens: 30,
            cache_read_tokens: 7,
            cache_write_tokens: 3,
            reasoning_tokens: 0,
        }));
    let agent = Agent::builder().model(model).tool::<Search>().output::<Report>().build().unwrap();
    let done = agent.run(&mut ask("go")).await.unwrap();
    let expected = toolloop::Usage {
        input_tokens: 600,
        output_tokens: 60,
        cache_read_tokens: 7,
        cache_write_tokens: 3,
        reasoning_tokens: 0,
    };
    assert_eq!(done.metadata.usage, expected);
    assert_eq!((done.metadata.attempts, done.metadata.iterations, done.metadata.model_calls), (2, 3, 3));
}

#[tokio::test]
async fn errors_carry_usage_too() {
    let model = ScriptedModel::new().respond(ModelResponse::from_text("no").with_usage(usage(5, 5)));
    let agent = Agent::builder().model(model).output::<Report>().max_attempts(1).build().unwrap();
    let error = agent.run(&mut ask("go")).await.unwrap_err();
    assert_eq!(error.metadata().usage, usage(5, 5));
}

#[tokio::test]
async fn a_provider_error_ends_the_run_with_metadata() {
    let failure = toolloop::ModelError::new(toolloop::model::ModelErrorKind::Server, "test", "boom").with_status(500);
    let model = ScriptedModel::new().respond(calls([call("1", "search", json!({"query": "a"}))])).fail(failure);
    let agent = Agent::builder().model(model).tool::<Search>().output::<Report>().build().unwrap();
    let mut conversation = ask("go");
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert!(error.model_error().is_some_and(|e| e.status() == Some(500)), "{error}");
    let source = std::error::Error::source(&error).expect("the model error is the source");
    assert_eq!(source.downcast_ref::<toolloop::ModelError>().and_then(toolloop::ModelError::status), Some(500));
    assert_eq!(error.metadata().model_calls, 2);
    assert_consistent(&conversation);
}

#[tokio::test]
async fn reflection_with_bad_arguments_lets_the_model_fix_them_in_the_same_attempt() {
    let model = ScriptedModel::new()
        .respond(calls([call("o1", "final_output", json!({"title": "T"}))]))
        .respond(output("o2", "T", 5))
        .respond(submit("s"));
    let agent =
        Agent::builder().model(model).output::<Report>().reflection(|r: &Report| r.title.clone()).build().unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.metadata.attempts, 1);
    let first = &results(&conversation)[0];
    assert_eq!(first.failure, Some(FailureKind::InvalidArguments));
    assert!(first.content.contains("score"), "{}", first.content);
}

#[tokio::test]
async fn a_conversation_can_serve_several_runs() {
    let model =
        ScriptedModel::new().respond(ModelResponse::from_text("Hi Ann")).respond(ModelResponse::from_text("Ann"));
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let mut conversation = ask("I am Ann");
    assert_eq!(agent.run(&mut conversation).await.unwrap().output, "Hi Ann");
    conversation.push_user("Who am I?");
    assert_eq!(agent.run(&mut conversation).await.unwrap().output, "Ann");
    assert_eq!(model.requests()[1].messages.len(), 3, "the second run sees the first");
}

#[tokio::test]
async fn build_rejects_name_collisions_at_runtime_only_where_types_cannot() {
    // `#[derive(Tool)]` refuses the name `submit` at compile time; a tool
    // defined at run time is caught when a reflective agent is built.
    struct Submit(toolloop::tool::ToolDefinition);
    impl toolloop::tool::DynTool for Submit {
        fn definition(&self) -> &toolloop::tool::ToolDefinition {
            &self.0
        }
        fn call<'a>(
            &'a self,
            _: &'a serde_json::Value,
        ) -> toolloop::model::BoxFuture<'a, Result<toolloop::ToolOutput, toolloop::ToolError>> {
            Box::pin(async { Ok(toolloop::ToolOutput::from("sent")) })
        }
    }
    let error = Agent::builder()
        .model(ScriptedModel::new())
        .tool::<Search>()
        .output::<Report>()
        .output_tool_name("search")
        .build()
        .unwrap_err();
    assert_eq!(error, toolloop::BuildError::OutputToolNameTaken("search".into()));
    let error = Agent::builder().model(ScriptedModel::new()).tool::<Search>().tool::<Search>().build().unwrap_err();
    assert_eq!(error, toolloop::BuildError::DuplicateToolName("search".into()));

    let submit = || {
        std::sync::Arc::new(Submit(toolloop::tool::ToolDefinition::from_schema(
            "submit",
            "Send.",
            json!({"type": "object", "properties": {}}),
        )))
    };
    let error = Agent::builder()
        .model(ScriptedModel::new())
        .tool_dyn(submit())
        .output::<Report>()
        .reflection(|r: &Report| r.title.clone())
        .build()
        .unwrap_err();
    assert_eq!(error, toolloop::BuildError::SubmitNameTaken { output_tool: false });
    assert!(Agent::builder().model(ScriptedModel::new()).tool_dyn(submit()).output::<Report>().build().is_ok());
}

#[tokio::test]
async fn handlers_without_type_annotations_infer_the_output_type() {
    let model = ScriptedModel::new().respond(output("o1", "T", 5)).respond(submit("s"));
    let agent = Agent::builder()
        .model(model)
        .output::<Report>()
        .reflection(|report| format!("{} scored {}", report.title, report.score))
        .validator(|report| if report.score > 0 { Ok(()) } else { Err("zero") })
        .async_validator(|report| {
            let title = report.title.clone();
            async move { if title.is_empty() { Err("empty") } else { Ok(()) } }
        })
        .build()
        .unwrap();
    let mut conversation = ask("go");
    agent.run(&mut conversation).await.unwrap();
    assert_eq!(results(&conversation)[0].content, "T scored 5");
}

#[tokio::test]
async fn agents_are_shared_across_tasks_and_runs_can_be_spawned() {
    let model = ScriptedModel::new().respond(output("o1", "A", 1)).respond(output("o2", "B", 2));
    let agent = std::sync::Arc::new(Agent::builder().model(model).output::<Report>().build().unwrap());
    let mut handles = Vec::new();
    for _ in 0..2 {
        let agent = agent.clone();
        handles.push(tokio::spawn(async move { agent.run(&mut ask("go")).await.map(|done| done.output.title) }));
    }
    let mut titles = Vec::new();
    for handle in handles {
        titles.push(handle.await.unwrap().unwrap());
    }
    titles.sort();
    assert_eq!(titles, ["A", "B"]);
}

#[tokio::test]
async fn governance_and_audit_apply_to_agent_runs() {
    use toolloop::run::{Decision, Governance, Verdict};
    let audit = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = audit.clone();
    let model = ScriptedModel::new()
        .respond(calls([call("s", "search", json!({"query": "secret"}))]))
        .respond(output("o", "T", 5));
    let agent = Agent::builder()
        .model(model)
        .tool::<Search>()
        .output::<Report>()
        .governance(Governance::new().policy(|call| {
            if call.input["query"] == "secret" { Decision::Deny("classified".into()) } else { Decision::Allow }
        }))
        .on_event(move |event: &toolloop::run::Event| {
            if let toolloop::run::Event::ToolExecutionFinished { call, verdict, .. } = event {
                log.lock().unwrap().push((call.name.clone(), verdict.clone()));
            }
        })
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(failures(&conversation), [Some(FailureKind::Denied), None]);
    assert_eq!(
        *audit.lock().unwrap(),
        [("search".to_owned(), Verdict::Denied("classified".into())), ("final_output".to_owned(), Verdict::Allowed)]
    );
    assert_eq!(done.metadata.tool_calls, 1, "the denied call did not run");
}

#[tokio::test]
async fn tool_calls_from_another_provider_are_sent_as_text() {
    let mut conversation = ask("earlier question");
    conversation.push(
        toolloop::Message::new(
            toolloop::Role::Assistant,
            vec![toolloop::ContentBlock::ToolCall(call("toolu_1", "search", json!({"query": "x"})))],
        )
        .with_provider("anthropic"),
    );
    conversation.push(toolloop::Message::from_tool_results([toolloop::ToolResult::success("toolu_1", "found x")]));
    conversation.push(toolloop::Message::assistant("x it is"));
    conversation.push_user("and now?");
    let model = ScriptedModel::new().respond(ModelResponse::from_text("y"));
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let before = conversation.messages().to_vec();
    agent.clone().run(&mut conversation).await.unwrap();
    let sent = &model.requests()[0].messages;
    assert!(sent.iter().all(|m| m.tool_calls().next().is_none() && m.tool_results().next().is_none()));
    assert_eq!(sent[2].text(), "[result of tool `search`: found x]");
    assert_eq!(conversation.messages()[..before.len()], before[..], "the raw history is untouched");
}
