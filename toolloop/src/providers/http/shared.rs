//! What clones of an HTTP model share.

use super::client::HttpClient;

/// What clones of a model share. The format is fixed once built, so the
/// bytes it rendered into a run's cache stay right for every later request
/// of the run; `renderer` names them there.
pub(super) struct Shared<W> {
    pub(super) http: HttpClient,
    pub(super) format: W,
    pub(super) renderer: u64,
}
