//! Property: given its journal, a run is deterministic. Replaying a run
//! from any prefix of its journal rebuilds the same conversation and
//! metadata (elapsed time aside), and does not call the model, run a tool,
//! ask the approver or the summariser again for a recorded step. On a
//! journal that takes one step at a time (`Journal::parallel_steps`
//! false, as Restate's), a run issues its steps in the order they finish,
//! and a replay issues the same steps in the same order: what a journal
//! that replays by position (Restate's) needs.

#![allow(clippy::unused_async)] // tool handlers are async by contract

mod common;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use proptest::prelude::*;
use serde_json::{Value, json};
use toolloop::model::ModelErrorKind;
use toolloop::providers::Fallback;
use toolloop::run::journal::MemoryJournal;
use toolloop::run::{ContextPolicy, Decision, Governance, RunMetadata};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, CancellationToken, Conversation, ModelError, ModelResponse, StopReason, ToolCall, Usage};

/// Fetch a record; counts every execution.
#[derive(toolloop::Tool)]
#[tool(state = Counter)]
struct Fetch {
    /// The key.
    key: String,
}

#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

impl Fetch {
    async fn run(self, counter: &Counter) -> Result<String, String> {
        counter.0.fetch_add(1, Ordering::SeqCst);
        if self.key == "missing" { Err("no such record".to_owned()) } else { Ok(format!("record {}", self.key)) }
    }
}

#[derive(Clone, Debug)]
enum Call {
    Fetch,
    FetchFails,
    Wait(u64),
    Unknown,
    BadArguments,
    Output { score: u32 },
    Submit,
}

#[derive(Clone, Debug)]
enum Turn {
    Text,
    Calls {
        calls: Vec<Call>,
        truncated: bool,
    },
    /// A terminal model error: the run ends.
    Fail,
    /// The prompt does not fit: the run compacts and calls again.
    Overflow,
}

#[derive(Clone, Debug)]
struct Scripted {
    turn: Turn,
    usage: (u64, u64),
    /// The primary model is overloaded; the fallback answers.
    fallback: bool,
}

#[derive(Clone, Debug)]
#[allow(clippy::struct_excessive_bools)] // independent switches of a generated setup
struct Setup {
    typed: bool,
    reflection: bool,
    max_attempts: u32,
    max_iterations: u32,
    parallel: usize,
    /// Calls to `wait` need approval.
    approvals: bool,
    compaction: bool,
    time_limit: bool,
    /// The journal takes one step at a time.
    in_turn: bool,
}

fn call_strategy() -> impl Strategy<Value = Call> {
    prop_oneof![
        3 => Just(Call::Fetch),
        2 => Just(Call::FetchFails),
        2 => (1u64..500).prop_map(Call::Wait),
        1 => Just(Call::Unknown),
        1 => Just(Call::BadArguments),
        2 => (0u32..12).prop_map(|score| Call::Output { score }),
        2 => Just(Call::Submit),
    ]
}

fn scripted_strategy() -> impl Strategy<Value = Scripted> {
    let turn = prop_oneof![
        2 => Just(Turn::Text),
        7 => (prop::collection::vec(call_strategy(), 1..4), prop::bool::weighted(0.1))
            .prop_map(|(calls, truncated)| Turn::Calls { calls, truncated }),
        1 => Just(Turn::Fail),
        1 => Just(Turn::Overflow),
    ];
    (turn, (0u64..500, 0u64..200), prop::bool::weighted(0.2)).prop_map(|(turn, usage, fallback)| Scripted {
        turn,
        usage,
        fallback,
    })
}

fn setup_strategy() -> impl Strategy<Value = Setup> {
    (
        (any::<bool>(), any::<bool>(), 1u32..4, 1u32..6),
        (1usize..4, any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(
                (typed, reflection, max_attempts, max_iterations),
                (parallel, approvals, compaction, time_limit, in_turn),
            )| Setup {
                typed,
                reflection,
                max_attempts,
                max_iterations,
                parallel,
                approvals,
                compaction,
                time_limit,
                in_turn,
            },
        )
}

fn tool_call(turn: usize, index: usize, call: &Call) -> ToolCall {
    let id = format!("c{turn}_{index}");
    match call {
        Call::Fetch => ToolCall::new(id, "fetch", json!({"key": format!("k{turn}")})),
        Call::FetchFails => ToolCall::new(id, "fetch", json!({"key": "missing"})),
        Call::Wait(millis) => ToolCall::new(id, "wait", json!({"millis": millis, "label": "waited"})),
        Call::Unknown => ToolCall::new(id, "nope", json!({})),
        Call::BadArguments => ToolCall::new(id, "fetch", json!("{not json")),
        Call::Output { score } => ToolCall::new(id, "final_output", json!({"title": "t", "score": score})),
        Call::Submit => ToolCall::new(id, "submit", json!({})),
    }
}

fn response(index: usize, scripted: &Scripted) -> Result<ModelResponse, ModelError> {
    let usage = Usage::new(scripted.usage.0, scripted.usage.1);
    match &scripted.turn {
        Turn::Text => Ok(ModelResponse::from_text(format!("answer {index}")).with_usage(usage)),
        Turn::Calls { calls, truncated } => {
            let response =
                ModelResponse::from_tool_calls(calls.iter().enumerate().map(|(i, call)| tool_call(index, i, call)));
            let response = if *truncated { response.with_stop_reason(StopReason::MaxTokens) } else { response };
            Ok(response.with_usage(usage))
        }
        Turn::Fail => Err(ModelError::new(ModelErrorKind::InvalidRequest, "test", "bad request").with_status(400)),
        Turn::Overflow => Err(ModelError::new(ModelErrorKind::ContextOverflow, "test", "prompt is too long")),
    }
}

/// What the world was asked during one run.
#[derive(Clone, Default)]
struct World {
    /// The script position: the next model call answers turn `next`.
    next: Arc<AtomicUsize>,
    model_calls: Arc<AtomicUsize>,
    fetches: Counter,
    waits: Gauge,
    approvals: Arc<AtomicUsize>,
    summaries: Arc<AtomicUsize>,
}

impl World {
    /// A world whose model continues the script at turn `next`.
    fn at(next: usize) -> Self {
        let world = Self::default();
        world.next.store(next, Ordering::SeqCst);
        world
    }

    fn tool_executions(&self) -> usize {
        self.fetches.0.load(Ordering::SeqCst) + self.waits.finished.load(Ordering::SeqCst)
    }
}

/// The primary model (overloaded on the turns marked `fallback`), then the fallback.
fn model(script: &Arc<Vec<Scripted>>, world: &World) -> Fallback {
    let answer = |fallback_turns_fail: bool| {
        let script = Arc::clone(script);
        let world = world.clone();
        move |_: &toolloop::testing::RecordedRequest| {
            let index = world.next.load(Ordering::SeqCst);
            let Some(scripted) = script.get(index) else {
                world.next.fetch_add(1, Ordering::SeqCst);
                world.model_calls.fetch_add(1, Ordering::SeqCst);
                return Ok(ModelResponse::from_text("done"));
            };
            if fallback_turns_fail && scripted.fallback {
                return Err(ModelError::new(ModelErrorKind::Overloaded, "primary", "overloaded"));
            }
            world.next.fetch_add(1, Ordering::SeqCst);
            world.model_calls.fetch_add(1, Ordering::SeqCst);
            response(index, scripted)
        }
    };
    Fallback::new(ScriptedModel::from_fn(answer(true)).with_provider("primary"))
        .then(ScriptedModel::from_fn(answer(false)).with_provider("secondary"))
}

async fn run(
    setup: &Setup,
    script: &Arc<Vec<Scripted>>,
    world: &World,
    journal: &IssuedJournal,
) -> (Conversation, RunMetadata) {
    let asked = Arc::clone(&world.approvals);
    let governance = Governance::new()
        .policy(|call| if call.name == "wait" { Decision::Ask } else { Decision::Allow })
        .approver(move |call: ToolCall| {
            asked.fetch_add(1, Ordering::SeqCst);
            let millis = call.input["millis"].as_u64().unwrap_or_default();
            async move { if millis.is_multiple_of(3) { Decision::Deny("not now".to_owned()) } else { Decision::Allow } }
        });
    let summaries = Arc::clone(&world.summaries);
    let policy = ContextPolicy::new().keep_iterations(1).summariser(move |messages: &[toolloop::Message]| {
        summaries.fetch_add(1, Ordering::SeqCst);
        format!("{} messages", messages.len())
    });
    let mut builder = Agent::builder()
        .model(model(script, world))
        .tool_with_state::<Fetch>(world.fetches.clone())
        .tool_with_state::<Wait>(world.waits.clone())
        .max_iterations(setup.max_iterations)
        .parallel_tool_calls(NonZeroUsize::new(setup.parallel).unwrap());
    if setup.approvals {
        builder = builder.governance(governance);
    }
    if setup.compaction {
        builder = builder.context_policy(policy);
    }
    if setup.time_limit {
        builder = builder.max_duration(Duration::from_secs(3_600));
    }
    let cancel = CancellationToken::new();
    let mut conversation = ask("go");
    let metadata = if setup.typed {
        let typed = builder.output::<Report>().max_attempts(setup.max_attempts);
        if setup.reflection {
            let agent = typed.reflection(|report: &Report| format!("{} scores {}", report.title, report.score)).build();
            let done = agent.unwrap().run_journaled(&mut conversation, journal, &cancel).await;
            done.map_or_else(|error| error.metadata().clone(), |done| done.metadata)
        } else {
            let done = typed.build().unwrap().run_journaled(&mut conversation, journal, &cancel).await;
            done.map_or_else(|error| error.metadata().clone(), |done| done.metadata)
        }
    } else {
        let done = builder.build().unwrap().run_journaled(&mut conversation, journal, &cancel).await;
        done.map_or_else(|error| error.metadata().clone(), |done| done.metadata)
    };
    (conversation, metadata)
}

/// The steps of a saved journal (`{"step", "record"}` each) whose name begins with `prefix`.
fn count(entries: &[Value], prefix: &str) -> usize {
    entries.iter().filter(|entry| entry["step"].as_str().unwrap().starts_with(prefix)).count()
}

/// Recorded tool executions whose handler ran (arguments that do not parse never reach it).
fn handled(entries: &[Value]) -> usize {
    let ran = |entry: &&Value| entry["record"]["value"]["result"]["failure"] != "invalid_arguments";
    entries.iter().filter(|entry| entry["step"].as_str().unwrap().starts_with("tool ")).filter(ran).count()
}

async fn replay_case(setup: Setup, script: Vec<Scripted>, cut: prop::sample::Index) {
    let script = Arc::new(script);
    let world = World::default();
    let recording = IssuedJournal::new(MemoryJournal::new(), !setup.in_turn);
    let (conversation, metadata) = run(&setup, &script, &world, &recording).await;
    let journal = &recording.inner;
    let saved = serde_json::to_value(journal).unwrap();
    let entries = saved.as_array().unwrap();
    // Every step the run did was recorded.
    assert_eq!(
        count(entries, "model call ") + count(entries, "summary "),
        world.model_calls.load(Ordering::SeqCst) + world.summaries.load(Ordering::SeqCst)
    );
    assert_eq!(handled(entries), world.tool_executions());
    assert_eq!(count(entries, "approval "), world.approvals.load(Ordering::SeqCst));
    assert_eq!(setup.time_limit, count(entries, "clock ") > 0 || entries.is_empty());

    // Through JSON and back, as a durable engine stores it.
    let stored: MemoryJournal = serde_json::from_str(&serde_json::to_string(journal).unwrap()).unwrap();
    let finished: Vec<String> = entries.iter().map(|entry| entry["step"].as_str().unwrap().to_owned()).collect();
    if setup.in_turn {
        // One step at a time: each finished before the next was issued.
        assert_eq!(recording.issued(), finished, "steps issued in the order they finished");
    }
    assert_eq!(serde_json::to_value(&stored).unwrap(), saved);
    for kept in [cut.index(entries.len() + 1), entries.len()] {
        let prefix = &entries[..kept];
        let model_calls = count(prefix, "model call ");
        let replay_world = World::at(model_calls);
        let replaying = IssuedJournal::new(MemoryJournal::replay_first(&stored, kept), !setup.in_turn);
        let (again, again_metadata) = run(&setup, &script, &replay_world, &replaying).await;
        let replay = &replaying.inner;
        if setup.in_turn {
            assert_eq!(replaying.issued(), finished, "a replay issues the same steps in the same order");
        }

        assert_eq!(again, conversation, "replaying {kept} of {} steps", entries.len());
        let mut elapsed_aside = again_metadata.clone();
        elapsed_aside.elapsed = metadata.elapsed;
        assert_eq!(elapsed_aside, metadata);
        assert_eq!(replay.replayed_steps() as usize, kept);
        assert!(replay.errors().is_empty());
        // Only the steps after the prefix were done again.
        assert_eq!(
            replay_world.model_calls.load(Ordering::SeqCst),
            world.model_calls.load(Ordering::SeqCst) - model_calls
        );
        assert_eq!(replay_world.tool_executions(), world.tool_executions() - handled(prefix));
        assert_eq!(
            replay_world.approvals.load(Ordering::SeqCst),
            world.approvals.load(Ordering::SeqCst) - count(prefix, "approval ")
        );
        assert_eq!(
            replay_world.summaries.load(Ordering::SeqCst),
            world.summaries.load(Ordering::SeqCst) - count(prefix, "summary ")
        );
        // And the journal is whole again.
        let mut rebuilt = replay.steps();
        let mut original = journal.steps();
        rebuilt.sort();
        original.sort();
        assert_eq!(rebuilt, original);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn a_run_replayed_from_any_prefix_of_its_journal_is_the_same_run(
        setup in setup_strategy(),
        script in prop::collection::vec(scripted_strategy(), 0..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        runtime.block_on(replay_case(setup, script, cut));
    }
}

/// A journal entry from another format, or one that no longer
/// deserializes, fails its step with an error naming it; the run stays
/// consistent.
#[tokio::test]
async fn an_unreadable_entry_fails_its_step_naming_it() {
    let agent =
        Agent::builder().model(ScriptedModel::from_fn(|_| Ok(ModelResponse::from_text("live")))).build().unwrap();
    let old = json!([{"step": "model call 1", "record": {"format": 0, "value": {"Ok": {}}}}]);
    let journal: MemoryJournal = serde_json::from_value(old).unwrap();
    let mut conversation = ask("go");
    let error = agent.run_journaled(&mut conversation, &journal, &CancellationToken::new()).await.unwrap_err();
    let source = std::error::Error::source(&error).map(ToString::to_string).unwrap_or_default();
    assert!(source.contains("`model call 1` is in format 0"), "{source}");
    assert_eq!(journal.errors().len(), 1);
    assert_consistent(&conversation);
}
