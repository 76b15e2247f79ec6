//! A typed agent's verdict on an output answers the call that proposed it
//! (or, with reflection, the `submit` call): one result, marked as an error
//! when rejected, and no separate feedback message.

mod common;

use common::*;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, FailureKind, ModelResponse, Role};

#[tokio::test]
async fn typed_mode_answers_the_output_call_itself_with_the_rejection() {
    let model = ScriptedModel::new().respond(output("o1", "", 5)).respond(output("o2", "Fine", 5));
    let agent = Agent::builder()
        .model(model.clone())
        .output::<Report>()
        .validator(|report: &Report| if report.title.is_empty() { Err("title is empty") } else { Ok(()) })
        .build()
        .unwrap();
    let mut conversation = ask("go");
    agent.run(&mut conversation).await.unwrap();
    let all = results(&conversation);
    assert_eq!(all.len(), 2, "one result per output call");
    assert_eq!((all[0].call_id.as_str(), all[0].failure), ("o1", Some(FailureKind::Rejected)));
    assert!(all[0].content.contains("title is empty"), "{}", all[0].content);
    assert_eq!((all[1].content.as_str(), all[1].failure), ("Output accepted.", None));
    // user, assistant(o1), results, assistant(o2), results: no user feedback message.
    let roles: Vec<Role> = conversation.messages().iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::User, Role::Assistant, Role::User]);
    assert!(conversation.messages()[2].text().is_empty());
    assert_consistent(&conversation);
}

#[tokio::test]
async fn reflection_attaches_the_validators_verdict_to_submit() {
    let model = ScriptedModel::new()
        .respond(output("o1", "", 5))
        .respond(submit("s1"))
        .respond(output("o2", "Fine", 5))
        .respond(submit("s2"));
    let agent = Agent::builder()
        .model(model.clone())
        .output::<Report>()
        .reflection(|report: &Report| format!("draft {}", report.title))
        .validator(|report: &Report| if report.title.is_empty() { Err("title is empty") } else { Ok(()) })
        .build()
        .unwrap();
    let mut conversation = ask("go");
    agent.run(&mut conversation).await.unwrap();
    let all = results(&conversation);
    let submit = all.iter().find(|r| r.call_id == "s1").unwrap();
    assert_eq!(submit.failure, Some(FailureKind::Rejected));
    assert!(submit.content.contains("title is empty") && submit.content.contains("then call `submit`"));
    // The model saw the rejection as the submit call's error result.
    let verdict = model.requests()[2].last_tool_result().unwrap().clone();
    assert_eq!((verdict.call_id.as_str(), verdict.is_error()), ("s1", true));
    assert_eq!(all.iter().find(|r| r.call_id == "s2").unwrap().content, "Output accepted.");
    assert_consistent(&conversation);
}

#[tokio::test]
async fn reflection_text_after_a_proposal_asks_for_submit_and_the_proposal_survives() {
    let model = ScriptedModel::new()
        .respond(output("o1", "Draft", 5))
        .respond(ModelResponse::from_text("Looks good to me."))
        .respond(submit("s1"));
    let agent = Agent::builder()
        .model(model.clone())
        .output::<Report>()
        .reflection(|report: &Report| format!("draft {}", report.title))
        .build()
        .unwrap();
    let mut conversation = ask("go");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output.title, "Draft");
    let nudge = model.requests()[2].last_text();
    assert!(nudge.contains("Call `submit`"), "{nudge}");
    assert!(!nudge.contains("without calling"), "{nudge}");
}
