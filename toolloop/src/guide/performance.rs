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
//!   the bare loop at every conversation length — 0.78–0.85x at 1 and 10
//!   calls, 0.22–0.25x at 200, where the bare loop re-sends its whole
//!   history — with no fixed cost per run beyond the bare loop's.
//! - **Whole-process CPU time per model call** (`cargo bench -p toolloop
//!   --bench whole_process`, on a shared 2-core machine): at 10 calls one
//!   at a time 0.93–1.14x the bare loop's on OpenAI and 1.06–1.07x on
//!   Anthropic (medians of paired runs; 1.13–1.14x on OpenAI in the last,
//!   on an idle machine); in the tables 0.89–1.01x at 1
//!   call, 1.02–1.07x at 10, 1.06–1.22x at 50, 0.59–0.75x at 200,
//!   1.00–1.03x with 50 conversations in flight and 0.80–0.91x with 1,000,
//!   under a load that moves single figures by ±20%. What is left at 10
//!   and 50 calls is code rather than instructions: a call runs through
//!   more lines of code than the bare loop's and misses the L1
//!   instruction cache ~40% more often. No fixed CPU per run beyond the
//!   bare loop's.
//! - **Memory at 1,000 conversations in flight** (`-- --memory`): toolloop
//!   51.3 KiB each (OpenAI and Anthropic), the bare loop 68.0–73.8 KiB;
//!   most of either is the HTTP connections. While other calls of a model
//!   are in flight, a call yields once to the runtime after its response,
//!   so that its connection is back in the pool before the conversation's
//!   next request (otherwise a loop whose tools answer at once opens about
//!   two connections per conversation).
//! - **Streamed runs, per SSE event** (`-- --streamed`): 0.74–0.80x a bare
//!   `bytes_stream()` + `eventsource-stream` loop in instructions (toolloop
//!   parses server-sent events in one pass and lends each event to the
//!   decoder, which reads Anthropic's events in one pass too); in CPU time
//!   0.95x (Anthropic) and 1.10x (OpenAI) by the medians of a few runs,
//!   where the machine's scheduling moves either loop by more than that
//!   between runs.
//!
//! The tables, the conditions and the other measurements (definitions built
//! once per type, compile time of 50 derived tools, dependency weight,
//! tracing, prompt caching, Gemini, the Restate journal) are in
//! `BENCHMARKS.md`, each with its command. `CONTRIBUTING.md` says when to
//! run them.
