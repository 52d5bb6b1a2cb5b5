//! [`Memory`]: the one interface the rest of prpd uses — four capability questions and
//! `record` — over whichever backend `[memory]` chose: the embedded store, an MCP server, none,
//! or one that could not be opened. Answers are [`Recall`]s: a memory that is off, missing a
//! tool, slow or gone gives what it has and a warning, never an error that stops QA.

use std::path::Path;

use crate::config::{MemoryBackend, MemoryConfig};
use crate::context::MemoryContext;
use crate::embedded::Embedded;
use crate::entry::Entry;
use crate::finding::{Finding, Recall, Unanswered};
use crate::mcp::{McpError, McpMemory};
use crate::query::{MemoryQuery, Question};
use crate::store::StoreError;
use prpd_base::paths::SessionPaths;

/// What a question to memory that is off is told.
const OFF: &str = "no memory backend is configured ([memory] backend = \"off\")";

/// Memory could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// `.prp-session/` could not be created.
    #[error("failed to create {}", path.display())]
    Session {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Mcp(#[from] McpError),
}

impl MemoryError {
    /// Whether the user can fix it (a store file prpd cannot read, a server command that does
    /// not start or does not speak MCP), as opposed to prpd failing.
    pub fn is_users_to_fix(&self) -> bool {
        match self {
            MemoryError::Session { .. } => false,
            MemoryError::Store(error) => error.is_users_to_fix(),
            MemoryError::Mcp(_) => true,
        }
    }
}

/// How a record went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// In the embedded store, with this id.
    Stored(i64),
    /// Sent to the MCP server's reflection tool.
    Sent,
    /// Not recorded: memory is off, or the warnings say why.
    Dropped,
}

/// Where prpd remembers.
#[derive(Debug)]
pub enum Memory {
    /// The embedded store.
    Embedded(Embedded),
    /// An MCP memory server prpd started.
    Mcp(Box<McpMemory>),
    /// `[memory] backend = "off"`.
    Off,
    /// The configured backend could not be opened; every answer carries this reason.
    Unavailable(String),
}

impl Memory {
    /// Opens the backend `config` chooses for the repository at `repo`.
    pub async fn open(repo: &Path, config: &MemoryConfig) -> Result<Memory, MemoryError> {
        let paths = SessionPaths::new(repo);
        match &config.backend {
            MemoryBackend::Embedded => {
                paths.ensure().map_err(|source| MemoryError::Session {
                    path: paths.root().to_path_buf(),
                    source,
                })?;
                Ok(Memory::Embedded(Embedded::open(
                    &paths.memory_db(),
                    config.timeout,
                )?))
            }
            MemoryBackend::Mcp(server) => {
                paths.ensure().map_err(|source| MemoryError::Session {
                    path: paths.root().to_path_buf(),
                    source,
                })?;
                Ok(Memory::Mcp(Box::new(
                    McpMemory::start(repo, server, config.timeout, paths.memory_server_log())
                        .await?,
                )))
            }
            MemoryBackend::Off => Ok(Memory::Off),
        }
    }

    /// [`Memory::open`], with a failure turned into [`Memory::Unavailable`] and a warning: what
    /// QA uses, since a memory that cannot be opened must not stop it.
    pub async fn open_or_unavailable(repo: &Path, config: &MemoryConfig) -> Recall<Memory> {
        match Memory::open(repo, config).await {
            Ok(memory) => Recall::clean(memory),
            Err(error) => {
                let reason = format!(
                    "memory is unavailable: {}",
                    crate::finding::with_sources(&error)
                );
                Recall::warned(Memory::Unavailable(reason.clone()), reason)
            }
        }
    }

    /// One line that says which memory this is.
    pub fn describe(&self) -> String {
        match self {
            Memory::Embedded(embedded) => {
                format!("the embedded store {}", embedded.path().display())
            }
            Memory::Mcp(server) => format!("the MCP memory server `{}`", server.command_line()),
            Memory::Off => "no memory ([memory] backend = \"off\")".to_owned(),
            Memory::Unavailable(reason) => reason.clone(),
        }
    }

    /// Up to `limit` findings for `question`, or why there are none: what `prpd memory search`
    /// uses, where a question that cannot be answered is an error.
    pub async fn try_ask(
        &self,
        question: &Question,
        limit: usize,
    ) -> Result<Vec<Finding>, Unanswered> {
        match self {
            Memory::Embedded(embedded) => embedded.ask(question, limit).await,
            Memory::Mcp(server) => server.ask(question, limit).await,
            Memory::Off => Err(Unanswered::NoTool(OFF.to_owned())),
            Memory::Unavailable(reason) => Err(Unanswered::NoTool(reason.clone())),
        }
    }

    /// Up to `limit` findings for `text` among every kind of entry (`prpd memory search` without
    /// `--kind`). An MCP server has no such tool: its general search (the bugs tool,
    /// claude-self-reflect's `csr_reflect_on_past`) is asked with the text as it is.
    pub async fn search(&self, text: &str, limit: usize) -> Result<Vec<Finding>, Unanswered> {
        match self {
            Memory::Embedded(embedded) => embedded.search_all(text, limit).await,
            Memory::Mcp(server) => server.search(text, limit).await,
            Memory::Off | Memory::Unavailable(_) => {
                self.try_ask(&Question::Bugs(text.to_owned()), limit).await
            }
        }
    }

    /// Up to `limit` findings for `question`.
    pub async fn ask(&self, question: &Question, limit: usize) -> Recall<Vec<Finding>> {
        match self.try_ask(question, limit).await {
            Ok(findings) => Recall::clean(findings),
            Err(unanswered) => Recall::warned(Vec::new(), unanswered.message().to_owned()),
        }
    }

    /// The four QA questions about `query` (one per changed file for the fourth), each with
    /// its capability's default limit. The embedded store answers them in one pass; an MCP
    /// server one call at a time, and after a call times out the rest are not asked (each
    /// would wait as long) and one warning says so.
    pub async fn context(&self, query: &MemoryQuery) -> MemoryContext {
        let mut context = MemoryContext::default();
        let questions = query.questions();
        if let Memory::Embedded(embedded) = self {
            match embedded.answer_all(&questions).await {
                Ok(answers) => {
                    for (question, findings) in answers {
                        context.answered(&question, findings);
                    }
                }
                Err(unanswered) => context.warnings.push(unanswered.message().to_owned()),
            }
            return context;
        }
        for (index, question) in questions.iter().enumerate() {
            let limit = question.capability().default_limit();
            match self.try_ask(question, limit).await {
                Ok(findings) => context.answered(question, findings),
                Err(Unanswered::Failed(message) | Unanswered::NoTool(message)) => {
                    if !context.warnings.contains(&message) {
                        context.warnings.push(message);
                    }
                }
                Err(Unanswered::TimedOut(message)) => {
                    context.warnings.push(message);
                    let left = questions.len() - index - 1;
                    if left > 0 {
                        context.warnings.push(format!(
                            "{left} more memory question(s) not asked after that timeout"
                        ));
                    }
                    break;
                }
            }
        }
        context
    }

    /// Records `entry`, or says why it could not (`prpd memory add`, where that is an error).
    /// Memory that is off records nothing, and that is no failure.
    pub async fn try_record(&self, entry: &Entry) -> Result<Recorded, Unanswered> {
        match self {
            Memory::Embedded(embedded) => embedded.record(entry).await.map(Recorded::Stored),
            Memory::Mcp(server) => server.record(entry).await.map(|()| Recorded::Sent),
            Memory::Off => Ok(Recorded::Dropped),
            Memory::Unavailable(reason) => Err(Unanswered::NoTool(reason.clone())),
        }
    }

    /// Records `entry`; a failure is a warning.
    pub async fn record(&self, entry: &Entry) -> Recall<Recorded> {
        match self.try_record(entry).await {
            Ok(recorded) => Recall::clean(recorded),
            Err(unanswered) => Recall::warned(
                Recorded::Dropped,
                format!("not recorded: {}", unanswered.message()),
            ),
        }
    }

    /// Stops an MCP server (its process group); the other backends need nothing.
    pub async fn close(self) {
        match self {
            Memory::Mcp(server) => server.stop().await,
            Memory::Embedded(_) | Memory::Off | Memory::Unavailable(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::entry::{EntryKind, RunEntries};
    use crate::query::Capability;

    fn config(backend: MemoryBackend) -> MemoryConfig {
        MemoryConfig {
            backend,
            timeout: Duration::from_secs(2),
        }
    }

    #[tokio::test]
    async fn a_reject_recorded_in_one_run_is_recalled_by_the_next_runs_qa() {
        let repo = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(repo.path().join(".git")).expect("git dir");
        let memory = Memory::open(repo.path(), &config(MemoryBackend::Embedded))
            .await
            .expect("open");
        let run = RunEntries {
            run_id: "run-1".to_owned(),
            prp_title: "Word statistics".to_owned(),
            stacks: vec!["node".to_owned()],
            now: 100,
        };
        let recorded = memory
            .record(&run.reject(
                1,
                &["F2: acceptance criterion AC-2 has no test".to_owned()],
                &["src/stats.js".to_owned()],
            ))
            .await;
        assert!(
            matches!(recorded.value, Recorded::Stored(_)),
            "{recorded:?}"
        );
        memory
            .record(&run.approve("every check passed", &["src/stats.js".to_owned()]))
            .await;
        assert!(repo.path().join(".prp-session/memory.db").is_file());

        let context = memory
            .context(&MemoryQuery {
                title: "Word statistics for sentences".to_owned(),
                goal: "Count words".to_owned(),
                stacks: vec!["node".to_owned()],
                changed_files: vec!["src/stats.js".to_owned(), "README.md".to_owned()],
            })
            .await;
        assert!(context.warnings.is_empty(), "{:?}", context.warnings);
        assert_eq!(context.queries_executed(), 4);
        let bugs: Vec<&Finding> = context.findings(Capability::Bugs).collect();
        assert_eq!(bugs.len(), 1);
        assert_eq!(bugs[0].kind, EntryKind::Reject.as_str());
        assert!(bugs[0].excerpt.contains("AC-2"), "{}", bugs[0].excerpt);
        assert_eq!(context.count(Capability::Patterns), 1, "the APPROVE");
        assert_eq!(
            context.count(Capability::File),
            1,
            "only src/stats.js has a history"
        );
        assert_eq!(context.findings(Capability::File).count(), 2);
        memory.close().await;
    }

    #[tokio::test]
    async fn a_server_that_never_answers_costs_one_timeout_per_context_not_one_per_question() {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/mcp/fake_memory_server.py");
        let memory = Memory::open(
            dir.path(),
            &MemoryConfig {
                backend: MemoryBackend::Mcp(crate::config::McpServer {
                    command: vec![
                        "python3".to_owned(),
                        script.display().to_string(),
                        "--mode".to_owned(),
                        "hang".to_owned(),
                    ],
                    tools: crate::config::McpToolNames::default(),
                }),
                timeout: Duration::from_millis(300),
            },
        )
        .await
        .expect("starts");
        assert!(memory.describe().contains("fake_memory_server.py"));
        let started = std::time::Instant::now();
        let context = memory
            .context(&MemoryQuery {
                title: "Rate limit".to_owned(),
                goal: String::new(),
                stacks: vec!["rust".to_owned()],
                changed_files: vec!["a.rs".to_owned(), "b.rs".to_owned()],
            })
            .await;
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(context.queries_executed(), 0);
        assert_eq!(context.warnings.len(), 2, "{:?}", context.warnings);
        assert!(context.warnings[0].contains("did not answer `csr_reflect_on_past` within 300ms"));
        assert_eq!(
            context.warnings[1],
            "4 more memory question(s) not asked after that timeout"
        );
        assert!(dir.path().join(".prp-session/memory-server.log").is_file());
        memory.close().await;
    }

    #[tokio::test]
    async fn off_and_unavailable_answer_with_a_warning_and_never_fail() {
        let repo = tempfile::tempdir().expect("tempdir");
        let off = Memory::open(repo.path(), &config(MemoryBackend::Off))
            .await
            .expect("off");
        let context = off.context(&MemoryQuery::default()).await;
        assert_eq!(context.queries_executed(), 0);
        assert_eq!(
            context.warnings,
            ["no memory backend is configured ([memory] backend = \"off\")"]
        );
        assert_eq!(
            off.record(
                &RunEntries {
                    run_id: "r".to_owned(),
                    prp_title: "t".to_owned(),
                    stacks: Vec::new(),
                    now: 1
                }
                .escalation("x", &[])
            )
            .await,
            Recall::clean(Recorded::Dropped)
        );

        std::fs::create_dir(repo.path().join(".prp-session")).expect("mkdir");
        std::fs::write(repo.path().join(".prp-session/memory.db"), "x".repeat(4096))
            .expect("write");
        let opened =
            Memory::open_or_unavailable(repo.path(), &config(MemoryBackend::Embedded)).await;
        assert_eq!(opened.warnings.len(), 1);
        assert!(
            opened.warnings[0].contains("is not a SQLite database"),
            "{:?}",
            opened.warnings
        );
        let answer = opened
            .value
            .ask(&Question::Bugs("anything".to_owned()), 5)
            .await;
        assert!(answer.value.is_empty());
        assert!(answer.warnings[0].starts_with("memory is unavailable"));
    }
}
