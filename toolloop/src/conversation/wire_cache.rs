//! Wire JSON of a conversation's settled messages, rendered once and reused.
//!
//! Providers merge consecutive messages of one role into one wire turn, so a
//! message's wire form can change while later messages of its role may still
//! be appended. A *run* of same-role messages is settled once a message of the
//! other role follows it: nothing appended later can change how it renders.
//! The cache keeps, per wire format, the rendered JSON of every settled run;
//! a request copies those bytes and renders only the open run at the end.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::message::Message;

/// Writes the wire elements of one run of same-role messages, each preceded
/// by a comma. Arguments: the run, and every message up to the end of the
/// run (the run included), for formats that look back (Ollama names a tool
/// result after its call).
pub(crate) type RenderRun<'r> = &'r mut dyn FnMut(&[Message], &[Message], &mut Vec<u8>) -> serde_json::Result<()>;

/// How many wire formats one conversation keeps rendered at once (a run that
/// switches or falls back between providers alternates between them).
const FORMATS: usize = 3;

/// The settled prefix of one conversation, rendered per wire format.
///
/// Lives in a [`Conversation`](super::Conversation), never in a model: a model
/// is shared by many conversations. It is not part of the conversation's
/// value: clones and deserialised conversations start with an empty cache.
#[derive(Default)]
pub(crate) struct WireCache {
    entries: Mutex<Vec<Rendered>>,
    /// Per provider, how many leading messages hold no tool call of another
    /// provider, so that [`view_for`](super::Conversation::view_for) checks
    /// only the messages after them.
    native: Mutex<Vec<(Box<str>, usize)>>,
}

/// One wire format's rendering of the first `messages` messages, which end
/// where a settled run ends.
struct Rendered {
    format: &'static str,
    messages: usize,
    /// Comma-prefixed wire elements.
    json: Vec<u8>,
    #[cfg(test)]
    run_renders: usize,
}

impl WireCache {
    /// Appends to `out` the comma-prefixed wire elements of `messages` in
    /// `format`, rendering each run with `render`. Settled runs come from the
    /// cache (rendered now if they are new); the open run at the end is
    /// rendered afresh. `messages` must be the conversation this cache belongs
    /// to; `format` must name every setting the rendering depends on.
    pub(crate) fn write(
        &self,
        format: &'static str,
        messages: &[Message],
        out: &mut Vec<u8>,
        render: RenderRun<'_>,
    ) -> serde_json::Result<()> {
        let open = open_run_start(messages);
        {
            let mut entries = self.lock();
            let index = if let Some(index) = entries.iter().position(|entry| entry.format == format) {
                index
            } else {
                if entries.len() == FORMATS {
                    entries.remove(0);
                }
                entries.push(Rendered::new(format));
                entries.len() - 1
            };
            let entry = &mut entries[index];
            if entry.messages > open {
                // Not a later state of the history this entry rendered; start over.
                *entry = Rendered::new(format);
            }
            if entry.messages < open {
                let settled = entry.json.len();
                if let Err(error) = write_runs(messages, entry.messages, open, &mut entry.json, render) {
                    entry.json.truncate(settled);
                    return Err(error);
                }
                #[cfg(test)]
                {
                    entry.run_renders += messages[entry.messages..open].chunk_by(|a, b| a.role == b.role).count();
                }
                entry.messages = open;
            }
            // Room for the rest of the body too (tool definitions), so that it is not copied again.
            out.reserve(entry.json.len() + 4096);
            out.extend_from_slice(&entry.json);
        }
        write_runs(messages, open, messages.len(), out, render)
    }

    /// The entries. A panic while rendering may have left an entry half
    /// written, so a poisoned cache starts empty.
    fn lock(&self) -> MutexGuard<'_, Vec<Rendered>> {
        self.entries.lock().unwrap_or_else(|poisoned| {
            let mut entries = poisoned.into_inner();
            entries.clear();
            self.entries.clear_poison();
            entries
        })
    }

    /// How many leading messages are known to need no flattening for `provider`.
    pub(crate) fn native_prefix(&self, provider: &str) -> usize {
        let native = self.native.lock().unwrap_or_else(PoisonError::into_inner);
        native.iter().find(|(known, _)| **known == *provider).map_or(0, |(_, count)| *count)
    }

    /// Records that the first `count` messages need no flattening for `provider`.
    pub(crate) fn set_native_prefix(&self, provider: &str, count: usize) {
        let mut native = self.native.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = native.iter_mut().find(|(known, _)| **known == *provider) {
            entry.1 = count;
        } else {
            if native.len() == FORMATS {
                native.remove(0);
            }
            native.push((provider.into(), count));
        }
    }

    /// How many runs have been rendered into the cache for `format`, and
    /// how many messages it covers.
    #[cfg(test)]
    pub(crate) fn stats(&self, format: &str) -> Option<(usize, usize)> {
        self.lock().iter().find(|entry| entry.format == format).map(|entry| (entry.run_renders, entry.messages))
    }
}

impl Rendered {
    fn new(format: &'static str) -> Self {
        Self {
            format,
            messages: 0,
            json: Vec::new(),
            #[cfg(test)]
            run_renders: 0,
        }
    }
}

/// Writes the wire elements of every message, none cached: for requests that
/// are not a conversation (or a view of one rewritten for another provider).
pub(crate) fn write_uncached(messages: &[Message], out: &mut Vec<u8>, render: RenderRun<'_>) -> serde_json::Result<()> {
    write_runs(messages, 0, messages.len(), out, render)
}

/// Renders the runs of `messages[from..to]`; `from` must start a run.
fn write_runs(
    messages: &[Message],
    from: usize,
    to: usize,
    out: &mut Vec<u8>,
    render: RenderRun<'_>,
) -> serde_json::Result<()> {
    let mut start = from;
    for run in messages[from..to].chunk_by(|a, b| a.role == b.role) {
        let end = start + run.len();
        render(run, &messages[..end], out)?;
        start = end;
    }
    Ok(())
}

/// Where the last run (the one later messages may still join) starts.
fn open_run_start(messages: &[Message]) -> usize {
    let Some(last) = messages.last() else { return 0 };
    messages.iter().rposition(|message| message.role != last.role).map_or(0, |index| index + 1)
}

/// Starts a JSON array at the end of `out` whose comma-prefixed elements
/// `write` appends, and closes it.
pub(crate) fn write_array(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<()> {
    let start = out.len();
    write(out)?;
    if out.len() == start {
        out.push(b'[');
    } else {
        // The first element's comma opens the array.
        out[start] = b'[';
    }
    out.push(b']');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{WireCache, open_run_start, write_array};
    use crate::conversation::Conversation;
    use crate::message::Message;

    fn render(run: &[Message], _: &[Message], out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.push(b',');
        serde_json::to_writer(out, &run.iter().map(Message::text).collect::<Vec<_>>())
    }

    fn body(cache: Option<&WireCache>, messages: &[Message]) -> String {
        let mut out = Vec::new();
        write_array(&mut out, |out| match cache {
            Some(cache) => cache.write("test", messages, out, &mut render),
            None => super::write_uncached(messages, out, &mut render),
        })
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_open_run_is_the_last_run_of_one_role() {
        assert_eq!(open_run_start(&[]), 0);
        assert_eq!(open_run_start(&[Message::user("a"), Message::user("b")]), 0);
        let history = [Message::user("a"), Message::assistant("b"), Message::user("c"), Message::user("d")];
        assert_eq!(open_run_start(&history), 2);
    }

    #[test]
    fn settled_runs_render_once_and_the_open_run_every_time() {
        let cache = WireCache::default();
        let mut history = vec![Message::user("a")];
        assert_eq!(body(Some(&cache), &history), r#"[["a"]]"#);
        assert_eq!(cache.stats("test"), Some((0, 0)));
        history.push(Message::user("b"));
        history.push(Message::assistant("c"));
        assert_eq!(body(Some(&cache), &history), r#"[["a","b"],["c"]]"#);
        assert_eq!(cache.stats("test"), Some((1, 2)));
        history.push(Message::user("d"));
        for _ in 0..3 {
            assert_eq!(body(Some(&cache), &history), body(None, &history));
        }
        assert_eq!(cache.stats("test"), Some((2, 3)));
        assert_eq!(body(Some(&cache), &[]), "[]");
        // A shorter history is not a later state of this one: rendered afresh.
        assert_eq!(body(Some(&cache), &history[..3]), r#"[["a","b"],["c"]]"#);
        assert_eq!(cache.stats("test"), Some((1, 2)));
    }

    #[test]
    fn the_cache_is_not_part_of_the_conversation_value() {
        let mut conversation = Conversation::new();
        conversation.push_user("a");
        conversation.push(Message::assistant("b"));
        conversation.push_user("c");
        let fresh = Conversation::from(conversation.messages().to_vec());
        assert_eq!(body(Some(conversation.wire_cache()), conversation.messages()), r#"[["a"],["b"],["c"]]"#);
        assert_eq!(conversation.wire_cache().stats("test"), Some((2, 2)));

        assert_eq!(conversation, fresh);
        assert_eq!(format!("{conversation:?}"), format!("Conversation {{ messages: {:?} }}", fresh.messages()));
        let json = serde_json::to_string(&conversation).unwrap();
        assert_eq!(json, serde_json::to_string(&fresh).unwrap());
        assert!(json.starts_with(r#"{"messages":["#));
        let restored: Conversation = serde_json::from_str(&json).unwrap();
        assert_eq!(restored, conversation);
        assert_eq!(restored.wire_cache().stats("test"), None);
        let clone = conversation.clone();
        assert_eq!(clone, conversation);
        assert_eq!(clone.wire_cache().stats("test"), None);
    }
}
