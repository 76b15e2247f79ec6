//! The one seam where a request leaves the process and its answer comes
//! back: a request in ([`Outgoing`]), a status, headers and a body of bytes
//! as they arrive out ([`Incoming`]). Everything else the HTTP core does
//! (retries, error mapping, framing, decoding, timeouts between chunks)
//! happens on either side of it, the same for every wire format.
//!
//! [`Network`] sends over reqwest; a
//! [`Cassette`](crate::testing::Cassette) records what passes through it,
//! or replays what it recorded without sending anything.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use reqwest::header::HeaderMap;

use super::body::WireBody;
use super::error;
use super::format::Framing;
use super::secret::Secret;
use crate::model::{BoxFuture, ModelError};

/// What stands between a model and the network when testing: a
/// [`Cassette`](crate::testing::Cassette) recording or replaying exchanges.
pub(crate) trait Recorder: Send + Sync + fmt::Debug {
    /// Whether it answers from a recording (no network, no key needed).
    fn is_replaying(&self) -> bool;

    /// The transport of one model: `network` behind the recorder, and the
    /// model's `secrets` kept out of anything it writes.
    fn transport(self: Arc<Self>, network: Network, secrets: Vec<Secret>) -> Arc<dyn Transport>;
}

/// A response body, chunk by chunk as it arrives.
pub(crate) type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, ModelError>> + Send>>;

/// One request about to be sent.
pub(crate) struct Outgoing<'a> {
    pub(crate) provider: &'static str,
    pub(crate) url: &'a reqwest::Url,
    /// Every header, the secret ones marked sensitive.
    pub(crate) headers: HeaderMap,
    pub(crate) body: &'a WireBody,
    /// Whether a stream of events was asked for.
    pub(crate) stream: bool,
    /// How a streamed success body is framed (for the wire format).
    pub(crate) framing: Framing,
    /// For a call that is not streamed, the bound on the whole exchange,
    /// body included; a streamed call's wait is bounded by the caller.
    pub(crate) timeout: Duration,
}

/// The answer to one request: its status and headers, the body unread.
pub(crate) struct Incoming {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    /// The length the server announced, if any.
    pub(crate) content_length: Option<u64>,
    pub(crate) body: BodyStream,
}

/// Sends requests. A failure is a transport error (no complete answer),
/// retried when [`ModelError::is_retryable`] says so.
pub(crate) trait Transport: Send + Sync {
    fn send<'a>(&'a self, request: Outgoing<'a>) -> BoxFuture<'a, Result<Incoming, ModelError>>;
}

/// The network, through reqwest.
#[derive(Clone)]
pub(crate) struct Network {
    client: reqwest::Client,
}

impl Network {
    pub(crate) fn new(client: reqwest::Client) -> Self {
        Self { client }
    }
}

impl Transport for Network {
    fn send<'a>(&'a self, request: Outgoing<'a>) -> BoxFuture<'a, Result<Incoming, ModelError>> {
        Box::pin(async move {
            let provider = request.provider;
            // Made whole, not through a `RequestBuilder`: its `headers`
            // would insert the prepared map into an empty one, header by header.
            let mut outgoing = reqwest::Request::new(reqwest::Method::POST, request.url.clone());
            *outgoing.headers_mut() = request.headers;
            *outgoing.body_mut() = Some(request.body.to_http());
            if !request.stream {
                *outgoing.timeout_mut() = Some(request.timeout);
            }
            let mut response = self.client.execute(outgoing).await.map_err(|e| error::transport_error(provider, &e))?;
            let status = response.status().as_u16();
            // Taken, not copied: the body stream does not read them.
            let headers = std::mem::take(response.headers_mut());
            let content_length = response.content_length();
            let body = super::sse::body_bytes(provider, response);
            Ok(Incoming { status, headers, content_length, body: Box::pin(body) })
        })
    }
}
