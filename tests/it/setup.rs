//! `[run] setup` end to end: the commands run once in a new worktree before the first agent,
//! what they write is never shipped as the agents' work, and a command that fails escalates
//! the run naming it with its output; `prpd resume` runs the setup again.

use std::path::Path;

use crate::run::{PRP, calc_repo, prp, prpd_json, prpd_toml, read};
use crate::ship::bare_remote;
use crate::worktrees::on_branch;

/// prpd.toml of the `calc` fixture with `[run] setup` = `commands` and SHIP to `remote`.
fn config(commands: &[String], remote: &Path) -> String {
    prpd_toml(
        "plain",
        &[],
        &format!(
            "[run]\nsetup = [{}]\n\n[ship]\nremote = {:?}\n",
            commands
                .iter()
                .map(|command| format!("{command:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            remote.display().to_string()
        ),
    )
}

#[test]
fn setup_runs_once_in_the_worktree_and_what_it_writes_does_not_ship() {
    let (scratch, remote) = bare_remote();
    let count = scratch.path().join("setup-count");
    let commands = [
        format!("echo run >> {}", count.display()),
        "mkdir -p vendor-cache && echo installed > vendor-cache/marker.txt".to_owned(),
    ];
    let repo = calc_repo(&prp(""), &config(&commands, &remote));
    let (code, summary) = prpd_json(repo.path(), &["run", PRP, "--json"]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_eq!(read(&count), "run\n", "setup ran once");
    let run_dir = repo
        .join(".prp-session/runs")
        .join(summary["run_id"].as_str().expect("id"));
    assert!(run_dir.join("setup/1.log").is_file());
    assert!(run_dir.join("setup/2.log").is_file());
    let branch = summary["ship"]["branch"].as_str().expect("branch");
    assert_eq!(
        on_branch(&repo, branch, "vendor-cache/marker.txt"),
        None,
        "what setup wrote is prpd's step, not the agents' work"
    );
    assert!(
        on_branch(&repo, branch, "src/calc.js").is_some_and(|calc| calc.contains("multiply")),
        "the feature ships"
    );
    assert!(
        !repo.join("vendor-cache").exists(),
        "the user's tree is untouched"
    );
}

#[test]
fn a_failing_setup_command_escalates_naming_it_and_resume_runs_setup_again() {
    let (scratch, remote) = bare_remote();
    let ready = scratch.path().join("ready");
    let command = format!("echo the registry is down; test -f {}", ready.display());
    let repo = calc_repo(&prp(""), &config(std::slice::from_ref(&command), &remote));
    let (code, summary) = prpd_json(repo.path(), &["run", PRP, "--json"]);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["agent_invocations"], 0, "no agent ran: {summary:#}");
    let reason = summary["escalation_reason"].as_str().unwrap_or("");
    assert!(
        reason.contains(&format!("`[run] setup` command `{command}` failed"))
            && reason.contains("exited with code 1")
            && reason.contains("the registry is down"),
        "{reason}"
    );

    std::fs::write(&ready, "").expect("the cause fixed");
    let run_id = summary["run_id"].as_str().expect("id");
    let (code, resumed) = prpd_json(repo.path(), &["resume", run_id, "--json"]);
    assert_eq!(resumed["state"], "SHIPPED", "{resumed:#}");
    assert_eq!(code, 0);
}
