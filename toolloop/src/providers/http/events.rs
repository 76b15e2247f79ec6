//! The events of one opened streamed model call, as one stream polled in place
//! (the call that opens it is [`HttpModel::stream`](super::HttpModel)'s `CallEvents`).
//!
//! A streamed call's events pass through every layer for every event (the
//! body is read an event at a time as the server writes them): opening the
//! call, the events held back until content, the prompt check on the usage,
//! the failure that ends the stream, the trace, the record of the answer.
//! Written as stream combinators (`once` + `flat_map`, `chain`, `map`,
//! `scan`, `inspect`, each behind its own box), each event was moved
//! through all of them; here they are two plain structs.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use futures_util::{Stream, StreamExt as _};

use super::decoder::{DecodedFrames, FrameSource};
use super::format::WireFormat;
use super::shared::Shared;
use crate::model::{ModelError, StreamEvent};

/// The frames of a streamed body (SSE events or NDJSON lines).
pub(super) type Frames = Box<dyn FrameSource>;

/// An opened streamed call: the events held back until its first content,
/// then the rest as decoded, the prompt checked when the usage comes (a
/// truncated prompt fails the call instead of being answered, as for a
/// whole response).
pub(super) struct Opened<W: WireFormat> {
    pub(super) held: VecDeque<StreamEvent>,
    pub(super) events: DecodedFrames<Frames, W::Decoder>,
    pub(super) shared: Arc<Shared<W>>,
    /// The request body's size, for the prompt check.
    pub(super) body_bytes: usize,
}

impl<W: WireFormat> Stream for Opened<W> {
    type Item = Result<StreamEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(event) = this.held.pop_front() {
            return Poll::Ready(Some(Ok(event)));
        }
        Poll::Ready(match ready!(this.events.poll_next_unpin(cx)) {
            Some(Ok(StreamEvent::Usage(usage))) => Some(
                this.shared
                    .format
                    .check_prompt(usage.input_tokens, this.body_bytes)
                    .map(|()| StreamEvent::Usage(usage)),
            ),
            other => other,
        })
    }
}
