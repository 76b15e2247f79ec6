//! Writing a request body in pieces: the format's fields by serde, the
//! messages from the model's [`BodyCache`](super::body_cache::BodyCache).
//! Every piece is written by `serde_json`, so the bytes are those of
//! serialising the whole request at once.

use serde::Serialize;

/// A request body being written. A format writes its fields before the
/// messages ([`open`](Self::open)), the messages array
/// ([`messages`](Self::messages)) and its fields after them
/// ([`close`](Self::close)), in that order.
#[allow(unreachable_pub)] // named by the sealed `Format`
pub struct Body<'b> {
    out: Vec<u8>,
    /// Appends the comma-prefixed wire elements of the request's messages.
    messages: &'b mut dyn FnMut(&mut Vec<u8>) -> serde_json::Result<()>,
}

impl<'b> Body<'b> {
    pub(crate) fn new(messages: &'b mut dyn FnMut(&mut Vec<u8>) -> serde_json::Result<()>) -> Self {
        Self { out: Vec::new(), messages }
    }

    /// Writes `head`, a struct serialising to a non-empty JSON object, as
    /// the start of the body: its fields without the closing brace.
    pub(crate) fn open(&mut self, head: &impl Serialize) -> serde_json::Result<()> {
        serde_json::to_writer(&mut self.out, head)?;
        self.out.pop();
        Ok(())
    }

    /// Writes `,"<field>":[...]`: `first` when there is one (a system
    /// message), then the request's messages.
    pub(crate) fn messages(&mut self, field: &str, first: Option<&impl Serialize>) -> serde_json::Result<()> {
        self.messages_then(field, first, |_| Ok(()))
    }

    /// [`messages`](Self::messages), then `finish` with the body written up
    /// to the end of the last element (before the array's `]`), for
    /// per-request data that belongs inside the last message (a moving cache
    /// breakpoint): it is written around the reused bytes, never into them.
    /// `finish` is given the body only when the array has an element.
    pub(crate) fn messages_then(
        &mut self,
        field: &str,
        first: Option<&impl Serialize>,
        finish: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
    ) -> serde_json::Result<()> {
        self.out.push(b',');
        serde_json::to_writer(&mut self.out, field)?;
        self.out.push(b':');
        let messages = &mut *self.messages;
        write_array(&mut self.out, |out| {
            let start = out.len();
            if let Some(first) = first {
                write_element(out, first)?;
            }
            messages(out)?;
            if out.len() > start { finish(out) } else { Ok(()) }
        })
    }

    /// Ends the body begun by [`open`](Self::open) with the fields of `tail`.
    pub(crate) fn close(&mut self, tail: &impl Serialize) -> serde_json::Result<()> {
        let start = self.out.len();
        serde_json::to_writer(&mut self.out, tail)?;
        if self.out.len() - start == 2 {
            // `{}`: no fields, only the closing brace.
            self.out.truncate(start + 1);
            self.out[start] = b'}';
        } else {
            self.out[start] = b',';
        }
        Ok(())
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.out
    }
}

/// Writes `value` as an element of an array being written: a comma, then its JSON.
pub(crate) fn write_element(out: &mut Vec<u8>, value: &impl Serialize) -> serde_json::Result<()> {
    out.push(b',');
    serde_json::to_writer(out, value)
}

/// Starts a JSON array at the end of `out` whose comma-prefixed elements
/// `write` appends, and closes it.
fn write_array(
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
    use serde::Serialize;

    use super::Body;

    #[derive(Serialize)]
    struct Head {
        model: &'static str,
    }

    #[derive(Serialize)]
    struct Tail {
        #[serde(skip_serializing_if = "Option::is_none")]
        temperature: Option<f32>,
    }

    fn body(elements: &[u32], first: Option<&str>, temperature: Option<f32>) -> String {
        let mut messages = |out: &mut Vec<u8>| elements.iter().try_for_each(|e| super::write_element(out, e));
        let mut body = Body::new(&mut messages);
        body.open(&Head { model: "m" }).unwrap();
        body.messages("messages", first.as_ref()).unwrap();
        body.close(&Tail { temperature }).unwrap();
        String::from_utf8(body.into_bytes()).unwrap()
    }

    #[test]
    fn pieces_make_one_json_object() {
        assert_eq!(body(&[], None, None), r#"{"model":"m","messages":[]}"#);
        assert_eq!(body(&[1, 2], Some("s"), Some(0.5)), r#"{"model":"m","messages":["s",1,2],"temperature":0.5}"#);
        assert_eq!(body(&[], Some("s"), None), r#"{"model":"m","messages":["s"]}"#);
    }
}
