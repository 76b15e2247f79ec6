//! What the reasoning fakes share: a stable keyed hash and a rejection.

use serde_json::Value;

use crate::Reply;

/// A request the fake API rejects: the status and the API's error body.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    /// The HTTP status (400 for every rule here).
    pub status: u16,
    /// The error body, in the API's shape.
    pub body: Value,
}

impl Rejection {
    /// The error message of the body, wherever the API's shape puts it.
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or_default()
    }

    /// The rejection as a scripted reply.
    pub fn reply(&self) -> Reply {
        Reply::json(self.status, &self.body)
    }
}

/// FNV-1a over `parts` with `key` mixed in first: stable across runs and
/// platforms, which `std`'s hasher does not promise. Parts are separated so
/// that `("ab", "c")` and `("a", "bc")` differ.
pub(crate) fn keyed_hash(key: u64, parts: &[&[u8]]) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ key;
    for part in parts {
        for byte in part.iter().chain(&[0xff]) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    hash
}
