//! Configuration mistakes exit with code 2 and a message naming the file, the line and what
//! was expected (snapshots keep the wording honest).

use crate::util::TestRepo;

fn stderr_of_qa(repo: &TestRepo) -> String {
    let output = repo.prpd().arg("qa").output().expect("run prpd");
    assert_eq!(output.status.code(), Some(2), "expected a config error");
    let root = repo.path().canonicalize().expect("canonical repo path");
    String::from_utf8_lossy(&output.stderr).replace(&*root.to_string_lossy(), "[REPO]")
}

#[test]
fn unknown_checklist_key_is_named() {
    let repo = TestRepo::new();
    repo.file(
        "qa-checklist.yml",
        "qa_checklist:\n  version: \"1.0.0\"\n  funcionalidade:\n    - id: F1\n      criterio: tests pass\n      validacao: exit_code == 0\n      comand: npm test\n      blocking: true\n",
    );
    insta::assert_snapshot!(stderr_of_qa(&repo));
}

#[test]
fn unknown_tools_mapping_key_is_named() {
    let repo = TestRepo::new();
    repo.file(
        "qa-tools-mapping.yml",
        "qa_tools:\n  detection:\n    python:\n      markerz: [\"pyproject.toml\"]\n",
    );
    insta::assert_snapshot!(stderr_of_qa(&repo));
}

#[test]
fn bad_prpd_toml_value_is_located() {
    let repo = TestRepo::new();
    repo.file("prpd.toml", "[qa]\njobs = \"four\"\n");
    insta::assert_snapshot!(stderr_of_qa(&repo));
}

#[test]
fn invalid_validation_expression_is_located() {
    let repo = TestRepo::new();
    repo.file(
        "qa-checklist.yml",
        "qa_checklist:\n  version: \"1.0.0\"\n  funcionalidade:\n    - id: F1\n      criterio: tests pass\n      validacao: exit_code === 0\n      comando: npm test\n      blocking: true\n",
    );
    insta::assert_snapshot!(stderr_of_qa(&repo));
}

#[test]
fn missing_repo_is_a_usage_error() {
    let repo = TestRepo::new();
    repo.prpd()
        .args(["qa", "--repo", "no/such/dir"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--repo no/such/dir: not a directory",
        ));
}

/// Each crate reads only its own tables of prpd.toml, yet a typo in any table stops every
/// command, at its line: the binary asks every crate to check its keys before a command starts.
#[test]
fn a_typo_in_a_table_a_command_does_not_read_still_stops_it_at_its_line() {
    let repo = TestRepo::new();
    repo.file(
        "prpd.toml",
        "[qa]\njobs = 2\n\n[guardrails]\nmax_wal_time = \"1h\"\n",
    );
    for command in [&["qa"][..], &["detect"], &["memory", "stats"]] {
        let output = repo.prpd().args(command).output().expect("run prpd");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.contains("prpd.toml:5:1: unknown field `max_wal_time`, expected one of"),
            "{command:?}: {stderr}"
        );
    }
    repo.file("prpd.toml", "[qa]\njobs = 2\n\n[gaurdrails]\n");
    let output = repo.prpd().arg("qa").output().expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr
            .contains("prpd.toml:4:2: unknown table `gaurdrails`, expected one of the tables `qa`"),
        "{stderr}"
    );
}
