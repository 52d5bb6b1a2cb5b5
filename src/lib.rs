//! prpd drives AI coding agents through RED → GREEN → REFACTOR → DOCUMENT → QA → SHIP for one
//! feature request (a PRP document) at a time, and decides from facts it measures itself when a
//! phase is done, when an agent is stuck, and whether the work passes QA.
//!
//! The binary (`src/main.rs`) is a thin shell around [`cli::run`]; everything else lives here,
//! in one folder per subsystem. Imports only point down this list, each subsystem using only
//! those above it (a test in `tests/it/layout.rs` keeps it so):
//!
//! 1. [`base`]: process supervision, files, paths, the lock, configuration, exit codes, and the
//!    small shared vocabulary (phases, status blocks);
//! 2. [`browser`]: a headless Chromium driven over the DevTools protocol;
//! 3. [`prp`]: the PRP document model;
//! 4. [`qa`]: the QA gate — discovery, checklist, methods, metrics, report;
//! 5. [`memory`]: what earlier runs and humans taught prpd, and the four questions QA asks;
//! 6. [`ship`]: what an approved run becomes — the commit, the branch, the push, the PR's text,
//!    the GitHub pull request and its remote checks;
//! 7. [`protocols`]: the seeds' verification protocols — critical points, `[VERIFY]` tasks,
//!    agent test plans, web test plans from a running app;
//! 8. [`run`]: the loop — phase machine, gates, breakers, agents, driver, sessions;
//! 9. [`watch`]: the daemon — its loop, the file watcher, the queue, the control socket;
//! 10. [`cli`]: the command line.
//!
//! `ARCHITECTURE.md` at the repository root has the map of the modules and their invariants.

pub mod base;
pub mod browser;
pub mod cli;
pub mod memory;
pub mod protocols;
pub mod prp;
pub mod qa;
pub mod run;
pub mod ship;
pub mod watch;
