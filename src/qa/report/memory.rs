//! The report's "Memory Context": what the memory answered before this QA, as the report and
//! the QA status block show it (seed 004, Appendix A). It is plain data filled by whoever asked
//! the memory (the run's driver, `prpd qa`), because the memory sits above `qa` and QA must
//! not depend on it: a report renders the same whether the history came from the embedded
//! store, an MCP server, or nowhere.

use std::fmt::Write as _;

use serde::Serialize;

/// How many key findings a row of the table quotes.
const QUOTED_FINDINGS: usize = 3;

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

/// The "Memory Context" section of the Markdown report; `None`: memory was not asked (it is
/// off, or this is `prpd qa` outside a run).
pub(super) fn write(out: &mut String, memory: Option<&MemorySection>) {
    let _ = writeln!(out, "## Memory Context\n");
    let Some(memory) = memory else {
        let _ = writeln!(
            out,
            "No history was consulted: memory is off (`[memory] backend = \"off\"`), or this is `prpd qa` outside a run, which does not ask it. Past bugs, patterns, decisions and file history are not part of this verdict.\n"
        );
        let _ = writeln!(out, "| Query | Results | Key Findings |");
        let _ = writeln!(out, "|-------|---------|--------------|");
        for (query, _) in MemorySection::default().rows() {
            let _ = writeln!(out, "| {query} | not queried | memory not consulted |");
        }
        let _ = writeln!(out, "\n---\n");
        return;
    };
    let _ = writeln!(out, "Asked {}.\n", memory.backend);
    for warning in &memory.warnings {
        let _ = writeln!(out, "> ⚠️ WARNING: {}\n", super::cell(warning));
    }
    let _ = writeln!(out, "| Query | Results | Key Findings |");
    let _ = writeln!(out, "|-------|---------|--------------|");
    for (query, row) in memory.rows() {
        let (results, findings) = if !row.answered {
            (
                "not answered".to_owned(),
                "see the warning above".to_owned(),
            )
        } else if row.key_findings.is_empty() {
            (row.results.to_string(), "nothing recorded".to_owned())
        } else {
            let quoted: Vec<String> = row
                .key_findings
                .iter()
                .take(QUOTED_FINDINGS)
                .map(|finding| super::cell(finding))
                .collect();
            (row.results.to_string(), quoted.join("<br>"))
        };
        let _ = writeln!(out, "| {query} | {results} | {findings} |");
    }
    let _ = writeln!(out, "\n---\n");
}
