//! Writing a request body in pieces: the format's fields by serde, the
//! messages from the model's [`BodyCache`](super::body_cache::BodyCache).
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

    /// Writes `head`, a struct serialising to a non-empty JSON object, as
    /// the start of the body: its fields without the closing brace.
    pub(crate) fn open(&mut self, head: &impl Serialize) -> serde_json::Result<()> {
        serde_json::to_writer(&mut self.out.buf, head)?;
        self.out.buf.pop();
        Ok(())
    }

    /// Writes `,"<field>":[...]`: `first` when there is one (a system
    /// message), then the request's messages.
    pub(crate) fn messages(&mut self, field: &str, first: Option<&impl Serialize>) -> serde_json::Result<()> {
        let buf = &mut self.out.buf;
        buf.push(b',');
        serde_json::to_writer(&mut *buf, field)?;
        buf.push(b':');
        self.out.open_array();
        if let Some(first) = first {
            write_element(&mut self.out.buf, first)?;
        }
        (self.messages)(&mut self.out)?;
        self.out.close_array();
        Ok(())
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
            let buf = mem::replace(&mut self.buf, Vec::with_capacity(BUF_CAPACITY));
            self.chunks.push(Bytes::from(buf));
        }
    }

    fn finish(mut self) -> WireBody {
        if !self.buf.is_empty() {
            self.chunks.push(Bytes::from(self.buf));
        }
        WireBody { chunks: self.chunks }
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

    /// The body as one buffer.
    #[cfg(test)]
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
    fn pieces_make_one_json_object() {
        assert_eq!(body(None, "", &[], None), r#"{"model":"m","messages":[]}"#);
        assert_eq!(body(Some("s"), "", &[1, 2], Some(0.5)), r#"{"model":"m","messages":["s",1,2],"temperature":0.5}"#);
        assert_eq!(body(Some("s"), "", &[], None), r#"{"model":"m","messages":["s"]}"#);
        assert_eq!(body(None, ",7,8", &[], None), r#"{"model":"m","messages":[7,8]}"#);
        assert_eq!(body(None, ",7", &[1], None), r#"{"model":"m","messages":[7,1]}"#);
        assert_eq!(body(Some("s"), ",7", &[1], Some(1.0)), r#"{"model":"m","messages":["s",7,1],"temperature":1.0}"#);
    }
}
