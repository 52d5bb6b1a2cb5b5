//! What the memory answered before a QA, as plain data: the four queries' counts and key
//! findings, and the warnings of those that got no answer. The memory sits above `qa`, so QA
//! cannot ask it; whoever did (the run's driver) fills this in the QA outcome, and the report
//! and the status block render it the same whatever backend answered.

use serde::Serialize;

/// What the memory said before this QA.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemorySection {
    /// Which memory answered, as a person reads it (`the embedded store at …`).
    pub backend: String,
    pub historical_bugs: MemoryRow,
    pub stack_patterns: MemoryRow,
    pub architecture_decisions: MemoryRow,
    pub file_history: MemoryRow,
    /// Memory off, slow, a tool missing or a server gone: each a WARNING in the report (QA
    /// goes on without it).
    pub warnings: Vec<String>,
}

/// One query's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemoryRow {
    /// Whether the query was asked and answered (a slow or failed one was not).
    pub answered: bool,
    pub results: usize,
    /// The best findings, one line each (what, from which run).
    pub key_findings: Vec<String>,
}

impl MemorySection {
    /// The four rows with their names, in the report's order.
    pub fn rows(&self) -> [(&'static str, &MemoryRow); 4] {
        [
            ("Historical Bugs", &self.historical_bugs),
            ("Stack Patterns", &self.stack_patterns),
            ("Architecture Decisions", &self.architecture_decisions),
            ("File History", &self.file_history),
        ]
    }

    /// How many queries were answered.
    pub fn queries_executed(&self) -> usize {
        self.rows().iter().filter(|(_, row)| row.answered).count()
    }
}
