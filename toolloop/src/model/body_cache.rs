//! A run's rendered messages: the wire bytes of its conversation's settled
//! messages, kept so that the run's later requests copy them instead of
//! rendering them again (the HTTP models render and read them; see
//! `providers::http::body_cache`).
//!
//! A run owns its cache and lends it to each request
//! (`ModelRequest::with_body_cache`), so the bytes
//! live exactly as long as the run: a finished conversation holds no memory
//! here, whatever a process has run before. The next run of the same
//! conversation renders its history once on its first request.
// Read and written only by the HTTP providers; without them a run lends an empty cache.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// How many renderings a run keeps at once: one per model it sends to (a
/// fallback chain's models, say).
const ENTRIES: usize = 4;

/// The rendered settled messages of one run's requests.
#[derive(Default)]
pub(crate) struct BodyCache {
    entries: Mutex<Vec<Rendered>>,
}

/// The first `messages` messages of a request (from the message stamped
/// `first`), rendered by one model's format: every settled run among them.
pub(crate) struct Rendered {
    /// Who rendered them: the bytes depend on the format's settings.
    pub(crate) renderer: u64,
    /// The stamp of the first message.
    pub(crate) first: NonZeroU64,
    pub(crate) messages: usize,
    /// The stamp of message `messages - 1`.
    pub(crate) last: NonZeroU64,
    /// Whether any of them holds a tool call.
    pub(crate) tool_calls: bool,
    /// Comma-prefixed wire elements. Requests send them without copying;
    /// appending to them copies them only while a request still holds them
    /// (`Arc::make_mut`).
    pub(crate) json: Arc<Vec<u8>>,
    /// How many runs of messages were rendered into `json`.
    #[cfg(test)]
    pub(crate) run_renders: usize,
}

impl BodyCache {
    /// The rendering `renderer` made of the messages starting with the one
    /// stamped `first`, taken out while a request extends it.
    pub(crate) fn take(&self, renderer: u64, first: NonZeroU64) -> Option<Rendered> {
        let mut entries = self.lock();
        let index = entries.iter().position(|entry| entry.renderer == renderer && entry.first == first)?;
        Some(entries.swap_remove(index))
    }

    /// Keeps `entry` for the next request, in place of the renderer's
    /// rendering of other messages (a run's requests to one model start
    /// from one message until a compaction replaces the history, whose
    /// old rendering no request reads again); the oldest goes when the
    /// cache is full.
    pub(crate) fn put(&self, entry: Rendered) {
        let mut entries = self.lock();
        entries.retain(|kept| kept.renderer != entry.renderer);
        if entries.len() == ENTRIES {
            entries.remove(0);
        }
        entries.push(entry);
    }

    /// A panic while the lock was held cannot have left an entry half
    /// written (entries are written outside it), so a poisoned cache is used
    /// as it is.
    fn lock(&self) -> MutexGuard<'_, Vec<Rendered>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many runs `renderer` rendered for the messages starting with the
    /// one stamped `first`, and how many messages that covers.
    #[cfg(test)]
    pub(crate) fn stats(&self, renderer: u64, first: NonZeroU64) -> Option<(usize, usize)> {
        let entries = self.lock();
        let entry = entries.iter().find(|entry| entry.renderer == renderer && entry.first == first)?;
        Some((entry.run_renders, entry.messages))
    }
}

/// A renderer id no other has had: each model that renders into caches
/// takes one when it is built, and its clones share it.
pub(crate) fn new_renderer() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU64;
    use std::sync::Arc;

    use super::{BodyCache, ENTRIES, Rendered};

    fn entry(renderer: u64, first: u64) -> Rendered {
        let first = NonZeroU64::new(first).unwrap();
        Rendered { renderer, first, messages: 1, last: first, tool_calls: false, json: Arc::default(), run_renders: 0 }
    }

    #[test]
    fn a_rendering_is_found_by_its_renderer_and_first_message_only() {
        let cache = BodyCache::default();
        cache.put(entry(1, 10));
        assert!(cache.take(2, NonZeroU64::new(10).unwrap()).is_none(), "another renderer's bytes");
        assert!(cache.take(1, NonZeroU64::new(11).unwrap()).is_none(), "other messages");
        assert!(cache.take(1, NonZeroU64::new(10).unwrap()).is_some());
        assert!(cache.take(1, NonZeroU64::new(10).unwrap()).is_none(), "taken out while in use");
    }

    #[test]
    fn the_cache_keeps_one_rendering_per_renderer_for_a_few_renderers() {
        let cache = BodyCache::default();
        for renderer in 1..=ENTRIES as u64 + 2 {
            cache.put(entry(renderer, 10));
        }
        assert_eq!(cache.lock().len(), ENTRIES);
        assert!(cache.take(1, NonZeroU64::new(10).unwrap()).is_none(), "the oldest went");
        // A rendering of other messages (a compacted history) replaces the renderer's old one.
        let last = ENTRIES as u64 + 2;
        cache.put(entry(last, 20));
        assert_eq!(cache.lock().len(), ENTRIES);
        assert!(cache.take(last, NonZeroU64::new(10).unwrap()).is_none());
        assert!(cache.take(last, NonZeroU64::new(20).unwrap()).is_some());
    }
}
