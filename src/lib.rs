//! prpd drives AI coding agents through RED → GREEN → REFACTOR → DOCUMENT → QA → SHIP for one
//! feature request (a PRP document) at a time, and decides from facts it measures itself when a
//! phase is done, when an agent is stuck, and whether the work passes QA.
//!
//! The binary (`src/main.rs`) is a thin shell around [`cli::run`]; everything else lives here.
//! `ARCHITECTURE.md` at the repository root has the map of the modules and their invariants.

pub mod agent;
pub mod breaker;
pub mod checklist;
pub mod cli;
pub mod config;
pub mod config_file;
pub mod demo;
pub mod discover;
pub mod driver;
pub mod escalation;
pub mod exit;
pub mod failures;
pub mod files;
pub mod gate;
pub mod guardrail;
pub mod lock;
pub mod machine;
pub mod measure;
pub mod method;
pub mod metrics;
pub mod paths;
pub mod process;
pub mod prompt;
pub mod prp;
pub mod qa;
pub mod report;
pub mod run;
pub mod session;
pub mod stack;
pub mod status_block;
pub mod tools_mapping;
