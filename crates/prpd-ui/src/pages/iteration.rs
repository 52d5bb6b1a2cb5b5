//! One iteration's detail, loaded when a person opens it on the run page: the prompt prpd
//! gave, the tail of what the agent printed, its status block, what prpd measured (with the
//! tails of the commands' logs), and what the iteration changed — the diff between the
//! snapshots before and after it, while the run keeps them.

use std::fmt::Write as _;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use prpd_base::paths::SessionPaths;
use prpd_run::session;

use crate::html::{self, escape};

/// How much of a prompt is shown (its start), and of an output or a log (its end).
const PROMPT_BYTES: u64 = 64 * 1024;
const OUTPUT_BYTES: u64 = 64 * 1024;
const LOG_BYTES: u64 = 8 * 1024;
/// The largest diff shown.
const DIFF_BYTES: usize = 256 * 1024;

/// An iteration's folder name, `007-green-1`: the run's iteration number, the phase, the
/// iteration of that phase's visit.
#[derive(Debug, PartialEq, Eq)]
pub struct Folder {
    pub sequence: u32,
    pub phase: String,
    pub iteration: u32,
}

impl Folder {
    pub fn parse(name: &str) -> Option<Folder> {
        let (sequence, rest) = name.split_once('-')?;
        let (phase, iteration) = rest.rsplit_once('-')?;
        Some(Folder {
            sequence: sequence.parse().ok()?,
            phase: phase.to_ascii_uppercase(),
            iteration: iteration.parse().ok()?,
        })
    }
}

/// The folder of iteration `sequence` of the run, when there is one.
pub fn folder(session: &SessionPaths, run_id: &str, sequence: u32) -> Option<PathBuf> {
    let dir = session.run_dir(run_id).join("iterations");
    std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .find(|entry| {
            entry
                .file_name()
                .to_str()
                .and_then(Folder::parse)
                .is_some_and(|folder| folder.sequence == sequence)
        })
        .map(|entry| entry.path())
}

/// The detail of iteration `sequence` of `run_id`, whose files are in `dir`.
pub fn fragment(repo: &Path, run_id: &str, sequence: u32, dir: &Path) -> String {
    let mut out = String::with_capacity(32 * 1024);
    section(
        &mut out,
        "The prompt",
        head(&dir.join("prompt.md"), PROMPT_BYTES).map(|text| html::pre("prompt", &text)),
    );
    section(
        &mut out,
        "What the agent printed (its end)",
        tail(&dir.join("output.log"), OUTPUT_BYTES).map(|text| html::pre("output", &text)),
    );
    section(
        &mut out,
        "Its status block",
        tail(&dir.join("status-block.txt"), OUTPUT_BYTES).map(|text| html::pre("block", &text)),
    );
    section(
        &mut out,
        "What prpd measured",
        head(&dir.join("measured.json"), OUTPUT_BYTES).map(|text| html::pre("measured", &text)),
    );
    logs(&mut out, dir);
    let diff = match session::diff(repo, Some(run_id), Some(sequence)) {
        Ok(patch) if patch.is_empty() => Some("<p class=\"empty\">No change.</p>".to_owned()),
        Ok(mut patch) => {
            if patch.len() > DIFF_BYTES {
                let mut end = DIFF_BYTES;
                while !patch.is_char_boundary(end) {
                    end -= 1;
                }
                patch.truncate(end);
                patch.push_str("\n… (cut: `prpd diff` prints it whole)\n");
            }
            Some(html::diff(&patch))
        }
        Err(error) => Some(format!(
            "<p class=\"missing\">{}</p>",
            escape(&error.to_string())
        )),
    };
    section(&mut out, "What it changed", diff);
    out
}

fn section(out: &mut String, title: &str, body: Option<String>) {
    let Some(body) = body else {
        return;
    };
    let _ = write!(out, "<h3>{}</h3>{body}", escape(title));
}

/// The commands' logs of the iteration (tests, lint, complexity, QA checks), each's end.
fn logs(out: &mut String, dir: &Path) {
    let mut logs: Vec<PathBuf> = Vec::new();
    for folder in [dir.to_path_buf(), dir.join("checks")] {
        if let Ok(entries) = std::fs::read_dir(&folder) {
            logs.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.path())
                    .filter(|path| {
                        path.extension().is_some_and(|extension| extension == "log")
                            && path.file_name().is_some_and(|name| name != "output.log")
                    }),
            );
        }
    }
    logs.sort();
    if logs.is_empty() {
        return;
    }
    out.push_str("<h3>The commands prpd ran</h3>");
    for log in logs {
        let name = log.strip_prefix(dir).unwrap_or(&log).display().to_string();
        let text = tail(&log, LOG_BYTES).unwrap_or_default();
        let _ = write!(
            out,
            "<details class=\"log\"><summary>{}</summary>{}</details>",
            escape(&name),
            html::pre("log", &text)
        );
    }
}

/// The first `bytes` of the file, when it exists.
fn head(path: &Path, bytes: u64) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    let mut buffer = Vec::new();
    file.take(bytes).read_to_end(&mut buffer).ok()?;
    let mut text = String::from_utf8_lossy(&buffer).into_owned();
    if length > bytes {
        let _ = write!(
            text,
            "\n… ({} more bytes in {})",
            length - bytes,
            path.display()
        );
    }
    Some(text)
}

/// The last `bytes` of the file, when it exists.
fn tail(path: &Path, bytes: u64) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    let start = length.saturating_sub(bytes);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut buffer = Vec::new();
    // A file that grows meanwhile (the agent still prints) is read no further than `bytes`.
    file.take(bytes).read_to_end(&mut buffer).ok()?;
    let text = String::from_utf8_lossy(&buffer).into_owned();
    Some(if start > 0 {
        format!("… ({start} earlier bytes in {})\n{text}", path.display())
    } else {
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_are_read() {
        assert_eq!(
            Folder::parse("007-green-1"),
            Some(Folder {
                sequence: 7,
                phase: "GREEN".to_owned(),
                iteration: 1
            })
        );
        assert_eq!(Folder::parse("notes"), None);
        assert_eq!(Folder::parse("x-green-1"), None);
    }

    #[test]
    fn heads_and_tails_are_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("output.log");
        std::fs::write(&path, "a".repeat(100) + "END").expect("write");
        let end = tail(&path, 10).expect("tail");
        assert!(end.ends_with("aaaaaaaEND"), "{end}");
        assert!(end.starts_with("… (93 earlier bytes"), "{end}");
        let start = head(&path, 10).expect("head");
        assert!(start.starts_with("aaaaaaaaaa\n… (93 more bytes"), "{start}");
        assert!(tail(&dir.path().join("absent"), 10).is_none());
    }
}
