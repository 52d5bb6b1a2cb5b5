//! `prpd verify [TASKS_FILE]`: a task list's `[VERIFY]` tasks run outside the loop
//! (`protocols::verify_tasks::verify`). Here only which file, and the exit code: without a
//! file, `tasks.md` at the repository's root, else the PRP of the current (or last) run.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use prpd_base::exit::ExitCode;
use prpd_protocols::verify_tasks::{self, TasksFileError, VerifyRequest};
use prpd_run::session;

use super::usage::UsageError;
use super::{RepoArgs, repo_dir};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The task list: a PRP or a ralph-specum `tasks.md` (default: `tasks.md` at the
    /// repository's root, else the PRP of the current or last run).
    #[arg(value_name = "TASKS_FILE")]
    pub tasks_file: Option<PathBuf>,
    #[command(flatten)]
    pub repo: RepoArgs,
    /// Only the task with this id (`V4`, `1.4`; `L12` for one without an id on line 12).
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// The prpd.toml to use (default: `<repo>/prpd.toml` when it exists): `[qa]` timeouts,
    /// `[commands]`, and `[ship]` for a `CI pipeline passes` task.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Runs the tasks; exit 0 when all passed, 1 when one failed.
pub(super) fn verify(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let repo = repo_dir(&args.repo)?;
    super::config::read(&repo, args.config.as_deref())?;
    let tasks_file = tasks_file(&repo, args.tasks_file.as_deref())?;
    let request = VerifyRequest {
        repo,
        tasks_file,
        task: args.task.clone(),
        config: args.config.clone(),
    };
    let mut first = true;
    let summary = verify_tasks::verify(&request, |block| {
        let mut stdout = std::io::stdout().lock();
        let separator = if first { "" } else { "\n" };
        first = false;
        let _ = write!(stdout, "{separator}{block}");
        let _ = stdout.flush();
    })?;
    tracing::info!(
        passed = summary.passed,
        failed = summary.failed,
        progress = %summary.progress.display(),
        "[VERIFY] tasks verified"
    );
    Ok(if summary.failed == 0 {
        ExitCode::Success
    } else {
        ExitCode::NotShipped
    })
}

/// The task list: `given` (as given, else inside the repository), else `tasks.md` at the
/// root, else the current or last run's PRP.
fn tasks_file(repo: &Path, given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(given) = given {
        let inside = repo.join(given);
        return if given.is_file() {
            Ok(given.to_path_buf())
        } else if inside.is_file() {
            Ok(inside)
        } else {
            Err(TasksFileError::Missing {
                path: given.to_path_buf(),
            }
            .into())
        };
    }
    let tasks = repo.join("tasks.md");
    if tasks.is_file() {
        return Ok(tasks);
    }
    let runs = session::status(repo)?;
    if let Some(record) = runs
        .iter()
        .rev()
        .find_map(|listed| listed.record.as_ref().ok())
    {
        let prp = repo.join(&record.prp);
        if prp.is_file() {
            return Ok(prp);
        }
    }
    Err(UsageError(format!(
        "no task list to verify: {} has no tasks.md at its root and no run whose PRP still \
         exists; name the file, as in `prpd verify specs/my-feature/tasks.md`",
        repo.display()
    ))
    .into())
}
