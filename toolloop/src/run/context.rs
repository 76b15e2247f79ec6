//! A run's context policy: what it does when the history outgrows the
//! model's context window.
//!
//! The run keeps a *view* of the conversation for the model: the raw
//! history, until a compaction; after one, the compacted messages followed
//! by everything appended since. The view changes only at a compaction, so
//! between compactions its prefix stays byte-stable (prompt caches keep
//! hitting and the provider's body cache keeps reusing rendered messages).

use std::fmt;
use std::sync::Arc;

use super::journal::{Journal, Step};
use crate::cancel::BoxFuture;
use crate::conversation::{
    Compaction, CompactionReason, Conversation, elide_results, estimate_tokens, old_range, omitted_note, replace_range,
};
use crate::message::Message;
use crate::model::ModelError;

/// Summarises the old part of a history that is being left out of a
/// request; another model, typically. What it returns is sent in place of
/// those messages. A plain `Fn(&[Message]) -> String` is one.
///
/// ```
/// use toolloop::run::{ContextPolicy, Summariser};
/// use toolloop::{Message, Model, ModelError, ModelRequest};
/// use toolloop::model::BoxFuture;
///
/// /// Asks a (cheaper) model for the summary.
/// struct ByModel<M>(M);
///
/// impl<M: Model> Summariser for ByModel<M> {
///     fn summarise<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<String, ModelError>> {
///         Box::pin(async move {
///             let mut prompt: Vec<Message> = messages.to_vec();
///             prompt.push(Message::user("Summarise the work above in five lines: what was looked up, what was found."));
///             Ok(self.0.complete(ModelRequest::new(&prompt)).await?.text())
///         })
///     }
/// }
///
/// let summariser = ByModel(toolloop::testing::ScriptedModel::new());
/// let policy = ContextPolicy::new().summariser(summariser);
/// # let _ = policy;
/// ```
pub trait Summariser: Send + Sync {
    /// A summary of `messages` (whole iterations, oldest first).
    fn summarise<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<String, ModelError>>;
}

impl<F> Summariser for F
where
    F: Fn(&[Message]) -> String + Send + Sync,
{
    fn summarise<'a>(&'a self, messages: &'a [Message]) -> BoxFuture<'a, Result<String, ModelError>> {
        // Called when polled, not when the future is made: a journal that
        // replays a recorded summary never polls it, and the closure must
        // not run again.
        Box::pin(async move { Ok(self(messages)) })
    }
}

/// What a run does when the prompt does not fit the context window: on a
/// [`ModelErrorKind::ContextOverflow`](crate::model::ModelErrorKind::ContextOverflow)
/// from the model, or before a call whose estimated prompt passes
/// [`trigger`](Self::trigger) of [`window`](Self::window), it compacts the
/// view the model is sent and calls again. Compaction goes step by step,
/// one step per retry: replace the contents of old tool results (all but
/// the last [`keep_iterations`](Self::keep_iterations)) with a short
/// placeholder; then leave out whole old iterations, replaced by the
/// [summariser](Self::summariser)'s summary or a short note; then the same
/// keeping one iteration. The task (the messages before the first assistant
/// turn) is always kept; the raw conversation is never rewritten (see
/// [`Conversation::compact`] for that). Each compaction is reported as
/// [`Event::Compacted`](crate::run::Event::Compacted), with what it left
/// out, and counted in
/// [`RunMetadata::compactions`](crate::run::RunMetadata::compactions).
///
/// ```
/// use toolloop::run::ContextPolicy;
///
/// // A 32k-token window, compacted ahead of time at 80%.
/// let policy = ContextPolicy::new().window(32_000).trigger(0.8).keep_iterations(3);
/// assert_eq!(policy.window_tokens(), Some(32_000));
/// ```
#[derive(Clone)]
pub struct ContextPolicy {
    window: Option<u64>,
    trigger: f64,
    keep_iterations: usize,
    max_retries: u32,
    summariser: Option<Arc<dyn Summariser>>,
}

impl Default for ContextPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for ContextPolicy {
    fn eq(&self, other: &Self) -> bool {
        let same_summariser = match (&self.summariser, &other.summariser) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        self.window == other.window
            && self.trigger.to_bits() == other.trigger.to_bits()
            && self.keep_iterations == other.keep_iterations
            && self.max_retries == other.max_retries
            && same_summariser
    }
}

impl fmt::Debug for ContextPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextPolicy")
            .field("window", &self.window)
            .field("trigger", &self.trigger)
            .field("keep_iterations", &self.keep_iterations)
            .field("max_retries", &self.max_retries)
            .field("summariser", &self.summariser.is_some())
            .finish()
    }
}

impl ContextPolicy {
    /// Compacts on overflow only (no window known), keeping the last two
    /// iterations whole, retrying a call up to four times.
    pub fn new() -> Self {
        Self { window: None, trigger: 0.9, keep_iterations: 2, max_retries: 4, summariser: None }
    }

    /// The model's context window in tokens: with it, a call whose
    /// estimated prompt passes [`trigger`](Self::trigger) of it is compacted
    /// before it is sent.
    #[must_use]
    pub fn window(mut self, tokens: u64) -> Self {
        self.window = Some(tokens);
        self
    }

    /// The share of the window (default 0.9) past which a prompt is
    /// compacted ahead of time; clamped to `0.05..=1.0`.
    #[must_use]
    pub fn trigger(mut self, share: f64) -> Self {
        self.trigger = if share.is_finite() { share.clamp(0.05, 1.0) } else { 0.9 };
        self
    }

    /// How many recent iterations stay whole (default 2).
    #[must_use]
    pub fn keep_iterations(mut self, iterations: usize) -> Self {
        self.keep_iterations = iterations;
        self
    }

    /// How many times one model call is compacted and retried (default 4).
    #[must_use]
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Summarises old iterations instead of leaving them out with a note.
    #[must_use]
    pub fn summariser(mut self, summariser: impl Summariser + 'static) -> Self {
        self.summariser = Some(Arc::new(summariser));
        self
    }

    /// The configured window.
    pub fn window_tokens(&self) -> Option<u64> {
        self.window
    }

    /// Whether the estimated prompt of `messages` passes the trigger.
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub(crate) fn over_trigger(&self, messages: &[Message]) -> bool {
        self.window.is_some_and(|window| estimate_tokens(messages) as f64 > window as f64 * self.trigger)
    }

    pub(crate) fn max_retries_per_call(&self) -> u32 {
        self.max_retries
    }
}

/// The view a run sends its model (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ContextView {
    /// The compacted view, once there was a compaction.
    view: Option<Conversation>,
    /// How many raw messages the view reflects.
    mirrored: usize,
}

impl ContextView {
    /// The messages to send for `raw`: `raw` itself until a compaction.
    pub(crate) fn messages<'a>(&'a mut self, raw: &'a [Message]) -> &'a [Message] {
        match &mut self.view {
            None => raw,
            Some(view) => {
                // The raw history only grows during a run; what is new joins the view.
                for message in raw.get(self.mirrored..).unwrap_or_default() {
                    view.push(message.clone());
                }
                self.mirrored = raw.len();
                view.messages()
            }
        }
    }

    /// Compacts the view of `raw` one step; `None` when nothing is left to compact.
    pub(crate) async fn compact(
        &mut self,
        raw: &[Message],
        policy: &ContextPolicy,
        reason: CompactionReason,
        (journal, number): (&dyn Journal, u32),
    ) -> Result<Option<Compaction>, ModelError> {
        let current: Vec<Message> = self.messages(raw).to_vec();
        let before = estimate_tokens(&current);
        let mut compaction = Compaction {
            reason,
            tool_results_elided: 0,
            messages_dropped: 0,
            summarised: false,
            estimated_tokens_before: before,
            estimated_tokens_after: before,
        };
        let mut next = None;
        for keep in [policy.keep_iterations, 1] {
            let Some((from, to)) = old_range(&current, keep) else { continue };
            let mut elided = current.clone();
            let count = elide_results(&mut elided, from, to);
            if count > 0 {
                compaction.tool_results_elided = count;
                next = Some(elided);
                break;
            }
            let old = &current[from..to];
            // A note already standing for dropped messages is not worth dropping again.
            if old.len() == 1 {
                continue;
            }
            let note = match &policy.summariser {
                Some(summariser) => {
                    compaction.summarised = true;
                    let step = Step::Summary { number };
                    let summary = journal.summary(step, summariser.summarise(old)).await?;
                    format!("[Summary of {} earlier messages] {summary}", old.len())
                }
                None => omitted_note(old.len()),
            };
            compaction.messages_dropped = old.len();
            next = Some(replace_range(&current, from, to, note));
            break;
        }
        let Some(next) = next else { return Ok(None) };
        compaction.estimated_tokens_after = estimate_tokens(&next);
        self.view = Some(Conversation::from(next));
        self.mirrored = raw.len();
        Ok(Some(compaction))
    }
}
