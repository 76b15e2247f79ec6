//! # What the loop costs
//!
//! The loop's own cost is small beside a model call (hundreds of
//! milliseconds). The repository's `BENCHMARKS.md` (section 9) measures it
//! from outside: release binaries running many conversations of an agent
//! with one tool against a local stub, beside a hand-written `reqwest` +
//! `serde_json` loop doing the same work.
//!
//! - **Instructions per model call** (`cargo bench -p toolloop --bench
//!   whole_process -- --instructions`, callgrind): toolloop runs fewer than
//!   the bare loop at every conversation length — 0.78–0.84x at 1 and 10
//!   calls, 0.22–0.25x at 200, where the bare loop re-sends its whole
//!   history — with no fixed cost per run beyond the bare loop's.
//! - **Whole-process CPU time per model call** (`cargo bench -p toolloop
//!   --bench whole_process -- --calls 10000`, on a 2-core VM, medians of
//!   idle runs and paired `farm-bench` rounds): 0.94–1.07x at 1 call,
//!   1.03–1.11x (Anthropic) and 1.08–1.18x (OpenAI) at 10 calls one at a
//!   time, 0.92–1.06x at 50, 0.68–0.86x at 200, 0.90–1.11x with 50
//!   conversations in flight and 0.70–0.80x with 1,000; at 10 calls one
//!   at a time 0.88–1.05x when the machine is busy. No fixed CPU per run beyond the bare loop's. An
//!   idle machine doubles either loop's CPU per call: every call waits
//!   for its answer, the CPU halts and wakes with cold caches, and a call
//!   pays for each line of code and data it touches (toolloop ~40% more
//!   lines of code than the bare loop, for fewer instructions) rather
//!   than for its instructions.
//! - **Memory at 1,000 conversations in flight** (`-- --memory`): toolloop
//!   46.1–49.5 KiB each (OpenAI and Anthropic), the bare loop 61.5–68.2 KiB;
//!   most of either is the HTTP connections. While other calls of a model
//!   are in flight, a call yields once to the runtime after its response,
//!   so that its connection is back in the pool before the conversation's
//!   next request (otherwise a loop whose tools answer at once opens about
//!   two connections per conversation).
//! - **Streamed runs, per SSE event** (`-- --streamed`): 0.74–0.78x a bare
//!   `bytes_stream()` + `eventsource-stream` loop in instructions (toolloop
//!   parses server-sent events in one pass and lends each event to the
//!   decoder, which reads Anthropic's events in one pass too); in CPU time
//!   0.96–0.99x (Anthropic) and 1.03–1.13x (OpenAI).
//!
//! The tables, the conditions and the other measurements (definitions built
//! once per type, compile time of 50 derived tools, dependency weight,
//! tracing, prompt caching, Gemini, the Restate journal) are in
//! `BENCHMARKS.md`, each with its command. `CONTRIBUTING.md` says when to
//! run them.
