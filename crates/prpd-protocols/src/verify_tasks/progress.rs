//! `.progress.md` beside a task list: the seed keeps what each `[VERIFY]` task found under its
//! `## Learnings` section, so the next person (or agent) reads what failed and why. An entry
//! goes at the end of that section, before the next `#`/`##` heading; a file without the
//! section gets it at its end, and a missing file is created. The placement is pure
//! ([`with_learning`]); [`append_learning`] reads and writes the file atomically, so a reader
//! never sees half an entry.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use prpd_base::files;
use prpd_prp::unfenced_lines;

/// The file name the seed keeps progress in, beside the task list.
pub const FILE_NAME: &str = ".progress.md";

/// The section the entries go under.
const SECTION: &str = "## Learnings";

static SECTION_HEADING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^ {0,3}##[ \t]+learnings[ \t#]*$").expect("a valid regex"));
static TOP_HEADING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ {0,3}#{1,2}(?:[ \t]|$)").expect("a valid regex"));

/// The progress file of the task list at `tasks_file`.
pub fn progress_file(tasks_file: &Path) -> PathBuf {
    tasks_file
        .parent()
        .map_or_else(|| PathBuf::from(FILE_NAME), |folder| folder.join(FILE_NAME))
}

/// `existing` with `entry` placed at the end of its `## Learnings` section (the section added
/// at the end when there is none). `entry` ends with a newline.
pub fn with_learning(existing: &str, entry: &str) -> String {
    let lines = unfenced_lines(existing);
    let section = lines
        .iter()
        .position(|(_, line)| SECTION_HEADING.is_match(line));
    let Some(section) = section else {
        let mut text = existing.trim_end().to_owned();
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(SECTION);
        text.push_str("\n\n");
        text.push_str(entry);
        return text;
    };
    let next_heading = lines[section + 1..]
        .iter()
        .find(|(_, line)| TOP_HEADING.is_match(line))
        .map(|(number, _)| *number);
    let Some(next_heading) = next_heading else {
        let mut text = existing.trim_end().to_owned();
        text.push_str("\n\n");
        text.push_str(entry);
        return text;
    };
    let offset: usize = existing
        .split_inclusive('\n')
        .take(next_heading - 1)
        .map(str::len)
        .sum();
    let (before, after) = existing.split_at(offset);
    format!("{}\n\n{entry}\n{after}", before.trim_end())
}

/// Adds `entry` to the `.progress.md` at `path` (created when missing), atomically.
pub fn append_learning(path: &Path, entry: &str) -> std::io::Result<()> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error),
    };
    files::write_atomically(path, with_learning(&existing, entry).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: &str = "### V4 [VERIFY] Full local CI: VERIFICATION_PASS\n\nbody\n";

    #[test]
    fn entries_go_at_the_end_of_the_learnings_section() {
        let cases = [
            (
                "",
                "## Learnings\n\n### V4 [VERIFY] Full local CI: VERIFICATION_PASS\n\nbody\n",
            ),
            (
                "# Progress\n\n## Completed\n- 1.1\n",
                "# Progress\n\n## Completed\n- 1.1\n\n## Learnings\n\n\
                 ### V4 [VERIFY] Full local CI: VERIFICATION_PASS\n\nbody\n",
            ),
            (
                "# Progress\n\n## Learnings\n- the API needs a token\n\n## Next\n- V5\n",
                "# Progress\n\n## Learnings\n- the API needs a token\n\n\
                 ### V4 [VERIFY] Full local CI: VERIFICATION_PASS\n\nbody\n\n## Next\n- V5\n",
            ),
            (
                "## learnings ##\n\n### V1 [VERIFY] x: VERIFICATION_FAIL\n\n```\n## not a heading\n```\n",
                "## learnings ##\n\n### V1 [VERIFY] x: VERIFICATION_FAIL\n\n```\n## not a heading\n```\n\n\
                 ### V4 [VERIFY] Full local CI: VERIFICATION_PASS\n\nbody\n",
            ),
            (
                "## Learnings\r\n- one\r\n## Done\r\n",
                "## Learnings\r\n- one\n\n### V4 [VERIFY] Full local CI: VERIFICATION_PASS\n\n\
                 body\n\n## Done\r\n",
            ),
        ];
        for (existing, expected) in cases {
            assert_eq!(with_learning(existing, ENTRY), expected, "{existing:?}");
        }
    }

    #[test]
    fn the_file_is_created_then_extended() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let path = progress_file(&directory.path().join("tasks.md"));
        assert!(path.ends_with(".progress.md"));
        append_learning(&path, ENTRY).expect("created");
        append_learning(&path, "### second\n").expect("extended");
        let text = std::fs::read_to_string(&path).expect("written");
        assert_eq!(
            text,
            "## Learnings\n\n### V4 [VERIFY] Full local CI: VERIFICATION_PASS\n\nbody\n\n### second\n"
        );
    }
}
