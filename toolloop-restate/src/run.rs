//! Running an agent durably.

use restate_sdk::prelude::*;
use toolloop::agent::AgentOutput;
use toolloop::run::journal::JournalError;
use toolloop::run::{Resolution, Termination};
use toolloop::{Agent, Conversation, RunError, RunOutput};

use crate::journal::RestateJournal;

/// Why a durable run returned no output.
///
/// `?` in a handler turns it into a *terminal* error saying why (Restate
/// does not retry it: replaying the journal would end the same way). It is
/// deliberately not a [`std::error::Error`]: one would convert into a
/// retryable [`HandlerError`], and Restate would retry the invocation forever.
#[derive(Debug)]
#[non_exhaustive]
pub enum DurableError {
    /// The run ended without an output: a limit, a model error, failed
    /// validation, a cancellation, a pause ([`RunError::termination`] says
    /// which). The conversation holds everything it did, every tool call
    /// answered, but a paused run's, whose calls wait
    /// ([`RunError::is_deferred`]).
    Run(RunError),
    /// A recorded step does not read (see [`RestateJournal::failure`]).
    Journal(JournalError),
}

impl std::fmt::Display for DurableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Run(error) => match std::error::Error::source(error) {
                Some(source) => write!(f, "{error}: {source}"),
                None => write!(f, "{error}"),
            },
            Self::Journal(error) => write!(f, "{error}"),
        }
    }
}

impl From<RunError> for DurableError {
    fn from(error: RunError) -> Self {
        Self::Run(error)
    }
}

impl From<JournalError> for DurableError {
    fn from(error: JournalError) -> Self {
        Self::Journal(error)
    }
}

impl From<DurableError> for TerminalError {
    fn from(error: DurableError) -> Self {
        let code = match &error {
            DurableError::Run(run) if matches!(run.termination(), Termination::Cancelled { .. }) => 409,
            // Paused with calls pending, or a resume that does not fit them:
            // the caller's move, not the server's failure.
            DurableError::Run(run)
                if run.is_deferred()
                    || run.resume_error().is_some()
                    || matches!(run.termination(), Termination::PendingCalls { .. }) =>
            {
                409
            }
            _ => 500,
        };
        TerminalError::new_with_code(code, error.to_string())
    }
}

impl From<DurableError> for HandlerError {
    fn from(error: DurableError) -> Self {
        TerminalError::from(error).into()
    }
}

impl RestateJournal<'_> {
    /// Runs `agent` on `conversation` (which must end with the caller's
    /// message), each side effect a step of this journal.
    pub async fn run<O: AgentOutput, R>(
        &self,
        agent: &Agent<O, R>,
        conversation: &mut Conversation,
    ) -> Result<RunOutput<O::Value>, DurableError> {
        let outcome = agent.run_journaled(conversation, self, self.cancel_token()).await;
        if let Some(failure) = self.failure() {
            return Err(DurableError::Journal(failure));
        }
        Ok(outcome?)
    }

    /// Resumes `agent`'s paused run on `conversation` (see
    /// [`Agent::resume`]) with a resolution for each pending call, each side
    /// effect a step of this journal: the approved calls run once, however
    /// often the invocation is replayed.
    pub async fn resume<O: AgentOutput, R, I, K>(
        &self,
        agent: &Agent<O, R>,
        conversation: &mut Conversation,
        resolutions: I,
    ) -> Result<RunOutput<O::Value>, DurableError>
    where
        I: IntoIterator<Item = (K, Resolution)>,
        K: Into<String>,
    {
        let outcome = agent.resume_journaled(conversation, resolutions, self, self.cancel_token()).await;
        if let Some(failure) = self.failure() {
            return Err(DurableError::Journal(failure));
        }
        Ok(outcome?)
    }
}
