//! Newline-delimited JSON bodies (Ollama): one frame per line.

use std::collections::VecDeque;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};

use super::decoder::{Frame, FrameSource};
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
pub(crate) fn ndjson_frames<S>(provider: &'static str, bytes: S, max_line: usize) -> NdjsonFrames<S>
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send + Unpin,
{
    NdjsonFrames {
        bytes,
        splitter: LineSplitter::new(provider, max_line),
        lines: VecDeque::new(),
        current: String::new(),
        ended: false,
    }
}

/// The frames [`ndjson_frames`] makes.
pub(crate) struct NdjsonFrames<S> {
    bytes: S,
    splitter: LineSplitter,
    lines: VecDeque<String>,
    /// The line lent out last.
    current: String,
    ended: bool,
}

impl<S> FrameSource for NdjsonFrames<S>
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send + Unpin,
{
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<'_>, ModelError>>> {
        loop {
            if let Some(line) = self.lines.pop_front() {
                self.current = line;
                return Poll::Ready(Some(Ok(Frame { event: None, data: &self.current })));
            }
            if self.ended {
                return Poll::Ready(None);
            }
            let result = match ready!(self.bytes.poll_next_unpin(cx)) {
                Some(Ok(chunk)) => self.splitter.push(&chunk, &mut self.lines),
                Some(Err(error)) => Err(error),
                None => {
                    self.ended = true;
                    self.splitter.finish(&mut self.lines)
                }
            };
            if let Err(error) = result {
                self.lines.clear();
                self.ended = true;
                return Poll::Ready(Some(Err(error)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use bytes::Bytes;
    use futures_util::stream;

    use super::{LineSplitter, ndjson_frames};
    use crate::model::{ModelError, ModelErrorKind};
    use crate::providers::http::decoder::testing::frames;

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
        let frames = frames(ndjson_frames("test", stream::iter(chunks), 1 << 10)).await;
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[0].as_ref().unwrap(), &(None, "{\"a\":1}".to_owned()));
        assert_eq!(frames[1].as_ref().unwrap(), &(None, "{\"b\":2}".to_owned()));
        assert_eq!(frames[2].as_ref().unwrap_err().kind(), ModelErrorKind::Connection);
    }
}
