//! What a streamed run adds over a non-streamed one when a tool call's
//! arguments are long: every argument delta becomes an `Event` with the
//! arguments so far completed to a value. Offline (a scripted model that
//! streams in 8-byte deltas), so only the run's own work is measured.

use std::time::Duration;

use serde_json::json;
use toolloop::run::Event;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, Conversation, ModelResponse, ToolCall};

use crate::framework::Lookup;
use crate::measure;

/// The bytes of each delta the scripted model streams.
const DELTA: usize = 8;

/// An agent whose model asks for `lookup` with a key of `bytes` bytes, then answers.
fn agent(bytes: usize) -> Agent {
    let key = "weather ".repeat(bytes / 8);
    let model = ScriptedModel::new()
        .with_chunk_size(DELTA)
        .respond(ModelResponse::from_tool_calls([ToolCall::new("c1", "lookup", json!({ "key": key }))]))
        .respond(ModelResponse::from_text("Done."));
    Agent::builder().model(model).tool::<Lookup>().build().unwrap()
}

/// CPU per run, streamed or not, over `runs` runs; and the argument deltas of one run.
pub(crate) fn cpu_per_run(bytes: usize, streamed: bool, runs: usize) -> (Duration, usize) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let agents: Vec<Agent> = (0..=runs).map(|_| agent(bytes)).collect();
        let mut deltas = 0;
        let mut started = measure::cpu_time();
        for (i, agent) in agents.iter().enumerate() {
            if i == 1 {
                // The first run warms up.
                started = measure::cpu_time();
                deltas = 0;
            }
            let mut conversation = Conversation::new();
            conversation.push_user("Look it up.");
            if streamed {
                let mut stream = agent.run_stream(&mut conversation);
                while let Some(event) = stream.next().await {
                    if let Event::ToolCallArgumentsDelta { partial, .. } = event {
                        deltas += 1;
                        std::hint::black_box(partial);
                    }
                }
                assert_eq!(stream.output().await.unwrap().output, "Done.");
            } else {
                assert_eq!(agent.run(&mut conversation).await.unwrap().output, "Done.");
            }
        }
        (measure::cpu_time().saturating_sub(started) / u32::try_from(runs).unwrap(), deltas / runs)
    })
}
