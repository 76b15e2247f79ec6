//! The README's first agent, built with nothing but the README's
//! `[dependencies]` block. `cargo run -p toolloop-first-hour` runs it on the
//! environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `OLLAMA_HOST`)
//! or, without one, on a scripted model.

use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;

/// Look up the population of a city, in millions.
#[derive(Tool)]
struct Population {
    /// The city's name, e.g. "Paris".
    city: String,
}

impl Population {
    #[allow(clippy::unused_async)] // a real lookup would await a database
    async fn run(self) -> Result<f64, String> {
        let table = [("Paris", 2.1), ("Berlin", 3.7)];
        table.iter().find(|(name, _)| *name == self.city).map(|(_, n)| *n).ok_or(format!("no data for {}", self.city))
    }
}

/// The answer the agent must give.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Answer {
    /// The larger city.
    larger: String,
    /// Its population in millions.
    #[schemars(range(min = 0.1))]
    population: f64,
}

async fn answer(model: impl Model + 'static) -> Result<Answer, Box<dyn std::error::Error>> {
    let agent = Agent::builder()
        .model(model)
        .system("Answer with figures from the tools.")
        .tool::<Population>()
        .output::<Answer>()
        .build()?;
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    Ok(agent.run(&mut conversation).await?.output)
}

/// What a model would say, for running without one (as in the README).
fn scripted() -> ScriptedModel {
    let call = |id, name, input| ModelResponse::from_tool_calls([ToolCall::new(id, name, input)]);
    ScriptedModel::from_responses([
        call("1", Population::NAME, serde_json::json!({"city": "Berlin"})),
        call("2", "final_output", serde_json::json!({"larger": "Berlin", "population": 3.7})),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = toolloop::providers::from_env_or(scripted())?;
    let answer = answer(model).await?;
    println!("{} is larger: {} million people", answer.larger, answer.population);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_first_agent_answers_offline() {
        let answer = super::answer(super::scripted()).await.unwrap();
        assert_eq!((answer.larger.as_str(), answer.population), ("Berlin", 3.7));
    }
}
