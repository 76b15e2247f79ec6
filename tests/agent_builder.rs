//! The builder's settings compose: later calls never silently undo earlier
//! ones, and one rule covers every limit (positive and finite).

mod common;

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{ask, call, calls};
use serde_json::json;
use toolloop::run::{Event, Termination};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, AgentBuilder, BuildError, ModelResponse};

#[tokio::test]
async fn later_settings_keep_what_earlier_setters_set() {
    let model = ScriptedModel::new().respond(calls([call("1", "nothing", json!({}))]));
    let agent = Agent::builder()
        .model(model)
        .max_iterations(1)
        .max_duration(Duration::from_secs(60))
        .max_model_calls(5)
        .build()
        .unwrap();
    let error = agent.run(&mut ask("go")).await.unwrap_err();
    assert_eq!(error.termination(), &Termination::MaxIterations { attempt: 1, iterations: 1, limit: 1 });
}

#[tokio::test]
async fn hooks_fire_in_the_order_they_were_set_and_one_closure_serves_several_agents() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let second = log.clone();
    // Hooks shared between agents: one `on_event` closure, cloned.
    let shared = move |event: &Event| {
        if let Event::RunFinished { termination } = event {
            second.lock().unwrap().push(format!("shared stop {termination:?}"));
        }
    };
    let agent = |name: &'static str| {
        let (first, third) = (log.clone(), log.clone());
        Agent::builder()
            .model(ScriptedModel::new().respond(ModelResponse::from_text("hi")))
            .on_attempt_started(move |attempt| first.lock().unwrap().push(format!("{name} attempt {attempt}")))
            .on_event(shared.clone())
            .on_run_finished(move |_| third.lock().unwrap().push(format!("{name} own stop")))
            .build()
            .unwrap()
    };
    agent("a").run(&mut ask("go")).await.unwrap();
    agent("b").run(&mut ask("go")).await.unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["a attempt 1", "shared stop Answer", "a own stop", "b attempt 1", "shared stop Answer", "b own stop"]
    );
}

#[tokio::test]
async fn a_second_system_prompt_adds_a_paragraph() {
    let model = ScriptedModel::new().respond(ModelResponse::from_text("hi"));
    let agent =
        Agent::builder().model(model.clone()).system("You are terse.").system("Answer in French.").build().unwrap();
    agent.run(&mut ask("go")).await.unwrap();
    assert_eq!(model.requests()[0].system.as_deref(), Some("You are terse.\n\nAnswer in French."));
}

fn rejected(builder: AgentBuilder<toolloop::agent::state::WithModel>) -> (&'static str, String) {
    match builder.build() {
        Err(BuildError::InvalidSetting { setting, value }) => (setting, value),
        other => panic!("expected an invalid setting, got {other:?}"),
    }
}

#[test]
fn every_zero_negative_or_non_finite_limit_is_a_build_error() {
    let builder = || Agent::builder().model(ScriptedModel::new());
    let cases: Vec<(AgentBuilder<_>, &str, &str)> = vec![
        (builder().max_iterations(0), "max_iterations", "0"),
        (builder().max_model_calls(0), "max_model_calls", "0"),
        (builder().max_tool_executions(0), "max_tool_executions", "0"),
        (builder().max_duration(Duration::ZERO), "max_duration", "0ns"),
        (builder().token_budget(0), "token_budget", "0"),
        (builder().max_consecutive_tool_failures(0), "max_consecutive_tool_failures", "0"),
        (builder().max_tokens(0), "max_tokens", "0"),
        (builder().temperature(f32::NAN), "temperature", "NaN"),
        (builder().temperature(f32::INFINITY), "temperature", "inf"),
        (builder().temperature(-0.1), "temperature", "-0.1"),
    ];
    for (builder, setting, value) in cases {
        assert_eq!(rejected(builder), (setting, value.to_owned()));
    }
    let error = builder().output::<common::Report>().max_attempts(0).build().unwrap_err();
    assert_eq!(error, BuildError::InvalidSetting { setting: "max_attempts", value: "0".to_owned() });
    assert_eq!(error.to_string(), "`max_attempts` must be positive and finite, got 0: leave it unset for no limit");
    // A timeout of zero is the same error as a provider's.
    let error = builder().tool_timeout(Duration::ZERO).build().unwrap_err();
    assert_eq!(error, BuildError::ZeroTimeout { setting: "tool_timeout" });
    assert_eq!(error.to_string(), "`tool_timeout` must be longer than zero (leave it unset for the default)");
}

#[test]
fn the_smallest_valid_values_build() {
    let agent = Agent::builder()
        .model(ScriptedModel::new())
        .max_iterations(1)
        .max_model_calls(1)
        .max_tool_executions(1)
        .max_duration(Duration::from_nanos(1))
        .token_budget(1)
        .max_consecutive_tool_failures(1)
        .tool_timeout(Duration::from_nanos(1))
        .max_tokens(1)
        .temperature(0.0)
        .parallel_tool_calls(NonZeroUsize::MIN)
        .build();
    assert!(agent.is_ok(), "{agent:?}");
}
