//! Whether message content goes into spans: off unless asked for.

use std::sync::atomic::{AtomicU8, Ordering};

/// The environment variable other GenAI instrumentations read for the same switch.
const ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

const UNSET: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;

static CAPTURE: AtomicU8 = AtomicU8::new(UNSET);

/// Turns recording of message content into spans on or off, for the whole
/// process. Off by default (unless `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).
///
/// With it on, `chat` spans carry `gen_ai.system_instructions`,
/// `gen_ai.input.messages`, `gen_ai.output.messages` and
/// `gen_ai.tool.definitions`, and `execute_tool` spans carry
/// `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`, as JSON
/// strings in the conventions' shape.
pub fn set_capture_content(on: bool) {
    CAPTURE.store(if on { ON } else { OFF }, Ordering::Relaxed);
}

/// Whether message content is recorded into spans (see [`set_capture_content`]).
pub fn capture_content() -> bool {
    match CAPTURE.load(Ordering::Relaxed) {
        UNSET => {
            let on = std::env::var(ENV).is_ok_and(|value| value.eq_ignore_ascii_case("true"));
            // Another thread may have set it meanwhile: its choice wins.
            let _ = CAPTURE.compare_exchange(UNSET, if on { ON } else { OFF }, Ordering::Relaxed, Ordering::Relaxed);
            CAPTURE.load(Ordering::Relaxed) == ON
        }
        state => state == ON,
    }
}
