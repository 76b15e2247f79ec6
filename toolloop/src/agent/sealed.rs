//! Keeps the builder's type-state traits to this crate's types: they are
//! how configurations are checked, not extension points.

/// Implemented only inside this crate.
#[allow(unreachable_pub)] // nameable by no one outside: that is the point
pub trait Sealed {}
