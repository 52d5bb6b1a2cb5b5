//! The daemon: `prpd watch` keeps one repository in view and turns its changes into runs.
//!
//! [`daemon`] is its loop: it holds the repository's lock for its whole life, resumes
//! interrupted runs, then drives up to `[watch] parallel` runs at once, each in its own
//! worktree — runs of the queued PRPs ([`queue`]), resumes (a human's, through the control
//! socket or a `resume` file, or the breaker's [`cooldown`]) — and QA after source changes
//! when no run goes, while it answers the CLI on the Unix
//! socket ([`control`]) and sorts file changes into what they ask for ([`trigger`]). SIGTERM
//! stops the running agent's process group and leaves a record the next start resumes. Its log
//! is a rotated JSON-lines file ([`log_file`]); an escalation runs the user's
//! [`notify_command`].
//!
//! [`files`] is its eyes: a gitignore-aware file watcher that watches every kept directory of
//! the repository (and no ignored one) and hands the daemon debounced batches of changed paths.
//! Its parts, each in its own file: the ignore rules asked one path at a time (`ignored.rs`),
//! the gitignore-aware walk (`kept_tree.rs`), what a batch of events says (`touched.rs`), the
//! watched directories kept in step with the disk (`watched_tree.rs`), and the kernel watcher
//! under the debouncer (`backend.rs`).
//!
//! Uses `prpd-run` and the crates below it; only the binary uses it.

mod asked_run;
mod backend;
pub mod config;
pub mod control;
pub mod cooldown;
pub mod daemon;
pub mod files;
mod ignored;
mod kept_tree;
pub mod log_file;
pub mod notify_command;
pub mod queue;
mod touched;
pub mod trigger;
mod watched_tree;
