//! The counters of a run in progress, turned into its [`RunMetadata`] at the end.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::time::Instant;
use tracing::Span;

use super::context::ContextView;
use super::governance::Verdict;
use super::hooks::hook_error;
use super::metadata::{RunMetadata, SubRun};
use super::sub_runs::SubRuns;
use super::termination::Termination;
use crate::message::ToolCall;
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// The counters of a run in progress (the "tally"): what the engine has
/// counted so far, and what its hooks and sub-runs reported.
#[derive(Debug)]
pub(crate) struct Tally {
    pub(crate) usage: Usage,
    pub(crate) attempts: u32,
    pub(crate) iterations: u32,
    /// Model calls, its sub-runs' included.
    pub(crate) model_calls: u32,
    /// The run's own model calls, which number its journal steps: a
    /// replayed tool step does not run its sub-runs again, so their calls
    /// must not shift the names of the steps after it.
    pub(crate) own_model_calls: u32,
    pub(crate) tool_calls: u32,
    pub(crate) tools_used: BTreeMap<String, u32>,
    pub(crate) models_used: BTreeMap<String, u32>,
    /// Executions that count toward `max_tool_executions`: those of the
    /// tool set, not the calls a control answers itself.
    pub(crate) limited_tool_calls: u32,
    pub(crate) started: Instant,
    /// The attempt and iteration the run is in (or last was in).
    pub(crate) position: (u32, u32),
    pub(crate) stop_reason: Option<StopReason>,
    /// The failures of hooks and callbacks, each as its message.
    pub(crate) hook_errors: Mutex<Vec<String>>,
    /// The verdicts on calls whose results are settled later (the agent's
    /// `submit`), by call id, for their `ToolExecutionFinished` events, with
    /// their `execute_tool` spans, which record the result once it is known.
    pub(crate) settling: Mutex<Vec<(String, Verdict, Span)>>,
    /// The verdicts on calls governance let through that a deferral held
    /// back (calls the control answers), by call id: kept in the paused
    /// run's checkpoint, so the resumed run answers them without asking again.
    pub(crate) held: Vec<(String, Verdict)>,
    /// The view of the conversation the model is sent.
    pub(crate) context: ContextView,
    /// Compactions of the view so far.
    pub(crate) compactions: u32,
    /// What earlier calls found about the view (see `note_view_rewrites`).
    pub(crate) rewrite_scan: crate::conversation::RewriteScan,
    /// Where the run's sub-runs report, and their kept conversations.
    pub(crate) nested: Arc<SubRuns>,
    /// The sub-runs counted so far.
    pub(crate) sub_runs: Vec<SubRun>,
    /// How many messages the conversation held when the run began: those
    /// are earlier runs', the run's own come after.
    pub(crate) first_message: usize,
}

impl Tally {
    pub(crate) fn start() -> Self {
        Self {
            usage: Usage::default(),
            attempts: 0,
            iterations: 0,
            model_calls: 0,
            own_model_calls: 0,
            tool_calls: 0,
            tools_used: BTreeMap::new(),
            models_used: BTreeMap::new(),
            limited_tool_calls: 0,
            started: Instant::now(),
            position: (0, 0),
            stop_reason: None,
            hook_errors: Mutex::new(Vec::new()),
            settling: Mutex::new(Vec::new()),
            held: Vec::new(),
            context: ContextView::default(),
            compactions: 0,
            rewrite_scan: crate::conversation::RewriteScan::default(),
            nested: Arc::default(),
            sub_runs: Vec::new(),
            first_message: 0,
        }
    }

    /// Counts the sub-runs reported since the last call: their usage and
    /// calls go into the run's totals; they are listed in the order of
    /// `calls` (the batch that started them), whatever order they ended in.
    pub(crate) fn count_sub_runs(&mut self, calls: &[ToolCall]) {
        let mut finished = self.nested.take();
        finished.sort_by_key(|run| calls.iter().position(|call| call.id == run.call_id));
        for run in finished {
            let metadata = &run.metadata;
            self.usage += metadata.usage;
            self.model_calls += metadata.model_calls;
            self.tool_calls += metadata.tool_calls;
            for (tool, count) in &metadata.tools_used {
                *self.tools_used.entry(tool.clone()).or_default() += count;
            }
            for (model, count) in &metadata.models_used {
                *self.models_used.entry(model.clone()).or_default() += count;
            }
            self.sub_runs.push(run);
        }
    }

    /// Counts a model call `model` of `provider` answered, under
    /// `provider/model` (allocating the key only the first time).
    pub(crate) fn count_answer(&mut self, provider: &str, model: &str) {
        let named = |key: &str| {
            key.strip_prefix(provider).and_then(|rest| rest.strip_prefix('/')).is_some_and(|rest| rest == model)
        };
        match self.models_used.iter_mut().find(|(key, _)| named(key)) {
            Some((_, count)) => *count += 1,
            None => {
                self.models_used.insert(format!("{provider}/{model}"), 1);
            }
        }
    }

    /// Keeps governance's `verdict` on call `call_id`, whose result is
    /// settled later, and the call's span, which records it then.
    pub(crate) fn settling(&self, call_id: &str, verdict: Verdict, span: Span) {
        self.settling.lock().unwrap_or_else(PoisonError::into_inner).push((call_id.to_owned(), verdict, span));
    }

    /// Whether call `call_id`'s result is left to be settled later.
    pub(crate) fn is_settling(&self, call_id: &str) -> bool {
        self.settling.lock().unwrap_or_else(PoisonError::into_inner).iter().any(|(id, _, _)| id == call_id)
    }

    /// The verdict kept for call `call_id` (allowed, when none was kept)
    /// and its span (none, when none was kept).
    pub(crate) fn settled(&self, call_id: &str) -> (Verdict, Span) {
        let mut settling = self.settling.lock().unwrap_or_else(PoisonError::into_inner);
        match settling.iter().position(|(id, _, _)| id == call_id) {
            Some(index) => {
                let (_, verdict, span) = settling.remove(index);
                (verdict, span)
            }
            None => (Verdict::Allowed, Span::none()),
        }
    }

    /// Records a callback that failed, as hooks' failures are.
    pub(crate) fn push_hook_error(&self, event: &'static str, message: &str) {
        tracing::warn!(event, message, "callback failed");
        self.hook_errors.lock().unwrap_or_else(PoisonError::into_inner).push(hook_error(event, message));
    }

    pub(crate) fn finish(mut self, termination: Termination) -> RunMetadata {
        // Sub-runs reported after the last batch was counted (none, normally).
        self.count_sub_runs(&[]);
        RunMetadata {
            usage: self.usage,
            attempts: self.attempts,
            iterations: self.iterations,
            model_calls: self.model_calls,
            tool_calls: self.tool_calls,
            tools_used: self.tools_used,
            models_used: self.models_used,
            elapsed: self.started.elapsed(),
            termination,
            stop_reason: self.stop_reason,
            hook_errors: self.hook_errors.into_inner().unwrap_or_else(PoisonError::into_inner),
            compactions: self.compactions,
            sub_runs: self.sub_runs,
        }
    }
}
