//! No agent process survives its phase: an agent whose GREEN does the honest work and also
//! starts a `setsid` shell (out of its process group, as Claude Code's Bash tool runs commands)
//! that would break `src/calc.js` seconds later. prpd, a child subreaper, must stop that shell
//! when the agent ends and before it measures, so the honest work ships untouched.

use std::time::Duration;

use serde_json::Value;

use crate::run::{PRP, alive, calc_repo, kill_leftover, prp, prpd_toml, read, run_dir};

#[test]
fn a_process_that_escaped_the_agents_group_is_stopped_before_it_can_sabotage() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("green", "escape")], ""));
    let output = repo
        .prpd()
        .args(["run", "--in-place", PRP, "--json"])
        .timeout(Duration::from_secs(240))
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let summary: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("stdout is not JSON ({error}); stderr:\n{stderr}"));
    let pid: i32 = read(&run_dir(repo.path(), &summary).join("escape-pid"))
        .trim()
        .parse()
        .expect("the escaped shell recorded its pid");
    let survived = alive(pid);
    kill_leftover(pid);
    assert!(!survived, "the escaped shell {pid} outlived the run");

    assert_eq!(
        summary["state"], "SHIPPED",
        "{summary:#}\nstderr:\n{stderr}"
    );
    assert_eq!(output.status.code(), Some(0));
    let calc = read(&repo.path().join("src/calc.js"));
    assert!(calc.contains("return a * b;"), "{calc}");
    assert!(!calc.contains("return 0;"), "the sabotage landed:\n{calc}");
    assert!(
        stderr.contains("stopped processes the agent left running")
            && stderr.contains(&format!("{pid} `sh -c")),
        "{stderr}"
    );
}

/// A process left running by prpd's own measurement is not the agent's doing: the project's test
/// command starts a detached `sleep` (a test suite that leaves a server behind) on every run
/// that passes. prpd stops each one and says a measurement left it, never that the agent did;
/// the honest run ships, and no `sleep` outlives it.
#[test]
fn a_process_the_test_command_leaves_is_stopped_and_not_blamed_on_the_agent() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    let manifest = read(&repo.join("package.json")).replace(
        "\"test\": \"node --test\"",
        "\"test\": \"node --test && sh scripts/leave-a-server.sh\"",
    );
    repo.file("package.json", &manifest)
        .file(
            "scripts/leave-a-server.sh",
            "# Starts a server the tests would talk to, and leaves it running.\n\
             setsid sleep 300 >/dev/null 2>&1 </dev/null &\n\
             echo $! >> \"$PRPD_TEST_SERVER_PIDS\"\n\
             sleep 0.3\n",
        )
        .commit("a test command that leaves a server running");
    let pids_dir = tempfile::tempdir().expect("temporary directory");
    let pid_file = pids_dir.path().join("servers");
    let output = repo
        .prpd()
        .args(["run", "--in-place", PRP, "--json"])
        .env("PRPD_TEST_SERVER_PIDS", &pid_file)
        .timeout(Duration::from_secs(240))
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let pids: Vec<i32> = std::fs::read_to_string(&pid_file)
        .unwrap_or_default()
        .lines()
        .map(|line| line.trim().parse().expect("a pid"))
        .collect();
    let survivors: Vec<i32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
    for pid in &survivors {
        kill_leftover(*pid);
    }
    let summary: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("stdout is not JSON ({error}); stderr:\n{stderr}"));
    assert_eq!(
        summary["state"], "SHIPPED",
        "{summary:#}\nstderr:\n{stderr}"
    );
    assert!(!pids.is_empty(), "the test command left servers: {stderr}");
    assert!(survivors.is_empty(), "{survivors:?} outlived the run");
    assert!(
        stderr.contains("stopped processes a measurement left running")
            && stderr.contains("`sleep 300`"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("the agent left running"),
        "the agent is blamed for the test command's server:\n{stderr}"
    );
}
