//! Git-native snapshots through the real binary: a run records each iteration on private refs
//! without touching the user's branch or index, `prpd diff` shows what an iteration changed, and
//! the refs go when the run ends unless `[run] keep_snapshots = true`.

use crate::run::{calc_repo, measured, prp, prpd_fails, prpd_toml, run};

#[test]
fn prpd_diff_shows_an_iteration_and_kept_snapshots_stay_off_the_users_branch() {
    let repo = calc_repo(
        &prp(""),
        &prpd_toml("plain", &[], "[run]\nkeep_snapshots = true\n"),
    );
    let head_before = repo.git(&["rev-parse", "HEAD"]);
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);

    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]),
        head_before,
        "HEAD did not move"
    );
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]),
        "",
        "the index is the user's"
    );
    let refs = repo.git(&["for-each-ref", "--format=%(refname)", "refs/prpd/"]);
    let run_id = summary["run_id"].as_str().expect("run id");
    assert!(refs.contains(&format!("refs/prpd/{run_id}/0")), "{refs}");

    let red = repo
        .prpd()
        .args(["diff", "1"])
        .output()
        .expect("run prpd diff");
    assert!(
        red.status.success(),
        "{}",
        String::from_utf8_lossy(&red.stderr)
    );
    let patch = String::from_utf8_lossy(&red.stdout);
    assert!(patch.contains("+++ b/test/multiply.test.js"), "{patch}");
    assert!(
        patch.contains("+  assert.equal(calc.multiply(6, 7), 42);"),
        "{patch}"
    );

    let stderr = prpd_fails(&repo, &["diff", "99"], 2);
    assert!(stderr.contains("has no iteration 99"), "{stderr}");
}

#[test]
fn snapshot_refs_are_removed_when_the_run_ships() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_eq!(
        repo.git(&["for-each-ref", "--format=%(refname)", "refs/prpd/"]),
        format!(
            "refs/prpd/{}/record\n",
            summary["run_id"].as_str().expect("id")
        ),
        "only the record's seal stays, for `prpd status` to check"
    );
    let stderr = prpd_fails(&repo, &["diff"], 2);
    assert!(stderr.contains("keep_snapshots = true"), "{stderr}");
}

#[test]
fn a_directory_git_cannot_open_is_refused_before_a_run_record_exists() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("package.json"),
        r#"{"scripts":{"test":"node --test"}}"#,
    )
    .expect("write");
    std::fs::create_dir_all(dir.path().join("PRPs")).expect("mkdir");
    std::fs::write(dir.path().join(crate::run::PRP), prp("")).expect("write");
    let output = assert_cmd::Command::cargo_bin("prpd")
        .expect("prpd binary is built")
        .args(["run", "--in-place", crate::run::PRP, "--repo"])
        .arg(dir.path())
        .env("PRPD_LOG", "warn")
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a git repository"), "{stderr}");
    assert!(stderr.contains("git init"), "{stderr}");
    assert!(crate::util::run_record(dir.path()).is_none());
}

#[test]
fn a_record_of_another_version_is_named_with_a_way_out() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    repo.file(".prp-session/runs/run-1/state.json", r#"{"version": 1}"#);
    for args in [&["status"][..], &["resume"], &["abort"]] {
        let stderr = prpd_fails(&repo, args, 2);
        assert!(
            stderr.contains("a run record of version 1") && stderr.contains("move the file away"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_file_the_test_run_writes_is_not_the_next_agents_progress() {
    // The test script leaves a file git does not ignore, different at every run. An idle
    // REFACTOR agent on passing tests has no error to repeat: only the tree shows it does
    // nothing, so the stamp must not count as its change.
    let repo = calc_repo(
        &prp(""),
        &prpd_toml(
            "plain",
            &[("refactor", "idle")],
            "[guardrails]\nmax_agent_invocations = 12\n",
        ),
    );
    let manifest = std::fs::read_to_string(repo.join("package.json")).expect("read");
    repo.file(
        "package.json",
        &manifest.replace(
            r#""test": "node --test","#,
            r#""test": "node -e \"require('fs').writeFileSync('last-run.txt', String(process.hrtime.bigint()))\" && node --test","#,
        ),
    )
    .commit("tests leave a stamp");
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(reason.contains("the REFACTOR breaker opened"), "{reason}");
    assert!(
        repo.join("last-run.txt").exists(),
        "the test run wrote its stamp"
    );
    let classes: Vec<String> = measured(repo.path(), &summary, "refactor")
        .iter()
        .map(|measured| measured["class"].as_str().unwrap_or("").to_owned())
        .collect();
    assert!(
        classes.iter().all(|class| class != "Progress"),
        "an idle agent makes no progress, whatever the tests wrote: {classes:?}"
    );
}
