//! The daemon: `prpd watch` keeps one repository in view and turns its changes into runs.
//!
//! [`files`] is its eyes: a gitignore-aware file watcher that watches every kept directory of
//! the repository (and no ignored one) and hands the daemon debounced batches of changed paths.
//! Its parts, each in its own file: the ignore rules asked one path at a time (`ignored.rs`),
//! the gitignore-aware walk (`kept_tree.rs`), what a batch of events says (`touched.rs`), the
//! watched directories kept in step with the disk (`watched_tree.rs`), and the kernel watcher
//! under the debouncer (`backend.rs`).
//!
//! `watch` sits above `run` and below `cli`: it may import every subsystem but the command line.

mod backend;
pub mod files;
mod ignored;
mod kept_tree;
mod touched;
mod watched_tree;
