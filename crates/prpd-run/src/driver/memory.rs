//! The run's memory (`[memory]`): what the run learned is recorded as it happens — every QA
//! verdict with its blocking items and the files the run changed, every escalation (a breaker
//! trip with its error signature), the ADRs and CHANGELOG entries DOCUMENT wrote — and before
//! each QA the four questions are asked, for the report's Memory Context and the status
//! block's counts; GREEN's prompt after a REJECT recalls the past failures like it. Memory
//! that is off, slow or gone is a warning (in the log, or in the QA report), never a stop.
//!
//! The memory is opened once per driving session, on first use, and closed (an MCP server
//! stopped) when the session ends. An MCP server stays up while the agents run: it is a
//! `process::Service`, which the sweep after each agent call leaves alone.

use std::path::PathBuf;
use std::time::Instant;

use crate::machine::{EscalationReason, QaVerdict};
use crate::snapshot::Change;
use prpd_base::phase::Phase;
use prpd_memory::backend::Memory;
use prpd_memory::entry::{Entry, RunEntries};
use prpd_memory::query::{MemoryQuery, Question};
use prpd_memory::report;
use prpd_qa::discover::Detection;
use prpd_qa::memory_context::MemorySection;

use super::own_time::Part;
use super::{Driver, unix_now};

/// How many past failures a GREEN prompt recalls.
const RECALLED_FAILURES: usize = 3;

/// The memory as this session opened it, with the warnings of opening it.
#[derive(Debug)]
pub(super) struct OpenMemory {
    memory: Memory,
    warnings: Vec<String>,
}

impl Driver {
    /// The memory, opened on first use.
    async fn memory(&mut self) -> &OpenMemory {
        let open = if let Some(open) = self.memory.take() {
            open
        } else {
            let opened =
                Memory::open_or_unavailable(&self.context.home, &self.context.config.memory).await;
            for warning in &opened.warnings {
                tracing::warn!(%warning, "memory");
            }
            OpenMemory {
                memory: opened.value,
                warnings: opened.warnings,
            }
        };
        self.memory.insert(open)
    }

    /// Stops an MCP memory server this session started.
    pub(super) async fn close_memory(&mut self) {
        if let Some(open) = self.memory.take() {
            open.memory.close().await;
        }
    }

    /// What every entry of this run shares.
    fn run_entries(&self) -> RunEntries {
        RunEntries {
            run_id: self.record.run_id.clone(),
            prp_title: self.context.prp.title.clone(),
            stacks: self.stack_ids(),
            now: unix_now(),
        }
    }

    fn stack_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for stack in self
            .record
            .detection
            .iter()
            .flat_map(|detection| &detection.stacks)
        {
            if !ids.contains(&stack.id) {
                ids.push(stack.id.clone());
            }
        }
        ids
    }

    /// Records `entries`; a failure is a warning in the log.
    async fn remember(&mut self, entries: Vec<Entry>) {
        let started = Instant::now();
        for entry in entries {
            let recall = self.memory().await.memory.record(&entry).await;
            for warning in recall.warnings {
                tracing::warn!(%warning, kind = %entry.kind, "memory");
            }
        }
        self.own_time.add(Part::Memory, started);
    }

    /// The files the run changed so far (the base snapshot against the last one), relative to
    /// the repository root; empty when prpd cannot tell.
    fn changed_files(&self) -> Vec<String> {
        let (Some(base), Some(last)) = (&self.record.snapshots.base, &self.record.snapshots.last)
        else {
            return Vec::new();
        };
        match self
            .snapshots()
            .and_then(|snapshots| Ok(snapshots.changes(base, last)?))
        {
            Ok(changes) => changes
                .into_keys()
                .map(|path| path.to_string_lossy().into_owned())
                .collect(),
            Err(error) => {
                tracing::warn!(%error, "memory: cannot tell which files the run changed");
                Vec::new()
            }
        }
    }

    /// Records a QA verdict: a REJECT with its blocking items, an APPROVE with what passed.
    pub(super) async fn remember_verdict(
        &mut self,
        verdict: QaVerdict,
        attempt: u32,
        blocking: &[String],
    ) {
        let files = self.changed_files();
        let run = self.run_entries();
        let entry = match verdict {
            QaVerdict::Reject => run.reject(attempt, blocking, &files),
            QaVerdict::Approve => run.approve(
                &format!(
                    "QA approved attempt {attempt} of {} ({} files changed: {})",
                    self.context.prp.title,
                    files.len(),
                    files.join(", ")
                ),
                &files,
            ),
        };
        self.remember(vec![entry]).await;
    }

    /// Records an escalation, and for an open breaker the trip with its error signature.
    pub(super) async fn remember_escalation(&mut self, reason: &EscalationReason) {
        let files = self.changed_files();
        let run = self.run_entries();
        let mut entries = vec![run.escalation(&reason.to_string(), &files)];
        if let EscalationReason::BreakerOpen { trip } = reason {
            let signature = self
                .record
                .last_observation
                .as_ref()
                .and_then(|observation| observation.error_signature.clone())
                .map_or_else(
                    || trip.to_string(),
                    |signature| format!("{trip}; the error it kept seeing: {signature}"),
                );
            entries.push(run.breaker_trip(trip.phase, &signature, &files));
        }
        self.remember(entries).await;
    }

    /// Remembers the tests this run saw flip, one line each with where, so that the next QA
    /// and GREEN prompt recall them.
    pub(super) async fn remember_flaky(&mut self) {
        if self.record.flaky.seen.is_empty() {
            return;
        }
        let tests: Vec<String> = self
            .record
            .flaky
            .seen
            .iter()
            .map(|(name, sighting)| {
                format!(
                    "{name} (failed and passed on tree {}, {})",
                    sighting.tree,
                    sighting.measured()
                )
            })
            .collect();
        let entry = self.run_entries().flaky_tests(&tests);
        self.remember(vec![entry]).await;
    }

    /// Records the ADRs and the CHANGELOG entries DOCUMENT added or changed.
    pub(super) async fn remember_documentation(&mut self) {
        let Some(documents) = self.documents_written() else {
            return;
        };
        let run = self.run_entries();
        let mut entries = Vec::new();
        for (path, text) in documents {
            let file = path.to_string_lossy().into_owned();
            if is_changelog(&path) {
                let added = self.added_lines(&path, &text);
                if !added.trim().is_empty() {
                    entries.push(run.changelog(&added, &file));
                }
            } else {
                let title = text
                    .lines()
                    .find_map(|line| {
                        line.strip_prefix('#')
                            .map(|title| title.trim_start_matches('#').trim())
                    })
                    .filter(|title| !title.is_empty())
                    .unwrap_or(&file)
                    .to_owned();
                entries.push(run.decision(&title, &text, &file));
            }
        }
        self.remember(entries).await;
    }

    /// The ADRs and CHANGELOGs that differ between the base snapshot and the last one, with
    /// their text now.
    fn documents_written(&self) -> Option<Vec<(PathBuf, String)>> {
        let (base, last) = (
            self.record.snapshots.base.as_ref()?,
            self.record.snapshots.last.as_ref()?,
        );
        let snapshots = self.snapshots().ok()?;
        let changes = snapshots.changes(base, last).ok()?;
        Some(
            changes
                .into_iter()
                .filter(|(path, change)| {
                    *change != Change::Deleted && (is_changelog(path) || is_adr(path))
                })
                .filter_map(|(path, _)| {
                    let text = snapshots.read(last, &path).ok()??;
                    Some((path, text))
                })
                .collect(),
        )
    }

    /// The lines of `text` (the file at `path` now) that the base snapshot did not have.
    fn added_lines(&self, path: &std::path::Path, text: &str) -> String {
        let before = self
            .record
            .snapshots
            .base
            .as_ref()
            .and_then(|base| self.snapshots().ok()?.read(base, path).ok()?)
            .unwrap_or_default();
        let old: std::collections::HashSet<&str> = before.lines().collect();
        text.lines()
            .filter(|line| !line.trim().is_empty() && !old.contains(line))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Asks the four QA questions about the run; `None` when memory is off.
    pub(super) async fn memory_section(&mut self, detection: &Detection) -> Option<MemorySection> {
        let started = Instant::now();
        let section = self.ask_memory_section(detection).await;
        self.own_time.add(Part::Memory, started);
        section
    }

    async fn ask_memory_section(&mut self, detection: &Detection) -> Option<MemorySection> {
        let files = self.changed_files();
        let query = MemoryQuery::of_run(&self.context.prp, &detection.stacks, &files);
        let run_id = self.record.run_id.clone();
        let open = self.memory().await;
        if matches!(open.memory, Memory::Off) {
            return None;
        }
        let context = open.memory.context(&query).await;
        Some(report::section(
            &context,
            open.memory.describe(),
            &open.warnings,
            &run_id,
        ))
    }

    /// The past failures like the blockers GREEN must fix, for its prompt (empty in other
    /// phases, and when nothing like them is recorded).
    pub(super) async fn recalled_failures(&mut self, phase: Phase) -> Vec<String> {
        if phase != Phase::Green || self.record.qa_blockers.is_empty() {
            return Vec::new();
        }
        let text = format!(
            "{} {}",
            self.context.prp.title,
            self.record.qa_blockers.join(" ")
        );
        let started = Instant::now();
        let recall = self
            .memory()
            .await
            .memory
            .ask(&Question::Bugs(text), RECALLED_FAILURES)
            .await;
        self.own_time.add(Part::Memory, started);
        for warning in recall.warnings {
            tracing::warn!(%warning, "memory: no past failures recalled for GREEN");
        }
        report::recalled_failures(&recall.value, &self.record.run_id)
            .into_iter()
            .map(|line| format!("Recalled from memory: {line}"))
            .collect()
    }
}

/// `CHANGELOG.md` (any case, any folder).
fn is_changelog(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.to_ascii_lowercase().starts_with("changelog"))
}

/// A Markdown file in a folder named `adr`, `adrs` or `decisions`.
fn is_adr(path: &std::path::Path) -> bool {
    let markdown = path
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("md"));
    markdown
        && path.parent().is_some_and(|folder| {
            folder.components().any(|part| {
                matches!(
                    part.as_os_str()
                        .to_string_lossy()
                        .to_ascii_lowercase()
                        .as_str(),
                    "adr" | "adrs" | "decisions"
                )
            })
        })
}
