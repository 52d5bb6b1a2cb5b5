//! Telling a human that a run needs them: the `[notify] command` of prpd.toml (argv, no shell)
//! runs with the escalation report's path as its last argument, so users hook desktop
//! notifications, chat or mail. Like every child it goes through the process module (its own
//! process group, a timeout, prpd's environment without secret-named variables); its output
//! goes to `.prp-session/notify.log`. A failing command is logged: the report is written either
//! way, and the daemon goes on.

use std::path::Path;
use std::time::Duration;

use prpd_base::paths::SessionPaths;
use prpd_base::process::{self, Spec};

/// How long the command may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `command` with `report` appended, in `repo`.
pub async fn tell(repo: &Path, command: &[String], report: &Path) {
    let mut argv = command.to_vec();
    argv.push(report.display().to_string());
    let mut spec = Spec::argv(argv, repo, &SessionPaths::new(repo).notify_log());
    spec.timeout = TIMEOUT;
    match process::run(spec).await {
        Ok(outcome) if outcome.success() => {
            tracing::info!(command = %command.join(" "), "notify command ran");
        }
        Ok(outcome) => tracing::warn!(
            command = %command.join(" "),
            termination = ?outcome.termination,
            tail = %outcome.tail,
            "notify command failed"
        ),
        Err(error) => tracing::warn!(
            command = %command.join(" "),
            error = %error,
            "notify command could not start"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_command_gets_the_report_path_as_its_last_argument() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(".prp-session")).expect("session");
        let out = dir.path().join("told.txt");
        let script = format!("printf '%s|%s' \"$1\" \"$#\" > {}", out.display());
        let command = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            script,
            "notify".to_owned(),
        ];
        let report = Path::new("/repo/.prp-session/runs/r/escalation.md");
        tell(dir.path(), &command, report).await;
        assert_eq!(
            std::fs::read_to_string(&out).expect("the command ran"),
            "/repo/.prp-session/runs/r/escalation.md|1"
        );
    }
}
