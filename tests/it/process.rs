//! The process rules seen from the outside: a check that hangs with a grandchild holding its
//! output open ends at its timeout with nothing left running, and a check that floods its
//! output neither stalls prpd nor fills the disk.

use serde_json::Value;

use crate::util::TestRepo;

fn checklist_with(command: &str, timeout: &str) -> String {
    format!(
        "qa_checklist:\n  version: \"1.0.0\"\n  replace_builtin: true\n  funcionalidade:\n    - id: P1\n      criterio: the command ends\n      validacao: exit_code == 0\n      comando: {command:?}\n      blocking: true\n      timeout: {timeout:?}\n"
    )
}

/// Live (non-zombie) processes whose command line contains `marker`.
fn live_processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let path = entry.path();
        let Ok(cmdline) = std::fs::read(path.join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let state = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'));
        if cmdline.contains(marker) && !zombie {
            found.push(cmdline);
        }
    }
    found
}

#[test]
fn hanging_grandchild_is_stopped_at_the_timeout() {
    let repo = TestRepo::new();
    let marker = format!("1000.{}", std::process::id());
    let command = format!("sleep {marker} & echo started; sleep {marker}");
    repo.file("qa-checklist.yml", &checklist_with(&command, "1s"));
    let output = repo
        .prpd()
        .args(["qa", "--json"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run prpd");
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).expect("json");
    let check = &report["checks"][0];
    assert_eq!(check["status"], "fail");
    assert!(
        check["detail"]
            .as_str()
            .expect("detail")
            .contains("did not finish within 1s"),
        "{check:#}"
    );
    assert!(
        check["output_tail"]
            .as_str()
            .expect("tail")
            .contains("started")
    );
    assert_eq!(live_processes_with(&marker), Vec::<String>::new());
}

#[test]
fn grandchild_holding_the_pipe_after_the_child_exits_is_stopped() {
    let repo = TestRepo::new();
    let marker = format!("1001.{}", std::process::id());
    let command = format!("(sleep {marker}) & echo done");
    repo.file("qa-checklist.yml", &checklist_with(&command, "10m"));
    let output = repo
        .prpd()
        .args(["qa", "--json"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run prpd");
    let report: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report:#}");
    assert_eq!(live_processes_with(&marker), Vec::<String>::new());
}

#[test]
fn output_flood_is_drained_and_its_log_capped() {
    let repo = TestRepo::new();
    // 120 MB of output: nearly twice the log cap, far more than any in-memory buffer may hold.
    // (Sized to finish well inside the timeout on a loaded 2-core CI machine.)
    repo.file(
        "qa-checklist.yml",
        &checklist_with("yes 'flood line of output' | head -c 120000000", "8m"),
    );
    let output = repo
        .prpd()
        .args(["qa", "--json"])
        .timeout(std::time::Duration::from_secs(540))
        .output()
        .expect("run prpd");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "no JSON report ({error}); status {:?}, stderr:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let check = &report["checks"][0];
    assert_eq!(check["status"], "pass", "{check:#}");
    assert!(check["output_tail"].as_str().expect("tail").len() < 64 * 1024);
    let log = std::path::PathBuf::from(check["log"].as_str().expect("log path"));
    let log_size = std::fs::metadata(&log).expect("log exists").len();
    assert!(
        (32 * 1024 * 1024..=65 * 1024 * 1024).contains(&log_size),
        "log is {log_size} bytes: capped near 64 MiB, not lost"
    );
}
