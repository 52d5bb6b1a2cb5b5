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
        .args(["run", PRP, "--json"])
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
