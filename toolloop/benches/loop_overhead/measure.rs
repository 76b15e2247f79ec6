//! Process CPU time and memory, read without unsafe code.

use std::time::Duration;

/// CPU time (user + system) this process has used so far.
pub(crate) fn cpu_time() -> Duration {
    cpu_time::ProcessTime::now().as_duration()
}

/// Peak resident memory of this process (`VmHWM`), in bytes.
pub(crate) fn peak_memory() -> u64 {
    status_kib("VmHWM:") * 1024
}

/// Current resident memory of this process (`VmRSS`), in bytes.
pub(crate) fn current_memory() -> u64 {
    status_kib("VmRSS:") * 1024
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

thread_local! {
    static STAMPS: std::cell::RefCell<Option<Vec<Duration>>> = const { std::cell::RefCell::new(None) };
}

/// Starts recording [`stamp`]s on this thread.
pub(crate) fn record_stamps() {
    STAMPS.with(|stamps| *stamps.borrow_mut() = Some(Vec::new()));
}

/// Records the CPU time now, when recording; called as each model request starts.
pub(crate) fn stamp() {
    STAMPS.with(|stamps| {
        if let Some(stamps) = stamps.borrow_mut().as_mut() {
            stamps.push(cpu_time());
        }
    });
}

/// Stops recording and returns the CPU time spent between consecutive stamps:
/// element `i` is what model call `i` cost the client, from building its
/// request to building the next one.
pub(crate) fn take_intervals() -> Vec<Duration> {
    let stamps = STAMPS.with(|stamps| stamps.borrow_mut().take()).unwrap_or_default();
    stamps.windows(2).map(|pair| pair[1].saturating_sub(pair[0])).collect()
}
