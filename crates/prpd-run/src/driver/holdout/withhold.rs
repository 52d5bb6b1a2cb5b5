//! Keeping the held-out tests' lines from what GREEN reads (`holdout/withhold.rs` decides which
//! lines): the record's texts, which are sealed as a git object at every save, are redacted as
//! they are made; the run directory's files that quote a held-out line are redacted in place
//! when the tests leave the tree, their originals kept in the store until the run ends.

use crate::holdout::{self, Redacted};

use super::super::{DriveError, Driver, write_text};
use super::{STORE, read_stored};

impl Driver {
    /// `text` without a line of a held-out test: for what the record keeps, which is sealed as
    /// a git object at every save (the run directory's files are withheld in place instead).
    pub(in crate::driver) fn without_held_lines(&self, text: String) -> Result<String, DriveError> {
        if self.record.holdout.tests.is_empty() {
            return Ok(text);
        }
        Ok(self.held_lines()?.redact(&text).unwrap_or(text))
    }

    /// What each check says (its detail and the tail of its output) without a line of a
    /// held-out test; the store is read once for all of them.
    pub(in crate::driver) fn withhold_from_checks(
        &self,
        checks: &mut [prpd_qa::runner::CheckResult],
    ) -> Result<(), DriveError> {
        if self.record.holdout.tests.is_empty() {
            return Ok(());
        }
        let lines = self.held_lines()?;
        for check in checks {
            for text in [&mut check.detail, &mut check.output_tail] {
                if let Some(redacted) = lines.redact(text) {
                    *text = redacted;
                }
            }
        }
        Ok(())
    }

    /// GREEN's feedback after a REJECT says which held-out tests failed and what their runner
    /// said (the `HOLDOUT` check's line), never a line of their source.
    pub(in crate::driver) fn withhold_from_feedback(
        &self,
        reasons: &mut [String],
    ) -> Result<(), DriveError> {
        let lines = self.held_lines()?;
        for reason in reasons.iter_mut() {
            if let Some(redacted) = lines.redact(reason) {
                *reason = redacted;
            }
        }
        Ok(())
    }

    /// Redacts every file of the run directory (and every text of the record GREEN's prompt
    /// reads) that quotes a line of a held-out test, keeping the file's original in the store.
    pub(super) fn withhold_run_files(&mut self) -> Result<(), DriveError> {
        let lines = self.held_lines()?;
        if lines.is_empty() {
            return Ok(());
        }
        let run_dir = self.run_dir();
        let record_file = self.paths().record();
        let mut pending = vec![run_dir.clone()];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    if path != run_dir.join(STORE) {
                        pending.push(path);
                    }
                    continue;
                }
                if !kind.is_file() || path == record_file {
                    continue;
                }
                let Ok(current) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let relative = path.strip_prefix(&run_dir).unwrap_or(&path).to_path_buf();
                let stored = run_dir.join(STORE).join("withheld").join(&relative);
                // A file withheld before: its original is the stored one and what came since.
                let original = self
                    .record
                    .holdout
                    .withheld
                    .get(&relative)
                    .and_then(|redacted| redacted.original(&read_stored(&stored)?, &current))
                    .unwrap_or(current);
                let Some(redacted) = lines.redact(&original) else {
                    continue;
                };
                write_text(&stored, &holdout::encode(&original))?;
                write_text(&path, &redacted)?;
                self.record
                    .holdout
                    .withheld
                    .insert(relative, Redacted::of(&redacted));
            }
        }
        let record = &mut self.record;
        let texts = record
            .last_qa_markdown
            .iter_mut()
            .chain(record.feedback.values_mut().flatten())
            .chain(record.evidence.iter_mut())
            .chain(record.qa_blockers.iter_mut())
            .chain(
                record
                    .verdicts
                    .iter_mut()
                    .flat_map(|verdict| verdict.blocking.iter_mut()),
            );
        for text in texts {
            if let Some(redacted) = lines.redact(text) {
                *text = redacted;
            }
        }
        Ok(())
    }
}
