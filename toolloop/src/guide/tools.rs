//! # Tools: derived, with state, and on their own
//!
//! `#[derive(Tool)]` turns a struct into a tool: the doc comment is the
//! description, the fields are the arguments, the JSON schema comes from
//! schemars (honouring `#[serde]` attributes), in the plain shape and in
//! OpenAI's strict shape. Definitions are built once per type. Handlers are
//! an `async fn run(self)` returning your own error type, and reach
//! application state (`#[tool(state = Db)]`) without globals. The
//! constraints the schema shows the model (`#[schemars(range(max = 10),
//! length(..), regex(..))]`) are enforced too: a call with `999` for a
//! `1..=10` field is an error result naming the field, and the handler does
//! not run. Every attribute is listed on [`derive@crate::Tool`].
//!
//! Tools need neither serde nor schemars in your `Cargo.toml`: the derive
//! reaches them through toolloop. Only types used *inside* tool fields, and
//! output types, derive `Deserialize` and `JsonSchema` (schemars 1.x, the
//! version toolloop uses).
//!
//! ## Failures are results, not crashes
//!
//! Bad arguments (with the field path), unknown tools (listing the ones that
//! exist), handler errors, panics and timeouts become error results the
//! model can read and correct, each with a machine-readable
//! [`FailureKind`](crate::FailureKind). A `run` that returns `Ok(())` tells
//! the model it succeeded ([`ToolOutput::DONE`](crate::ToolOutput::DONE))
//! rather than showing it `null`.
//!
//! ## A first tool, on its own
//!
//! Tools work without an agent too: a [`ToolSet`](crate::ToolSet) looks
//! them up by name and executes the model's calls. (The error type here
//! derives `thiserror::Error`, a dependency of its own; any type with
//! `Display` works, `String` included.)
//!
//! ```
//! use toolloop::prelude::*;
//!
//! /// Look up the current temperature of a city, in degrees Celsius.
//! #[derive(Tool)]
//! struct GetWeather {
//!     /// The city, e.g. "Paris".
//!     city: String,
//! }
//!
//! #[derive(Debug, thiserror::Error)]
//! #[error("no weather station in {0}")]
//! struct NoStation(String);
//!
//! impl GetWeather {
//!     async fn run(self) -> Result<f64, NoStation> {
//!         match self.city.as_str() {
//!             "Paris" => Ok(18.5),
//!             _ => Err(NoStation(self.city)),
//!         }
//!     }
//! }
//!
//! # tokio_test::block_on(async {
//! let mut tools = ToolSet::new();
//! tools.add::<GetWeather>()?;
//! assert_eq!(tools.definitions()[0].name, "get_weather");
//!
//! let cancel = CancellationToken::new();
//! let ok = tools.execute(&ToolCall::new("1", "get_weather", serde_json::json!({"city": "Paris"})), &cancel).await?;
//! assert_eq!(ok.result.content, "18.5");
//!
//! let bad = tools.execute(&ToolCall::new("2", "get_weather", serde_json::json!({"town": "Oslo"})), &cancel).await?;
//! assert!(bad.result.is_error());
//! assert_eq!(bad.result.content, "invalid arguments: missing field `city`");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! ## A tool that needs state, and the agent's type
//!
//! A tool declares its state with `#[tool(state = Type)]`; its `run` takes
//! `&Type`, and the agent builder's
//! [`tool_with_state`](crate::AgentBuilder::tool_with_state) gives it a
//! `Type` or an `Arc<Type>` shared with other tools
//! ([`ToolSet::add_with_state`](crate::ToolSet::add_with_state) on a tool
//! set). A built agent's type names its output and whether it reflects:
//! `Agent` is a text agent, `Agent<Offer>` a typed one, and
//! `Agent<Offer, Reflective>` a typed agent with reflection — the type to
//! write when you keep an agent in your own struct.
//!
//! ```
//! use std::sync::Arc;
//! use toolloop::agent::Reflective;
//! use toolloop::testing::ScriptedModel;
//! use toolloop::prelude::*;
//!
//! struct Catalogue { prices: Vec<(String, u32)> }
//!
//! /// Look up the price of an item, in euros.
//! #[derive(Tool)]
//! #[tool(state = Catalogue)]
//! struct Price {
//!     /// The item, e.g. "bike".
//!     item: String,
//! }
//!
//! impl Price {
//!     async fn run(self, catalogue: &Catalogue) -> Result<u32, String> {
//!         let found = catalogue.prices.iter().find(|(name, _)| *name == self.item);
//!         found.map(|(_, price)| *price).ok_or(format!("we do not sell {}", self.item))
//!     }
//! }
//!
//! /// An offer to the customer.
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
//! struct Offer {
//!     /// The item offered.
//!     item: String,
//!     /// The price, in euros.
//!     price: u32,
//! }
//!
//! /// Your application's state, holding a typed agent with reflection.
//! struct Shop {
//!     seller: Agent<Offer, Reflective>,
//! }
//!
//! # tokio_test::block_on(async {
//! let call = |id: &str, name: &str, input: serde_json::Value| ModelResponse::from_tool_calls([ToolCall::new(id, name, input)]);
//! let model = ScriptedModel::from_responses([
//!     call("1", "price", serde_json::json!({"item": "bike"})),
//!     call("2", "final_output", serde_json::json!({"item": "bike", "price": 250})),
//!     call("3", "submit", serde_json::json!({})),
//! ]);
//! let catalogue = Arc::new(Catalogue { prices: vec![("bike".into(), 250)] });
//! let shop = Shop {
//!     seller: Agent::builder()
//!         .model(model)
//!         .tool_with_state::<Price>(Arc::clone(&catalogue)) // or `Catalogue { .. }` itself
//!         .output::<Offer>()
//!         .reflection(|offer| format!("You offer {offer:?}. Call `submit` if the price is the catalogue's."))
//!         .build()?,
//! };
//!
//! let mut conversation = Conversation::new();
//! conversation.push_user("How much is a bike?");
//! let done = shop.seller.run(&mut conversation).await?;
//! assert_eq!((done.output.item.as_str(), done.output.price), ("bike", 250));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! ## Mistakes the compiler catches
//!
//! The derive and tool registration reject at compile time the mistakes a
//! first tool invites, each with one message that shows what to write: see
//! [`compile_errors`](super::compile_errors).
