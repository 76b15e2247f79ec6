//! What the one-pass readers of Anthropic's JSON share (a response's
//! content blocks, `output_block.rs`; stream events and deltas,
//! `stream/one_pass.rs`): names read without copying them, and a field
//! read at most once.

use std::fmt;

use serde::de::{self, Visitor};

/// Reads a string (a key, or a `type`) as one of a few names, without
/// copying it: `deserializer.deserialize_identifier(Name(|name| ...))`.
pub(super) struct Name<T>(pub(super) fn(&str) -> T);

impl<T> Visitor<'_> for Name<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<T, E> {
        Ok((self.0)(name))
    }
}

/// Fills `slot` with the value of field `name`, which must not have come before.
pub(super) fn put<T, E: de::Error>(slot: &mut Option<T>, value: T, name: &'static str) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(name));
    }
    *slot = Some(value);
    Ok(())
}
