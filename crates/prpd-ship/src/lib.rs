//! SHIP: what an approved run becomes — a commit on a branch of its own, pushed to the
//! configured remote, and a pull request whose body is prpd's own QA report and run summary.
//!
//! Theory of operation. The run loop (`prpd-run/src/driver/ship.rs`) carries SHIP out as separate steps,
//! saving the run record after each so that a crash or a failure resumes at the step it stopped
//! in and never makes a second commit or branch:
//!
//! 1. [`git::commit`]: the commit's tree is the agents' work exactly as the run's snapshots
//!    recorded it (`.gitignore` honoured, `.prp-session/` and what prpd's own measurements left
//!    in the tree never included, nothing taken from the user's index), laid on the commit the
//!    run started from; its message comes from [`message`].
//! 2. [`git::point_branch`]: the branch (`[ship] branch`, `prp/{slug}`) points at it; the
//!    user's `HEAD`, index and working tree are never touched.
//! 3. [`git::push`]: to `[ship] remote`, with the token (from the variable `[ship] token_env`
//!    names) handed to git by a credentials callback, never put in a URL; a rejected ref is
//!    reported with what to do.
//!
//! [`github`] speaks to the GitHub REST API (github.com, a GitHub Enterprise server, or a local
//! mock in tests): it opens or updates the pull request for the run's branch, comments, opens
//! an issue on escalation, and polls the checks of the pushed commit until they finish. Every
//! request carries the token only in its `Authorization` header; every error message is
//! scrubbed of it. The driver calls it after the push when SHIP delivers (a token, no
//! `--dry-run`).
//!
//! Uses `prpd-base` and `prpd-prp` only: it knows nothing of the run record.

pub mod config;
pub mod git;
pub mod github;
pub mod message;
