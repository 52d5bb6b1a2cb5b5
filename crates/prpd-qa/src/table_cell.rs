//! One Markdown table cell: every table prpd renders (the QA report, the requirements, the
//! critical points, the `[VERIFY]` AC checklist) passes its text through here, so a line break
//! or a pipe in a test name or a criterion cannot break a row.

/// Text fit for one Markdown table cell: one line, pipes escaped.
pub fn cell(text: &str) -> String {
    text.replace(['\n', '\r'], " ").replace('|', "\\|")
}
