//! SHIP: what a run that QA approved becomes outside the repository — a branch pushed to the
//! remote, a pull request, and the remote CI's word on it.
//!
//! Theory of operation. [`github`] speaks to the GitHub REST API (github.com or a GitHub
//! Enterprise server, or a local mock in tests): it opens or updates the pull request for the
//! run's branch, comments, opens an issue on escalation, and polls the checks of the pushed
//! commit until they finish. Every request carries the token only in its `Authorization`
//! header; every error message is scrubbed of it.
//!
//! Owns: the GitHub requests and their error messages.
//! May import: `base`, `prp` and `qa` — never `run` (the driver calls into `ship`).

pub mod github;
