//! A run needs something to answer: an empty conversation, or one ending
//! with the model's own message (a second `run` without `push_user`), is
//! rejected before any model call, saying what to do, and left unchanged.

mod common;

use common::*;
use toolloop::run::{Event, Termination, ToolLoop};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, Conversation, Message, ModelResponse, ToolSet};

#[tokio::test]
async fn an_agent_rejects_an_empty_conversation_without_calling_the_model() {
    let model = ScriptedModel::new().respond(ModelResponse::from_text("hello"));
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::NothingToAnswer);
    assert!(error.to_string().contains("push your message with `conversation.push_user(..)`"), "{error}");
    assert_eq!(error.metadata().model_calls, 0);
    assert!(model.requests().is_empty());
    assert!(conversation.is_empty());
}

#[tokio::test]
async fn a_second_run_without_a_new_user_message_is_rejected_and_the_history_kept() {
    let model =
        ScriptedModel::new().respond(ModelResponse::from_text("Hi Ann")).respond(ModelResponse::from_text("Ann"));
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let mut conversation = ask("I am Ann");
    agent.run(&mut conversation).await.unwrap();
    let before = conversation.len();

    let error = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::NothingToAnswer);
    assert_eq!(conversation.len(), before, "nothing appended");
    assert_eq!(model.requests().len(), 1, "no second model call");

    conversation.push_user("Who am I?");
    assert_eq!(agent.run(&mut conversation).await.unwrap().output, "Ann");
}

#[tokio::test]
async fn a_typed_agent_and_a_tool_loop_apply_the_same_rule() {
    let mut conversation = Conversation::new();
    conversation.push(Message::assistant("How can I help?"));
    let agent = Agent::builder().model(ScriptedModel::new()).output::<Report>().build().unwrap();
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::NothingToAnswer);

    let mut tool_loop = ToolLoop::new(ScriptedModel::new(), ToolSet::new());
    let error = tool_loop.run(&mut Conversation::new()).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::NothingToAnswer);
    let error = tool_loop.run(&mut conversation).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::NothingToAnswer);
    assert_eq!(conversation.len(), 1);
}

#[tokio::test]
async fn a_streamed_run_ends_with_the_same_error_and_streams_only_its_end() {
    let model = ScriptedModel::new().respond(ModelResponse::from_text("hello"));
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let mut conversation = Conversation::new();
    let mut stream = agent.run_stream(&mut conversation);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    // A run that cannot start reports nothing but its end.
    assert!(
        matches!(events.as_slice(), [Event::RunFinished { termination: Termination::NothingToAnswer }]),
        "{events:?}"
    );
    let Err(error) = stream.output().await else { panic!("expected a failed run") };
    assert_eq!(error.termination(), &Termination::NothingToAnswer);
    assert!(model.requests().is_empty());
}
