//! Runs started by a run's tool calls (agents used as tools): how each
//! ended, and the conversations kept for them.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use super::metadata::SubRun;
use crate::conversation::Conversation;

/// A conversation kept across the calls of one agent tool within one run.
pub(crate) type KeptConversation = Arc<tokio::sync::Mutex<Conversation>>;

/// What the sub-runs of one run share with it: where they report, and the
/// conversations they keep. It lives as long as the run.
#[derive(Debug, Default)]
pub(crate) struct SubRuns {
    finished: Mutex<Vec<SubRun>>,
    conversations: Mutex<HashMap<String, KeptConversation>>,
}

impl SubRuns {
    /// Reports a sub-run that ended.
    pub(crate) fn record(&self, run: SubRun) {
        self.finished.lock().unwrap_or_else(PoisonError::into_inner).push(run);
    }

    /// The sub-runs reported since the last call.
    pub(crate) fn take(&self) -> Vec<SubRun> {
        std::mem::take(&mut *self.finished.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The sub-runs reported since the last [`take`](Self::take) that tool
    /// call `call_id` started, taken out.
    pub(crate) fn take_for(&self, call_id: &str) -> Vec<SubRun> {
        let mut finished = self.finished.lock().unwrap_or_else(PoisonError::into_inner);
        let (taken, kept) = std::mem::take(&mut *finished).into_iter().partition(|run| run.call_id == call_id);
        *finished = kept;
        taken
    }

    /// The conversations kept so far, by agent tool, for a paused run's
    /// checkpoint (none is in use then: the batch is over).
    pub(crate) fn kept(&self) -> BTreeMap<String, Conversation> {
        let conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = conversations.iter().filter_map(|(tool, kept)| Some((tool.clone(), kept.try_lock().ok()?.clone())));
        kept.filter(|(_, conversation)| !conversation.messages().is_empty()).collect()
    }

    /// The conversation kept for agent tool `tool`, if it has one (for a
    /// journal's record of a call).
    pub(crate) fn kept_for(&self, tool: &str) -> Option<Conversation> {
        let conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
        conversations.get(tool).and_then(|kept| Some(kept.try_lock().ok()?.clone()))
    }

    /// Sets the conversation kept for agent tool `tool` (a replayed call's).
    pub(crate) fn keep(&self, tool: &str, conversation: Conversation) {
        let mut conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = conversations.entry(tool.to_owned()).or_default();
        let conversation = match kept.try_lock() {
            Ok(mut held) => {
                *held = conversation;
                None
            }
            // A call of the tool holds it: that call goes on from its own.
            Err(_) => Some(conversation),
        };
        if let Some(conversation) = conversation {
            *kept = Arc::new(conversation.into());
        }
    }

    /// Sub-runs that go on with the conversations `kept` (a resumed run's).
    pub(crate) fn keeping(kept: BTreeMap<String, Conversation>) -> Self {
        let conversations =
            kept.into_iter().map(|(tool, conversation)| (tool, Arc::new(conversation.into()))).collect();
        Self { finished: Mutex::default(), conversations: Mutex::new(conversations) }
    }

    /// The conversation kept for the agent tool `tool` in this run; empty
    /// at its first call.
    pub(crate) fn conversation(&self, tool: &str) -> KeptConversation {
        let mut conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(conversations.entry(tool.to_owned()).or_default())
    }
}
