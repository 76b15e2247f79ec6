//! An output call (the agent's output tool, or `submit` with reflection) in
//! the batch of a deferred call waits with it: governance decides it once,
//! it is reported once (one `ToolExecutionFinished`, carrying what the
//! model is told) and counted once over the pause and the resume, on
//! either side of the deferred call, however the call was deferred (the
//! policy, the approver, an external tool) and resolved (approved, denied,
//! executed by the caller), a replay of the paused run's journal included.

#![allow(clippy::unused_async)] // tool handlers are async by contract

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use common::{Delete, Deletions, Report, ask, assert_consistent, call, results};
use serde_json::json;
use toolloop::run::journal::MemoryJournal;
use toolloop::run::{Decision, DeferralReason, Event, Governance, Resolution, RunMetadata, Termination, Verdict};
use toolloop::testing::ScriptedModel;
use toolloop::tool::ToolDefinition;
use toolloop::{CancellationToken, Conversation, FailureKind, ModelResponse, ToolCall, ToolResult};

/// How the waiting call of the batch comes to wait.
#[derive(Clone, Copy, Debug)]
enum Wait {
    /// The policy defers `delete` (`Decision::Defer`).
    Policy,
    /// The policy asks about `delete`; the approver cannot decide now (`Decision::Defer`).
    Approver,
    /// `location` is an external tool: the caller executes it.
    External,
}

impl Wait {
    fn call(self) -> ToolCall {
        match self {
            Self::Policy | Self::Approver => call("w1", "delete", json!({"path": "/a"})),
            Self::External => call("w1", "location", json!({})),
        }
    }

    fn reason(self) -> DeferralReason {
        match self {
            Self::Policy => DeferralReason::Approval("a person signs off deletions".into()),
            Self::Approver => DeferralReason::Approval("no operator online".into()),
            Self::External => DeferralReason::External,
        }
    }
}

/// How the caller resolves the waiting call.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Resolve {
    /// Approve it, or (external) give its output.
    Go,
    Deny,
}

/// What the world saw: every event, and whom governance asked about which call.
#[derive(Clone, Default)]
struct Seen {
    events: Arc<Mutex<Vec<Event>>>,
    policy: Arc<Mutex<Vec<String>>>,
    approver: Arc<Mutex<Vec<String>>>,
    deletions: Arc<Deletions>,
}

impl Seen {
    fn take_events(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock().unwrap())
    }

    /// How many times each call id was put to the policy (or the approver).
    fn asked(list: &Mutex<Vec<String>>) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for id in list.lock().unwrap().iter() {
            *counts.entry(id.clone()).or_default() += 1;
        }
        counts
    }
}

fn location() -> ToolDefinition {
    ToolDefinition::from_schema("location", "The user's location.", json!({"type": "object", "properties": {}}))
}

/// Output calls are put to the approver, which approves them (so their
/// verdict is `Approved`); `delete` waits as `wait` says (runs without one).
fn governance(wait: Option<Wait>, seen: &Seen) -> Governance {
    let policy = Arc::clone(&seen.policy);
    let approver = Arc::clone(&seen.approver);
    Governance::new()
        .policy(move |call| {
            policy.lock().unwrap().push(call.id.clone());
            match (call.name.as_str(), wait) {
                ("final_output" | "submit", _) | ("delete", Some(Wait::Approver)) => Decision::Ask,
                ("delete", Some(_)) => Decision::Defer("a person signs off deletions".into()),
                _ => Decision::Allow,
            }
        })
        .approver(move |call: ToolCall| {
            approver.lock().unwrap().push(call.id.clone());
            async move {
                if call.name == "delete" { Decision::Defer("no operator online".into()) } else { Decision::Allow }
            }
        })
}

/// The agent, with or without reflection (two types).
enum Reporter {
    Plain(toolloop::Agent<Report>),
    Reflective(toolloop::Agent<Report, toolloop::agent::Reflective>),
}

type Done = Result<toolloop::RunOutput<Report>, toolloop::RunError>;

impl Reporter {
    async fn run(&self, conversation: &mut Conversation) -> Done {
        match self {
            Self::Plain(agent) => agent.run(conversation).await,
            Self::Reflective(agent) => agent.run(conversation).await,
        }
    }

    async fn resume(&self, conversation: &mut Conversation, resolution: Resolution) -> Done {
        match self {
            Self::Plain(agent) => agent.resume(conversation, [("w1", resolution)]).await,
            Self::Reflective(agent) => agent.resume(conversation, [("w1", resolution)]).await,
        }
    }

    async fn run_journaled(&self, conversation: &mut Conversation, journal: &MemoryJournal) -> Done {
        let cancel = CancellationToken::new();
        match self {
            Self::Plain(agent) => agent.run_journaled(conversation, journal, &cancel).await,
            Self::Reflective(agent) => agent.run_journaled(conversation, journal, &cancel).await,
        }
    }
}

fn agent(model: &ScriptedModel, wait: Wait, reflection: bool, seen: &Seen) -> Reporter {
    build(model, Some(wait), reflection, seen, Options::default())
}

/// The options of an agent: its stop policies, and whether it runs the
/// calls of a response at once.
#[derive(Clone, Copy, Default)]
struct Options {
    on_failed_tool: bool,
    consecutive_failures: Option<u32>,
    parallel: bool,
}

fn build(model: &ScriptedModel, wait: Option<Wait>, reflection: bool, seen: &Seen, options: Options) -> Reporter {
    let events = Arc::clone(&seen.events);
    let mut builder = toolloop::Agent::builder()
        .model(model.clone())
        .tool_with_state::<Delete>(Arc::clone(&seen.deletions))
        .external_tool(location())
        .governance(governance(wait, seen))
        .on_event(move |event: &Event| events.lock().unwrap().push(event.clone()));
    if options.on_failed_tool {
        builder = builder.stop_on_failed_tool();
    }
    if let Some(limit) = options.consecutive_failures {
        builder = builder.max_consecutive_tool_failures(limit);
    }
    if options.parallel {
        builder = builder.parallel_tool_calls(std::num::NonZeroUsize::new(3).unwrap());
    }
    let builder = builder.output::<Report>();
    if reflection {
        let reflective = builder.reflection(|report: &Report| format!("{} scores {}", report.title, report.score));
        Reporter::Reflective(reflective.build().unwrap())
    } else {
        Reporter::Plain(builder.build().unwrap())
    }
}

/// The output calls of the batch: the output call, and `submit` after it with reflection.
fn output_calls(reflection: bool) -> Vec<ToolCall> {
    let output = call("o1", "final_output", json!({"title": "T", "score": 7}));
    if reflection { vec![output, call("x1", "submit", json!({}))] } else { vec![output] }
}

/// The batch: the output calls before or after the waiting call.
fn batch(wait: Wait, reflection: bool, output_first: bool) -> Vec<ToolCall> {
    let mut calls = output_calls(reflection);
    if output_first {
        calls.push(wait.call());
    } else {
        calls.insert(0, wait.call());
    }
    calls
}

/// What the model is told for each output call once the run is done.
fn told(reflection: bool) -> Vec<(&'static str, &'static str)> {
    if reflection { vec![("o1", "T scores 7"), ("x1", "Output accepted.")] } else { vec![("o1", "Output accepted.")] }
}

/// `started ID`, `finished ID` and `deferred ID` for the tool events, in order.
fn tool_events(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolExecutionStarted { call, .. } => Some(format!("started {}", call.id)),
            Event::ToolExecutionFinished { call, .. } => Some(format!("finished {}", call.id)),
            Event::ToolCallDeferred { call, .. } => Some(format!("deferred {}", call.id)),
            _ => None,
        })
        .collect()
}

/// Every `ToolExecutionFinished`: the call id, the result and the verdict.
fn finished(events: &[Event]) -> Vec<(String, ToolResult, Verdict)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolExecutionFinished { call, result, verdict, .. } => {
                Some((call.id.clone(), result.clone(), verdict.clone()))
            }
            _ => None,
        })
        .collect()
}

fn count(events: &[String], event: &str) -> usize {
    events.iter().filter(|seen| *seen == event).count()
}

/// Through JSON, as a store or another process would see it.
fn reload(conversation: &Conversation) -> Conversation {
    serde_json::from_str(&serde_json::to_string(conversation).unwrap()).unwrap()
}

/// Pauses on the batch, checks the paused segment, resumes as `resolve`
/// says and checks the whole run.
async fn pause_and_resume(wait: Wait, reflection: bool, output_first: bool, resolve: Resolve, parallel: bool) {
    let case =
        format!("{wait:?}, reflection {reflection}, output first {output_first}, {resolve:?}, parallel {parallel}");
    let calls = batch(wait, reflection, output_first);
    let model = ScriptedModel::new().respond(ModelResponse::from_tool_calls(calls.clone()));
    let seen = Seen::default();
    let agent = build(&model, Some(wait), reflection, &seen, Options { parallel, ..Options::default() });
    let owned: Vec<String> = output_calls(reflection).into_iter().map(|call| call.id).collect();

    // The pause: the output calls wait with the batch, unanswered and unreported.
    let mut conversation = ask("Report.");
    let paused = agent.run(&mut conversation).await.unwrap_err();
    assert!(paused.is_deferred(), "{case}: {paused}");
    let held: Vec<_> =
        paused.deferred_calls().iter().map(|deferred| (deferred.call.id.clone(), deferred.reason.clone())).collect();
    let expected: Vec<_> = calls
        .iter()
        .map(|call| (call.id.clone(), if call.id == "w1" { wait.reason() } else { DeferralReason::Held }))
        .collect();
    assert_eq!(held, expected, "{case}");
    assert_eq!(*paused.termination(), Termination::Deferred { calls: 1 }, "{case}");
    let events = seen.take_events();
    let expected: Vec<_> = calls.iter().map(|call| format!("deferred {}", call.id)).collect();
    assert_eq!(tool_events(&events), expected, "{case}: the paused segment reports no result");
    assert_eq!(paused.metadata().tool_calls, 0, "{case}");
    assert!(paused.metadata().tools_used.is_empty(), "{case}: {:?}", paused.metadata().tools_used);

    // The resume, in another process.
    let mut conversation = reload(&conversation);
    let resolution = match (resolve, wait) {
        (Resolve::Deny, _) => Resolution::deny("not now"),
        (Resolve::Go, Wait::External) => Resolution::output("Lyon"),
        (Resolve::Go, _) => Resolution::Approve,
    };
    let done = agent.resume(&mut conversation, resolution).await.unwrap();
    assert_eq!(done.output, Report { title: "T".into(), score: 7 }, "{case}");
    assert_eq!(done.metadata.termination, Termination::Output, "{case}");
    assert_eq!(model.requests().len(), 1, "{case}: the output ends the run");
    assert_consistent(&conversation);
    let answered = results(&conversation);
    assert_eq!(answered.len(), calls.len(), "{case}: one result per call");

    // Each call reported once, with what the model is told.
    let events = seen.take_events();
    let names = tool_events(&events);
    assert!(!names.iter().any(|name| name.starts_with("deferred")), "{case}: {names:?}");
    let reports = finished(&events);
    for call in &calls {
        let reported: Vec<_> = reports.iter().filter(|(id, ..)| *id == call.id).collect();
        assert_eq!(reported.len(), 1, "{case}: `{}` is reported once: {names:?}", call.id);
        let result = answered.iter().find(|result| result.call_id == call.id).unwrap();
        assert_eq!(&reported[0].1, result, "{case}: `{}` is reported as the model is told", call.id);
    }
    for (id, content) in told(reflection) {
        let (_, result, verdict) = reports.iter().find(|(call, ..)| call == id).unwrap();
        assert_eq!((result.content.as_str(), result.failure), (content, None), "{case}: `{id}`");
        assert_eq!(*verdict, Verdict::Approved, "{case}: `{id}` keeps the approver's verdict");
        assert_eq!(count(&names, &format!("started {id}")), 1, "{case}: {names:?}");
    }
    let (_, waited, verdict) = reports.iter().find(|(id, ..)| id == "w1").unwrap();
    let ran = resolve == Resolve::Go;
    match (resolve, wait) {
        (Resolve::Deny, _) => {
            assert_eq!(waited.failure, Some(FailureKind::ApprovalDenied), "{case}");
            assert_eq!(*verdict, Verdict::ApprovalDenied("not now".into()), "{case}");
        }
        (Resolve::Go, Wait::External) => assert_eq!((waited.content.as_str(), verdict), ("Lyon", &Verdict::Allowed)),
        (Resolve::Go, _) => assert_eq!((waited.content.as_str(), verdict), ("deleted /a", &Verdict::Approved)),
    }
    let deleted = usize::from(ran && !matches!(wait, Wait::External));
    assert_eq!(seen.deletions.0.load(Ordering::SeqCst), deleted, "{case}");

    // Counted once, over both segments.
    let metadata = &done.metadata;
    assert_eq!(metadata.tool_calls as usize, owned.len() + usize::from(ran), "{case}: {:?}", metadata.tools_used);
    let mut used = BTreeMap::from([("final_output".to_owned(), 1)]);
    if reflection {
        used.insert("submit".to_owned(), 1);
    }
    if ran {
        used.insert(wait.call().name, 1);
    }
    assert_eq!(metadata.tools_used, used, "{case}");

    // Decided once: the policy saw each call once, the approver each output call once.
    let policy = Seen::asked(&seen.policy);
    let expected: BTreeMap<String, usize> = calls.iter().map(|call| (call.id.clone(), 1)).collect();
    assert_eq!(policy, expected, "{case}: policy invocations");
    let mut expected: BTreeMap<String, usize> = owned.iter().map(|id| (id.clone(), 1)).collect();
    if matches!(wait, Wait::Approver) {
        expected.insert("w1".to_owned(), 1);
    }
    assert_eq!(Seen::asked(&seen.approver), expected, "{case}: approver invocations");
}

/// Every position of the output calls and every resolution, the calls run
/// one after the other and at once, for one way to wait.
async fn every_case(wait: Wait, reflection: bool) {
    for output_first in [true, false] {
        for resolve in [Resolve::Go, Resolve::Deny] {
            for parallel in [false, true] {
                pause_and_resume(wait, reflection, output_first, resolve, parallel).await;
            }
        }
    }
}

#[tokio::test]
async fn an_output_call_waits_with_a_call_the_policy_defers() {
    every_case(Wait::Policy, false).await;
}

#[tokio::test]
async fn output_and_submit_wait_with_a_call_the_policy_defers() {
    every_case(Wait::Policy, true).await;
}

#[tokio::test]
async fn an_output_call_waits_with_a_call_the_approver_defers() {
    every_case(Wait::Approver, false).await;
}

#[tokio::test]
async fn output_and_submit_wait_with_a_call_the_approver_defers() {
    every_case(Wait::Approver, true).await;
}

#[tokio::test]
async fn an_output_call_waits_with_an_external_call() {
    every_case(Wait::External, false).await;
}

#[tokio::test]
async fn output_and_submit_wait_with_an_external_call() {
    every_case(Wait::External, true).await;
}

/// The paused segment of a durable run, replayed from any prefix of its
/// journal: the same conversation (paused batch included), metadata and
/// tool events, and governance asks nothing the journal recorded. (On a
/// paused clock: the checkpoint keeps the run time, in milliseconds.)
#[tokio::test(start_paused = true)]
async fn a_paused_run_replayed_from_its_journal_reports_and_counts_nothing_twice() {
    for reflection in [false, true] {
        let calls = batch(Wait::Approver, reflection, true);
        let model = || ScriptedModel::new().respond(ModelResponse::from_tool_calls(calls.clone()));
        let run = |seen: Seen, journal: MemoryJournal| async move {
            let agent = agent(&model(), Wait::Approver, reflection, &seen);
            let mut conversation = ask("Report.");
            let paused = agent.run_journaled(&mut conversation, &journal).await.unwrap_err();
            assert!(paused.is_deferred());
            let metadata: RunMetadata = paused.metadata().clone();
            (conversation, metadata, tool_events(&seen.take_events()), journal)
        };
        let seen = Seen::default();
        let (conversation, metadata, events, journal) = run(seen.clone(), MemoryJournal::new()).await;
        let steps = journal.steps();
        assert_eq!(metadata.tool_calls, 0);
        assert!(events.iter().all(|event| event.starts_with("deferred")), "{events:?}");
        let approvals = steps.iter().filter(|step| step.starts_with("approval ")).count();
        assert_eq!(approvals, calls.len(), "one approval step per call: {steps:?}");
        for kept in 0..=steps.len() {
            let again = Seen::default();
            let (replayed, replayed_metadata, replayed_events, _) =
                run(again.clone(), MemoryJournal::replay_first(&journal, kept)).await;
            assert_eq!(replayed, conversation, "replaying {kept} steps");
            let mut elapsed_aside = replayed_metadata;
            elapsed_aside.elapsed = metadata.elapsed;
            assert_eq!(elapsed_aside, metadata, "replaying {kept} steps");
            assert_eq!(replayed_events, events, "replaying {kept} steps");
            let recorded = steps[..kept].iter().filter(|step| step.starts_with("approval ")).count();
            assert_eq!(again.approver.lock().unwrap().len(), approvals - recorded, "replaying {kept} steps");
        }
    }
}

/// Each call's result as reported, checked against the conversation: one
/// `ToolExecutionFinished` per call, carrying what the model is told.
fn assert_reported_once(events: &[Event], conversation: &Conversation) {
    assert_consistent(conversation);
    let reports = finished(events);
    let told = results(conversation);
    assert_eq!(reports.len(), told.len(), "{:?}", tool_events(events));
    for result in told {
        let reported: Vec<_> = reports.iter().filter(|(id, ..)| *id == result.call_id).collect();
        assert_eq!(reported.len(), 1, "`{}`: {:?}", result.call_id, tool_events(events));
        assert_eq!(reported[0].1, result);
    }
}

/// A control's call whose answer fails stops the batch under
/// `stop_on_failed_tool` before the calls after it start, as any call does.
#[tokio::test]
async fn a_failed_output_call_stops_the_batch_before_its_later_calls() {
    let bad = call("o1", "final_output", json!({"title": "T"}));
    let model = ScriptedModel::new()
        .respond(ModelResponse::from_tool_calls([bad, call("d1", "delete", json!({"path": "/a"}))]));
    let seen = Seen::default();
    let agent = build(&model, None, true, &seen, Options { on_failed_tool: true, ..Options::default() });
    let mut conversation = ask("Report.");
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert!(!error.is_deferred() && !error.termination().is_success(), "{error}");
    assert_eq!(seen.deletions.0.load(Ordering::SeqCst), 0, "the call after the failed one never started");
    let failures: Vec<_> = results(&conversation).iter().map(|result| result.failure).collect();
    assert_eq!(failures, [Some(FailureKind::InvalidArguments), Some(FailureKind::NotExecuted)]);
    let events = seen.take_events();
    assert_eq!(tool_events(&events), ["started o1", "finished o1", "finished d1"]);
    assert_reported_once(&events, &conversation);
    assert_eq!(error.metadata().tool_calls, 1);
}

/// The control's calls answered before a call that stops the batch keep
/// their answers, reported once.
#[tokio::test]
async fn output_calls_before_a_failed_call_keep_their_answers() {
    for reflection in [false, true] {
        let mut calls = output_calls(reflection);
        calls.push(call("u1", "unknown", json!({})));
        let model = ScriptedModel::new().respond(ModelResponse::from_tool_calls(calls.clone()));
        let seen = Seen::default();
        let agent = build(&model, None, reflection, &seen, Options { on_failed_tool: true, ..Options::default() });
        let mut conversation = ask("Report.");
        let error = agent.run(&mut conversation).await.unwrap_err();
        assert!(!error.termination().is_success(), "{error}");
        let contents: Vec<_> = results(&conversation).into_iter().map(|result| result.content).collect();
        let expected: &[&str] = if reflection {
            &["T scores 7", "Submitted for validation."]
        } else {
            &["Output received; it will be validated."]
        };
        assert_eq!(contents[..expected.len()], *expected, "reflection {reflection}");
        let events = seen.take_events();
        // Each started and finished once (the control's calls are reported
        // once the batch's other calls are done).
        let mut expected: Vec<String> =
            calls.iter().flat_map(|call| [format!("started {}", call.id), format!("finished {}", call.id)]).collect();
        let mut reported = tool_events(&events);
        expected.sort();
        reported.sort();
        assert_eq!(reported, expected, "reflection {reflection}");
        assert_reported_once(&events, &conversation);
        assert_eq!(error.metadata().tool_calls as usize, calls.len(), "reflection {reflection}");
    }
}

/// A held call's failure counts once toward `max_consecutive_tool_failures`:
/// when the resumed run answers it, not also before the pause.
#[tokio::test]
async fn a_held_output_call_that_fails_counts_once_toward_consecutive_failures() {
    let bad = call("o1", "final_output", json!({"title": "T"}));
    let model = ScriptedModel::new()
        .respond(ModelResponse::from_tool_calls([bad, Wait::Policy.call()]))
        .respond(ModelResponse::from_tool_calls(output_calls(true)));
    let seen = Seen::default();
    let options = Options { consecutive_failures: Some(2), ..Options::default() };
    let agent = build(&model, Some(Wait::Policy), true, &seen, options);
    let mut conversation = ask("Report.");
    assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
    let mut conversation = reload(&conversation);
    let done = agent.resume(&mut conversation, Resolution::Approve).await.unwrap();
    assert_eq!(done.output, Report { title: "T".into(), score: 7 });
    assert_eq!(model.requests().len(), 2);
    assert_reported_once(&seen.take_events(), &conversation);
    assert_eq!(results(&conversation)[0].failure, Some(FailureKind::InvalidArguments));
}

/// A conversation paused by an earlier version (its checkpoint keeps no
/// verdicts) still resumes: its waiting output call meets governance again,
/// as it did then, and is answered and reported once.
#[tokio::test]
async fn a_conversation_paused_before_verdicts_were_kept_still_resumes() {
    let model = ScriptedModel::new().respond(ModelResponse::from_tool_calls(batch(Wait::Policy, false, true)));
    let seen = Seen::default();
    let agent = agent(&model, Wait::Policy, false, &seen);
    let mut conversation = ask("Report.");
    assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
    let mut stored = serde_json::to_value(&conversation).unwrap();
    let checkpoint = stored["pending"]["checkpoint"].as_object_mut().unwrap();
    assert_eq!(checkpoint.remove("passed"), Some(json!({"o1": "approved"})));
    let mut conversation: Conversation = serde_json::from_value(stored).unwrap();
    seen.take_events();
    let done = agent.resume(&mut conversation, Resolution::Approve).await.unwrap();
    assert_eq!(done.output, Report { title: "T".into(), score: 7 });
    assert_reported_once(&seen.take_events(), &conversation);
    assert_eq!(Seen::asked(&seen.approver)["o1"], 2, "asked again, as before");
}

/// With `hold_batch_on_deferral` and the output call after the deferred
/// one, the output call is held back before governance sees it: the policy
/// decides it once, when the run is resumed (guide/approvals.rs).
#[tokio::test]
async fn with_hold_batch_on_deferral_a_later_output_call_is_decided_once_on_resume() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let batch =
        [call("s1", "search", json!({"query": "q"})), call("o1", "final_output", json!({"title": "T", "score": 7}))];
    let model = ScriptedModel::new().respond(ModelResponse::from_tool_calls(batch));
    let agent = toolloop::Agent::builder()
        .model(model)
        .tool::<common::Search>()
        .hold_batch_on_deferral()
        .governance(Governance::new().policy(move |call: &ToolCall| {
            seen.lock().unwrap().push(call.id.clone());
            if call.name == "search" { Decision::Defer("a person signs off".into()) } else { Decision::Allow }
        }))
        .output::<Report>()
        .build()
        .unwrap();
    let mut conversation = ask("Report.");
    let paused = agent.run(&mut conversation).await.unwrap_err();
    assert!(paused.is_deferred(), "{paused}");
    assert_eq!(*asked.lock().unwrap(), vec!["s1".to_owned()], "held back before governance saw it");
    let done = agent.resume(&mut conversation, [("s1", Resolution::Approve)]).await.unwrap();
    assert_eq!(done.output, Report { title: "T".into(), score: 7 });
    assert_eq!(*asked.lock().unwrap(), vec!["s1".to_owned(), "o1".to_owned()], "o1 decided once, on resume");
}
