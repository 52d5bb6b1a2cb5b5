//! The loop: one PRP driven through RED → GREEN → REFACTOR → DOCUMENT → QA → SHIP by agents,
//! each phase ended by prpd's own measurement and the agent's word together.
//!
//! Theory of operation. [`session`] gives a new run its [`worktree`], takes the run's lock and
//! loads or creates the run [`record`];
//! [`driver`] feeds the pure [`machine`] one event at a time and carries out the effects it
//! returns, saving the record before each. An iteration checks the [`guardrail`]s, builds the
//! [`prompt`], invokes the [`agent`], [`measure`]s the tree, evaluates the dual [`gate`] and
//! classifies the iteration for the phase's [`breaker`]. QA runs the `qa` gate; a run that
//! cannot finish ends with an [`escalation`] report; a shipped one carries its
//! [`proof_report`]. Each call's line on the [`receipt`] says what it cost and how it ended; the
//! [`timeline`] draws those lines as where the run spent its time.
//!
//! Owns: each run's record and artifacts under `.prp-session/runs/<id>/`, and the runs'
//! worktrees under `.git/prpd/worktrees/`.
//! Uses every crate but `prpd-watch` and the binary.

pub mod agent;
pub mod breaker;
pub mod budget;
pub mod cache;
pub mod config;
pub mod driver;
pub mod escalation;
pub mod flaky;
pub mod frozen;
pub mod gate;
pub mod guardrail;
pub mod holdout;
pub mod machine;
pub mod measure;
pub mod planner;
pub mod prompt;
pub mod proof;
pub mod proof_report;
pub mod receipt;
pub mod record;
pub mod session;
pub mod snapshot;
pub mod timeline;
pub mod worktree;
