//! Typed agents reading their output from the answer's text (native and
//! prompted modes) on a scripted model: bad answers become feedback for
//! the next attempt, or a typed error once attempts run out, with the
//! conversation left valid; auto mode; what a mode does not allow.

use serde_json::json;
use toolloop::agent::OutputMode;
use toolloop::agent::state::WithModel;
use toolloop::model::BoxFuture;
use toolloop::run::{AttemptFailure, Termination};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, AgentBuilder, Conversation, Model, ModelError, ModelRequest, ModelResponse, Role, StopReason};

/// A verdict.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Verdict {
    /// Whether it is approved.
    approved: bool,
    /// Why, in a sentence.
    #[schemars(length(min = 3))]
    reason: String,
}

fn question() -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user("Approve the refund?");
    conversation
}

/// The agent `builder` makes in `mode` (native or prompted).
fn build(builder: AgentBuilder<WithModel, Verdict>, mode: OutputMode) -> Agent<Verdict> {
    match mode {
        OutputMode::Native => builder.native_output().build().unwrap(),
        _ => builder.prompted_output().build().unwrap(),
    }
}

const GOOD: &str = r#"{"approved": true, "reason": "within policy"}"#;

#[tokio::test]
async fn each_bad_answer_is_fed_back_and_the_next_attempt_succeeds() {
    let bad = [
        ("I would approve it.", "is not JSON"),
        (r#"{"approved": true, "reason": "ok!"} I hope this helps."#, "text after the JSON value"),
        (
            "```json\n{\"approved\": true, \"reason\": \"fine\"}\n{\"approved\": false, \"reason\": \"no\"}\n```",
            "more than one JSON value",
        ),
        ("", "empty"),
        (r#"{"approved": "yes", "reason": "fine"}"#, "approved"),
        (r#"{"approved": true, "reason": "ok"}"#, "reason"),
    ];
    for mode in [OutputMode::Native, OutputMode::Prompted] {
        for (answer, expected) in bad {
            let model =
                ScriptedModel::new().respond(ModelResponse::from_text(answer)).respond(ModelResponse::from_text(GOOD));
            let agent = build(Agent::builder().model(model.clone()).output::<Verdict>(), mode);
            let mut conversation = question();
            let done = agent.run(&mut conversation).await.unwrap();
            assert!(done.output.approved && done.output.reason == "within policy");
            assert_eq!(done.metadata.attempts, 2);
            let feedback = model.requests()[1].last_text();
            assert!(feedback.contains(expected), "{mode:?} {answer:?}: {feedback}");
            // question, bad answer, feedback, good answer: alternating and valid.
            let roles: Vec<Role> = conversation.messages().iter().map(|m| m.role).collect();
            assert_eq!(roles, [Role::User, Role::Assistant, Role::User, Role::Assistant]);
        }
    }
}

#[tokio::test]
async fn a_cut_off_answer_says_so_and_exhausted_attempts_are_a_typed_error() {
    let cut = || ModelResponse::from_text(r#"{"approved": true, "rea"#).with_stop_reason(StopReason::MaxTokens);
    let model = ScriptedModel::new().respond(cut()).respond(cut());
    let agent =
        Agent::builder().model(model.clone()).output::<Verdict>().native_output().max_attempts(2).build().unwrap();
    let mut conversation = question();
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::ValidationFailed { attempts: 2 });
    let AttemptFailure::Invalid { errors, .. } = &error.attempt_failures()[0] else { panic!("{error:?}") };
    assert!(errors[0].contains("cut off at the output token limit"), "{errors:?}");
    assert!(errors[1].contains("before its JSON value is complete"), "{errors:?}");
    assert_eq!(conversation.messages().last().unwrap().role, Role::Assistant, "no feedback after the last attempt");
}

#[tokio::test]
async fn native_requests_carry_the_schema_and_prompted_ones_the_instructions() {
    let model = ScriptedModel::new().respond(ModelResponse::from_text(GOOD));
    let agent =
        Agent::builder().model(model.clone()).system("Be fair.").output::<Verdict>().native_output().build().unwrap();
    agent.run(&mut question()).await.unwrap();
    let request = model.last_request().unwrap();
    let schema = request.response_schema.unwrap();
    assert_eq!(schema.name, "final_output");
    assert_eq!(schema.schema["properties"]["reason"]["minLength"], json!(3));
    assert!(schema.strict_schema.is_some());
    assert_eq!(request.system.as_deref(), Some("Be fair."));
    assert!(request.tools.is_empty());

    let model = ScriptedModel::new().respond(ModelResponse::from_text(GOOD));
    let agent =
        Agent::builder().model(model.clone()).system("Be fair.").output::<Verdict>().prompted_output().build().unwrap();
    agent.run(&mut question()).await.unwrap();
    let request = model.last_request().unwrap();
    assert!(request.response_schema.is_none() && request.tools.is_empty());
    let system = request.system.unwrap();
    assert!(system.starts_with("Be fair.\n\nWhen you give your final answer"), "{system}");
    assert!(system.contains(r#""minLength":3"#), "{system}");

    // The request for the output can be reworded; the schema still follows.
    let model = ScriptedModel::new().respond(ModelResponse::from_text(GOOD));
    let agent = Agent::builder()
        .model(model.clone())
        .output::<Verdict>()
        .prompted_output()
        .output_instructions("Antworte nur mit JSON nach diesem Schema:")
        .build()
        .unwrap();
    agent.run(&mut question()).await.unwrap();
    let system = model.last_request().unwrap().system.unwrap();
    assert!(system.starts_with("Antworte nur mit JSON nach diesem Schema:\n{"), "{system}");
}

#[tokio::test]
async fn a_refusal_ends_a_typed_run_in_tool_mode_too() {
    let model =
        ScriptedModel::new().respond(ModelResponse::from_text("I can't.").with_stop_reason(StopReason::Refusal));
    let agent = Agent::builder().model(model).output::<Verdict>().build().unwrap();
    let error = agent.run(&mut question()).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::Refused { attempt: 1, message: "I can't.".into() });
    assert!(error.to_string().contains("refused"), "{error}");
}

/// A model that says nothing about response schemas.
struct Silent(ScriptedModel);

impl Model for Silent {
    fn provider(&self) -> &'static str {
        "silent"
    }
    fn name(&self) -> &'static str {
        "silent-1"
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.0.complete(request)
    }
}

#[test]
fn auto_picks_native_only_when_the_model_says_it_can() {
    let auto = |model: Box<dyn Model>| Agent::builder().model(model).output::<Verdict>().auto_output().build().unwrap();
    let native = auto(Box::new(ScriptedModel::new()));
    assert_eq!(native.output_mode(), OutputMode::Native);
    assert!(native.response_schema().is_some());
    assert!(native.tool_definitions().is_empty(), "no output tool");
    let tool = auto(Box::new(Silent(ScriptedModel::new())));
    assert_eq!(tool.output_mode(), OutputMode::Tool);
    assert_eq!(tool.tool_definitions()[0].name, "final_output");
    // Asked for explicitly, native mode trusts a model that does not say.
    let explicit =
        Agent::builder().model(Silent(ScriptedModel::new())).output::<Verdict>().native_output().build().unwrap();
    assert_eq!(explicit.output_mode(), OutputMode::Native);
}

#[tokio::test]
async fn reflection_renders_each_text_answer_and_submit_ends_the_loop() {
    use toolloop::ToolCall;
    for mode in [OutputMode::Native, OutputMode::Prompted] {
        let model = ScriptedModel::new()
            .respond(ModelResponse::from_text(r#"{"approved": false, "reason": "over the limit"}"#))
            .respond(ModelResponse::from_text("not json"))
            .respond(ModelResponse::from_text(GOOD))
            .respond(ModelResponse::from_tool_calls([ToolCall::new("s1", "submit", json!({}))]));
        let builder = Agent::builder()
            .model(model.clone())
            .output::<Verdict>()
            .reflection(|verdict: &Verdict| format!("Draft: approved={}", verdict.approved));
        let agent = match mode {
            OutputMode::Native => builder.native_output().build().unwrap(),
            _ => builder.prompted_output().build().unwrap(),
        };
        let mut conversation = question();
        let done = agent.run(&mut conversation).await.unwrap();
        assert!(done.output.approved);
        assert_eq!((done.metadata.attempts, done.metadata.iterations), (1, 4));
        let requests = model.requests();
        assert_eq!(requests[0].tool_names(), ["submit"], "{mode:?}: submit, and no output tool");
        let rendered = requests[1].last_text();
        assert!(rendered.starts_with("Draft: approved=false") && rendered.contains("call `submit`"), "{rendered}");
        assert!(requests[2].last_text().contains("could not be read"), "{}", requests[2].last_text());
        assert!(requests[3].last_text().starts_with("Draft: approved=true"));
        // The verdict answers the `submit` call.
        let verdict = conversation.messages().last().unwrap().tool_results().next().unwrap().clone();
        assert_eq!((verdict.call_id.as_str(), verdict.content.as_str()), ("s1", "Output accepted."));
    }
}

#[tokio::test]
async fn submit_before_any_text_output_ends_the_run() {
    use toolloop::ToolCall;
    let model =
        ScriptedModel::new().respond(ModelResponse::from_tool_calls([ToolCall::new("s1", "submit", json!({}))]));
    let agent = Agent::builder()
        .model(model)
        .output::<Verdict>()
        .native_output()
        .reflection(|verdict: &Verdict| format!("{verdict:?}"))
        .build()
        .unwrap();
    let mut conversation = question();
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::SubmitBeforeOutput { attempt: 1 });
    let result = conversation.messages().last().unwrap().tool_results().next().unwrap().content.clone();
    assert!(result.contains("answer with your output as one JSON value first"), "{result}");
}

#[tokio::test]
async fn a_rejected_submit_in_a_text_mode_is_told_once_in_its_result() {
    use toolloop::{Role, ToolCall};
    let submit = |id: &str| ModelResponse::from_tool_calls([ToolCall::new(id, "submit", json!({}))]);
    let model = ScriptedModel::new()
        .respond(ModelResponse::from_text(r#"{"approved": false, "reason": "over the limit"}"#))
        .respond(submit("s1"))
        .respond(ModelResponse::from_text(GOOD))
        .respond(submit("s2"));
    let agent = Agent::builder()
        .model(model)
        .output::<Verdict>()
        .native_output()
        .reflection(|verdict: &Verdict| format!("Draft: approved={}", verdict.approved))
        .validator(|verdict: &Verdict| if verdict.approved { Ok(()) } else { Err("it must be approved") })
        .build()
        .unwrap();
    let mut conversation = question();
    let done = agent.run(&mut conversation).await.unwrap();
    assert!(done.output.approved);
    assert_eq!(done.metadata.attempts, 2);
    let messages = conversation.messages();
    let answered =
        messages.iter().position(|message| message.tool_results().any(|result| result.call_id == "s1")).unwrap();
    let verdict = messages[answered].tool_results().next().unwrap();
    assert!(verdict.content.starts_with("Your output was rejected"), "{}", verdict.content);
    // The verdict is in `submit`'s result: no second rejection message follows it.
    assert_eq!(messages[answered + 1].role, Role::Assistant);
}
