//! A journal in memory: records every step, replays recorded ones.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::record::{JournalError, decode, encode};
use super::{Journal, Step, ask};
use crate::cancel::{BoxFuture, Cancelled};
use crate::message::{FailureKind, ToolCall, ToolResult};
use crate::model::{ModelError, ModelErrorKind, ModelResponse};
use crate::run::governance::{Approver, Decision};
use crate::tool::ToolExecution;

/// One recorded step: its name ([`Step`]'s `Display`) and its outcome in
/// recorded form ([`encode`](super::encode)). Its serde form is what saved
/// journals hold: never change it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Entry {
    /// The step's name, unique within the run.
    step: String,
    /// The step's outcome in recorded form: `{"format": 1, "value": ...}`.
    record: serde_json::Value,
}

/// A [`Journal`] in memory: it records the outcome of every step it does,
/// in the recorded form, and replays the outcomes it was given.
///
/// For tests of durable behaviour (start a run from a prefix of another
/// run's journal, [`replay_first`](Self::replay_first): the recorded steps
/// are not done again), and as the reference for journals on a durable
/// engine.
///
/// A saved journal is the journal: it serializes as the list of its steps in
/// the order they finished, each `{"step": NAME, "record": {"format": 1,
/// "value": ...}}` (the [recorded form](super#the-recorded-form)), and
/// deserializes into a journal that replays them.
///
/// ```
/// use toolloop::run::journal::MemoryJournal;
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Agent, CancellationToken, Conversation, ModelResponse};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let agent = Agent::builder().model(ScriptedModel::new().respond(ModelResponse::from_text("hi"))).build()?;
/// let journal = MemoryJournal::new();
/// let mut conversation = Conversation::new();
/// conversation.push_user("hello");
/// agent.run_journaled(&mut conversation, &journal, &CancellationToken::new()).await?;
///
/// // Again from the journal: the model (whose script is used up) is not called.
/// let replay = MemoryJournal::replay(&journal);
/// let mut again = Conversation::new();
/// again.push_user("hello");
/// let done = agent.run_journaled(&mut again, &replay, &CancellationToken::new()).await?;
/// assert_eq!(done.output, "hi");
/// assert_eq!(replay.replayed_steps(), 1);
///
/// // Saved and read back, it replays the same.
/// let saved = serde_json::to_string(&journal)?;
/// assert!(saved.starts_with(r#"[{"step":"model call 1","record":{"format":1,"#));
/// let resumed: MemoryJournal = serde_json::from_str(&saved)?;
/// assert_eq!(resumed.steps(), ["model call 1"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct MemoryJournal {
    /// The outcomes to replay, by step name.
    recorded: HashMap<String, serde_json::Value>,
    /// The journal: the entries it was given, then the steps done since,
    /// in the order they finished.
    entries: Mutex<Vec<Entry>>,
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    replayed: u32,
    live: u32,
    errors: Vec<JournalError>,
}

impl MemoryJournal {
    /// An empty journal: every step is done and recorded.
    pub fn new() -> Self {
        Self::default()
    }

    /// A journal holding `entries`: their steps are replayed, the others
    /// done and recorded.
    fn replaying(entries: Vec<Entry>) -> Self {
        let recorded = entries.iter().map(|entry| (entry.step.clone(), entry.record.clone())).collect();
        Self { recorded, entries: Mutex::new(entries), counts: Mutex::default() }
    }

    /// A new journal that replays every step `journal` holds (the ones it
    /// was given and the ones done since), and does and records the others:
    /// the same run again, after a crash at its end.
    pub fn replay(journal: &Self) -> Self {
        Self::replay_first(journal, usize::MAX)
    }

    /// A new journal that replays the first `steps` steps `journal` holds,
    /// in the order they finished, and does and records the others: the
    /// same run again, after a crash right after those steps.
    pub fn replay_first(journal: &Self, steps: usize) -> Self {
        Self::replaying(journal.lock_entries().iter().take(steps).cloned().collect())
    }

    /// The names of the steps it holds ([`Step`]'s `Display`), in the order
    /// they finished: the ones it was given, then the ones done since.
    pub fn steps(&self) -> Vec<String> {
        self.lock_entries().iter().map(|entry| entry.step.clone()).collect()
    }

    /// How many steps it holds.
    pub fn len(&self) -> usize {
        self.lock_entries().len()
    }

    /// Whether it holds no step.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock_entries(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Steps whose outcome was read from the journal.
    pub fn replayed_steps(&self) -> u32 {
        self.counts().replayed
    }

    /// Steps that were done (and recorded).
    pub fn live_steps(&self) -> u32 {
        self.counts().live
    }

    /// Recorded entries the journal could not read. Each such step failed
    /// in the run (a model error, a failed tool, a denial) naming the entry.
    pub fn errors(&self) -> Vec<JournalError> {
        self.counts().errors.clone()
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The recorded outcome of `step`, if there is one.
    fn recorded_outcome<T: DeserializeOwned>(&self, step: &str) -> Option<Result<T, JournalError>> {
        let json = self.recorded.get(step)?;
        let decoded = decode::<T>(step, json);
        let mut counts = self.counts();
        match &decoded {
            Ok(_) => counts.replayed += 1,
            Err(error) => counts.errors.push(error.clone()),
        }
        Some(decoded)
    }

    fn record<T: Serialize>(&self, step: String, value: &T) {
        let record = encode(value).unwrap_or(serde_json::Value::Null);
        self.counts().live += 1;
        self.lock_entries().push(Entry { step, record });
    }
}

/// The steps it holds, in the order they finished.
impl Serialize for MemoryJournal {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.lock_entries().serialize(serializer)
    }
}

/// A journal that replays the saved steps.
impl<'de> Deserialize<'de> for MemoryJournal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Entry>::deserialize(deserializer).map(Self::replaying)
    }
}

fn unreadable(error: &JournalError) -> ModelError {
    ModelError::new(ModelErrorKind::Journal, "journal", error.to_string())
}

impl Journal for MemoryJournal {
    fn model_call<'a>(
        &'a self,
        step: Step<'a>,
        call: BoxFuture<'a, Result<ModelResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let name = step.to_string();
        Box::pin(async move {
            match self.recorded_outcome::<Result<ModelResponse, ModelError>>(&name) {
                Some(Ok(record)) => record,
                Some(Err(error)) => Err(unreadable(&error)),
                None => {
                    let outcome = call.await;
                    self.record(name, &outcome);
                    outcome
                }
            }
        })
    }

    fn summary<'a>(
        &'a self,
        step: Step<'a>,
        summarise: BoxFuture<'a, Result<String, ModelError>>,
    ) -> BoxFuture<'a, Result<String, ModelError>> {
        let name = step.to_string();
        Box::pin(async move {
            match self.recorded_outcome::<Result<String, ModelError>>(&name) {
                Some(Ok(record)) => record,
                Some(Err(error)) => Err(unreadable(&error)),
                None => {
                    let outcome = summarise.await;
                    self.record(name, &outcome);
                    outcome
                }
            }
        })
    }

    fn tool_execution<'a>(
        &'a self,
        step: Step<'a>,
        execute: BoxFuture<'a, Result<ToolExecution, Cancelled>>,
    ) -> BoxFuture<'a, Result<ToolExecution, Cancelled>> {
        let name = step.to_string();
        Box::pin(async move {
            match self.recorded_outcome::<ToolExecution>(&name) {
                Some(Ok(execution)) => Ok(execution),
                Some(Err(error)) => {
                    let call_id = match step {
                        Step::ToolExecution { call } => call.id.as_str(),
                        _ => "",
                    };
                    let result = ToolResult::failure(call_id, FailureKind::ToolFailed, error.to_string());
                    let call = match step {
                        Step::ToolExecution { call } => call.clone(),
                        _ => unreachable!("a tool step"),
                    };
                    Ok(ToolExecution::answered(&call, result))
                }
                None => {
                    let outcome = execute.await;
                    // A cancelled execution did not finish: nothing to record.
                    if let Ok(execution) = &outcome {
                        self.record(name, execution);
                    }
                    outcome
                }
            }
        })
    }

    fn approval<'a>(&'a self, call: &'a ToolCall, approver: Option<&'a dyn Approver>) -> BoxFuture<'a, Decision> {
        let name = Step::Approval { call }.to_string();
        Box::pin(async move {
            match self.recorded_outcome::<Decision>(&name) {
                Some(Ok(approval)) => approval,
                Some(Err(error)) => Decision::Deny(error.to_string()),
                None => {
                    let approval = ask(call, approver).await;
                    self.record(name, &approval);
                    approval
                }
            }
        })
    }

    fn elapsed<'a>(&'a self, step: Step<'a>, measured: Duration) -> BoxFuture<'a, Duration> {
        let name = step.to_string();
        Box::pin(async move {
            match self.recorded_outcome::<Duration>(&name) {
                Some(Ok(elapsed)) => elapsed,
                // Unreadable: the time limit reads what this process measured.
                Some(Err(_)) => measured,
                None => {
                    self.record(name, &measured);
                    measured
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::MemoryJournal;
    use crate::testing::ScriptedModel;
    use crate::{Agent, CancellationToken, Conversation};

    /// A journal saved before `MemoryJournal` was serializable: the list of
    /// its entries, `{"step", "record"}` each.
    const SAVED: &str = r#"[{"step":"clock before model call 1","record":{"format":1,"value":{"secs":0,"nanos":52229}}},{"step":"model call 1","record":{"format":1,"value":{"Ok":{"content":[{"type":"tool_call","id":"c1","name":"weather","input":{"city":"Oslo"}}],"stop_reason":"tool_use","usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0},"model":null,"provider":null,"id":null}}}},{"step":"tool weather c1","record":{"format":1,"value":{"result":{"call_id":"c1","content":"sunny in Oslo"},"output":"sunny in Oslo","elapsed":{"secs":0,"nanos":81913}}}},{"step":"clock before model call 2","record":{"format":1,"value":{"secs":0,"nanos":514513}}},{"step":"model call 2","record":{"format":1,"value":{"Ok":{"content":[{"type":"text","text":"Sunny."}],"stop_reason":"end_turn","usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0},"model":null,"provider":null,"id":null}}}}]"#;

    /// Look up the weather (never run here: its step is replayed).
    #[derive(crate::Tool)]
    #[tool(crate = "crate")]
    struct Weather {
        city: String,
    }

    impl Weather {
        #[allow(clippy::unused_async)] // the derive's signature
        async fn run(self) -> Result<String, String> {
            Err(format!("the tool ran for {}: it should have been replayed", self.city))
        }
    }

    fn agent(model: ScriptedModel) -> Agent {
        Agent::builder().model(model).tool::<Weather>().max_duration(Duration::from_secs(60)).build().unwrap()
    }

    #[tokio::test]
    async fn a_journal_saved_as_its_entries_reads_back_replays_and_writes_back_byte_for_byte() {
        let journal: MemoryJournal = serde_json::from_str(SAVED).unwrap();
        assert_eq!(
            journal.steps(),
            [
                "clock before model call 1",
                "model call 1",
                "tool weather c1",
                "clock before model call 2",
                "model call 2"
            ]
        );
        assert_eq!(serde_json::to_string(&journal).unwrap(), SAVED);

        let model = ScriptedModel::new();
        let mut conversation = Conversation::new();
        conversation.push_user("Weather in Oslo?");
        let done = agent(model.clone()).run_journaled(&mut conversation, &journal, &CancellationToken::new()).await;
        assert_eq!(done.unwrap().output, "Sunny.");
        assert_eq!(conversation.messages()[2].tool_results().next().unwrap().content, "sunny in Oslo");
        assert_eq!((journal.replayed_steps(), journal.live_steps(), journal.len()), (5, 0, 5));
        assert!(model.requests().is_empty(), "every step was replayed");
        assert_eq!(serde_json::to_string(&journal).unwrap(), SAVED, "a replay records nothing new");
    }

    #[tokio::test]
    async fn a_prefix_replays_its_steps_and_records_the_rest_after_them() {
        let saved: MemoryJournal = serde_json::from_str(SAVED).unwrap();
        let journal = MemoryJournal::replay_first(&saved, 2);
        assert_eq!(journal.steps(), ["clock before model call 1", "model call 1"]);
        let model = ScriptedModel::new().respond(crate::ModelResponse::from_text("Still sunny."));
        let mut conversation = Conversation::new();
        conversation.push_user("Weather in Oslo?");
        let done = agent(model.clone()).run_journaled(&mut conversation, &journal, &CancellationToken::new()).await;
        // The tool step was not in the prefix: it ran now.
        assert!(
            conversation.messages()[2].tool_results().next().unwrap().content.contains("should have been replayed")
        );
        assert_eq!(done.unwrap().output, "Still sunny.");
        assert_eq!((journal.replayed_steps(), journal.live_steps()), (2, 3));
        assert_eq!(journal.steps(), saved.steps());
        assert!(MemoryJournal::new().is_empty());
        assert_eq!(MemoryJournal::replay(&saved).len(), 5);
    }
}
