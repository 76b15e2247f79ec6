//! Writing a request body in pieces: the format's fields by serde, the
//! messages from the run's [`BodyCache`](crate::model::BodyCache).
//! Every piece is written by `serde_json`, so the bytes are those of
//! serialising the whole request at once. The messages the cache already
//! holds are not copied into the body: the body is a list of chunks, some
//! of them shared with the cache, sent as they are.

use std::convert::Infallible;
use std::mem;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use serde::Serialize;

/// A request body being written. A format writes its fields before the
/// messages ([`open`](Self::open)), the messages array
/// ([`messages`](Self::messages)) and its fields after them
/// ([`close`](Self::close)), in that order.
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct Body<'b> {
    out: BodyOut,
    /// Appends the comma-prefixed wire elements of the request's messages.
    messages: &'b mut dyn FnMut(&mut BodyOut) -> serde_json::Result<()>,
}

impl<'b> Body<'b> {
    pub(crate) fn new(messages: &'b mut dyn FnMut(&mut BodyOut) -> serde_json::Result<()>) -> Self {
        Self { out: BodyOut { chunks: Vec::new(), buf: Vec::with_capacity(BUF_CAPACITY), array_start: None }, messages }
    }

    /// Writes `head`, a struct serialising to a JSON object, as the start of
    /// the body: its fields without the closing brace.
    pub(crate) fn open(&mut self, head: &impl Serialize) -> serde_json::Result<()> {
        serde_json::to_writer(&mut self.out.buf, head)?;
        self.out.buf.pop();
        Ok(())
    }

    /// Writes `,"<field>":[...]`: `first` when there is one (a system
    /// message), then the request's messages.
    pub(crate) fn messages(&mut self, field: &str, first: Option<&impl Serialize>) -> serde_json::Result<()> {
        self.messages_then(field, first, |_| Ok(()))
    }

    /// [`messages`](Self::messages), then `finish` with the fresh bytes of
    /// the body written up to the end of the last element (before the
    /// array's `]`), for per-request data that belongs inside the last
    /// message (a moving cache breakpoint): it is written around the bytes
    /// shared with the cache, never into them. `finish` is given only bytes
    /// written for this request (the open run the last message is in), so
    /// it is not called when the array ended with a shared chunk or is empty.
    pub(crate) fn messages_then(
        &mut self,
        field: &str,
        first: Option<&impl Serialize>,
        finish: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
    ) -> serde_json::Result<()> {
        let buf = &mut self.out.buf;
        // After a head with no fields, the array is the body's first field.
        if buf.last() != Some(&b'{') {
            buf.push(b',');
        }
        serde_json::to_writer(&mut *buf, field)?;
        buf.push(b':');
        self.out.open_array();
        let fresh_from = self.out.buf.len();
        if let Some(first) = first {
            write_element(&mut self.out.buf, first)?;
        }
        let chunks = self.out.chunks.len();
        (self.messages)(&mut self.out)?;
        // After a shared chunk, `buf` holds only what was rendered after it.
        let fresh_start = if self.out.chunks.len() == chunks { fresh_from } else { 0 };
        if self.out.buf.len() > fresh_start {
            finish(&mut self.out.buf)?;
        }
        self.out.close_array();
        Ok(())
    }

    /// Inserts `bytes` `from_end` bytes before the end of what is written so
    /// far, if the body there goes on with `expect`; returns whether it did.
    /// For per-request data that belongs inside an earlier message (a cache
    /// breakpoint where the previous call had its last one): a chunk shared
    /// with the cache is split around the insertion (slicing copies
    /// nothing), so the cached bytes never change.
    pub(crate) fn insert_back(&mut self, from_end: usize, expect: &[u8], bytes: &[u8]) -> bool {
        self.out.insert_back(from_end, expect, bytes)
    }

    /// Ends the body begun by [`open`](Self::open) with the fields of `tail`.
    pub(crate) fn close(&mut self, tail: &impl Serialize) -> serde_json::Result<()> {
        let buf = &mut self.out.buf;
        let start = buf.len();
        serde_json::to_writer(&mut *buf, tail)?;
        if buf.len() - start == 2 {
            // `{}`: no fields, only the closing brace.
            buf.truncate(start + 1);
            buf[start] = b'}';
        } else {
            buf[start] = b',';
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> WireBody {
        self.out.finish()
    }
}

/// Room for the fresh bytes of a body (its head, or the open run and the
/// tool definitions after the cached messages) before they must be moved.
const BUF_CAPACITY: usize = 4096;

/// Where a body is written: fresh bytes into a buffer, and chunks shared
/// with the body cache between them.
pub(crate) struct BodyOut {
    chunks: Vec<Bytes>,
    buf: Vec<u8>,
    /// Where the open array's first element starts in `buf`, until it is
    /// known: its leading comma becomes the `[` that opens the array.
    array_start: Option<usize>,
}

impl BodyOut {
    /// The buffer fresh bytes are written to.
    pub(crate) fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Appends `chunk`, comma-prefixed array elements, without copying it.
    pub(crate) fn push_shared(&mut self, chunk: Bytes) {
        if chunk.is_empty() {
            return;
        }
        self.settle_first_element();
        let chunk = if self.array_start.take().is_some() {
            // The chunk starts the array: its comma is left out, `[` written before it.
            self.buf.push(b'[');
            chunk.slice(1..)
        } else {
            chunk
        };
        self.freeze();
        self.chunks.push(chunk);
    }

    /// See [`Body::insert_back`].
    fn insert_back(&mut self, from_end: usize, expect: &[u8], bytes: &[u8]) -> bool {
        let chunked: usize = self.chunks.iter().map(Bytes::len).sum();
        let Some(at) = (chunked + self.buf.len()).checked_sub(from_end) else { return false };
        // The pieces of the body in order (the chunks, then the buffer) and where `at` falls.
        let piece = |index: usize| -> &[u8] { self.chunks.get(index).map_or(&self.buf, |chunk| chunk) };
        let (mut index, mut offset) = (0, at);
        while index < self.chunks.len() && offset >= self.chunks[index].len() {
            offset -= self.chunks[index].len();
            index += 1;
        }
        let (mut checked, mut from) = (0, offset);
        for next in index..=self.chunks.len() {
            let available = &piece(next)[from.min(piece(next).len())..];
            let take = available.len().min(expect.len() - checked);
            if available[..take] != expect[checked..checked + take] {
                return false;
            }
            checked += take;
            from = 0;
            if checked == expect.len() {
                break;
            }
        }
        if checked < expect.len() {
            return false;
        }
        if index == self.chunks.len() {
            self.buf.splice(offset..offset, bytes.iter().copied());
        } else {
            let chunk = self.chunks[index].clone();
            let pieces = [chunk.slice(..offset), Bytes::copy_from_slice(bytes), chunk.slice(offset..)];
            self.chunks.splice(index..=index, pieces.into_iter().filter(|piece| !piece.is_empty()));
        }
        true
    }

    fn open_array(&mut self) {
        self.array_start = Some(self.buf.len());
    }

    /// Turns the comma of the open array's first element into `[` once that
    /// element is in `buf`.
    fn settle_first_element(&mut self) {
        if let Some(start) = self.array_start
            && self.buf.len() > start
        {
            self.buf[start] = b'[';
            self.array_start = None;
        }
    }

    fn close_array(&mut self) {
        self.settle_first_element();
        if self.array_start.take().is_some() {
            self.buf.push(b'[');
        }
        self.buf.push(b']');
    }

    fn freeze(&mut self) {
        if !self.buf.is_empty() {
            let chunk = take_chunk(&mut self.buf);
            self.chunks.push(chunk);
        }
    }

    fn finish(mut self) -> WireBody {
        if !self.buf.is_empty() {
            let chunk = if mostly_full(&self.buf) { Bytes::from(self.buf) } else { Bytes::copy_from_slice(&self.buf) };
            self.chunks.push(chunk);
        }
        WireBody { chunks: self.chunks }
    }
}

/// Whether `buf` is worth sending as it is rather than copied out (see [`take_chunk`]).
fn mostly_full(buf: &Vec<u8>) -> bool {
    buf.len() * 2 >= buf.capacity()
}

/// The bytes of `buf` as a chunk to send, `buf` left empty to write on. A
/// chunk holds on to its allocation until the request is answered: a few
/// hundred fresh bytes (a body's head, the open run, the tool definitions)
/// are copied out rather than keeping a 4 KiB buffer alive per request in
/// flight; a buffer that is mostly full is handed over as it is.
fn take_chunk(buf: &mut Vec<u8>) -> Bytes {
    if mostly_full(buf) {
        Bytes::from(mem::replace(buf, Vec::with_capacity(BUF_CAPACITY)))
    } else {
        let chunk = Bytes::copy_from_slice(buf);
        buf.clear();
        chunk
    }
}

/// A finished request body: chunks to send one after the other. Cloning it
/// (for a retry) copies no bytes.
#[derive(Clone, Debug)]
pub(crate) struct WireBody {
    chunks: Vec<Bytes>,
}

impl WireBody {
    /// The body for one HTTP attempt.
    pub(crate) fn to_http(&self) -> reqwest::Body {
        let remaining = self.chunks.iter().map(|chunk| chunk.len() as u64).sum();
        reqwest::Body::wrap(Chunks { chunks: self.chunks.clone().into_iter(), remaining })
    }

    /// How many bytes the body has.
    pub(crate) fn len(&self) -> usize {
        self.chunks.iter().map(Bytes::len).sum()
    }

    /// The body as one buffer (tests and the opt-in trace dump).
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        self.chunks.concat()
    }
}

/// The chunks of a body as an `http_body::Body` of known length, so that it
/// is sent with a `content-length`.
struct Chunks {
    chunks: std::vec::IntoIter<Bytes>,
    remaining: u64,
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        Poll::Ready(this.chunks.next().map(|chunk| {
            this.remaining -= chunk.len() as u64;
            Ok(Frame::data(chunk))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

/// Writes `value` as an element of an array being written: a comma, then its JSON.
pub(crate) fn write_element(out: &mut Vec<u8>, value: &impl Serialize) -> serde_json::Result<()> {
    out.push(b',');
    serde_json::to_writer(out, value)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use serde::Serialize;

    use super::{Body, BodyOut};

    #[derive(Serialize)]
    struct Head {
        model: &'static str,
    }

    #[derive(Serialize)]
    struct Tail {
        #[serde(skip_serializing_if = "Option::is_none")]
        temperature: Option<f32>,
    }

    /// A body whose messages are `shared` (comma-prefixed elements, from the
    /// cache) then `fresh`.
    fn body(first: Option<&str>, shared: &str, fresh: &[u32], temperature: Option<f32>) -> String {
        let mut messages = |out: &mut BodyOut| {
            out.push_shared(Bytes::copy_from_slice(shared.as_bytes()));
            fresh.iter().try_for_each(|element| super::write_element(out.buf(), element))
        };
        let mut body = Body::new(&mut messages);
        body.open(&Head { model: "m" }).unwrap();
        body.messages("messages", first.as_ref()).unwrap();
        body.close(&Tail { temperature }).unwrap();
        String::from_utf8(body.finish().to_vec()).unwrap()
    }

    #[test]
    fn insertions_land_in_shared_chunks_without_changing_them() {
        let shared = Bytes::from_static(b",{\"a\":1},{\"b\":2}");
        let mut messages = |out: &mut BodyOut| {
            out.push_shared(shared.clone());
            super::write_element(out.buf(), &3)
        };
        let mut body = Body::new(&mut messages);
        body.open(&Head { model: "m" }).unwrap();
        body.messages("messages", None::<&()>).unwrap();
        // Before the `}` of {"a":1}: 12 bytes from the end (`},{"b":2},3]`).
        assert!(!body.insert_back(12, b"},{\"a\"", b",\"x\":0"), "the body does not go on that way there");
        assert!(!body.insert_back(1000, b"}", b"!"));
        assert!(body.insert_back(12, b"},{\"b\"", b",\"x\":0"));
        assert!(body.insert_back(1, b"]", b",4"));
        body.close(&Tail { temperature: None }).unwrap();
        let text = String::from_utf8(body.finish().to_vec()).unwrap();
        assert_eq!(text, r#"{"model":"m","messages":[{"a":1,"x":0},{"b":2},3,4]}"#);
        assert_eq!(&shared[..], b",{\"a\":1},{\"b\":2}", "the shared bytes are unchanged");
    }

    #[test]
    fn pieces_make_one_json_object() {
        assert_eq!(body(None, "", &[], None), r#"{"model":"m","messages":[]}"#);
        assert_eq!(body(Some("s"), "", &[1, 2], Some(0.5)), r#"{"model":"m","messages":["s",1,2],"temperature":0.5}"#);
        assert_eq!(body(Some("s"), "", &[], None), r#"{"model":"m","messages":["s"]}"#);
        assert_eq!(body(None, ",7,8", &[], None), r#"{"model":"m","messages":[7,8]}"#);
        assert_eq!(body(None, ",7", &[1], None), r#"{"model":"m","messages":[7,1]}"#);
        assert_eq!(body(Some("s"), ",7", &[1], Some(1.0)), r#"{"model":"m","messages":["s",7,1],"temperature":1.0}"#);
    }

    #[test]
    fn a_head_without_fields_makes_the_messages_the_first_field() {
        #[derive(Serialize)]
        struct Empty {}
        let mut messages = |out: &mut BodyOut| super::write_element(out.buf(), &1);
        let mut body = Body::new(&mut messages);
        body.open(&Empty {}).unwrap();
        body.messages("contents", None::<&()>).unwrap();
        body.close(&Tail { temperature: None }).unwrap();
        assert_eq!(String::from_utf8(body.finish().to_vec()).unwrap(), r#"{"contents":[1]}"#);
    }
}
