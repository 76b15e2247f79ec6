//! The events of one streamed model call, as one stream polled in place.
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
use super::model::{HttpModel, Shared};
use super::trace::CallTrace;
use crate::model::{BoxFuture, ModelError, ModelRequest, ResponseAccumulator, StreamEvent};

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

/// What [`HttpModel::stream`] returns: the call opened on first poll (with
/// retries, in the call's span), then its events, each seen by the trace
/// (and, for a format that remembers answers, collected beside the
/// consumer); a failure is the last item.
pub(super) struct CallEvents<'a, W: WireFormat> {
    pub(super) model: &'a HttpModel<W>,
    pub(super) request: ModelRequest<'a>,
    /// Until the call is open.
    pub(super) opening: Option<BoxFuture<'a, Result<Opened<W>, ModelError>>>,
    pub(super) events: Option<Opened<W>>,
    pub(super) trace: CallTrace,
    /// The response so far, when the format remembers answers.
    pub(super) answer: Option<ResponseAccumulator>,
    /// After a failure or the end.
    pub(super) ended: bool,
}

impl<W: WireFormat> Stream for CallEvents<'_, W> {
    type Item = Result<StreamEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        let item = if let Some(opening) = this.opening.as_mut() {
            let opened = ready!(opening.as_mut().poll(cx));
            this.opening = None;
            match opened {
                Ok(opened) => this.events.insert(opened).poll_next_unpin(cx),
                Err(error) => Poll::Ready(Some(Err(error))),
            }
        } else if let Some(events) = this.events.as_mut() {
            events.poll_next_unpin(cx)
        } else {
            Poll::Ready(None)
        };
        let Some(item) = ready!(item) else {
            this.ended = true;
            this.events = None;
            return Poll::Ready(None);
        };
        if item.is_err() {
            this.ended = true;
            this.events = None;
        }
        this.trace.observe(&item);
        if let (Ok(event), Some(collected)) = (&item, this.answer.as_mut()) {
            if collected.push(event).is_err() {
                this.answer = None;
            } else if collected.is_finished()
                && let Some(Ok(response)) = this.answer.take().map(ResponseAccumulator::finish)
            {
                let model = this.model;
                model.shared.format.answered(model.call_settings(&this.request, true), &this.request, &response);
            }
        }
        Poll::Ready(Some(item))
    }
}
