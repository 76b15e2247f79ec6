//! The OpenAI Responses API (`POST {base}/responses`) as a wire format
//! (`OpenAiResponsesApi`, driven by the HTTP model core as
//! [`OpenAiResponses`](crate::providers::openai::OpenAiResponses)), with
//! pure functions from a request to a body ([`convert::render`]) and from a
//! body to a [`ModelResponse`](crate::ModelResponse) ([`convert::parse`]),
//! which the streaming decoder compares itself to.
//!
//! Stateless by default: `store: false`, the whole input every call, and
//! `include: ["reasoning.encrypted_content"]` so that each reasoning item
//! comes back encrypted and is sent again, byte for byte, directly before
//! the items that followed it. Function calls and their outputs pair by
//! `call_id`. With
//! [`chain_responses`](crate::providers::HttpModelBuilder::chain_responses)
//! responses are stored (`store: true`) and continued with
//! `previous_response_id`, sending only the new items (`chain`).
//!
//! Item ids of messages and function calls are not kept: the API takes them
//! as optional, and stateless requests need only the reasoning items' ids
//! and encrypted content.

mod chain;
pub(crate) mod convert;
mod format;
mod reasoning;
mod stream;
mod wire;

pub(crate) use format::OpenAiResponsesApi;

/// The provider name, as [`Model::provider`](crate::Model::provider) returns
/// it: reasoning items and tool calls made here go back only here.
pub(crate) const PROVIDER: &str = "openai-responses";
/// The path requests go to, after the base URL (`https://api.openai.com/v1`).
pub(crate) const ENDPOINT_PATH: &str = "/responses";
