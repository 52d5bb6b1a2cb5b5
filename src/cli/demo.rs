//! `prpd demo`: the whole loop on a bundled example, with no network and no API key. The
//! example project (`examples/demo/`) and its scripted agents (`examples/agents/`) are compiled
//! into the binary, written to a fresh git repository, and run like any other PRP. It prints
//! one line per phase (the full status blocks with `-v`) and ends with the paths of what the
//! run produced, so a first-time user finds the pull request and the reports at once.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use prpd_base::exit::ExitCode;
use prpd_base::paths::SessionPaths;
use prpd_base::process::{self, ProcessError, Spec};
use prpd_run::driver::{Output, Summary};
use prpd_run::record::Delivery;
use prpd_run::record::RunRecord;
use prpd_run::session;

use super::foreground;
use super::usage::UsageError;

/// The PRP the demo runs, relative to the demo repository.
pub const PRP: &str = "PRPs/word-stats.md";

/// The demo's bare remote, relative to the demo repository (kept out of git through
/// `.git/info/exclude`, so the repository stays clean).
pub const REMOTE: &str = "remote.git";

/// What the demo adds to the example's prpd.toml: SHIP pushes to the bare remote beside it.
const SHIP_CONFIG: &str = "\n# Added by `prpd demo`: SHIP pushes to the bare repository beside the files\n\
                           # (a local path, so the dry run pushes there too).\n\
                           [ship]\nremote = \"./remote.git\"\n";

/// Every file of the demo repository: its path there and its contents.
pub const FILES: &[(&str, &str)] = &[
    (
        "package.json",
        include_str!("../../examples/demo/package.json"),
    ),
    ("README.md", include_str!("../../examples/demo/README.md")),
    (
        "CHANGELOG.md",
        include_str!("../../examples/demo/CHANGELOG.md"),
    ),
    (
        "docs/adr/0001-no-runtime-dependencies.md",
        include_str!("../../examples/demo/docs/adr/0001-no-runtime-dependencies.md"),
    ),
    (
        "src/textkit.js",
        include_str!("../../examples/demo/src/textkit.js"),
    ),
    (
        "test/textkit.test.js",
        include_str!("../../examples/demo/test/textkit.test.js"),
    ),
    (
        "scripts/lint.mjs",
        include_str!("../../examples/demo/scripts/lint.mjs"),
    ),
    (PRP, include_str!("../../examples/demo/PRPs/word-stats.md")),
    (
        ".prpd/agents/scripted-agent.mjs",
        include_str!("../../examples/agents/scripted-agent.mjs"),
    ),
    ("prpd.toml", include_str!("../../examples/agents/prpd.toml")),
];

/// The demo repository could not be created.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to run git in {}", dir.display())]
    Git {
        dir: PathBuf,
        #[source]
        source: ProcessError,
    },
    #[error("`git {args}` failed in {}: {tail}", dir.display())]
    GitFailed {
        dir: PathBuf,
        args: String,
        tail: String,
    },
}

/// Runs the demo in `dir` (an empty or missing directory; default: a new temporary directory,
/// kept afterwards) and prints as `output` says.
pub(super) fn run(dir: Option<&Path>, output: Output, no_run: bool) -> anyhow::Result<ExitCode> {
    let dir = match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|error| {
                UsageError(format!(
                    "--dir {}: cannot create it ({error})",
                    dir.display()
                ))
            })?;
            let mut entries = std::fs::read_dir(dir).map_err(|error| {
                UsageError(format!("--dir {}: cannot read it ({error})", dir.display()))
            })?;
            if entries.next().is_some() {
                return Err(UsageError(format!("--dir {}: not empty", dir.display())).into());
            }
            dir.canonicalize()
                .with_context(|| format!("failed to resolve --dir {}", dir.display()))?
        }
        None => tempfile::Builder::new()
            .prefix("prpd-demo-")
            .tempdir()
            .context("failed to create a temporary directory")?
            .keep(),
    };
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    runtime.block_on(create(&dir))?;
    drop(runtime);
    if no_run {
        println!(
            "Demo repository: {dir}\n\nRun its PRP in the foreground:\n  prpd run {PRP} --repo {dir}\n\
             or with the daemon, which starts a run for each new PRP:\n  prpd watch --repo {dir} &\n  \
             cp {dir}/{PRP} {dir}/PRPs/word-stats-again.md",
            dir = dir.display()
        );
        return Ok(ExitCode::Success);
    }
    let json = output == Output::Quiet;
    if !json {
        println!(
            "Demo repository: {}\nRunning {PRP} with the scripted agents of examples/agents/.\n",
            dir.display()
        );
    }
    let options = session::Options {
        repo: dir.clone(),
        config: None,
        output,
    };
    // The demo never talks to GitHub, whatever token the environment holds.
    let start = session::Start {
        place: session::Place::Worktree {
            base: None,
            base_branch: None,
        },
        delivery: Delivery::DryRun,
    };
    let Some(record) = foreground::drive(session::run(&options, &dir.join(PRP), start, None))?
    else {
        return Ok(ExitCode::NotShipped);
    };
    match output {
        Output::Quiet | Output::StatusBlocks => foreground::print_summary(&record, json)?,
        Output::PhaseLines => {
            let summary = Summary::of(&record);
            println!(
                "\n{} after {} iterations ({} agent invocations).",
                summary.state, summary.iterations, summary.agent_invocations
            );
        }
    }
    if !json {
        print!("{}", produced(&dir, &record));
    }
    Ok(foreground::exit_code_of(&record))
}

/// The paths of what the demo's run produced.
fn produced(dir: &Path, record: &RunRecord) -> String {
    let session = SessionPaths::new(dir);
    let run_dir = session.run_dir(&record.run_id);
    let ship = &record.ship;
    let mut lines: Vec<(&str, String)> = vec![(
        "repository",
        format!(
            "{} (the run worked in a worktree of its own: your working tree is as it was)",
            dir.display()
        ),
    )];
    if let Some(worktree) = record.worktree.as_ref().filter(|path| path.exists()) {
        lines.push(("worktree", worktree.display().to_string()));
    }
    if let (Some(branch), Some(commit)) = (&ship.branch, &ship.commit) {
        let short: String = commit.chars().take(7).collect();
        lines.push((
            "branch",
            format!(
                "{branch} at {short} (the feature: `git -C {} show {branch}`)",
                dir.display()
            ),
        ));
    }
    lines.push((
        "remote",
        match &ship.pushed_to {
            Some(_) => format!(
                "{} (a bare repository: the branch was pushed there)",
                dir.join(REMOTE).display()
            ),
            None => format!(
                "not pushed{}",
                ship.not_pushed
                    .as_ref()
                    .map_or_else(String::new, |why| format!(": {why}"))
            ),
        },
    ));
    if let Some(pr) = &ship.pull_request {
        lines.push((
            "pull request",
            format!(
                "{} (dry run: the title and body it would send)",
                pr.display()
            ),
        ));
    }
    if let Some(report) = &record.last_qa_report {
        lines.push(("QA report", format!("{} (the last one)", report.display())));
    }
    if let Some(report) = &record.escalation_report {
        lines.push(("escalation", report.display().to_string()));
    }
    lines.push((
        "status log",
        format!(
            "{} (every status block, the agents' and prpd's)",
            session.run(&record.run_id).phase_status_log().display()
        ),
    ));
    lines.push((
        "iteration logs",
        format!(
            "{} (prompt, agent output and measurements of each iteration)",
            run_dir.join("iterations").display()
        ),
    ));
    lines.push((
        "summary",
        run_dir.join("summary.json").display().to_string(),
    ));
    let mut out = String::from("\nWhat it produced:\n");
    for (what, text) in lines {
        let _ = writeln!(out, "  {what:<15} {text}");
    }
    out
}

/// Writes the demo repository into the empty directory `dir` and commits it, and makes its
/// bare remote `remote.git` beside the files.
pub async fn create(dir: &Path) -> Result<(), DemoError> {
    for (relative, contents) in FILES {
        let contents = if *relative == "prpd.toml" {
            format!("{contents}{SHIP_CONFIG}")
        } else {
            (*contents).to_owned()
        };
        let path = dir.join(relative);
        let write = |source| DemoError::Write {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(write)?;
        }
        std::fs::write(&path, contents).map_err(write)?;
    }
    let logs = tempfile::tempdir().map_err(|source| DemoError::Write {
        path: std::env::temp_dir(),
        source,
    })?;
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=prpd demo",
            "-c",
            "user.email=demo@prpd.invalid",
            "commit",
            "-q",
            "-m",
            "textkit 1.0.0",
        ],
        &["init", "-q", "--bare", REMOTE],
    ] {
        git(dir, logs.path(), args).await?;
    }
    SessionPaths::new(dir)
        .exclude(&format!("/{REMOTE}/"))
        .map_err(|source| DemoError::Write {
            path: dir.join(".git/info/exclude"),
            source,
        })
}

async fn git(dir: &Path, log_dir: &Path, args: &[&str]) -> Result<(), DemoError> {
    let mut command = vec!["git".to_owned()];
    command.extend(args.iter().map(|arg| (*arg).to_owned()));
    let outcome = process::run(Spec::argv(command, dir, &log_dir.join("git.log")))
        .await
        .map_err(|source| DemoError::Git {
            dir: dir.to_path_buf(),
            source,
        })?;
    if outcome.success() {
        Ok(())
    } else {
        Err(DemoError::GitFailed {
            dir: dir.to_path_buf(),
            args: args.join(" "),
            tail: outcome.tail,
        })
    }
}
