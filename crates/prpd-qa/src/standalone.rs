//! `prpd qa`: the QA gate on its own, outside any run. One entry point loads what the gate needs
//! from the repository (config, checklist, tools mapping, the PRP and the base of the change
//! under review when named), detects the commands, runs the checks, and writes the artifacts
//! every QA leaves behind, so the command line only parses and prints.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::checklist::Checklist;
use crate::config::QaSettings;
use crate::discover;
use crate::method::BaseDocs;
use crate::report::{self, Audience};
use crate::runner::{self, QaOutcome, QaRequest};
use crate::settings;
use crate::tools_mapping::ToolsMapping;
use prpd_base::config_file;
use prpd_base::config_file::ConfigError;
use prpd_base::files;
use prpd_base::paths::{SessionPaths, new_run_id};
use prpd_prp::{self as prp, Prp};

/// What `prpd qa` was asked.
#[derive(Debug, Clone)]
pub struct StandaloneRequest {
    /// The repository to check (canonical).
    pub repo: PathBuf,
    /// `--config`: a `prpd.toml` other than the repository's.
    pub config: Option<PathBuf>,
    /// `--prp`: the PRP the work implements, as given or relative to the repository.
    pub prp: Option<PathBuf>,
    /// `--base`: the commit the change under review starts from.
    pub base: Option<String>,
    /// `--jobs`: checks at once, instead of the config's.
    pub jobs: Option<u16>,
    /// `--report`: a copy of the Markdown report goes here too.
    pub report: Option<PathBuf>,
    /// `--path`: gate only this sub-project folder (relative to the repository).
    pub path: Option<PathBuf>,
}

/// `--report FILE` names a place the report cannot be written to (the user's to fix).
#[derive(Debug, thiserror::Error)]
#[error("--report {}: cannot write the report there", path.display())]
pub struct ReportNotWritable {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The outcome and its renderings, as written to the run directory.
#[derive(Debug)]
pub struct StandaloneResult {
    /// The computed outcome and verdict.
    pub outcome: QaOutcome,
    /// The Markdown report.
    pub markdown: String,
    /// The QA status block.
    pub status_block: String,
    /// The JSON report.
    pub json: String,
    /// Where the artifacts were written.
    pub run_dir: PathBuf,
}

/// Runs the QA gate once against `request.repo` and writes `qa-report.md`, `qa-report.json` and
/// the status block (appended to `phase-status.log`).
pub fn check(request: &StandaloneRequest) -> anyhow::Result<StandaloneResult> {
    let inputs = QaInputs::load(&request.repo, request.config.as_deref())?;
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    runtime.block_on(check_now(request, &inputs))
}

/// The files QA is configured by: prpd.toml's QA part, the checklist, the tools mapping.
#[derive(Debug, Clone)]
pub struct QaInputs {
    pub config: QaSettings,
    pub checklist: Checklist,
    pub mapping: ToolsMapping,
}

impl QaInputs {
    /// Loads them from `repo` (`config`: a prpd.toml other than the repository's).
    pub fn load(repo: &Path, config: Option<&Path>) -> Result<QaInputs, ConfigError> {
        QaInputs::with_settings(repo, QaSettings::load(repo, config)?)
    }

    /// The checklist and tools mapping of `repo`, with prpd.toml's QA part already read (the
    /// daemon reads prpd.toml once, for the loop and for QA on change).
    pub fn with_settings(repo: &Path, config: QaSettings) -> Result<QaInputs, ConfigError> {
        Ok(QaInputs {
            checklist: settings::checklist(repo, &config.gate)?,
            mapping: ToolsMapping::load(repo)?,
            config,
        })
    }
}

/// [`check`] inside a running async runtime with inputs already loaded (the daemon keeps the
/// last ones that loaded, so a broken file does not stop its QA on change).
pub async fn check_now(
    request: &StandaloneRequest,
    inputs: &QaInputs,
) -> anyhow::Result<StandaloneResult> {
    let repo = &request.repo;
    let QaInputs {
        config,
        checklist,
        mapping,
    } = inputs;
    let prp = request
        .prp
        .as_deref()
        .map(|path| load_prp(repo, path))
        .transpose()?;
    if let Some(path) = &request.report {
        check_report_path(path)?;
    }
    // A sub-project's gate (`--path`) uses what discovery finds in that folder; prpd.toml's
    // `[commands]` describe the repository's root.
    let detection = match &request.path {
        Some(folder) => discover::detect_in(repo, folder, mapping)?,
        None => settings::detect(repo, mapping, &config.gate)?,
    };
    let base_docs = request
        .base
        .as_deref()
        .map(|revision| BaseDocs::at_revision(repo, revision, revision))
        .transpose()?;
    let session = SessionPaths::new(repo);
    session
        .ensure()
        .with_context(|| format!("failed to create {}", session.root().display()))?;
    let run_dir = session.run_dir(&new_run_id("qa"));
    let qa_request = QaRequest {
        repo: repo.clone(),
        prp_path: prp.as_ref().map(|(path, _)| path.clone()),
        prp: prp.map(|(_, prp)| prp),
        jobs: request.jobs.map_or(config.qa.jobs, usize::from),
        check_timeout: config.qa.check_timeout,
        grace: config.qa.grace,
        run_dir: run_dir.clone(),
        attempt: 1,
        base_docs,
        earlier_runs: Vec::new(),
        // Like `[commands]`, `[qa] junit` describes the root's test command, not a sub-project's.
        junit: config.qa.junit.clone().filter(|_| request.path.is_none()),
    };
    let outcome = runner::run(&qa_request, checklist, detection).await?;

    let markdown = report::markdown(&outcome, Audience::Standalone);
    let status_block = report::status_block(&outcome, 1).to_string();
    let json = serde_json::to_string_pretty(&report::json(&outcome))?;
    write_file(&run_dir.join("qa-report.md"), &markdown)?;
    write_file(&run_dir.join("qa-report.json"), &json)?;
    if let Some(path) = &request.report {
        files::write_atomically(path, markdown.as_bytes()).map_err(|source| ReportNotWritable {
            path: path.clone(),
            source,
        })?;
    }
    let status_log = session.phase_status_log();
    files::append(&status_log, &status_block)
        .with_context(|| format!("failed to append to {}", status_log.display()))?;
    tracing::info!(run_dir = %run_dir.display(), "QA artifacts written");
    Ok(StandaloneResult {
        outcome,
        markdown,
        status_block,
        json,
        run_dir,
    })
}

/// Reads and parses the PRP at `path` (as given, or relative to the repository).
fn load_prp(repo: &Path, path: &Path) -> anyhow::Result<(PathBuf, Prp)> {
    let path = if path.exists() {
        path.to_path_buf()
    } else {
        repo.join(path)
    };
    let text = config_file::read(&path)?;
    let prp = prp::parse(&path, &text)?;
    Ok((path, prp))
}

fn write_file(path: &Path, contents: &str) -> anyhow::Result<()> {
    files::write_atomically(path, contents.as_bytes())
        .with_context(|| format!("failed to write {}", path.display()))
}

/// Refuses a `--report` destination before any check runs: a directory, or a file whose folder
/// cannot be created.
fn check_report_path(path: &Path) -> Result<(), ReportNotWritable> {
    let refuse = |source| ReportNotWritable {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        return Err(refuse(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a directory",
        )));
    }
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            std::fs::create_dir_all(parent).map_err(refuse)
        }
        Some(_) | None => Ok(()),
    }
}
