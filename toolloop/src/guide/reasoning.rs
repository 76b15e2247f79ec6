//! # Reasoning models
//!
//! One setting, [`ReasoningConfig`](crate::reasoning::ReasoningConfig) (an effort:
//! off, low, medium, high, max; optionally a token budget and a summary),
//! turns reasoning on per model with the builder's `reasoning(..)`, or per
//! request with [`ModelRequest::with_reasoning`](crate::ModelRequest::with_reasoning)
//! (the request's wins: `with_reasoning(ReasoningEffort::Off)` turns it off
//! for one call). Each provider maps it:
//!
//! | provider | sent | kept in the conversation |
//! |---|---|---|
//! | Anthropic | `thinking` (adaptive + `output_config.effort` on Claude 4.6+, else `enabled` + `budget_tokens`), `anthropic-beta: interleaved-thinking-2025-05-14` for manual thinking on Claude 4 | `thinking` (text + signature) and `redacted_thinking` blocks, sent back byte for byte at the start of their turn |
//! | OpenAI Responses | `reasoning: {effort, summary}`, `store: false`, `include: ["reasoning.encrypted_content"]` | `reasoning` items (id, encrypted content, summary), each sent back directly before the items that followed it |
//! | OpenAI Chat Completions | `reasoning_effort` | `reasoning_content` of compatible servers (vLLM, `DeepSeek`), read only |
//! | Ollama | `think` (`true`/`false`, or a level for `gpt-oss`) | `thinking`, sent back with its turn |
//! | Gemini | `generationConfig.thinkingConfig`: `thinkingLevel` on Gemini 3, `thinkingBudget` on 2.5 (within the model's range), never both; `includeThoughts` with a summary | thought summaries and every `thoughtSignature`, as reasoning blocks in place, sent back byte for byte on the part that carried them |
//!
//! Rules the APIs enforce are checked before sending, as a typed
//! `ModelErrorKind::InvalidRequest` error rather than an HTTP 400: thinking
//! needs the temperature unset (or 1), a budget of at least 1024 tokens and
//! below `max_tokens`. Typed output and reflection work with thinking on:
//! the output tool is never forced.
//! [`Usage::reasoning_tokens`](crate::Usage::reasoning_tokens) counts
//! reasoning tokens where the provider reports them (part of the output
//! tokens); [`Message::reasoning_text`](crate::Message::reasoning_text) and
//! [`ModelResponse::reasoning_text`](crate::ModelResponse::reasoning_text)
//! show the readable thinking or summaries (to hooks, too).
//!
//! ```
//! use toolloop::providers::anthropic::Anthropic;
//! use toolloop::providers::openai::OpenAi;
//! use toolloop::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
//!
//! // Claude 4.5: extended thinking with a budget below max_tokens.
//! let claude = Anthropic::builder()
//!     .api_key("sk-ant-...")
//!     .model("claude-sonnet-4-5")
//!     .max_tokens(8192)
//!     .reasoning(ReasoningConfig::new(ReasoningEffort::Medium).with_budget_tokens(2048))
//!     .build()?;
//! // OpenAI: the Responses API, stateless, with reasoning summaries.
//! let gpt = OpenAi::responses()
//!     .api_key("sk-...")
//!     .model("gpt-5-mini")
//!     .reasoning(ReasoningConfig::new(ReasoningEffort::Low).with_summary(ReasoningSummary::Auto))
//!     .build()?;
//! # let _ = (claude, gpt);
//! # Ok::<(), toolloop::BuildError>(())
//! ```
//!
//! ## The Responses API: stateless or chained
//!
//! The Responses API is stateless by default: every call sends the whole
//! conversation with its encrypted reasoning, and nothing is kept on
//! OpenAI's side. `OpenAi::responses().chain_responses(true)` stores each
//! response (`store: true`, which the API requires of a response to be
//! continued) and sends only the new items (tool results, a user message)
//! with `previous_response_id`. A conversation that is not exactly the
//! stored response's plus what came after it (another provider or model
//! answered in between, a history compacted, edited or loaded from JSON, a
//! failed chained call) is sent whole and chained again from there, so
//! switching models and providers stays correct.
//!
//! ## Switching providers
//!
//! Reasoning state is the provider's: a conversation that switches provider
//! keeps it in the raw history (and through serde), but the request-time
//! view for another provider leaves out the signed or encrypted reasoning
//! it cannot verify ([`Conversation::view_for`](crate::Conversation::view_for)
//! shows what a provider is sent, and a `debug` event says how many blocks a
//! request left out). Switching back sends it again.
//!
//! Gemini 3 rejects a tool loop whose function calls come back without
//! their thought signatures ("Function call is missing a
//! `thought_signature`"); toolloop keeps each signature on the part that
//! carried it, streamed or not, and gives calls another provider made the
//! placeholder signature Google documents for them, so a conversation can
//! move to Gemini mid-loop:
//!
//! ```
//! use toolloop::providers::gemini::Gemini;
//! use toolloop::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
//!
//! // GEMINI_API_KEY (or GOOGLE_API_KEY) and GEMINI_BASE_URL from the environment:
//! let gemini = Gemini::builder()
//!     .api_key("AIza...")
//!     .model("gemini-3-flash-preview")
//!     .reasoning(ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto))
//!     .build()?;
//! // Gemini on Vertex AI, with an OAuth access token:
//! let vertex = Gemini::builder().vertex("my-project", "global").vertex_token("ya29...").build()?;
//! # let _ = (gemini, vertex);
//! # Ok::<(), toolloop::BuildError>(())
//! ```
//!
//! `examples/reasoning.rs` runs Claude thinking, Responses reasoning or
//! Gemini 3 thinking over several tool iterations and a typed output.
