//! Callbacks and tools may panic; a run reports the message and goes on.

use std::any::Any;

/// The message of a caught panic.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
