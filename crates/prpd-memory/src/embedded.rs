//! The embedded store as the async loop asks it: every question runs on a blocking thread
//! (SQLite blocks) against the one connection, behind a mutex, and is time-boxed by
//! `[memory] timeout`. A question that takes longer is given up as [`Unanswered::TimedOut`],
//! and the statement still running is interrupted, so it does not hold the connection either.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::InterruptHandle;

use crate::entry::Entry;
use crate::finding::{Finding, Unanswered, with_sources};
use crate::query::{Capability, Question};
use crate::store::search::Wanted;
use crate::store::{Store, StoreError, StoreStats};

/// The embedded store with its time box.
pub struct Embedded {
    store: Arc<Mutex<Store>>,
    interrupt: Arc<InterruptHandle>,
    timeout: Duration,
    path: PathBuf,
}

impl std::fmt::Debug for Embedded {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Embedded")
            .field("path", &self.path)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Embedded {
    /// Opens (or creates) the store at `path`; each later question may take `timeout`.
    pub fn open(path: &Path, timeout: Duration) -> Result<Embedded, StoreError> {
        let store = Store::open(path)?;
        Ok(Embedded {
            interrupt: Arc::new(store.interrupt_handle()),
            store: Arc::new(Mutex::new(store)),
            timeout,
            path: path.to_path_buf(),
        })
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Up to `limit` findings for `question`.
    pub async fn ask(&self, question: &Question, limit: usize) -> Result<Vec<Finding>, Unanswered> {
        let capability = question.capability();
        let subject = question.subject().to_owned();
        let work = move |store: &mut Store| match capability {
            Capability::File => store.file_history(&subject, limit),
            Capability::Bugs | Capability::Patterns | Capability::Decisions => {
                store.search(&subject, capability.kinds(), limit)
            }
        };
        self.time_boxed(format!("the {capability} question"), work)
            .await
    }

    /// The answers to `questions` (a QA's four) from one blocking task: the text questions in
    /// one ranked pass over all their words ([`Store::search_each`]), each file's history by
    /// itself; the whole of it time-boxed once.
    pub async fn answer_all(
        &self,
        questions: &[Question],
    ) -> Result<Vec<(Question, Vec<Finding>)>, Unanswered> {
        let questions = questions.to_vec();
        self.time_boxed("the QA questions".to_owned(), move |store: &mut Store| {
            let texts: Vec<&Question> = questions
                .iter()
                .filter(|question| question.capability() != Capability::File)
                .collect();
            // Stacks and the title (the patterns question) first: the first common words weigh.
            let mut ordered = texts.clone();
            ordered.sort_by_key(|question| question.capability() != Capability::Patterns);
            let text = ordered
                .iter()
                .map(|question| question.subject())
                .collect::<Vec<_>>()
                .join(" ");
            let wanted: Vec<Wanted<'_>> = texts
                .iter()
                .map(|question| Wanted {
                    kinds: question.capability().kinds(),
                    limit: question.capability().default_limit(),
                })
                .collect();
            let mut found = store.search_each(&text, &wanted)?.into_iter();
            let mut answers = Vec::with_capacity(questions.len());
            for question in &questions {
                let findings = match question {
                    Question::File(file) => {
                        store.file_history(file, Capability::File.default_limit())?
                    }
                    Question::Bugs(_) | Question::Patterns(_) | Question::Decisions(_) => {
                        found.next().unwrap_or_default()
                    }
                };
                answers.push((question.clone(), findings));
            }
            Ok(answers)
        })
        .await
    }

    /// Searches every kind (`prpd memory search` without `--kind`).
    pub async fn search_all(&self, text: &str, limit: usize) -> Result<Vec<Finding>, Unanswered> {
        let text = text.to_owned();
        self.time_boxed("the search".to_owned(), move |store: &mut Store| {
            store.search(&text, &[], limit)
        })
        .await
    }

    /// Records `entry`; returns its id.
    pub async fn record(&self, entry: &Entry) -> Result<i64, Unanswered> {
        let entry = entry.clone();
        self.time_boxed(
            format!("recording a {}", entry.kind),
            move |store: &mut Store| store.record(&entry),
        )
        .await
    }

    /// Counts, size and schema version.
    pub async fn stats(&self) -> Result<StoreStats, Unanswered> {
        self.time_boxed("counting".to_owned(), |store: &mut Store| store.stats())
            .await
    }

    async fn time_boxed<T: Send + 'static>(
        &self,
        what: String,
        work: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, Unanswered> {
        let store = Arc::clone(&self.store);
        let task = tokio::task::spawn_blocking(move || {
            let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
            work(&mut store)
        });
        match tokio::time::timeout(self.timeout, task).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(Unanswered::Failed(with_sources(&error))),
            Ok(Err(join_error)) => Err(Unanswered::Failed(format!(
                "the memory store failed on {what}: {join_error}"
            ))),
            Err(_) => {
                self.interrupt.interrupt();
                Err(Unanswered::TimedOut(format!(
                    "the memory store {} did not answer {what} within {} ([memory] timeout)",
                    self.path.display(),
                    humantime::format_duration(self.timeout)
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryKind;

    fn lesson(title: &str, files: &[&str]) -> Entry {
        Entry {
            kind: EntryKind::Lesson,
            run_id: "lesson-1".to_owned(),
            title: title.to_owned(),
            body: "the cache must be cleared".to_owned(),
            files: files.iter().map(|file| (*file).to_owned()).collect(),
            stacks: Vec::new(),
            created_at: 1,
        }
    }

    #[tokio::test]
    async fn questions_reach_the_store_by_capability() {
        let dir = tempfile::tempdir().expect("tempdir");
        let embedded =
            Embedded::open(&dir.path().join("memory.db"), Duration::from_secs(2)).expect("open");
        let id = embedded
            .record(&lesson("Clear the cache", &["src/cache.rs"]))
            .await
            .expect("record");
        assert!(id > 0);
        let bugs = embedded
            .ask(&Question::Bugs("cache cleared".to_owned()), 5)
            .await
            .expect("bugs");
        assert_eq!(bugs.len(), 1, "a lesson answers the bugs question");
        let file = embedded
            .ask(&Question::File("src/cache.rs".to_owned()), 5)
            .await
            .expect("file");
        assert_eq!(file[0].title, "Clear the cache");
        assert_eq!(embedded.stats().await.expect("stats").entries, 1);
    }

    #[tokio::test]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the store's lock on purpose, so the question waits past its timeout"
    )]
    async fn a_question_that_waits_past_the_timeout_is_a_timeout_not_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let embedded =
            Embedded::open(&dir.path().join("memory.db"), Duration::from_millis(50)).expect("open");
        let busy = Arc::clone(&embedded.store);
        let held = busy.lock().expect("hold the store");
        let answer = embedded
            .ask(&Question::Bugs("cache".to_owned()), 5)
            .await
            .expect_err("held");
        drop(held);
        match answer {
            Unanswered::TimedOut(message) => {
                assert!(message.contains("within 50ms"), "{message}");
                assert!(message.contains("memory.db"), "{message}");
            }
            Unanswered::Failed(message) | Unanswered::NoTool(message) => {
                panic!("not a timeout: {message}")
            }
        }
    }
}
