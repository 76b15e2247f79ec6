//! Property: whatever the model does and wherever the run stops, no tool
//! call is left unanswered and usage is the sum of the responses received.

mod common;

use std::num::NonZeroUsize;
use std::time::Duration;

use common::*;
use proptest::prelude::*;
use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, CancellationToken, ModelError, ModelResponse, StopReason, ToolCall, Usage};

#[derive(Clone, Debug)]
enum Call {
    Search,
    LookupFails,
    Wait(u64),
    Unknown,
    BadArguments,
    Output { score: u32 },
    Submit,
}

#[derive(Clone, Debug)]
enum Step {
    Text,
    Calls { calls: Vec<Call>, truncated: bool },
    Fail,
    Hang,
}

#[derive(Clone, Debug)]
struct Setup {
    typed: bool,
    reflection: bool,
    max_iterations: u32,
    max_attempts: u32,
    max_model_calls: Option<u32>,
    max_tool_executions: Option<u32>,
    token_budget: Option<u64>,
    max_consecutive_failures: Option<u32>,
    stop_on_failed_tool: bool,
    timeout_ms: u64,
    cancel_after_ms: Option<u64>,
    parallel: usize,
}

fn call_strategy() -> impl Strategy<Value = Call> {
    prop_oneof![
        3 => Just(Call::Search),
        2 => Just(Call::LookupFails),
        2 => (1u64..2_000).prop_map(Call::Wait),
        1 => Just(Call::Unknown),
        1 => Just(Call::BadArguments),
        2 => (0u32..12).prop_map(|score| Call::Output { score }),
        2 => Just(Call::Submit),
    ]
}

fn step_strategy() -> impl Strategy<Value = (Step, (u64, u64))> {
    let step = prop_oneof![
        2 => Just(Step::Text),
        6 => (prop::collection::vec(call_strategy(), 1..4), prop::bool::weighted(0.1))
            .prop_map(|(calls, truncated)| Step::Calls { calls, truncated }),
        1 => Just(Step::Fail),
        1 => Just(Step::Hang),
    ];
    (step, (0u64..500, 0u64..200))
}

fn setup_strategy() -> impl Strategy<Value = Setup> {
    (
        (any::<bool>(), any::<bool>(), 1u32..6, 1u32..4),
        (prop::option::of(1u32..8), prop::option::of(1u32..8), prop::option::of(100u64..3_000)),
        (prop::option::of(1u32..4), any::<bool>(), 1u64..10_000, prop::option::of(0u64..5_000), 1usize..4),
    )
        .prop_map(|((typed, reflection, max_iterations, max_attempts), (calls, tools, tokens), rest)| Setup {
            typed,
            reflection,
            max_iterations,
            max_attempts,
            max_model_calls: calls,
            max_tool_executions: tools,
            token_budget: tokens,
            max_consecutive_failures: rest.0,
            stop_on_failed_tool: rest.1,
            timeout_ms: rest.2,
            cancel_after_ms: rest.3,
            parallel: rest.4,
        })
}

fn tool_call(step: usize, index: usize, call: &Call) -> ToolCall {
    let id = format!("c{step}_{index}");
    match call {
        Call::Search => ToolCall::new(id, "search", json!({"query": "q"})),
        Call::LookupFails => ToolCall::new(id, "lookup", json!({"key": "missing"})),
        Call::Wait(millis) => ToolCall::new(id, "wait", json!({"millis": millis, "label": "w"})),
        Call::Unknown => ToolCall::new(id, "nope", json!({})),
        Call::BadArguments => ToolCall::new(id, "search", json!("{not json")),
        Call::Output { score } => ToolCall::new(id, "final_output", json!({"title": "t", "score": score})),
        Call::Submit => ToolCall::new(id, "submit", json!({})),
    }
}

fn script(steps: &[(Step, (u64, u64))]) -> (ScriptedModel, Vec<Usage>) {
    let mut model = ScriptedModel::new();
    let mut usages = Vec::new();
    for (index, (step, (input, output))) in steps.iter().enumerate() {
        let usage = Usage::new(*input, *output);
        let (next, counted) = match step {
            Step::Text => (model.respond(ModelResponse::from_text("answer").with_usage(usage)), usage),
            Step::Calls { calls, truncated } => {
                let mut response =
                    ModelResponse::from_tool_calls(calls.iter().enumerate().map(|(i, c)| tool_call(index, i, c)));
                if *truncated {
                    response = response.with_stop_reason(StopReason::MaxTokens);
                }
                (model.respond(response.with_usage(usage)), usage)
            }
            Step::Fail => (model.fail(ModelError::new(ModelErrorKind::Server, "test", "boom")), Usage::default()),
            Step::Hang => (model.hang(), Usage::default()),
        };
        model = next;
        usages.push(counted);
    }
    (model, usages)
}

async fn run_case(setup: Setup, steps: Vec<(Step, (u64, u64))>) {
    let (model, usages) = script(&steps);
    let builder = Agent::builder()
        .model(model.clone())
        .tool::<Search>()
        .tool_with_state::<Lookup>(Db::default())
        .tool_with_state::<Wait>(Gauge::default())
        .max_iterations(setup.max_iterations)
        .max_duration(Duration::from_millis(setup.timeout_ms))
        .parallel_tool_calls(NonZeroUsize::new(setup.parallel).unwrap());
    let builder = match setup.max_model_calls {
        Some(limit) => builder.max_model_calls(limit),
        None => builder,
    };
    let builder = match setup.max_tool_executions {
        Some(limit) => builder.max_tool_executions(limit),
        None => builder,
    };
    let builder = match setup.token_budget {
        Some(limit) => builder.token_budget(limit),
        None => builder,
    };
    let builder = match setup.max_consecutive_failures {
        Some(limit) => builder.max_consecutive_tool_failures(limit),
        None => builder,
    };
    let builder = if setup.stop_on_failed_tool { builder.stop_on_failed_tool() } else { builder };

    let cancel = CancellationToken::new();
    if let Some(after) = setup.cancel_after_ms {
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(after)).await;
            trigger.cancel();
        });
    }
    let mut conversation = ask("go");
    let metadata = if setup.typed {
        let typed = builder.output::<Report>().max_attempts(setup.max_attempts);
        if setup.reflection {
            let agent = typed.reflection(|r: &Report| r.title.clone()).build().unwrap();
            agent
                .run_with_cancel(&mut conversation, &cancel)
                .await
                .map_or_else(|e| e.metadata().clone(), |d| d.metadata)
        } else {
            let agent = typed.build().unwrap();
            agent
                .run_with_cancel(&mut conversation, &cancel)
                .await
                .map_or_else(|e| e.metadata().clone(), |d| d.metadata)
        }
    } else {
        let agent = builder.build().unwrap();
        agent.run_with_cancel(&mut conversation, &cancel).await.map_or_else(|e| e.metadata().clone(), |d| d.metadata)
    };

    assert_consistent(&conversation);
    let received = model.requests().len();
    assert_eq!(metadata.model_calls as usize, received);
    // Scripted answers arrive at once, so every request but a hanging or
    // failed one (which carry no usage) was answered.
    let expected: Usage = usages.iter().take(received).sum();
    assert_eq!(metadata.usage, expected);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn no_run_leaves_a_tool_call_unanswered_and_usage_adds_up(
        setup in setup_strategy(),
        steps in prop::collection::vec(step_strategy(), 0..8),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        runtime.block_on(run_case(setup, steps));
    }
}
