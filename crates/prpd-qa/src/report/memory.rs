//! The report's "Memory Context" section (seed 004, Appendix A): the table of the four queries
//! with their counts and key findings, and a WARNING for each that got no answer, rendered from
//! [`MemorySection`] whether the history came from the embedded store, an MCP server, or
//! nowhere.

use std::fmt::Write as _;

use crate::memory_context::MemorySection;

/// How many key findings a row of the table quotes.
const QUOTED_FINDINGS: usize = 3;

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
