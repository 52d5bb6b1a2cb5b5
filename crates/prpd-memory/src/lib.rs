//! Memory: what earlier runs (and humans) taught prpd, asked before every QA so that the same
//! mistake is not approved twice (seed 004, "Memory Integration"; DESIGN §7).
//!
//! Theory of operation. prpd records its own history as [`entry::Entry`]s — every QA REJECT
//! with its blocking items and files, every breaker trip with its error signature, every
//! escalation, every APPROVE, the ADRs and CHANGELOG entries DOCUMENT wrote, and the lessons a
//! human adds with `prpd memory add`. Before QA it asks four questions built from what the run
//! is about ([`query::MemoryQuery`]: the PRP's title and goal, the detected stacks, the changed
//! files) without any LLM: past bugs and failures, stack patterns, architecture decisions, and
//! each changed file's history. The answers are [`finding::Finding`]s, gathered per QA in a
//! [`context::MemoryContext`]. [`backend::Memory`] answers them from the backend `[memory]`
//! chose:
//!
//! - [`store`]: the default, `SQLite` with FTS5 in `.prp-session/memory.db` (bm25 ranking,
//!   porter stemming, user text quoted before `MATCH`, WAL and a busy timeout, a versioned
//!   schema), asked through [`embedded`] with a time box;
//! - [`mcp`]: an MCP memory server (claude-self-reflect) started as a child process, its tools
//!   mapped onto the capabilities, every call time-boxed;
//! - none (`[memory] backend = "off"`).
//!
//! Answers carry warnings instead of failing ([`finding::Recall`]): memory that is off, slow,
//! missing a tool or gone is a WARNING in the QA report, and QA goes on.
//!
//! Uses `prpd-base`, `prpd-prp` and `prpd-qa` (its `Cargo.toml`; the build allows nothing else).

pub mod backend;
pub mod config;
pub mod context;
pub mod embedded;
pub mod entry;
pub mod finding;
pub mod mcp;
pub mod query;
pub mod report;
pub mod store;
