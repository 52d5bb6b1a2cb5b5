//! `prpd demo`: the whole loop on a bundled example, with no network and no API key. The
//! example project (`examples/demo/`) and its scripted agents (`examples/agents/`) are compiled
//! into the binary, written to a fresh git repository, and run like any other PRP.

use std::path::{Path, PathBuf};

use crate::base::process::{self, ProcessError, Spec};

/// The PRP the demo runs, relative to the demo repository.
pub const PRP: &str = "PRPs/word-stats.md";

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

/// Writes the demo repository into the empty directory `dir` and commits it.
pub async fn create(dir: &Path) -> Result<(), DemoError> {
    for (relative, contents) in FILES {
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
    ] {
        git(dir, logs.path(), args).await?;
    }
    Ok(())
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
