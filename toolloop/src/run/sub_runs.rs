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
    /// Under a journal: each call's copy of the conversation its tool
    /// keeps, as the call left it, by call id, for the journal's record.
    left: Mutex<Vec<(String, Kept)>>,
}

/// A conversation an agent tool keeps, as one of its calls left it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Kept {
    pub(crate) tool: String,
    pub(crate) conversation: Conversation,
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

    /// Leaves call `call_id`'s copy of the conversation agent tool `tool`
    /// keeps, as the call left it (under a journal).
    pub(crate) fn leave(&self, call_id: &str, tool: &str, conversation: Conversation) {
        let kept = Kept { tool: tool.to_owned(), conversation };
        self.left.lock().unwrap_or_else(PoisonError::into_inner).push((call_id.to_owned(), kept));
    }

    /// The copy call `call_id` left, taken out (for its journal record).
    pub(crate) fn take_left(&self, call_id: &str) -> Option<Kept> {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        let index = left.iter().position(|(id, _)| id == call_id)?;
        Some(left.remove(index).1)
    }

    /// Sets the conversation a replayed call left for its tool, unless the
    /// conversation kept now is as long or longer: a kept conversation only
    /// grows within a run, so of the calls of one tool (in parallel, maybe
    /// replayed in another order than they took it), the longest is the
    /// latest. A conversation a live call holds is left to it.
    pub(crate) fn keep(&self, kept: Kept) {
        let mut conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
        let current = conversations.entry(kept.tool).or_default();
        if let Ok(mut current) = current.try_lock()
            && current.messages().len() < kept.conversation.messages().len()
        {
            *current = kept.conversation;
        }
    }

    /// Sub-runs that go on with the conversations `kept` (a resumed run's).
    pub(crate) fn keeping(kept: BTreeMap<String, Conversation>) -> Self {
        let conversations =
            kept.into_iter().map(|(tool, conversation)| (tool, Arc::new(conversation.into()))).collect();
        Self { finished: Mutex::default(), conversations: Mutex::new(conversations), left: Mutex::default() }
    }

    /// The conversation kept for the agent tool `tool` in this run; empty
    /// at its first call.
    pub(crate) fn conversation(&self, tool: &str) -> KeptConversation {
        let mut conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(conversations.entry(tool.to_owned()).or_default())
    }
}
