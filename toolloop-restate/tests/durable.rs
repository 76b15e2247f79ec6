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

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolloop-restate-{name}-{}-{}", std::process::id(), free_port()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
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
    let expected: Vec<String> =
        [("n1", "first"), ("n2", "second"), ("n3", "third")].iter().map(|(id, text)| format!("{invocation}/{id} {text}")).collect();
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
