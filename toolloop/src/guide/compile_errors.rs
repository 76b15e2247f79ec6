//! # Mistakes are compile errors
//!
//! The builder's type states reject configurations that cannot work —
//! reflection on a text agent, reflection set twice, a validator for another
//! type, an output type without `Deserialize` or a schema or that is not
//! `Send`/`Sync` (each told which, and how to fix it), `.output::<Text>()`,
//! a reflection handler that does not return a `String` (a `&str`
//! included), a validator that returns a `bool` instead of `Result<(), E>`,
//! options of the other mode, a builder run before it is built, an option
//! called on an agent after `.build()`, a model's name given to
//! `.model(..)` (the message names `Anthropic::from_env()`,
//! `OpenAi::from_env()`, `Ollama::from_env()`, `Gemini::from_env()`), a
//! tool named like the reserved `submit`, a second model — with messages
//! that say what to do.
//!
//! What types cannot express, `build()` checks: duplicate tool names (a
//! tool of yours named like the output tool, `final_output`, is told to
//! rename it or the output tool with `.output_tool_name(..)`), a run-time
//! or MCP tool whose input schema is not an object, an empty output-tool
//! description, and one rule for every limit (positive and finite; leave a
//! limit unset for none). Each is a [`BuildError`](crate::BuildError), the
//! one error of whatever is built: a provider's builder and
//! [`ToolSet::add`](crate::ToolSet::add) return it too. A compile error
//! reads like this:
//!
//! ```text
//! error[E0277]: this agent has no model yet
//!  --> src/main.rs:9:83
//!   |
//! 9 |     let _agent = Agent::builder().system("You write reports.").output::<Report>().build();
//!   |                                                                                   ^^^^^ `.model(..)` was not called
//!   |
//!   = help: the trait `HasModel` is not implemented for `NoModel`
//!   = note: call `.model(your_model)` before `.build()`
//! ```
//!
//! The derive and tool registration do the same for the mistakes a first
//! tool invites — a struct added without `#[derive(Tool)]`, a tool that
//! needs state added without it (or given a reference, or another type), a
//! `run` that is not `async`, takes `&self`, misses the state or returns a
//! bare value, serde attributes that cannot describe a tool's arguments
//! (`transparent`, `untagged`), a field type without `Deserialize` or
//! `JsonSchema` (one note shows both derives), a field that is not `Send`,
//! a `#[tool(crate = ...)]` that is not toolloop, a type named like the
//! derive's own items, a doc comment and a `description` attribute on one
//! tool — each with one message that shows what to write. A tool's
//! description is its doc comment's summary (the paragraphs before the
//! first heading or code block; `#[tool(full_doc)]` sends all of it), and a
//! `run` that returns `Ok(())` tells the model it succeeded rather than
//! showing it `null`:
//!
//! ```text
//! error[E0277]: `CountRows` declares `#[tool(state = Db)]`, so it needs `async fn run(self, state: &Db) -> Result<T, E>`
//!  --> src/main.rs:6:8
//!   |
//! 6 | struct CountRows {
//!   |        ^^^^^^^^^ `CountRows::run` is missing or has another signature
//!   |
//!   = note: write `impl CountRows { async fn run(self, state: &Db) -> Result<Output, Error> { ... } }`: `run` must be `async`, take `self` by value and the state by reference
//! ```
//!
//! Each promised error is pinned by a compile-fail test in the repository
//! (`tests/compile_fail/tests/ui/`); `tests/compile_fail/tests/ui/tool/MISTAKES.md`
//! lists the mistakes tried and how each is answered, including the few
//! where rustc's own message (about lifetimes) is all you get.
//! `CONTRIBUTING.md` says how to run these suites and bless their snapshots.
