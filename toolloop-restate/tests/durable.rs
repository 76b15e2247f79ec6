//! Durable runs against a real Restate server (installed by
//! `.ci/install-restate`; the tests fail, saying how to install it, when it
//! is missing), with a fake model that enforces the Messages API's rules
//! and counts requests.

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::app::{self, Files, lines};
use support::fake;
use support::server::{Restate, free_port};
use support::worker;

/// One Restate server at a time: the machine has few cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("toolloop-restate-{name}-{}-{}", std::process::id(), free_port()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    TempDir(dir)
}

/// Waits until `done`, failing after a minute with `what`.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(60), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The (question, turn) of every request the fake received.
fn positions(llm: &toolloop_workspace::TestServer) -> Vec<(String, usize)> {
    llm.requests().iter().map(|request| fake::position(&request.json())).collect()
}

fn turns(question: &str, count: usize) -> Vec<(String, usize)> {
    (0..count).map(|turn| (question.to_owned(), turn)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_run_makes_one_request_per_model_call() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("typed");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;

    let question = "research the archive";
    let (status, report) = restate.call("Research/ask", &json!({"text": question})).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report, json!({"title": "Findings", "notes": 3}));
    assert_eq!(positions(&llm), turns(question, 4));
    assert_eq!(lines(&files.notes).len(), 3);
    assert_eq!(lines(&files.holds).len(), 1);
}

/// Case 2: the worker is killed (SIGKILL) while the run is in iteration 2,
/// after model call 2 was answered and recorded; a new worker process
/// finishes the run. No model call is made twice, and the side-effecting
/// tool ran once per call; the tool whose step was in flight ran again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_survives_its_worker_being_killed() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("crash");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let port = free_port();
    let first = worker::Process::spawn(port, &llm.url(), &dir, 600_000);
    first.ready().await;
    restate.register(&first.url).await;

    let question = "research the crash";
    let invocation = restate.send("Research/ask", &json!({"text": question})).await;
    // `hold` runs after `note n2`, whose step completed: model call 2 and
    // its first tool are recorded; `hold` is in flight.
    wait_until("the hold tool", || lines(&files.holds).len() == 1).await;
    assert_eq!(positions(&llm), turns(question, 2));
    first.kill();

    let second = worker::Process::spawn(port, &llm.url(), &dir, 0);
    second.ready().await;
    let (status, report) = restate.attach(&invocation).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report, json!({"title": "Findings", "notes": 3}), "the same output as an uncrashed run");
    assert_eq!(positions(&llm), turns(question, 4), "every model call exactly once");
    let mut notes = lines(&files.notes);
    notes.sort();
    let expected: Vec<String> = [("n1", "first"), ("n2", "second"), ("n3", "third")]
        .iter()
        .map(|(id, text)| format!("{invocation}/{id} {text}"))
        .collect();
    assert_eq!(notes, expected, "the side-effecting tool ran once per call id");
    assert_eq!(lines(&files.holds).len(), 2, "the step in flight ran again (at least once)");
}

/// The worker process of the crash tests: they start this test binary with
/// `TOOLLOOP_RESTATE_WORKER` set, and kill it.
#[test]
#[ignore = "started by the crash tests, as a separate process"]
fn worker_process() {
    assert!(
        std::env::var_os(worker::ROLE).is_some(),
        "the crash tests start this as their worker process; it is not a test of its own"
    );
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let port: u16 = var("WORKER_PORT").parse().expect("WORKER_PORT");
    let hold = Duration::from_millis(var("WORKER_HOLD_MS").parse().expect("WORKER_HOLD_MS"));
    let files = Files::in_dir(std::path::Path::new(&var("WORKER_DIR")), hold);
    let endpoint = app::endpoint(&var("WORKER_LLM"), &files);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind the worker port");
        restate_sdk::prelude::HttpServer::new(endpoint).serve(listener).await;
    });
}

#[allow(dead_code)]
fn unused(_: Value) {}

/// Waits until `key` lists a pending approval; returns the list.
async fn pending(restate: &Restate, key: &str) -> Value {
    let started = Instant::now();
    loop {
        let (status, list) = restate.call_empty(&format!("ToolApprovals/{key}/list")).await;
        if status == 200 && list.as_array().is_some_and(|list| !list.is_empty()) {
            return list;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no pending approval under {key}: {status} {list}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Case 3: a run waits for an approval without a worker (killed and
/// restarted meanwhile), and finishes when a person approves over HTTP;
/// a denial and a timeout reach the model with their reason. The agent's
/// approver passes these calls on to the person (`Decision::Ask`) and
/// approves a draft itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_wait_durably_for_a_person() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("approval");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let port = free_port();
    let first = worker::Process::spawn(port, &llm.url(), &dir, 0);
    first.ready().await;
    restate.register(&first.url).await;

    // Approved after the worker was replaced.
    let approved = restate.send("Research/ask", &json!({"text": "publish the findings"})).await;
    let list = pending(&restate, &approved).await;
    assert_eq!(list[0]["call_id"], "p1");
    assert_eq!(list[0]["tool"], "publish");
    assert_eq!(list[0]["arguments"], json!({"title": "Findings"}));
    assert_eq!(list[0]["invocation_id"], approved.as_str());
    first.kill();
    let second = worker::Process::spawn(port, &llm.url(), &dir, 0);
    second.ready().await;
    let (status, body) = restate.call(&format!("ToolApprovals/{approved}/approve"), &json!({"call_id": "p1"})).await;
    assert_eq!(status, 200, "{body}");
    let (status, report) = restate.attach(&approved).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["title"], "published: Findings is live");
    assert_eq!(lines(&files.published), [format!("{approved}/p1 Findings")]);
    let (_, list) = restate.call_empty(&format!("ToolApprovals/{approved}/list")).await;
    assert_eq!(list, json!([]));

    // An unknown call is refused, naming what is pending.
    let denied = restate.send("Research/ask", &json!({"text": "publish the draft"})).await;
    pending(&restate, &denied).await;
    let (status, body) = restate.call(&format!("ToolApprovals/{denied}/approve"), &json!({"call_id": "p7"})).await;
    assert_eq!(status, 404, "{body}");
    assert!(body.to_string().contains("no approval is pending for call `p7`"), "{body}");
    // Denied: the model sees the reason.
    let denial = json!({"call_id": "p1", "reason": "embargoed until Monday"});
    let (status, body) = restate.call(&format!("ToolApprovals/{denied}/deny"), &denial).await;
    assert_eq!(status, 200, "{body}");
    let (status, report) = restate.attach(&denied).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["title"], "not published: tool call not approved: embargoed until Monday");

    // Nobody decides in time: denied, with a reason the model sees. The
    // timeout is decided by `ToolApprovals`, in turn with the reviewers:
    // the call is no longer pending, and a late approval is a 404.
    let late = restate.send("Research/ask", &json!({"text": "publish later", "approval_timeout_ms": 300})).await;
    let (status, report) = restate.attach(&late).await;
    assert_eq!(status, 200, "{report}");
    let title = report["title"].as_str().unwrap_or_default();
    assert!(
        title.starts_with("not published: tool call not approved: nobody approved the call within 0.3 s"),
        "{title}"
    );
    let (_, list) = restate.call_empty(&format!("ToolApprovals/{late}/list")).await;
    assert_eq!(list, json!([]));
    let (status, body) = restate.call(&format!("ToolApprovals/{late}/approve"), &json!({"call_id": "p1"})).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(lines(&files.published).len(), 1, "only the approved call published");

    // Approved before its timeout: it runs, and the timeout, when it
    // comes, changes nothing.
    let in_time = restate.send("Research/ask", &json!({"text": "publish soon", "approval_timeout_ms": 4000})).await;
    pending(&restate, &in_time).await;
    let (status, body) = restate.call(&format!("ToolApprovals/{in_time}/approve"), &json!({"call_id": "p1"})).await;
    assert_eq!(status, 200, "{body}");
    let (status, report) = restate.attach(&in_time).await;
    assert_eq!((status, report["title"].as_str()), (200, Some("published: Findings is live")), "{report}");
    tokio::time::sleep(Duration::from_millis(4_300)).await;
    let (_, list) = restate.call_empty(&format!("ToolApprovals/{in_time}/list")).await;
    assert_eq!(list, json!([]));
    assert_eq!(lines(&files.published).len(), 2);

    // The research agent's approver publishes a draft itself (no person
    // asked); every call above it passed on (`Decision::Ask`) to a person.
    let (status, report) = restate.call("Research/ask", &json!({"text": "draft the findings"})).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["title"], "published: Draft notes is live");
    assert_eq!(lines(&files.published).len(), 3, "the draft published without a person");
}

/// The call ids of the approvals pending under `key`, once some are.
async fn pending_calls(restate: &Restate, key: &str) -> Vec<String> {
    let list = pending(restate, key).await;
    list.as_array()
        .into_iter()
        .flatten()
        .map(|pending| pending["call_id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Waits until the approvals pending under `key` are `calls`.
async fn pending_exactly(restate: &Restate, key: &str, calls: &[&str]) {
    let started = Instant::now();
    loop {
        let now = pending_calls(restate, key).await;
        if now == calls {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "pending {now:?}, never {calls:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What Restate says of invocation `id`: its status, its journal, and the
/// log lines of a journal mismatch (error 570). For a run that hangs.
async fn diagnosis(restate: &Restate, id: &str) -> String {
    let query = |sql: String| async move {
        let response = support::server::client()
            .post(format!("{}/query", restate.admin))
            .header("accept", "application/json")
            .json(&json!({ "query": sql }))
            .send()
            .await;
        match response {
            Ok(response) => response.text().await.unwrap_or_default(),
            Err(error) => format!("query failed: {error}"),
        }
    };
    let state = query(format!(
        "SELECT status, last_failure, last_failure_error_code, journal_size FROM sys_invocation WHERE id = '{id}'"
    ))
    .await;
    let journal =
        query(format!("SELECT index, entry_type, name, completed FROM sys_journal WHERE id = '{id}' ORDER BY index"))
            .await;
    let log = restate.log();
    let mismatch: Vec<&str> =
        log.lines().filter(|line| line.contains("ismatch") || line.contains("570")).take(3).collect();
    format!("invocation: {state}\njournal: {journal}\nmismatch: {mismatch:#?}")
}

/// The response of invocation `id`, which must finish within 20 s (it
/// has nothing left to wait for).
async fn finished(restate: &Restate, id: &str) -> Value {
    let Ok((status, report)) = tokio::time::timeout(Duration::from_secs(20), restate.attach(id)).await else {
        panic!("the run did not finish once every call was decided:\n{}", diagnosis(restate, id).await);
    };
    assert_eq!(status, 200, "{report}");
    report
}

/// Two calls of one batch that need a person, on an agent with
/// `parallel_tool_calls(2)`: `service` answers `question` (whose calls
/// p3, p4 publish `titles`). A Restate journal takes a batch's steps one
/// at a time, in call order: the person is asked about p3 alone, p3
/// publishes once approved, and only then is the person asked about p4.
/// With `new_workers`, the worker is replaced while each call waits, so
/// every decision wakes a worker that replays the run from its journal.
async fn asked_in_turn(service: &str, question: &str, titles: [&str; 2], new_workers: bool) {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir(question.split_whitespace().next().unwrap_or("pair"));
    let files = Files::in_dir(&dir, Duration::ZERO);
    let port = free_port();
    let mut worker = worker::Process::spawn(port, &llm.url(), &dir, 0);
    worker.ready().await;
    restate.register(&worker.url).await;

    let id = restate.send(&format!("{service}/ask"), &json!({ "text": question })).await;
    for (call, title) in ["p3", "p4"].into_iter().zip(titles) {
        // The first list that is not empty holds this call alone: the
        // next call's approver has not run (a quicker approver on p4
        // would have listed it first were the calls in flight at once).
        assert_eq!(pending_calls(&restate, &id).await, [call], "asked in call order, one at a time");
        if new_workers {
            worker.kill();
            worker = worker::Process::spawn(port, &llm.url(), &dir, 0);
            worker.ready().await;
        }
        let (status, body) = restate.call(&format!("ToolApprovals/{id}/approve"), &json!({ "call_id": call })).await;
        assert_eq!(status, 200, "{body}");
        if call == "p3" {
            wait_until("p3 published", || lines(&files.published).len() == 1).await;
            assert_eq!(lines(&files.published), [format!("{id}/p3 {title}")], "p3 ran before p4 was asked");
            pending_exactly(&restate, &id, &["p4"]).await;
        }
    }
    let report = finished(&restate, &id).await;
    assert_eq!(report["title"], format!("published: {} is live", titles[1]), "{report}");
    let published: Vec<String> =
        ["p3", "p4"].iter().zip(titles).map(|(call, title)| format!("{id}/{call} {title}")).collect();
    assert_eq!(lines(&files.published), published, "each approved call published once, in call order");
    let (_, list) = restate.call_empty(&format!("ToolApprovals/{id}/list")).await;
    assert_eq!(list, json!([]));
}

/// Review 2: two calls of one batch (`parallel_tool_calls(2)`) whose
/// approver passes them on to a person (`Decision::Ask`), the first call's
/// approver slower than the second's. In flight at once, the second call's
/// durable promise was journaled first and the replay (call order) was a
/// journal mismatch; before that the run never resumed. The calls now go
/// in turn and the run finishes, both published.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_calls_passed_on_to_a_person_are_asked_in_turn() {
    asked_in_turn("Pair", "pair publish", ["Slow one", "Quick one"], false).await;
}

/// Review 2: the same batch, the worker replaced while each call waits, so
/// each decision resumes the run on a new worker, replayed from the journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_calls_passed_on_to_a_person_replay_on_a_new_worker() {
    asked_in_turn("Pair", "pair publish", ["Slow one", "Quick one"], true).await;
}

/// Review 2, the control: the same with the slow approver on the second call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_calls_passed_on_with_the_slow_approver_second() {
    asked_in_turn("Pair", "pairok publish", ["Quick one", "Slow one"], false).await;
}

/// Review 2, a second control: the same batch without an approver (each
/// call waits for a person directly).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_calls_without_an_approver_are_asked_in_turn() {
    asked_in_turn("PairDirect", "pairok publish", ["Quick one", "Slow one"], false).await;
}

/// A batch of three calls nobody needs to approve, on an agent with
/// `parallel_tool_calls(2)`: every call runs once, in call order, and the
/// run finishes (two `ctx.run` steps in flight at once never resumed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parallel_batch_runs_its_calls_in_turn() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("pairnotes");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;

    let id = restate.send("Pair/ask", &json!({"text": "pairnotes"})).await;
    let report = finished(&restate, &id).await;
    assert_eq!(report, json!({"title": "Noted", "notes": 3}));
    let expected: Vec<String> = [("n4", "fourth"), ("n5", "fifth"), ("n6", "sixth")]
        .iter()
        .map(|(call, text)| format!("{id}/{call} {text}"))
        .collect();
    assert_eq!(lines(&files.notes), expected, "each call ran once, in call order");
    assert_eq!(positions(&llm), turns("pairnotes", 2), "one model call per turn");
}

/// Case 4: a session's messages are answered one at a time, in order; its
/// conversation survives a worker restart; sessions run in parallel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_keep_their_conversation_and_never_race() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("sessions");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;

    let (first, second) = tokio::join!(
        restate.call("Session/alice/message", &json!("hello")),
        restate.call("Session/alice/message", &json!("how are you")),
    );
    assert_eq!(first, (200, json!("answer to hello")));
    assert_eq!(second, (200, json!("answer to how are you")));
    // The later message saw the earlier exchange: no race.
    let requests: Vec<Value> = llm.requests().iter().map(toolloop_workspace::RecordedRequest::json).collect();
    let sizes: Vec<usize> = requests.iter().map(|r| r["messages"].as_array().map_or(0, Vec::len)).collect();
    assert_eq!(sizes.len(), 2);
    assert!(sizes.contains(&1) && sizes.contains(&3), "{sizes:?}");

    // The worker goes away; a new one (another process's memory, the same state) continues.
    let port: u16 = worker.url.rsplit(':').next().unwrap().parse().unwrap();
    drop(worker);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), port).await;
    let (status, answer) = restate.call("Session/alice/message", &json!("still there?")).await;
    assert_eq!((status, answer), (200, json!("answer to still there?")));
    let (_, conversation) = restate.call_empty("Session/alice/conversation").await;
    let texts: Vec<String> = conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"][0]["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(texts.len(), 6, "{conversation}");
    assert_eq!(&texts[4..], ["still there?", "answer to still there?"]);

    // Twenty sessions at once.
    let calls = (0..20).map(|i| restate.call(&format!("Session/s{i}/message"), &json!(format!("hi {i}"))));
    let answers = futures_join_all(calls).await;
    for (i, answer) in answers.into_iter().enumerate() {
        assert_eq!(answer, (200, json!(format!("answer to hi {i}"))));
    }
    drop(worker);
}

/// A conversation stored in a session that no longer reads fails the
/// message with a terminal error naming the session; it is left as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_session_fails_loudly_and_is_not_overwritten() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("corrupt");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;

    let (status, _) = restate.call("Session/bob/message", &json!("hello")).await;
    assert_eq!(status, 200);
    let corrupt = br#"{"messages": "not a list"}"#;
    restate.set_state("Session", "bob", "conversation", corrupt).await;
    let started = Instant::now();
    loop {
        let (_, stored) = restate.call_empty("Session/bob/conversation").await;
        if stored == json!({"messages": "not a list"}) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the state was not replaced: {stored}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, error) = restate.call("Session/bob/message", &json!("again")).await;
    assert_eq!(status, 500, "{error}");
    assert!(error.to_string().contains("the stored conversation of session `bob` does not read"), "{error}");
    let (_, stored) = restate.call_empty("Session/bob/conversation").await;
    assert_eq!(stored, json!({"messages": "not a list"}), "nothing overwritten");
    assert_eq!(llm.requests().len(), 1, "no model call for the corrupt session");

    // An invocation payload that does not deserialize is refused, typed.
    let (status, error) = restate.call("Research/ask", &json!({"question": 1})).await;
    assert!((400..500).contains(&status), "{status} {error}");
    drop(worker);
}

/// Cancelling an invocation (Restate's cancel) stops the run as
/// `Termination::Cancelled`, its conversation consistent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_invocation_ends_the_run_cancelled() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("cancel");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;

    let invocation = restate.send("Session/carol/message", &json!("approve-me please")).await;
    pending(&restate, "carol").await;
    restate.cancel(&invocation).await;
    let (status, error) = restate.attach(&invocation).await;
    assert_eq!(status, 409, "{error}");
    assert!(error.to_string().contains("cancelled"), "{error}");
    let (_, conversation) = restate.call_empty("Session/carol/conversation").await;
    let messages = conversation["messages"].as_array().expect("stored conversation").clone();
    assert_eq!(messages.len(), 3, "{conversation}");
    let result = &messages[2]["content"][0];
    assert_eq!(result["call_id"], "p9", "{conversation}");
    assert_eq!(result["failure"], "not_executed", "{conversation}");
    // The cancelled run withdrew its call: a reviewer finds nothing to decide.
    let started = Instant::now();
    loop {
        let (status, list) = restate.call_empty("ToolApprovals/carol/list").await;
        if status == 200 && list.as_array().is_some_and(Vec::is_empty) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{}", diagnosis(&restate, &invocation).await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, body) = restate.call("ToolApprovals/carol/approve", &json!({"call_id": "p9"})).await;
    assert_eq!(status, 404, "{body}");
    assert!(lines(&files.published).is_empty());
    drop(worker);
}

/// Case 5: 200 durable runs at once against a fast fake: all complete, no
/// model call lost or made twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_runs_all_complete() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("load");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;

    let runs = 200;
    let started = Instant::now();
    let calls = (0..runs).map(|i| restate.call("Quick/ask", &json!(format!("quick {i}"))));
    let answers = futures_join_all(calls).await;
    let elapsed = started.elapsed();
    for (i, answer) in answers.into_iter().enumerate() {
        assert_eq!(answer, (200, json!(format!("done: quick {i}"))));
    }
    let mut seen = positions(&llm);
    seen.sort();
    let mut expected: Vec<(String, usize)> = (0..runs).flat_map(|i| turns(&format!("quick {i}"), 2)).collect();
    expected.sort();
    assert_eq!(seen, expected, "every model call exactly once");
    assert_eq!(lines(&files.notes).len(), runs);
    eprintln!(
        "{runs} durable runs (2 model calls, 1 tool each) in {:.2} s: {:.0} runs/s",
        elapsed.as_secs_f64(),
        f64::from(u32::try_from(runs).unwrap()) / elapsed.as_secs_f64()
    );
    drop(worker);
}

/// Awaits every future, in order.
async fn futures_join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let handles: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut outputs = Vec::with_capacity(handles.len());
    let mut pending: Vec<_> = handles.into_iter().map(Some).collect();
    let mut results: Vec<Option<F::Output>> = (0..pending.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (slot, result) in pending.iter_mut().zip(results.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(output) => {
                        *result = Some(output);
                        *slot = None;
                    }
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done { std::task::Poll::Ready(()) } else { std::task::Poll::Pending }
    })
    .await;
    outputs.extend(results.into_iter().map(|result| result.expect("every future finished")));
    outputs
}

/// The cost of a journaled step (BENCHMARKS.md): the same text run (two
/// model calls and a tool, against the same local fake) in process and
/// through Restate, one after the other.
/// `cargo test -p toolloop-restate --test durable -- --ignored step_cost --nocapture`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement for BENCHMARKS.md"]
async fn step_cost() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("cost");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;
    let runs = 100u32;

    // In process: the same agent, the journal passing through; the tool
    // reads no idempotency key outside Restate, so it is given a run of its own.
    let agent = app::quick_agent(&llm.url(), &files);
    let started = Instant::now();
    for i in 0..runs {
        let mut conversation = toolloop::Conversation::new();
        conversation.push_user(format!("quick local {i}"));
        agent.run(&mut conversation).await.unwrap();
    }
    let local = started.elapsed() / runs;

    let started = Instant::now();
    for i in 0..runs {
        let (status, _) = restate.call("Quick/ask", &json!(format!("quick durable {i}"))).await;
        assert_eq!(status, 200);
    }
    let durable = started.elapsed() / runs;
    // Three journaled steps per run: two model calls and a tool execution.
    eprintln!(
        "per run: in process {local:?}, through Restate {durable:?}; per journaled step {:?}",
        durable.saturating_sub(local) / 3
    );
    drop(worker);
}

/// A model error the API would reject again ends the run at once with
/// `Termination::ModelError`; a retryable one is retried by the provider
/// inside the step, and the step by Restate, a bounded number of times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_errors_end_the_run_after_bounded_retries() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("errors");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;
    let asked = |question: &str| positions(&llm).iter().filter(|(asked, _)| asked == question).count();

    let (status, error) = restate.call("Quick/ask", &json!("broken")).await;
    assert_eq!(status, 500, "{error}");
    assert!(error.to_string().contains("the fake rejects this"), "{error}");
    assert_eq!(asked("broken"), 1, "not retried");

    let (status, error) = restate.call("Quick/ask", &json!("flaky")).await;
    assert_eq!(status, 500, "{error}");
    assert!(error.to_string().contains("the fake is overloaded"), "{error}");
    let attempts = usize::try_from(toolloop_restate::DEFAULT_STEP_ATTEMPTS).unwrap();
    assert_eq!(asked("flaky"), app::PROVIDER_ATTEMPTS * attempts, "the provider's retries inside each step attempt");
    drop(worker);
}

/// A session whose run pauses (a call to a tool the caller executes) is
/// stored paused: `message` answers 409 naming the call, `pending` lists
/// it, further messages are refused without storing or asking anything,
/// a resume that does not fit is refused, and `resume` with the call's
/// result finishes the run; the session then takes messages again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_session_waits_for_its_calls_and_resumes() {
    let _serial = SERIAL.lock().await;
    let llm = fake::start(fake::script).await;
    let restate = Restate::start().await;
    let dir = temp_dir("paused");
    let files = Files::in_dir(&dir, Duration::ZERO);
    let worker = worker::InProcess::serve(app::endpoint(&llm.url(), &files), 0).await;
    restate.register(&worker.url).await;

    let (status, body) = restate.call("Session/bob/message", &json!("where am I")).await;
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("l1 (`locate`"), "{body}");
    let (status, pending) = restate.call_empty("Session/bob/pending").await;
    assert_eq!(status, 200, "{pending}");
    assert_eq!(pending[0]["call"]["id"], "l1", "{pending}");

    let (status, body) = restate.call("Session/bob/message", &json!("hello?")).await;
    assert_eq!(status, 409, "{body}");
    let (_, stored) = restate.call_empty("Session/bob/conversation").await;
    assert_eq!(stored["messages"].as_array().map(Vec::len), Some(2), "nothing stored: {stored}");
    assert_eq!(llm.requests().len(), 1, "nothing asked");

    let (status, body) = restate.call("Session/bob/resume", &json!({"nope": {"resolution": "approve"}})).await;
    assert_eq!(status, 409, "{body}");
    let resolution = json!({"l1": {"resolution": "output", "content": "Lyon"}});
    let (status, answer) = restate.call("Session/bob/resume", &resolution).await;
    assert_eq!((status, answer), (200, json!("you are in Lyon")));
    let (_, pending) = restate.call_empty("Session/bob/pending").await;
    assert_eq!(pending, json!([]));
    let (status, answer) = restate.call("Session/bob/message", &json!("thanks")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(llm.requests().len(), 3);
}
