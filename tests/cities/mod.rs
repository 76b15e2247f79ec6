//! The city-comparison agent the reasoning and Responses-chaining tests run:
//! one lookup tool, a typed report, and a validator that sends the first
//! (wrong) answer back.
#![allow(dead_code, unreachable_pub, clippy::unused_async)] // tool handlers are async by contract

use toolloop::{Agent, Model};

/// Look up the population of a city, in millions.
#[derive(toolloop::Tool)]
pub struct Population {
    /// The city's name.
    pub city: String,
}

impl Population {
    async fn run(self) -> Result<f64, String> {
        match self.city.as_str() {
            "Paris" => Ok(2.1),
            "Berlin" => Ok(3.7),
            other => Err(format!("no data for {other}")),
        }
    }
}

/// The report.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// The largest city compared.
    pub largest: String,
}

/// The agent under test; `calls` limits its model calls (to stop mid-loop).
pub fn agent(model: impl Model + 'static, calls: Option<u32>) -> Agent<Report> {
    let mut builder = Agent::builder()
        .model(model)
        .system("Compare cities.")
        .tool::<Population>()
        .output::<Report>()
        .validator(|report: &Report| if report.largest == "Berlin" { Ok(()) } else { Err("check the numbers") });
    if let Some(calls) = calls {
        builder = builder.max_model_calls(calls);
    }
    builder.build().unwrap()
}
