//! What clones of an HTTP model share.

use super::body_cache::BodyCache;
use super::client::HttpClient;

/// What clones of a model share. The format is fixed once built, so the
/// cached bytes it rendered stay right for every later request.
pub(super) struct Shared<W> {
    pub(super) http: HttpClient,
    pub(super) format: W,
    pub(super) bodies: BodyCache,
}
