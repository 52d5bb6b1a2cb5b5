//! The QA gate: given a repository (and optionally a PRP), find its stacks and quality
//! commands, run the checklist's checks, and compute the verdict and the report.
//!
//! Theory of operation. [`discover`] finds the stacks ([`stack`], by the markers of
//! [`tools_mapping`]) and the command of each kind. [`runner`] runs the checks of
//! [`checklist`] — commands through `base::process` in parallel, built-in [`method`]s
//! in-process — reads figures from their output ([`metrics`], [`failures`]), or from the JUnit
//! report the test run wrote ([`junit`]), and evaluates each check's validation into a
//! finding; a blocking failure is a REJECT. [`report`] renders the
//! outcome as Markdown, JSON and the QA status block. [`settings`] lays the repository's own
//! word (`prpd.toml`, its checklist and mapping) over the built-ins and over discovery; every
//! caller takes the checklist and the commands from there.
//!
//! Owns: `qa-checklist.yml`, `qa-tools-mapping.yml`, the QA report formats.
//! Uses `prpd-base` and `prpd-prp` only: no SQLite, no WebSocket, no GitHub client.

pub mod checklist;
pub mod command;
pub mod config;
pub mod discover;
pub mod failures;
pub mod junit;
pub mod memory_context;
pub mod method;
pub mod metrics;
pub mod missing_tool;
pub mod mutation;
pub mod report;
pub(crate) mod requirement_checks;
pub mod runner;
pub mod safety;
pub mod settings;
pub mod stack;
pub mod standalone;
pub mod table_cell;
pub mod test_names;
pub mod tools_mapping;
