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
//!   the bare loop at every conversation length — 0.80–0.91x at 1 and 10
//!   calls, 0.24–0.27x at 200 (after this wave's merges; BENCHMARKS.md §9), where the bare loop re-sends its whole
//!   history — with no fixed cost per run beyond the bare loop's.
//! - **Whole-process CPU time per model call** (`cargo bench -p toolloop
//!   --bench whole_process`, on a loaded 2-core machine): 0.91–1.14x the
//!   bare loop's at 1 to 50 calls one at a time, 0.60–0.72x at 200.
//! - **Memory at 1,000 conversations in flight** (`-- --memory`): toolloop
//!   61–68 KiB each, the bare loop 66–77 KiB.
//! - **Streamed runs, per SSE event** (`-- --streamed`): 1.21–1.23x after
//!   this wave's merges (1.17–1.19x before them) a bare
//!   `bytes_stream()` + `eventsource-stream` loop in instructions, 1.24–1.28x
//!   in CPU time.
//!
//! The tables, the conditions and the other measurements (definitions built
//! once per type, compile time of 50 derived tools, dependency weight,
//! tracing, prompt caching, Gemini, the Restate journal) are in
//! `BENCHMARKS.md`, each with its command. `CONTRIBUTING.md` says when to
//! run them.
