//! Runs started by a run's tool calls (agents used as tools): how each
//! ended, and the conversations kept for them.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex, PoisonError};

use super::metadata::SubRun;
use crate::conversation::Conversation;
use crate::message::Message;

/// A conversation kept across the calls of one agent tool within one run.
pub(crate) type KeptConversation = Arc<tokio::sync::Mutex<Conversation>>;

/// What the sub-runs of one run share with it: where they report, and the
/// conversations they keep. It lives as long as the run.
#[derive(Debug, Default)]
pub(crate) struct SubRuns {
    finished: Mutex<Vec<SubRun>>,
    conversations: Mutex<HashMap<String, KeptConversation>>,
    /// Under a journal: what each call added to the conversation its tool
    /// keeps, by call id, for the journal's record.
    left: Mutex<Vec<(String, Kept)>>,
    /// Replayed additions that do not follow on from the conversation kept
    /// now (calls replayed in another order than they took it), until they do.
    early: Mutex<Vec<Kept>>,
}

/// What one call of an agent tool left in the conversation the tool keeps,
/// as a journal records it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Kept {
    pub(crate) tool: String,
    #[serde(flatten)]
    change: Change,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum Change {
    /// The messages the call added after the first `from`.
    Added { from: usize, messages: Vec<Message> },
    /// The whole conversation as the call left it: when the messages
    /// before the call changed (a rewrite restamps them), and in every
    /// record of earlier versions.
    Whole { conversation: Conversation },
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

    /// Leaves what call `call_id` of agent tool `tool` did to the
    /// conversation the tool keeps (under a journal): `conversation` as the
    /// call left it, which had `from` messages, the last stamped `last`,
    /// when the call took it.
    pub(crate) fn leave(
        &self,
        call_id: &str,
        tool: &str,
        conversation: &Conversation,
        (from, last): (usize, Option<NonZeroU64>),
    ) {
        let messages = conversation.messages();
        // Unchanged before the call (a rewrite restamps what it changes): its additions say it all.
        let unchanged = from == 0 || (last.is_some() && messages.get(from - 1).and_then(Message::stamp) == last);
        let change = if unchanged && messages.len() >= from {
            Change::Added { from, messages: messages[from..].to_vec() }
        } else {
            Change::Whole { conversation: conversation.clone() }
        };
        let kept = Kept { tool: tool.to_owned(), change };
        self.left.lock().unwrap_or_else(PoisonError::into_inner).push((call_id.to_owned(), kept));
    }

    /// What call `call_id` left, taken out (for its journal record).
    pub(crate) fn take_left(&self, call_id: &str) -> Option<Kept> {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        let index = left.iter().position(|(id, _)| id == call_id)?;
        Some(left.remove(index).1)
    }

    /// Applies what a replayed call left in its tool's conversation: its
    /// additions, once the conversation kept has the messages they follow
    /// (calls of one tool in parallel may be replayed in another order than
    /// they took it); a whole conversation when it is longer than the one
    /// kept (a kept conversation only grows within a run). A conversation
    /// a live call holds is left to it.
    pub(crate) fn keep(&self, kept: Kept) {
        let tool = kept.tool.clone();
        let mut early = self.early.lock().unwrap_or_else(PoisonError::into_inner);
        // Parked first: what a live call's conversation holds back now
        // applies with the tool's next replayed record.
        early.push(kept);
        let current = self.conversation(&tool);
        let Ok(mut current) = current.try_lock() else { return };
        loop {
            let len = current.messages().len();
            // Additions the conversation is already past are dropped.
            early.retain(|kept| kept.tool != tool || !matches!(kept.change, Change::Added { from, .. } if from < len));
            let next = early
                .iter()
                .position(|kept| kept.tool == tool && !matches!(kept.change, Change::Added { from, .. } if from > len));
            let Some(next) = next else { break };
            match early.remove(next).change {
                Change::Added { messages, .. } => {
                    // A call leaves its kept conversation with no calls pending.
                    current.set_pending(None);
                    for message in messages {
                        current.push(message);
                    }
                }
                Change::Whole { conversation } if conversation.messages().len() > len => *current = conversation,
                Change::Whole { .. } => {}
            }
        }
    }

    /// Sub-runs that go on with the conversations `kept` (a resumed run's).
    pub(crate) fn keeping(kept: BTreeMap<String, Conversation>) -> Self {
        let conversations =
            kept.into_iter().map(|(tool, conversation)| (tool, Arc::new(conversation.into()))).collect();
        Self { conversations: Mutex::new(conversations), ..Self::default() }
    }

    /// The conversation kept for the agent tool `tool` in this run; empty
    /// at its first call.
    pub(crate) fn conversation(&self, tool: &str) -> KeptConversation {
        let mut conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(conversations.entry(tool.to_owned()).or_default())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Kept, SubRuns};
    use crate::conversation::Conversation;
    use crate::message::Message;

    fn texts(runs: &SubRuns, tool: &str) -> Vec<String> {
        runs.conversation(tool).try_lock().unwrap().messages().iter().map(Message::text).collect()
    }

    /// What a call left, through JSON as a journal holds it.
    fn left(runs: &SubRuns, call: &str) -> Kept {
        let kept = runs.take_left(call).unwrap();
        serde_json::from_value(serde_json::to_value(kept).unwrap()).unwrap()
    }

    #[test]
    fn a_call_records_only_the_messages_it_added() {
        let runs = SubRuns::default();
        let mut conversation = Conversation::new();
        for (call, (ask, answer)) in [("c1", ("one", "first")), ("c2", ("two", "second"))] {
            let taken = (conversation.len(), conversation.last().and_then(Message::stamp));
            conversation.push_user(ask);
            conversation.push(Message::assistant(answer));
            runs.leave(call, "research", &conversation, taken);
        }
        let record = serde_json::to_value(runs.take_left("c2").unwrap()).unwrap();
        assert_eq!(record["from"], 2);
        assert_eq!(record["messages"].as_array().unwrap().len(), 2, "{record}");
        assert!(record.get("conversation").is_none());

        // A call that finds the messages before it rewritten records the whole conversation.
        let taken = (conversation.len(), conversation.last().and_then(Message::stamp));
        // (a rewrite, as `Conversation::compact` makes one, restamps the messages)
        conversation = Conversation::from(conversation.messages().to_vec());
        conversation.push_user("three");
        runs.leave("c3", "research", &conversation, taken);
        let record = serde_json::to_value(runs.take_left("c3").unwrap()).unwrap();
        assert!(record.get("from").is_none() && record.get("conversation").is_some(), "{record}");
    }

    #[test]
    fn additions_replayed_out_of_order_are_applied_in_order_once() {
        let live = SubRuns::default();
        let mut conversation = Conversation::new();
        for (call, ask) in [("c1", "one"), ("c2", "two"), ("c3", "three")] {
            let taken = (conversation.len(), conversation.last().and_then(Message::stamp));
            conversation.push_user(ask);
            conversation.push(Message::assistant(format!("{ask}!")));
            live.leave(call, "research", &conversation, taken);
        }
        let (first, second, third) = (left(&live, "c1"), left(&live, "c2"), left(&live, "c3"));

        let replayed = SubRuns::default();
        replayed.keep(third);
        replayed.keep(first.clone());
        assert_eq!(texts(&replayed, "research"), ["one", "one!"], "the third waits for the second");
        replayed.keep(second);
        assert_eq!(texts(&replayed, "research"), ["one", "one!", "two", "two!", "three", "three!"]);
        replayed.keep(first);
        assert_eq!(texts(&replayed, "research").len(), 6, "an addition the conversation is past is dropped");
        assert!(replayed.early.lock().unwrap().is_empty());
    }

    #[test]
    fn a_record_met_while_a_live_call_holds_the_conversation_applies_later() {
        let live = SubRuns::default();
        let mut conversation = Conversation::new();
        for (call, ask) in [("c1", "one"), ("c2", "two")] {
            let taken = (conversation.len(), conversation.last().and_then(Message::stamp));
            conversation.push_user(ask);
            live.leave(call, "research", &conversation, taken);
        }
        let (first, second) = (left(&live, "c1"), left(&live, "c2"));
        let replayed = SubRuns::default();
        let held = replayed.conversation("research");
        let guard = held.try_lock().unwrap();
        replayed.keep(first);
        drop(guard);
        replayed.keep(second);
        assert_eq!(texts(&replayed, "research"), ["one", "two"]);
    }

    #[test]
    fn a_record_of_an_earlier_version_sets_the_whole_conversation_if_longer() {
        let runs = SubRuns::default();
        let whole = |texts: &[&str]| -> Kept {
            let messages: Vec<Message> = texts.iter().map(|text| Message::user(*text)).collect();
            serde_json::from_value(json!({"tool": "research", "conversation": {"messages": messages}})).unwrap()
        };
        runs.keep(whole(&["a", "b"]));
        runs.keep(whole(&["a"]));
        assert_eq!(texts(&runs, "research"), ["a", "b"], "the longest wins");
        runs.keep(whole(&["a", "b", "c"]));
        assert_eq!(texts(&runs, "research"), ["a", "b", "c"]);
    }
}
