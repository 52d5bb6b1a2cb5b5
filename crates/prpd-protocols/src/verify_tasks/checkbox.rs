//! Marking a `[VERIFY]` task done in its task list: `- [ ]` becomes `- [x]` on the task's own
//! line and nowhere else, only after the task passed. The line is rewritten only while it is
//! still the line that was read (someone may have edited the file while the commands ran), the
//! rest of the file is kept byte for byte (line endings included), and the file is replaced
//! atomically.

use std::path::Path;

use super::task::{Checkbox, VerifyTask};
use prpd_base::files;

/// What marking a task did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marked {
    /// `[ ]` became `[x]`.
    Ticked,
    /// Nothing to do: the item has no checkbox, or it is already ticked.
    Unchanged,
    /// The task's line is no longer what was read: left alone.
    LineChanged,
}

/// `text` with the checkbox of the item on `line` (1-based) ticked, when that line (without
/// its line ending) is still `expected`; `None` otherwise.
pub fn ticked(text: &str, line: usize, expected: &str) -> Option<String> {
    let mut offset = 0;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        if index + 1 == line {
            let content = raw.trim_end_matches(['\n', '\r']);
            let content = if index == 0 {
                content.trim_start_matches('\u{feff}')
            } else {
                content
            };
            if content != expected {
                return None;
            }
            let at = offset + raw.find("[ ]")?;
            return Some(format!("{}[x]{}", &text[..at], &text[at + 3..]));
        }
        offset += raw.len();
    }
    None
}

/// Ticks `task`'s checkbox in the file at `path`.
pub fn mark_done(path: &Path, task: &VerifyTask) -> std::io::Result<Marked> {
    match task.checkbox {
        Checkbox::Absent | Checkbox::Ticked => return Ok(Marked::Unchanged),
        Checkbox::Open => {}
    }
    let text = std::fs::read_to_string(path)?;
    let Some(updated) = ticked(&text, task.line, &task.line_text) else {
        return Ok(Marked::LineChanged);
    };
    files::write_atomically(path, updated.as_bytes())?;
    Ok(Marked::Ticked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify_tasks::task::parse;

    #[test]
    fn only_the_tasks_own_line_is_ticked() {
        let line = "- [ ] V4 [VERIFY] Full local CI: npm test";
        let cases = [
            (
                "# T\n- [ ] 1.1 other [ ] box\n- [ ] V4 [VERIFY] Full local CI: npm test\n- [ ] V5\n",
                3,
                Some(
                    "# T\n- [ ] 1.1 other [ ] box\n- [x] V4 [VERIFY] Full local CI: npm test\n- [ ] V5\n",
                ),
            ),
            (
                "\u{feff}- [ ] V4 [VERIFY] Full local CI: npm test\r\n\r\nend",
                1,
                Some("\u{feff}- [x] V4 [VERIFY] Full local CI: npm test\r\n\r\nend"),
            ),
            (
                "- [ ] V4 [VERIFY] Full local CI: npm test",
                1,
                Some("- [x] V4 [VERIFY] Full local CI: npm test"),
            ),
            (
                "# T\n- [ ] V4 [VERIFY] Full local CI: npm test && x\n",
                2,
                None,
            ),
            ("# T\n", 2, None),
        ];
        for (text, number, expected) in cases {
            assert_eq!(ticked(text, number, line).as_deref(), expected, "{text:?}");
        }
    }

    #[test]
    fn marking_rewrites_the_file_once_and_leaves_other_files_alone() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let path = directory.path().join("tasks.md");
        let text = "# Tasks\n\n- [ ] V1 [VERIFY] Quality check: make lint\n4. V4 [VERIFY] Full local CI: make\n";
        std::fs::write(&path, text).expect("fixture");
        let tasks = parse(text);
        assert_eq!(
            mark_done(&path, &tasks[1]).expect("no checkbox"),
            Marked::Unchanged
        );
        assert_eq!(mark_done(&path, &tasks[0]).expect("ticked"), Marked::Ticked);
        let after = std::fs::read_to_string(&path).expect("read");
        assert_eq!(after, text.replacen("- [ ]", "- [x]", 1));
        std::fs::write(
            &path,
            "# Tasks\n\n- [ ] V1 [VERIFY] Quality check: make lint test\n",
        )
        .expect("edited meanwhile");
        assert_eq!(
            mark_done(&path, &tasks[0]).expect("read"),
            Marked::LineChanged
        );
    }
}
