//! The dashboard's pages, one module each: the runs of the repository (`runs`), one run
//! (`run`: its facts, the escalation with its buttons, the timeline, the iterations, the receipt
//! and the QA report) and one iteration's detail (`iteration`), loaded when a person opens it.
//! Each is a function from what is on disk to HTML; none writes anything.

pub mod iteration;
pub mod run;
pub mod runs;
