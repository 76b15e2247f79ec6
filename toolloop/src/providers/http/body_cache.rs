//! The wire bytes of conversations' settled messages, rendered once per
//! model and reused, so that a request's client CPU does not grow with the
//! conversation.
//!
//! APIs merge consecutive messages of one role into one wire turn, so a
//! message's wire form can change while messages of its role may still be
//! appended. A *run* of same-role messages is settled once a message of the
//! other role follows it. For each conversation a model has recently been
//! sent, the cache keeps the rendered elements of its settled runs; a request
//! copies them and renders only the open run at the end.
//!
//! Why reused bytes are never stale:
//! - The cache lives in one model, next to the one immutable format value
//!   that renders into it, and rendering sees no request data
//!   ([`Format::render_run`]): the bytes depend on nothing but the messages.
//! - An entry is found by the stamp of the request's first message and used
//!   only if the request's message at the entry's end still bears the stamp
//!   it had. Stamps are never reused, exist only on messages a
//!   [`Conversation`](crate::Conversation) holds, and such a message, and
//!   every message before it, can no longer change (see
//!   `crate::message::Stamp`): so the two stamps name the same, unchanged
//!   messages that were rendered. Copies of messages (clones, deserialised
//!   or flattened ones) have no stamp and are rendered afresh.
//! - Entries are only made for requests sent as they are (no message needs
//!   flattening for this provider), so they hold no foreign tool calls; a
//!   request offering no tools may use one only when it holds no tool call.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::mem;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use super::body::BodyOut;
use super::format::Format;
use crate::conversation::{is_foreign, view_for, view_without_tools};
use crate::message::Message;

/// How many bytes one generation of entries may hold; the cache holds two.
const GENERATION_BYTES: usize = 16 << 20;

/// Rendered settled messages of recent conversations, in two generations:
/// entries used since the current one began, and those of the one before,
/// dropped as a whole when the current one fills up. A conversation still
/// in use moves to the current generation at its next request.
#[derive(Default)]
pub(crate) struct BodyCache {
    generations: Mutex<Generations>,
}

#[derive(Default)]
struct Generations {
    current: HashMap<NonZeroU64, Rendered, StampHasher>,
    previous: HashMap<NonZeroU64, Rendered, StampHasher>,
    /// The bytes of the entries in `current`.
    current_bytes: usize,
}

/// The first `messages` messages of a conversation (from the message whose
/// stamp is this entry's key), rendered: every settled run among them.
struct Rendered {
    messages: usize,
    /// The stamp of message `messages - 1`.
    last: NonZeroU64,
    /// Whether any of them holds a tool call.
    tool_calls: bool,
    /// Comma-prefixed wire elements. Requests send them without copying
    /// ([`Shared`]); appending to them copies them only while a request
    /// still holds them.
    json: Arc<Vec<u8>>,
    #[cfg(test)]
    run_renders: usize,
}

impl Rendered {
    /// Whether this entry renders the start of `messages`.
    fn starts(&self, messages: &[Message]) -> bool {
        let end = self.messages.checked_sub(1).and_then(|index| messages.get(index));
        end.and_then(Message::stamp) == Some(self.last)
    }
}

impl BodyCache {
    /// Appends to `out` the comma-prefixed wire elements of the messages
    /// `format` sends of `messages` (the raw history; see
    /// [`ModelRequest::view_for`](crate::ModelRequest::view_for)), reusing
    /// and extending the rendered settled runs of their conversation.
    pub(crate) fn write<W: Format>(
        &self,
        format: &W,
        messages: &[Message],
        tools_offered: bool,
        out: &mut BodyOut,
    ) -> serde_json::Result<()> {
        let Some(key) = messages.first().and_then(Message::stamp) else {
            return write_fresh(format, messages, tools_offered, out.buf());
        };
        // Taken out while in use, so that requests of other conversations do not wait.
        let entry = self.lock().take(key).filter(|entry| entry.starts(messages));
        let covered = entry.as_ref().map_or(0, |entry| entry.messages);
        let needs_view = |message: &Message| {
            if tools_offered { is_foreign(message, W::PROVIDER) } else { message.tool_calls().next().is_some() }
        };
        if entry.as_ref().is_some_and(|entry| !tools_offered && entry.tool_calls)
            || messages[covered..].iter().any(needs_view)
        {
            if let Some(entry) = entry {
                self.lock().put(key, entry);
            }
            return write_fresh(format, messages, tools_offered, out.buf());
        }

        let open = open_run_start(messages);
        let mut entry = entry;
        if covered < open {
            let mut rendered = entry.take().unwrap_or(Rendered {
                messages: 0,
                last: key,
                tool_calls: false,
                json: Arc::default(),
                #[cfg(test)]
                run_renders: 0,
            });
            let json = Arc::make_mut(&mut rendered.json);
            let settled = json.len();
            if let Err(error) = write_runs(format, messages, covered, open, json) {
                json.truncate(settled);
                return Err(error);
            }
            #[cfg(test)]
            {
                rendered.run_renders += messages[covered..open].chunk_by(|a, b| a.role == b.role).count();
            }
            rendered.tool_calls |= messages[covered..open].iter().any(|message| message.tool_calls().next().is_some());
            rendered.messages = open;
            // Unstamped only once 2^64 stamps have been given out: then not kept.
            entry = messages[open - 1].stamp().map(|last| Rendered { last, ..rendered });
        }
        if let Some(entry) = entry {
            out.push_shared(Bytes::from_owner(Shared(Arc::clone(&entry.json))));
            self.lock().put(key, entry);
        }
        write_runs(format, messages, open, messages.len(), out.buf())
    }

    /// The entries. A panic while the lock was held cannot have left an
    /// entry half written (entries are written outside it), so a poisoned
    /// cache is used as it is.
    fn lock(&self) -> MutexGuard<'_, Generations> {
        self.generations.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many runs the entry for the conversation starting with `first`
    /// has rendered, and how many messages it covers.
    #[cfg(test)]
    pub(crate) fn stats(&self, first: &Message) -> Option<(usize, usize)> {
        let generations = self.lock();
        let key = first.stamp()?;
        let entry = generations.current.get(&key).or_else(|| generations.previous.get(&key))?;
        Some((entry.run_renders, entry.messages))
    }
}

/// Hashes a stamp with one multiplication (Fibonacci hashing, which spreads
/// consecutive numbers over all the bits): stamps are counters the crate
/// hands out, so they need no protection from chosen keys.
#[derive(Clone, Copy, Default)]
struct StampHasher(u64);

impl BuildHasher for StampHasher {
    type Hasher = Self;

    fn build_hasher(&self) -> Self {
        Self(0)
    }
}

impl Hasher for StampHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used (a `NonZeroU64` hashes as its `u64`); anything else still hashes.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Rendered elements lent to a request body. While it lives, appending to
/// the entry copies the elements first (`Arc::make_mut`), so these bytes
/// never change.
struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Generations {
    fn take(&mut self, key: NonZeroU64) -> Option<Rendered> {
        if let Some(entry) = self.current.remove(&key) {
            self.current_bytes -= entry.json.len();
            return Some(entry);
        }
        self.previous.remove(&key)
    }

    fn put(&mut self, key: NonZeroU64, entry: Rendered) {
        let bytes = entry.json.len();
        if bytes > GENERATION_BYTES {
            return;
        }
        if self.current_bytes + bytes > GENERATION_BYTES {
            self.previous = mem::take(&mut self.current);
            self.current_bytes = 0;
        }
        self.current_bytes += bytes;
        if let Some(replaced) = self.current.insert(key, entry) {
            // Two requests of one conversation at once: the later one's entry stays.
            self.current_bytes -= replaced.json.len();
        }
    }
}

/// Writes the messages `format` sends of `messages`, none from the cache.
pub(crate) fn write_fresh<W: Format>(
    format: &W,
    messages: &[Message],
    tools_offered: bool,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let view = if tools_offered { view_for(messages, W::PROVIDER) } else { view_without_tools(messages) };
    write_runs(format, &view, 0, view.len(), out)
}

/// Renders the runs of `messages[from..to]`; `from` must start a run.
fn write_runs<W: Format>(
    format: &W,
    messages: &[Message],
    from: usize,
    to: usize,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let mut start = from;
    for run in messages[from..to].chunk_by(|a, b| a.role == b.role) {
        let end = start + run.len();
        format.render_run(run, &messages[..end], out)?;
        start = end;
    }
    Ok(())
}

/// Where the last run (the one later messages may still join) starts.
fn open_run_start(messages: &[Message]) -> usize {
    let Some(last) = messages.last() else { return 0 };
    messages.iter().rposition(|message| message.role != last.role).map_or(0, |index| index + 1)
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU64;
    use std::sync::Arc;

    use super::{GENERATION_BYTES, Generations, Rendered, open_run_start};
    use crate::message::Message;

    fn entry(bytes: usize) -> Rendered {
        let json = Arc::new(vec![b' '; bytes]);
        Rendered { messages: 1, last: NonZeroU64::MIN, tool_calls: false, json, run_renders: 0 }
    }

    fn key(n: u64) -> NonZeroU64 {
        NonZeroU64::new(n).unwrap()
    }

    #[test]
    fn the_cache_holds_two_generations_at_most() {
        let mut cache = Generations::default();
        let quarter = GENERATION_BYTES / 4;
        for n in 1..=4 {
            cache.put(key(n), entry(quarter));
        }
        assert_eq!((cache.current.len(), cache.previous.len()), (4, 0));
        // The fifth starts a new generation; the first four stay reachable.
        cache.put(key(5), entry(quarter));
        assert_eq!((cache.current.len(), cache.previous.len(), cache.current_bytes), (1, 4, quarter));
        // An entry in use moves to the current generation.
        let first = cache.take(key(1)).unwrap();
        cache.put(key(1), first);
        assert_eq!((cache.current.len(), cache.previous.len(), cache.current_bytes), (2, 3, 2 * quarter));
        // Filling the current generation again drops the entries not used since.
        for n in 6..=8 {
            cache.put(key(n), entry(quarter));
        }
        assert!(cache.take(key(2)).is_none(), "dropped with its generation");
        assert!(cache.take(key(1)).is_some() && cache.take(key(8)).is_some());
        // An entry larger than a generation is not kept.
        cache.put(key(9), entry(GENERATION_BYTES + 1));
        assert!(cache.take(key(9)).is_none());
        let held: usize = cache.current.values().chain(cache.previous.values()).map(|e| e.json.len()).sum();
        assert!(held <= 2 * GENERATION_BYTES);
    }

    #[test]
    fn the_open_run_is_the_last_run_of_one_role() {
        assert_eq!(open_run_start(&[]), 0);
        assert_eq!(open_run_start(&[Message::user("a"), Message::user("b")]), 0);
        let history = [Message::user("a"), Message::assistant("b"), Message::user("c"), Message::user("d")];
        assert_eq!(open_run_start(&history), 2);
    }
}
