//! Newline-delimited JSON bodies (Ollama): one frame per line.

use std::collections::VecDeque;

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};

use super::decoder::Frame;
use crate::model::{ModelError, ModelErrorKind};

/// The longest line accepted by default: far beyond any real chunk, small
/// enough that a server that never sends a newline cannot fill memory.
pub(crate) const MAX_LINE_BYTES: usize = 16 << 20;

/// Splits bytes into lines, however the bytes were cut into chunks. Lines
/// end with `\n` (a `\r` before it is dropped); blank lines are skipped.
#[derive(Debug)]
pub(crate) struct LineSplitter {
    provider: &'static str,
    partial: Vec<u8>,
    max_line: usize,
}

impl LineSplitter {
    pub(crate) fn new(provider: &'static str, max_line: usize) -> Self {
        Self { provider, partial: Vec::new(), max_line }
    }

    /// Adds `chunk`, appending the lines it completes to `out`.
    pub(crate) fn push(&mut self, mut chunk: &[u8], out: &mut VecDeque<String>) -> Result<(), ModelError> {
        while let Some(end) = chunk.iter().position(|&byte| byte == b'\n') {
            self.check(end)?;
            self.partial.extend_from_slice(&chunk[..end]);
            let line = std::mem::take(&mut self.partial);
            self.emit(line, out)?;
            chunk = &chunk[end + 1..];
        }
        self.check(chunk.len())?;
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// The last line, when the body did not end with a newline.
    pub(crate) fn finish(&mut self, out: &mut VecDeque<String>) -> Result<(), ModelError> {
        let line = std::mem::take(&mut self.partial);
        self.emit(line, out)
    }

    fn check(&self, more: usize) -> Result<(), ModelError> {
        if self.partial.len() + more > self.max_line {
            return Err(ModelError::new(
                ModelErrorKind::MalformedResponse,
                self.provider,
                format!("a line of the response exceeded {} bytes", self.max_line),
            ));
        }
        Ok(())
    }

    fn emit(&self, mut line: Vec<u8>, out: &mut VecDeque<String>) -> Result<(), ModelError> {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let line = String::from_utf8(line).map_err(|error| {
            ModelError::new(
                ModelErrorKind::MalformedResponse,
                self.provider,
                format!("a line of the response is not UTF-8: {error}"),
            )
        })?;
        out.push_back(line);
        Ok(())
    }
}

/// The lines of an NDJSON body as frames (without event names). Callers
/// stop at the first error.
pub(crate) fn ndjson_frames<S>(
    provider: &'static str,
    bytes: S,
    max_line: usize,
) -> impl Stream<Item = Result<Frame, ModelError>> + Send
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send + Unpin,
{
    struct State<S> {
        bytes: S,
        splitter: LineSplitter,
        lines: VecDeque<String>,
        ended: bool,
    }

    let state = State { bytes, splitter: LineSplitter::new(provider, max_line), lines: VecDeque::new(), ended: false };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(data) = state.lines.pop_front() {
                return Some((Ok(Frame { event: None, data }), state));
            }
            if state.ended {
                return None;
            }
            let result = match state.bytes.next().await {
                Some(Ok(chunk)) => state.splitter.push(&chunk, &mut state.lines),
                Some(Err(error)) => Err(error),
                None => {
                    state.ended = true;
                    state.splitter.finish(&mut state.lines)
                }
            };
            if let Err(error) = result {
                state.lines.clear();
                state.ended = true;
                return Some((Err(error), state));
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use bytes::Bytes;
    use futures_util::{StreamExt as _, stream};

    use super::{LineSplitter, ndjson_frames};
    use crate::model::{ModelError, ModelErrorKind};

    #[test]
    fn lines_survive_any_split_and_blank_lines_are_skipped() {
        let body = "{\"a\":\"\u{e9}\"}\r\n\n{\"b\":2}\n  \n{\"c\":3}";
        let bytes = body.as_bytes();
        for cut in 0..=bytes.len() {
            let mut splitter = LineSplitter::new("test", 1 << 10);
            let mut lines = VecDeque::new();
            splitter.push(&bytes[..cut], &mut lines).unwrap();
            splitter.push(&bytes[cut..], &mut lines).unwrap();
            splitter.finish(&mut lines).unwrap();
            assert_eq!(lines, ["{\"a\":\"\u{e9}\"}", "{\"b\":2}", "{\"c\":3}"], "split at {cut}");
        }
    }

    #[test]
    fn a_line_longer_than_the_bound_fails() {
        const { assert!(super::MAX_LINE_BYTES >= 1 << 20) };
        let mut splitter = LineSplitter::new("test", 8);
        let mut lines = VecDeque::new();
        splitter.push(b"12345678\n1234", &mut lines).unwrap();
        assert_eq!(lines, ["12345678"]);
        let error = splitter.push(b"56789", &mut lines).unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
        let error = LineSplitter::new("test", 2).push(b"\xff\xfe\n", &mut lines).unwrap_err();
        assert!(error.message().contains("not UTF-8"), "{error}");
    }

    #[tokio::test]
    async fn frames_end_at_the_first_error() {
        let chunks = vec![
            Ok(Bytes::from_static(b"{\"a\":1}\n{\"b\"")),
            Ok(Bytes::from_static(b":2}\n")),
            Err(ModelError::new(ModelErrorKind::Connection, "test", "reset")),
            Ok(Bytes::from_static(b"{\"never\":0}\n")),
        ];
        let frames: Vec<_> = ndjson_frames("test", stream::iter(chunks), 1 << 10).collect().await;
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[0].as_ref().unwrap().data, "{\"a\":1}");
        assert_eq!(frames[1].as_ref().unwrap().data, "{\"b\":2}");
        assert_eq!(frames[2].as_ref().unwrap_err().kind(), ModelErrorKind::Connection);
    }
}
