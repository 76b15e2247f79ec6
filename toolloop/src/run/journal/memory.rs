//! A journal in memory: records every step, replays recorded ones.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::record::{JournalError, decode, encode};
use super::{Journal, Step, ask};
use crate::cancel::{BoxFuture, Cancelled};
use crate::message::{FailureKind, ToolCall, ToolResult};
use crate::model::{ModelError, ModelErrorKind, ModelResponse};
use crate::run::governance::{Approver, Decision};
use crate::tool::ToolExecution;

/// One recorded step: its name ([`Step`]'s `Display`) and its outcome in
/// recorded form ([`encode`](super::encode)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JournalEntry {
    /// The step's name, unique within the run.
    pub step: String,
    /// The step's outcome in recorded form: `{"format": 1, "value": ...}`.
    pub record: serde_json::Value,
}

impl JournalEntry {
    /// The entry of `step`, recording `record`.
    pub fn new(step: impl Into<String>, record: serde_json::Value) -> Self {
        Self { step: step.into(), record }
    }
}

/// A [`Journal`] in memory: it records the outcome of every step it does,
/// in the recorded form, and replays the outcomes it was given.
///
/// For tests of durable behaviour (start a run from a prefix of another
/// run's journal: the recorded steps are not done again), and as the
/// reference for journals on a durable engine.
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
/// let replay = MemoryJournal::replaying(journal.entries());
/// let mut again = Conversation::new();
/// again.push_user("hello");
/// let done = agent.run_journaled(&mut again, &replay, &CancellationToken::new()).await?;
/// assert_eq!(done.output, "hi");
/// assert_eq!(replay.replayed_steps(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct MemoryJournal {
    /// The outcomes to replay, by step name.
    recorded: HashMap<String, serde_json::Value>,
    /// The journal: the entries it was given, then the steps done since,
    /// in the order they finished.
    entries: Mutex<Vec<JournalEntry>>,
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
    pub fn replaying(entries: impl IntoIterator<Item = JournalEntry>) -> Self {
        let entries: Vec<JournalEntry> = entries.into_iter().collect();
        let recorded = entries.iter().map(|entry| (entry.step.clone(), entry.record.clone())).collect();
        Self { recorded, entries: Mutex::new(entries), counts: Mutex::default() }
    }

    /// The journal so far.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).clone()
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
    fn replay<T: DeserializeOwned>(&self, step: &str) -> Option<Result<T, JournalError>> {
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
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).push(JournalEntry { step, record });
    }
}

fn unreadable(error: &JournalError) -> ModelError {
    ModelError::new(ModelErrorKind::Other, "journal", error.to_string())
}

impl Journal for MemoryJournal {
    fn model_call<'a>(
        &'a self,
        step: Step<'a>,
        call: BoxFuture<'a, Result<ModelResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let name = step.to_string();
        Box::pin(async move {
            match self.replay::<Result<ModelResponse, ModelError>>(&name) {
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
            match self.replay::<Result<String, ModelError>>(&name) {
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
            match self.replay::<ToolExecution>(&name) {
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
                    Ok(ToolExecution { call, result, output: None, elapsed: Duration::ZERO })
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
            match self.replay::<Decision>(&name) {
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
            match self.replay::<Duration>(&name) {
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
