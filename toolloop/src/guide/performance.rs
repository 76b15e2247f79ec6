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
//!   the bare loop at every conversation length — 0.77–0.83x at 1 and 10
//!   calls, 0.22–0.24x at 200, where the bare loop re-sends its whole
//!   history — with no fixed cost per run beyond the bare loop's.
//! - **Whole-process CPU time per model call** (`cargo bench -p toolloop
//!   --bench whole_process -- --calls 10000`, on an idle 2-core VM,
//!   medians of runs and of paired `farm-bench` rounds): 0.98–1.00x at 1
//!   call, 1.01–1.07x (Anthropic) and 1.02–1.09x (OpenAI) at 10 calls one
//!   at a time, 0.93–0.97x at 50, 0.68–0.73x at 200, 0.93–1.05x with 50
//!   conversations in flight and 0.77–0.80x with 1,000. No fixed CPU per
//!   run beyond the bare loop's. An idle machine doubles either loop's CPU
//!   per call: every call waits for its answer, the CPU halts and wakes
//!   with cold caches, and a call pays for each line of code and data it
//!   touches (toolloop ~40% more lines of code than the bare loop, for
//!   fewer instructions) rather than for its instructions.
//! - **Memory at 1,000 conversations in flight** (`-- --memory`): toolloop
//!   44.9–46.9 KiB each (Anthropic and OpenAI), the bare loop 64.0–66.4 KiB;
//!   most of either is the HTTP connections. A run keeps the wire bytes of
//!   the messages it has sent, for its later requests, and drops them when
//!   it ends: a process holds nothing for finished conversations. While
//!   other calls of a model are in flight, a call yields once to the
//!   runtime after its response, so that its connection is back in the
//!   pool before the conversation's next request (otherwise a loop whose
//!   tools answer at once opens about two connections per conversation).
//! - **Streamed runs, per SSE event** (`-- --streamed`): 0.73–0.79x a bare
//!   `bytes_stream()` + `eventsource-stream` loop in instructions (toolloop
//!   parses server-sent events in one pass and lends each event to the
//!   decoder, which reads Anthropic's events in one pass too); in CPU time
//!   1.01x (Anthropic) and 1.06x (OpenAI).
//!
//! The tables, the conditions and the other measurements (definitions built
//! once per type, compile time of 50 derived tools, dependency weight,
//! tracing, prompt caching, Gemini, the Restate journal) are in
//! `BENCHMARKS.md`, each with its command. `CONTRIBUTING.md` says when to
//! run them.
