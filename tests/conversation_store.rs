//! Conversation stores: the in-memory one and the embedded SQLite one keep
//! the same promises — every content block round-trips (reasoning, pending
//! calls, compaction notes), versions are optimistic (a stale save is a
//! conflict, never an overwrite), concurrent writers lose nothing, a
//! process killed between load and save loses nothing saved, and a corrupt
//! row is a typed error naming its session.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use common::{ask, call, calls};
use serde_json::json;
use toolloop::reasoning::Reasoning;
use toolloop::run::{Governance, Resolution};
use toolloop::store::{ConversationStore, MemoryStore, SqliteStore, StoreError};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, ContentBlock, Conversation, FailureKind, Message, ModelResponse, Role, ToolCall, ToolResult};

/// A database file in a fresh temporary directory, removed when dropped.
struct TempDb {
    dir: PathBuf,
}

impl TempDb {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("toolloop-store-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.join("conversations.db")
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    /// The city.
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("sunny in {}", self.city))
    }
}

/// A conversation with every kind of content block: text, reasoning (readable
/// and opaque), tool calls, results (one failed), a compaction note, and a
/// paused run's pending calls.
async fn every_block() -> Conversation {
    let mut conversation = Conversation::new();
    for turn in 0..3 {
        conversation.push_user(format!("turn {turn}"));
        conversation.push(Message::assistant(format!("answer {turn}")));
    }
    conversation.compact(1);
    assert!(conversation.messages()[1].text().contains("omitted"), "{conversation:?}");
    let signed: Reasoning = serde_json::from_value(json!({
        "text": ["Let me think."], "opaque": {"provider": "anthropic", "state": {"type": "signed", "signature": "sig=="}}
    }))
    .unwrap();
    conversation.push_user("Weather in Lyon, and delete my files?");
    conversation.push(
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Reasoning(signed),
                ContentBlock::Reasoning(Reasoning::from_text("Plain thoughts.")),
                ContentBlock::text("Looking."),
                ContentBlock::ToolCall(ToolCall::new("w0", "weather", json!({"city": "Paris"}))),
            ],
        )
        .with_provider("anthropic"),
    );
    conversation.push(Message::from_tool_results([ToolResult::failure("w0", FailureKind::TimedOut, "too slow")]));
    conversation.push_user("Try again.");
    // A run that pauses: the last message's calls are pending.
    let model = ScriptedModel::new()
        .respond(calls([call("w1", "weather", json!({"city": "Lyon"})), call("d1", "delete_all", json!({}))]));
    let agent = Agent::builder()
        .model(model)
        .tool::<Weather>()
        .external_tool(toolloop::tool::ToolDefinition::from_schema(
            "delete_all",
            "Delete all files.",
            json!({"type": "object"}),
        ))
        .governance(Governance::new().needs_approval("delete_all"))
        .build()
        .unwrap();
    assert!(agent.run(&mut conversation).await.unwrap_err().is_deferred());
    assert_eq!(conversation.deferred_calls().len(), 1);
    conversation
}

/// Saves and loads [`every_block`]; returns what was saved.
async fn round_trips_every_block(store: &dyn ConversationStore) -> Conversation {
    let conversation = every_block().await;
    let version = store.save("every-block", &conversation, None).await.unwrap();
    let (loaded, loaded_version) = store.load("every-block").await.unwrap().unwrap();
    assert_eq!(loaded_version, version);
    assert_eq!(loaded, conversation);
    assert_eq!(loaded.deferred_calls(), conversation.deferred_calls());
    assert_eq!(serde_json::to_value(&loaded).unwrap(), serde_json::to_value(&conversation).unwrap());
    conversation
}

async fn versions_are_optimistic(store: &dyn ConversationStore) {
    assert!(store.load("v").await.unwrap().is_none());
    let mut conversation = ask("one");
    assert_eq!(store.save("v", &conversation, None).await.unwrap(), 1);
    let error = store.save("v", &conversation, None).await.unwrap_err();
    assert!(
        matches!(&error, StoreError::Conflict { session, expected: None, found: Some(1) } if session == "v"),
        "{error:?}"
    );
    conversation.push_user("two");
    assert_eq!(store.save("v", &conversation, Some(1)).await.unwrap(), 2);
    let stale = store.save("v", &ask("lost?"), Some(1)).await.unwrap_err();
    assert!(stale.is_conflict());
    assert_eq!(stale.to_string(), "session `v` is at version 2, not 1: another writer saved it first");
    assert_eq!(store.load("v").await.unwrap(), Some((conversation.clone(), 2)), "a conflict writes nothing");
    let error = store.save("nobody", &conversation, Some(3)).await.unwrap_err();
    assert!(matches!(error, StoreError::Conflict { expected: Some(3), found: None, .. }), "{error:?}");

    store.save("a", &ask("a"), None).await.unwrap();
    assert_eq!(store.list().await.unwrap(), ["a", "every-block", "v"]);
    assert!(store.delete("a").await.unwrap());
    assert!(!store.delete("a").await.unwrap());
    assert_eq!(store.list().await.unwrap(), ["every-block", "v"]);
    // A deleted session saved again goes on from its deleted version: a
    // writer that loaded it before the delete gets a conflict, not the
    // new session.
    assert_eq!(store.save("a", &ask("again"), None).await.unwrap(), 2);
    let stale = store.save("a", &ask("stale"), Some(1)).await.unwrap_err();
    assert!(matches!(stale, StoreError::Conflict { expected: Some(1), found: Some(2), .. }), "{stale:?}");
    assert!(store.delete("a").await.unwrap());
    assert_eq!(store.save("a", &ask("third"), None).await.unwrap(), 3);
}

#[tokio::test]
async fn the_memory_store_keeps_the_promises() {
    let store = MemoryStore::new();
    round_trips_every_block(&store).await;
    versions_are_optimistic(&store).await;
}

#[tokio::test]
async fn the_sqlite_store_keeps_the_promises_and_across_reopening() {
    let db = TempDb::new("promises");
    let store = SqliteStore::open(db.path()).unwrap();
    let saved = round_trips_every_block(&store).await;
    versions_are_optimistic(&store).await;
    drop(store);
    // Another handle (another process, say) reads what was saved.
    let reopened = SqliteStore::open(db.path()).unwrap();
    let (loaded, _) = reopened.load("every-block").await.unwrap().unwrap();
    assert_eq!(loaded, saved);
    assert_eq!(reopened.load("v").await.unwrap().unwrap().1, 2);
}

#[tokio::test]
async fn a_conversation_paused_in_the_store_resumes_from_it() {
    let db = TempDb::new("resume");
    let store = SqliteStore::open(db.path()).unwrap();
    let conversation = every_block().await;
    let version = store.save("s", &conversation, None).await.unwrap();

    let (mut loaded, loaded_version) = SqliteStore::open(db.path()).unwrap().load("s").await.unwrap().unwrap();
    let model = ScriptedModel::new().respond(ModelResponse::from_text("Sunny in Lyon; nothing deleted."));
    let agent = Agent::builder()
        .model(model)
        .tool::<Weather>()
        .external_tool(toolloop::tool::ToolDefinition::from_schema(
            "delete_all",
            "Delete all files.",
            json!({"type": "object"}),
        ))
        .governance(Governance::new().needs_approval("delete_all"))
        .build()
        .unwrap();
    let done = agent.resume(&mut loaded, [("d1", Resolution::deny("no"))]).await.unwrap();
    assert_eq!(done.output, "Sunny in Lyon; nothing deleted.");
    assert_eq!(loaded_version, version);
    assert_eq!(store.save("s", &loaded, Some(loaded_version)).await.unwrap(), version + 1);
    let (finished, _) = store.load("s").await.unwrap().unwrap();
    assert!(!finished.is_pending());
    assert!(finished.unanswered_tool_calls().is_empty());
}

#[test]
fn concurrent_writers_one_wins_the_other_conflicts_and_nothing_is_lost() {
    let db = TempDb::new("writers");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    runtime.block_on(SqliteStore::open(db.path()).unwrap().save("shared", &ask("start"), None)).unwrap();

    // Two writers, each with its own connection, start from version 1 at once.
    let barrier = Arc::new(std::sync::Barrier::new(2));
    let writers: Vec<_> = ["left", "right"]
        .into_iter()
        .map(|name| {
            let (path, barrier) = (db.path(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
                runtime.block_on(async move {
                    let store = SqliteStore::open(path).unwrap();
                    let mut conflicts = 0;
                    let mut stored = store.load("shared").await.unwrap().unwrap();
                    barrier.wait();
                    loop {
                        let (mut conversation, version) = stored.clone();
                        conversation.push_user(name);
                        match store.save("shared", &conversation, Some(version)).await {
                            Ok(_) => return conflicts,
                            Err(error) if error.is_conflict() => {
                                conflicts += 1;
                                stored = store.load("shared").await.unwrap().unwrap();
                            }
                            Err(error) => panic!("{error}"),
                        }
                    }
                })
            })
        })
        .collect();
    let conflicts: u32 = writers.into_iter().map(|writer| writer.join().unwrap()).sum();
    assert_eq!(conflicts, 1, "exactly one of the two saves over version 1 is refused");
    let (stored, version) = runtime.block_on(SqliteStore::open(db.path()).unwrap().load("shared")).unwrap().unwrap();
    assert_eq!(version, 3);
    let mut texts: Vec<String> = stored.messages()[1..].iter().map(Message::text).collect();
    texts.sort();
    assert_eq!(texts, ["left", "right"], "both writers' turns are kept");
}

/// Run by the test below in a child process: loads the session, says so,
/// and waits (to be killed) before saving.
#[tokio::test]
#[ignore = "a helper the kill test runs in a child process"]
async fn child_loads_then_waits_to_be_killed() {
    let Ok(path) = std::env::var("TOOLLOOP_STORE_PATH") else {
        println!("not a test: the kill test runs this in a child process, with TOOLLOOP_STORE_PATH set");
        return;
    };
    let store = SqliteStore::open(path).unwrap();
    let (mut conversation, version) = store.load("crash").await.unwrap().unwrap();
    // On a line of its own: the test harness has written the test's name without a line break.
    println!("\nloaded version {version}");
    std::io::Write::flush(&mut std::io::stdout()).unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(600)).await;
    conversation.push_user("never saved");
    store.save("crash", &conversation, Some(version)).await.unwrap();
}

#[tokio::test]
async fn a_process_killed_between_load_and_save_loses_nothing_saved() {
    let db = TempDb::new("kill");
    let store = SqliteStore::open(db.path()).unwrap();
    let mut conversation = every_block().await;
    store.save("crash", &conversation, None).await.unwrap();

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_loads_then_waits_to_be_killed", "--nocapture", "--test-threads=1"])
        .env("TOOLLOOP_STORE_PATH", db.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let loaded = loop {
        line.clear();
        if std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() == 0 {
            break None;
        }
        if line.starts_with("loaded version") {
            break Some(line.trim().to_owned());
        }
    };
    // Killed mid-run, between its load and its save (as a crash would).
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(loaded.as_deref(), Some("loaded version 1"), "the child ended before it loaded the session");

    let reopened = SqliteStore::open(db.path()).unwrap();
    assert_eq!(reopened.load("crash").await.unwrap(), Some((conversation.clone(), 1)));
    // The session goes on from what was saved.
    conversation.push_user("after the crash");
    assert_eq!(reopened.save("crash", &conversation, Some(1)).await.unwrap(), 2);
}

#[tokio::test]
async fn a_corrupt_row_is_a_typed_error_naming_its_session() {
    let db = TempDb::new("corrupt");
    let store = SqliteStore::open(db.path()).unwrap();
    store.save("good", &ask("fine"), None).await.unwrap();
    store.save("bad", &ask("fine too"), None).await.unwrap();
    let raw = rusqlite::Connection::open(db.path()).unwrap();
    raw.execute("UPDATE conversations SET body = ?1 WHERE session = 'bad'", [r#"{"messages": [{"role": "robot"}]}"#])
        .unwrap();
    let error = store.load("bad").await.unwrap_err();
    let StoreError::Corrupt { session, message } = &error else { panic!("{error:?}") };
    assert_eq!(session, "bad");
    assert!(message.contains("robot"), "{message}");
    assert!(error.to_string().starts_with("session `bad` is corrupt: "), "{error}");
    // Other sessions are unaffected, and the corrupt one can be replaced.
    assert_eq!(store.load("good").await.unwrap(), Some((ask("fine"), 1)));
    assert_eq!(store.save("bad", &ask("repaired"), Some(1)).await.unwrap(), 2);
}

#[tokio::test]
async fn the_schema_is_versioned_migrated_once_and_a_newer_one_refused() {
    let db = TempDb::new("schema");
    drop(SqliteStore::open(db.path()).unwrap());
    drop(SqliteStore::open(db.path()).unwrap());
    let raw = rusqlite::Connection::open(db.path()).unwrap();
    let versions: Vec<u32> = raw
        .prepare("SELECT version FROM schema_version ORDER BY version")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(versions, (1..=SqliteStore::schema_version()).collect::<Vec<_>>());
    let mode: String = raw.query_row("PRAGMA journal_mode", [], |row| row.get(0)).unwrap();
    assert_eq!(mode, "wal");

    raw.execute("INSERT INTO schema_version (version) VALUES (?1)", [SqliteStore::schema_version() + 1]).unwrap();
    let error = SqliteStore::open(db.path()).unwrap_err();
    assert!(matches!(error, StoreError::UnknownSchema { found, known } if found == known + 1), "{error:?}");
}

/// A database the previous version wrote (schema 1, no `deleted_sessions`)
/// is migrated when opened: its sessions read as before, and a session
/// deleted afterwards goes on from its version when saved again.
#[tokio::test]
async fn a_schema_1_database_is_migrated_and_keeps_its_sessions() {
    let db = TempDb::new("schema1");
    let raw = rusqlite::Connection::open(db.path()).unwrap();
    raw.execute_batch(
        "CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT;
         INSERT INTO schema_version (version) VALUES (1);
         CREATE TABLE conversations (
             session    TEXT PRIMARY KEY NOT NULL,
             version    INTEGER NOT NULL CHECK (version > 0),
             body       TEXT NOT NULL,
             updated_at INTEGER NOT NULL
         ) STRICT;",
    )
    .unwrap();
    let body = serde_json::to_string(&ask("from before")).unwrap();
    raw.execute("INSERT INTO conversations VALUES ('old', 3, ?1, 0)", [&body]).unwrap();
    drop(raw);

    let store = SqliteStore::open(db.path()).unwrap();
    assert_eq!(store.load("old").await.unwrap(), Some((ask("from before"), 3)));
    assert!(store.delete("old").await.unwrap());
    assert_eq!(store.save("old", &ask("again"), None).await.unwrap(), 4);
}
