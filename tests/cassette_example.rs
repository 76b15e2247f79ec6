//! Testing an agent with a cassette: copy this file to start your own.
//!
//! The agent talks to Anthropic through a [`Cassette`]. The first time,
//! record it against the real API:
//!
//! ```text
//! TOOLLOOP_RECORD=1 ANTHROPIC_API_KEY=sk-ant-... cargo test --test cassette_example
//! ```
//!
//! That writes `tests/cassettes/weather_agent.json` (the key is never
//! written): commit it. From then on the test replays the file, offline and
//! without a key, in a few milliseconds: `cargo test` (or CI) sends nothing.
//! When the agent changes what it sends (a new prompt, another tool), the
//! replay fails with the differences by JSON pointer: record again.
//!
//! The cassette committed here was recorded this way, but against a local
//! server answering in Anthropic's format (`ANTHROPIC_BASE_URL` pointing
//! at it, as this repository's tests need no key), which is why its URL is
//! `127.0.0.1`; only the path is matched, so it replays against the
//! default `https://api.anthropic.com`.

use toolloop::providers::anthropic::Anthropic;
use toolloop::testing::Cassette;
use toolloop::{Agent, Conversation};

/// Look up today's weather in a city.
#[derive(toolloop::Tool)]
struct Weather {
    /// The city's name.
    city: String,
}

impl Weather {
    #[allow(clippy::unused_async)] // a real lookup would await a weather API
    async fn run(self) -> Result<String, String> {
        match self.city.as_str() {
            "Paris" => Ok("rain, 14 °C".to_owned()),
            other => Err(format!("no forecast for {other}")),
        }
    }
}

/// Whether to take an umbrella.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Advice {
    /// The city the advice is for.
    city: String,
    /// Whether to take an umbrella.
    umbrella: bool,
}

#[tokio::test]
async fn the_weather_agent_advises_an_umbrella_in_paris() {
    // One cassette per test; `TOOLLOOP_RECORD=1` records it anew.
    let cassette = Cassette::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cassettes/weather_agent.json")).unwrap();
    // From the environment when recording; replaying needs no key.
    let model = Anthropic::builder_from_env().model("claude-sonnet-4-5").cassette(&cassette).build().unwrap();
    let agent = Agent::builder()
        .model(model)
        .system("You advise travellers. Check the weather before you answer.")
        .tool::<Weather>()
        .output::<Advice>()
        .build()
        .unwrap();

    let mut conversation = Conversation::new();
    conversation.push_user("Do I need an umbrella in Paris today?");
    let result = agent.run(&mut conversation).await.unwrap();

    assert_eq!(result.output.city, "Paris");
    assert!(result.output.umbrella);
    assert_eq!(result.metadata.tool_calls, 2, "the weather lookup, then the output");
    // Fails if the agent made fewer calls than were recorded.
    cassette.finish().unwrap();
}
