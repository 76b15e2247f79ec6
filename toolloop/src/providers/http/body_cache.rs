//! The wire bytes of a run's settled messages, rendered once per model and
//! reused by the run's later requests, so that a request's client CPU does
//! not grow with the conversation.
//!
//! APIs merge consecutive messages of one role into one wire turn, so a
//! message's wire form can change while messages of its role may still be
//! appended. A *run* of same-role messages is settled once a message of the
//! other role follows it. The run's [`BodyCache`] keeps the rendered
//! elements of the settled runs its requests have sent; a request copies
//! them and renders only the open run at the end. The cache belongs to the
//! run that lends it to its requests, so it holds nothing once the run ends.
//!
//! Why reused bytes are never stale:
//! - An entry is made by one model's format, an immutable value that
//!   renders without seeing request data ([`Format::render_run`]), and only
//!   that model (or a clone sharing its format) reads it: the bytes depend
//!   on nothing but the messages.
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

use std::sync::Arc;

use bytes::Bytes;

use super::body::BodyOut;
use super::format::Format;
use crate::conversation::{needs_view, view_for, view_without_tools};
use crate::message::Message;
use crate::model::BodyCache;
use crate::model::body_cache::Rendered;

/// Appends to `out` the comma-prefixed wire elements of the messages
/// `format` (the format of the model whose renderer id is `renderer`) sends
/// of `messages` (the raw history; see
/// [`ModelRequest::view_for`](crate::ModelRequest::view_for)), reusing and
/// extending the rendered settled runs `cache` holds for them.
pub(crate) fn write<W: Format>(
    cache: Option<&BodyCache>,
    renderer: u64,
    format: &W,
    messages: &[Message],
    tools_offered: bool,
    out: &mut BodyOut,
) -> serde_json::Result<()> {
    let (Some(cache), Some(key)) = (cache, messages.first().and_then(Message::stamp)) else {
        return write_fresh(format, messages, tools_offered, out.buf());
    };
    let entry = cache.take(renderer, key).filter(|entry| starts(entry, messages));
    let covered = entry.as_ref().map_or(0, |entry| entry.messages);
    if entry.as_ref().is_some_and(|entry| !tools_offered && entry.tool_calls)
        || messages[covered..].iter().any(|message| needs_view(message, W::PROVIDER, tools_offered))
    {
        if let Some(entry) = entry {
            cache.put(entry);
        }
        return write_fresh(format, messages, tools_offered, out.buf());
    }

    let open = open_run_start(messages);
    let mut entry = entry;
    if covered < open {
        let mut extended = entry.take().unwrap_or(Rendered {
            renderer,
            first: key,
            messages: 0,
            last: key,
            tool_calls: false,
            json: Arc::default(),
            #[cfg(test)]
            run_renders: 0,
        });
        let json = Arc::make_mut(&mut extended.json);
        let settled = json.len();
        if let Err(error) = write_runs(format, messages, covered, open, json) {
            json.truncate(settled);
            return Err(error);
        }
        #[cfg(test)]
        {
            extended.run_renders += messages[covered..open].chunk_by(|a, b| a.role == b.role).count();
        }
        extended.tool_calls |= messages[covered..open].iter().any(|message| message.tool_calls().next().is_some());
        extended.messages = open;
        // Unstamped only once 2^64 stamps have been given out: then not kept.
        entry = messages[open - 1].stamp().map(|last| Rendered { last, ..extended });
    }
    if let Some(entry) = entry {
        out.push_shared(Bytes::from_owner(Shared(Arc::clone(&entry.json))));
        cache.put(entry);
    }
    write_runs(format, messages, open, messages.len(), out.buf())
}

/// Whether `entry` renders the start of `messages`.
fn starts(entry: &Rendered, messages: &[Message]) -> bool {
    let end = entry.messages.checked_sub(1).and_then(|index| messages.get(index));
    end.and_then(Message::stamp) == Some(entry.last)
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

/// Writes the messages `format` sends of `messages`, none from the cache.
pub(crate) fn write_fresh<W: Format>(
    format: &W,
    messages: &[Message],
    tools_offered: bool,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let view = if tools_offered { view_for(messages, W::PROVIDER) } else { view_without_tools(messages, W::PROVIDER) };
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
    use super::open_run_start;
    use crate::message::Message;

    #[test]
    fn the_open_run_is_the_last_run_of_one_role() {
        assert_eq!(open_run_start(&[]), 0);
        assert_eq!(open_run_start(&[Message::user("a"), Message::user("b")]), 0);
        let history = [Message::user("a"), Message::assistant("b"), Message::user("c"), Message::user("d")];
        assert_eq!(open_run_start(&history), 2);
    }
}
