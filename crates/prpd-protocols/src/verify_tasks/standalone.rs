//! `prpd verify`: a task list's `[VERIFY]` tasks run outside the loop, no agent involved. One
//! entry point reads the file, picks the tasks (all, or the one `--task` names), loads what
//! the tasks need (prpd.toml's `[qa]`, `[commands]` and `[ship]`, the discovered commands, the
//! acceptance criteria), verifies each in order and, after each, appends its result to
//! `.progress.md` beside the file and ticks its checkbox only when it passed. The command line
//! chooses the file and prints what this hands it.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::checkbox::{Marked, mark_done};
use super::command_run::Settings;
use super::progress::{append_learning, progress_file};
use super::render::{TERMINAL_TAIL_LINES, progress_entry, render};
use super::result::Verdict;
use super::runner::{Context, Criteria, PipelineMode, Runner};
use super::task::{VerifyTask, parse};
use prpd_base::config_file::{ConfigError, ConfigFile};
use prpd_base::paths::{SessionPaths, new_run_id};
use prpd_base::process::ProcessError;
use prpd_prp::acceptance_criteria;
use prpd_qa::command::CommandKind;
use prpd_qa::config::QaSettings;
use prpd_qa::discover::DetectError;
use prpd_qa::settings;
use prpd_qa::tools_mapping::ToolsMapping;
use prpd_ship::config::ShipConfig;

/// The file ralph-specum keeps acceptance criteria in, beside `tasks.md`.
const REQUIREMENTS: &str = "requirements.md";

/// What `prpd verify` was asked.
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    /// The repository (canonical): commands run in its root.
    pub repo: PathBuf,
    /// The task list (a PRP or a `tasks.md`).
    pub tasks_file: PathBuf,
    /// `--task`: only the task with this id.
    pub task: Option<String>,
    /// `--config`: a prpd.toml other than the repository's.
    pub config: Option<PathBuf>,
}

/// How the tasks ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifySummary {
    pub passed: usize,
    pub failed: usize,
    /// Where the results were appended.
    pub progress: PathBuf,
}

/// A task list `prpd verify` cannot use: the user's to fix (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum TasksFileError {
    #[error("{}: no such file; name the task list to verify (a PRP or a tasks.md)", path.display())]
    Missing { path: PathBuf },
    #[error("{}: cannot read it", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}: no `[VERIFY]` task; a task is a list item such as `- [ ] V4 [VERIFY] Full local CI: \
         npm run lint && npm test`",
        path.display()
    )]
    NoVerifyTask { path: PathBuf },
    #[error("{}: no `[VERIFY]` task {wanted}; its tasks are {known}", path.display())]
    UnknownTask {
        path: PathBuf,
        wanted: String,
        known: String,
    },
}

/// `prpd verify` could not be carried out (as opposed to a task that failed, which is a result).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    TasksFile(#[from] TasksFileError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Detect(#[from] DetectError),
    #[error("failed to run a [VERIFY] command")]
    Process(#[from] ProcessError),
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to start the async runtime")]
    Runtime(#[source] std::io::Error),
}

impl VerifyError {
    /// Whether the user is to fix it (the task list, the configuration): exit 2.
    pub fn is_users_to_fix(&self) -> bool {
        match self {
            VerifyError::TasksFile(_) | VerifyError::Config(_) | VerifyError::Detect(_) => true,
            VerifyError::Process(_) | VerifyError::Write { .. } | VerifyError::Runtime(_) => false,
        }
    }
}

/// Verifies the request's tasks in order, handing each task's output to `print` as soon as it
/// is known.
pub fn verify(
    request: &VerifyRequest,
    mut print: impl FnMut(&str),
) -> Result<VerifySummary, VerifyError> {
    let path = &request.tasks_file;
    let text = std::fs::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => TasksFileError::Missing { path: path.clone() },
        _ => TasksFileError::Unreadable {
            path: path.clone(),
            source,
        },
    })?;
    let tasks = selected(path, parse(&text), request.task.as_deref())?;
    let context = context(request, &text)?;
    let progress = progress_file(path);
    let runtime = tokio::runtime::Runtime::new().map_err(VerifyError::Runtime)?;
    let mut runner = Runner::new(context, Vec::new());
    let mut summary = VerifySummary {
        passed: 0,
        failed: 0,
        progress: progress.clone(),
    };
    for task in &tasks {
        let result = runtime.block_on(runner.verify(task))?;
        print(&render(&result, TERMINAL_TAIL_LINES));
        let write_error = |source| VerifyError::Write {
            path: progress.clone(),
            source,
        };
        append_learning(&progress, &progress_entry(&result, SystemTime::now(), None))
            .map_err(write_error)?;
        match result.verdict() {
            Verdict::Pass => {
                summary.passed += 1;
                let marked = mark_done(path, task).map_err(|source| VerifyError::Write {
                    path: path.clone(),
                    source,
                })?;
                if marked == Marked::LineChanged {
                    tracing::warn!(
                        file = %path.display(),
                        line = task.line,
                        "the task passed, but its line changed since it was read; its checkbox \
                         is left alone"
                    );
                }
            }
            Verdict::Fail | Verdict::Deferred => summary.failed += 1,
        }
    }
    Ok(summary)
}

/// The tasks to verify: all of them, or those `wanted` names.
fn selected(
    path: &Path,
    tasks: Vec<VerifyTask>,
    wanted: Option<&str>,
) -> Result<Vec<VerifyTask>, TasksFileError> {
    if tasks.is_empty() {
        return Err(TasksFileError::NoVerifyTask {
            path: path.to_path_buf(),
        });
    }
    let Some(wanted) = wanted else {
        return Ok(tasks);
    };
    let known: Vec<String> = tasks.iter().map(|task| task.id.label()).collect();
    let chosen: Vec<VerifyTask> = tasks
        .into_iter()
        .filter(|task| task.is_named(wanted))
        .collect();
    if chosen.is_empty() {
        return Err(TasksFileError::UnknownTask {
            path: path.to_path_buf(),
            wanted: wanted.to_owned(),
            known: known.join(", "),
        });
    }
    Ok(chosen)
}

/// What the tasks need: configuration, commands, criteria and a folder for the logs.
fn context(request: &VerifyRequest, tasks_text: &str) -> Result<Context, VerifyError> {
    let repo = &request.repo;
    // The QA tables (how checks run, the commands) and `[ship]` (whose checks a pipeline
    // task reads), from one reading of prpd.toml.
    let file = ConfigFile::find(repo, request.config.as_deref())?;
    let (qa, ship) = match &file {
        Some(file) => (QaSettings::from_file(file)?, ShipConfig::from_file(file)?),
        None => (QaSettings::default(), ShipConfig::default()),
    };
    let mapping = ToolsMapping::load(repo)?;
    let detection = settings::detect(repo, &mapping, &qa.gate)?;
    let session = SessionPaths::new(repo);
    session.ensure().map_err(|source| VerifyError::Write {
        path: session.root().to_path_buf(),
        source,
    })?;
    Ok(Context {
        settings: Settings {
            repo: repo.clone(),
            timeout: qa.qa.check_timeout,
            grace: qa.qa.grace,
            test_command: detection.command(CommandKind::Test).map(str::to_owned),
        },
        detection,
        logs: session.run_dir(&new_run_id("verify")),
        criteria: criteria(repo, &request.tasks_file, tasks_text),
        pipeline: PipelineMode::Ask(Box::new(ship)),
    })
}

/// The acceptance criteria of `requirements.md` beside the task list when it has any, else the
/// task list's own (a PRP's).
fn criteria(repo: &Path, tasks_file: &Path, tasks_text: &str) -> Criteria {
    let shown = |path: &Path| {
        path.strip_prefix(repo)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    let requirements = tasks_file.with_file_name(REQUIREMENTS);
    let from_requirements = std::fs::read_to_string(&requirements)
        .ok()
        .map(|text| acceptance_criteria(&text));
    match from_requirements {
        Some(items) if !items.is_empty() => Criteria {
            items,
            source: shown(&requirements),
        },
        Some(_) => Criteria {
            items: acceptance_criteria(tasks_text),
            source: format!("{} and {}", shown(&requirements), shown(tasks_file)),
        },
        None => Criteria {
            items: acceptance_criteria(tasks_text),
            source: shown(tasks_file),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_are_chosen_by_id_and_a_file_without_any_is_refused() {
        let path = Path::new("specs/x/tasks.md");
        let tasks = parse("- [ ] V4 [VERIFY] Full local CI: a\n- [ ] V6 [VERIFY] AC checklist\n");
        assert_eq!(
            selected(path, tasks.clone(), Some("v6")).expect("V6").len(),
            1
        );
        assert_eq!(selected(path, tasks.clone(), None).expect("all").len(), 2);
        assert_eq!(
            selected(path, tasks, Some("V9"))
                .expect_err("no V9")
                .to_string(),
            "specs/x/tasks.md: no `[VERIFY]` task V9; its tasks are V4, V6"
        );
        assert_eq!(
            selected(path, Vec::new(), None)
                .expect_err("none")
                .to_string(),
            "specs/x/tasks.md: no `[VERIFY]` task; a task is a list item such as `- [ ] V4 \
             [VERIFY] Full local CI: npm run lint && npm test`"
        );
    }

    #[test]
    fn criteria_come_from_requirements_beside_the_list_else_from_the_list() {
        let repo = tempfile::tempdir().expect("temporary directory");
        let folder = repo.path().join("specs/x");
        std::fs::create_dir_all(&folder).expect("fixture");
        let tasks = folder.join("tasks.md");
        let from_list = criteria(repo.path(), &tasks, "- [ ] AC-9: in the list\n");
        assert_eq!(from_list.source, "specs/x/tasks.md");
        assert_eq!(from_list.items[0].id, "AC-9");
        std::fs::write(folder.join(REQUIREMENTS), "# R\n").expect("fixture");
        let empty = criteria(repo.path(), &tasks, "- [ ] AC-9: in the list\n");
        assert_eq!(empty.source, "specs/x/requirements.md and specs/x/tasks.md");
        std::fs::write(
            folder.join(REQUIREMENTS),
            "- [ ] AC-1.1: from requirements\n",
        )
        .expect("fixture");
        let from_requirements = criteria(repo.path(), &tasks, "- [ ] AC-9: in the list\n");
        assert_eq!(from_requirements.source, "specs/x/requirements.md");
        assert_eq!(from_requirements.items[0].id, "AC-1.1");
        assert_eq!(from_requirements.items.len(), 1);
    }
}
