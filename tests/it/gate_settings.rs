//! How a repository adjusts its QA gate, end to end: `prpd.toml` `[commands]` and
//! `[checks.<ID>]`, the repository's `qa-checklist.yml` and `qa-tools-mapping.yml` laid over the
//! built-ins, the documentation checks against `--base REF`, and the mistakes in all of them
//! (exit 2, naming the file and line).

use serde_json::Value;

use crate::util::{TestRepo, check, qa_json};

/// A small npm package whose tests pass with `node --test`, committed.
fn package() -> TestRepo {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        "{\n  \"name\": \"pad\",\n  \"type\": \"module\",\n  \"scripts\": {\n    \"test\": \"node --test\"\n  }\n}\n",
    )
    .file(
        "test/pad.test.js",
        "import { test } from \"node:test\";\ntest(\"AC-1: trims\", () => {});\ntest(\"two\", () => {});\n",
    )
    .file("README.md", "# pad\n\nPads strings.\n")
    .file("CHANGELOG.md", "# Changelog\n\n## 1.0.0\n\n- First release.\n")
    .file(
        "PRPs/trim.md",
        "# Trim helper\n\n## Goal\n\nA `trim` helper.\n\n## Success Criteria\n\n- [ ] trims\n\n\
         ## Acceptance Criteria\n\n- AC-1: spaces at both ends go\n",
    )
    .commit("pad");
    repo
}

/// `prpd qa` that must fail with a configuration error: its stderr, the repository's path
/// replaced by `[REPO]`.
fn config_error(repo: &TestRepo, extra: &[&str]) -> String {
    let output = repo
        .prpd()
        .arg("qa")
        .args(extra)
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let root = repo.path().canonicalize().expect("canonical repo path");
    stderr.replace(&*root.to_string_lossy(), "[REPO]")
}

#[test]
fn prpd_toml_commands_override_discovery() {
    let repo = package();
    repo.file(
        "prpd.toml",
        "[commands]\ntest = \"node --test test/pad.test.js\"\n",
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 0, "{report:#}");
    let tests = check(&report, "F1");
    assert_eq!(tests["command"], "node --test test/pad.test.js");
    assert_eq!(tests["source"], "prpd.toml [commands] test");
    assert_eq!(tests["metrics"]["tests_passed"], 2.0);

    let detect = repo
        .prpd()
        .args(["detect", "--json"])
        .output()
        .expect("run prpd detect");
    let detection: Value = serde_json::from_slice(&detect.stdout).expect("json");
    assert_eq!(
        detection["commands"]["test"]["source"],
        "prpd.toml [commands] test"
    );
    assert_eq!(detection["commands"]["test"]["configured"], true);
}

#[test]
fn the_commands_the_user_writes_run_as_written() {
    let repo = package();
    repo.file(
        "prpd.toml",
        "[commands]\nlint = \"echo lint --fix\"\n\n[checks.C2]\ncommand = \"echo max_complexity: 3 --write\"\n",
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 0, "{report:#}");
    let lint = check(&report, "C1");
    assert_eq!(lint["status"], "pass", "{lint:#}");
    assert_eq!(lint["command"], "echo lint --fix");
    let complexity = check(&report, "C2");
    assert_eq!(complexity["status"], "pass", "{complexity:#}");
    assert_eq!(complexity["command"], "echo max_complexity: 3 --write");
}

#[test]
fn the_repository_tools_mapping_test_command_is_used() {
    let repo = package();
    repo.file(
        "qa-tools-mapping.yml",
        "qa_tools:\n  stacks:\n    node_typescript:\n      test: node --test test/\n",
    );
    let (code, report) = qa_json(&repo, &[]);
    assert_eq!(code, 0, "{report:#}");
    let tests = check(&report, "F1");
    assert_eq!(tests["command"], "node --test test/");
    assert_eq!(
        tests["source"],
        "qa-tools-mapping.yml stacks.node_typescript.test"
    );
}

#[test]
fn checks_are_adjusted_and_disabled_checks_say_why() {
    let repo = package();
    repo.file(
        "qa-checklist.yml",
        "qa_checklist:\n  documentation:\n    - id: D5\n      blocking: false\n  code_quality:\n    - id: X1\n      criterion: no TODO left in the code\n      validation: exit_code == 0\n      command: \"! grep -rn TODO test\"\n",
    )
    .file(
        "prpd.toml",
        "[checks.D1]\ndisabled = \"the README is generated from docs/\"\n\n[checks.X1]\nblocking = false\n",
    )
    .file("test/todo.test.js", "// TODO more tests\n");
    let (code, report) = qa_json(&repo, &["--prp", "PRPs/trim.md"]);
    let readme = check(&report, "D1");
    assert_eq!(readme["status"], "skip");
    assert_eq!(
        readme["detail"],
        "disabled in prpd.toml: the README is generated from docs/"
    );
    assert_eq!(check(&report, "X1")["status"], "warn");
    let changelog = check(&report, "D5");
    assert_eq!(changelog["status"], "warn", "{changelog:#}");
    assert_eq!(check(&report, "F1")["status"], "pass");
    assert_eq!(report["verdict"], "APPROVE", "{report:#}");
    assert_eq!(code, 0);

    let markdown = repo
        .prpd()
        .args(["qa", "--prp", "PRPs/trim.md"])
        .output()
        .expect("run prpd");
    let markdown = String::from_utf8_lossy(&markdown.stdout);
    assert!(
        markdown.contains("**[D1]** README updated with the feature: disabled in prpd.toml: the README is generated from docs/"),
        "{markdown}"
    );
}

#[test]
fn documentation_is_judged_on_the_change_since_the_base() {
    let repo = package();
    let (code, report) = qa_json(&repo, &["--base", "HEAD"]);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        check(&report, "D5")["detail"]
            .as_str()
            .expect("detail")
            .contains("CHANGELOG.md: no entry was added since HEAD"),
        "{report:#}"
    );
    assert_eq!(check(&report, "D1")["status"], "fail");
    assert_eq!(check(&report, "D2")["status"], "skip");

    repo.file(
        "CHANGELOG.md",
        "# Changelog\n\n## Unreleased\n\n- Trim helper.\n\n## 1.0.0\n\n- First release.\n",
    )
    .file(
        "docs/trim.md",
        "# Trim\n\nThe trim helper removes spaces at both ends.\n",
    );
    let (code, report) = qa_json(&repo, &["--base", "HEAD", "--prp", "PRPs/trim.md"]);
    // The PRP's goal names `trim`: the entry and the page name it.
    assert_eq!(
        check(&report, "D5")["detail"],
        "CHANGELOG.md (the lines added since HEAD) mentions `trim` (line 5)"
    );
    assert_eq!(
        check(&report, "D1")["detail"],
        "docs/trim.md (the lines added since HEAD) mentions `trim` (line 1)"
    );
    assert_eq!(report["verdict"], "APPROVE", "{report:#}");
    assert_eq!(code, 0);

    let error = config_error(&repo, &["--base", "no-such-branch"]);
    assert!(
        error.contains("--base no-such-branch: not a commit of the git repository at [REPO]"),
        "{error}"
    );
}

#[test]
fn the_readme_documents_the_names_the_change_added_to_the_code() {
    let repo = package();
    repo.file(
        "PRPs/clamp.md",
        "# Clamp values\n\n## Success Criteria\n\n- [ ] values outside the range are clamped\n",
    )
    .commit("the clamp PRP");
    // Not committed: the change since the base is the working tree, untracked files included.
    repo.file(
        "src/clamp.js",
        "export function clamp(value, low, high) {\n  return Math.min(Math.max(value, low), high);\n}\n",
    )
    .file(
        "README.md",
        "# pad\n\nPads strings.\n\nClamp values.\n\n<!-- clamp(value, low, high) -->\n",
    );
    let (_, report) = qa_json(&repo, &["--base", "HEAD", "--prp", "PRPs/clamp.md"]);
    assert_eq!(
        check(&report, "D1")["detail"],
        "readme_contains_feature is false: README.md (the lines added since HEAD) does not \
         document the feature \"Clamp values\": looked for one of the feature's names (`clamp` \
         (src/clamp.js) added to the code) in a paragraph a reader sees that says more than the \
         names and the title; README.md line 5 names `clamp` but says nothing more about it; \
         README.md line 7 names `clamp` only where a reader does not see it (a comment, a link \
         target or an image)",
        "{report:#}"
    );
    assert_eq!(check(&report, "D1")["status"], "fail");

    repo.file(
        "README.md",
        "# pad\n\nPads strings.\n\n`clamp(value, low, high)` keeps a value inside a range.\n",
    );
    let (_, report) = qa_json(&repo, &["--base", "HEAD", "--prp", "PRPs/clamp.md"]);
    assert_eq!(
        check(&report, "D1")["detail"],
        "README.md (the lines added since HEAD) mentions `clamp` (line 5)",
        "{report:#}"
    );
    assert_eq!(check(&report, "D1")["status"], "pass");
}

#[test]
fn a_project_without_a_changelog_or_adrs_is_not_asked_for_them() {
    let repo = package();
    std::fs::remove_file(repo.join("CHANGELOG.md")).expect("remove the changelog");
    let (code, report) = qa_json(&repo, &["--prp", "PRPs/trim.md"]);
    let changelog = check(&report, "D5");
    assert_eq!(changelog["status"], "skip", "{changelog:#}");
    assert!(
        changelog["detail"]
            .as_str()
            .expect("detail")
            .starts_with("the project keeps no changelog"),
        "{changelog:#}"
    );
    assert_eq!(check(&report, "D2")["status"], "skip");
    assert_eq!(check(&report, "D1")["status"], "fail");
    assert_eq!(code, 1);

    repo.file("prpd.toml", "[checks.D5]\noptional = false\n");
    let (_, report) = qa_json(&repo, &["--prp", "PRPs/trim.md"]);
    assert_eq!(check(&report, "D5")["status"], "fail", "{report:#}");
}

#[test]
fn mistakes_in_the_gate_settings_name_the_file_and_line() {
    let repo = package();
    repo.file(
        "prpd.toml",
        "[qa]\njobs = 1\n\n[checks.F9]\nblocking = false\n",
    );
    let error = config_error(&repo, &[]);
    assert!(
        error.contains(
            "[REPO]/prpd.toml:4:9: [checks.F9]: the checklist has no check `F9`; expected one of F1, F2, F3"
        ),
        "{error}"
    );
    repo.file("prpd.toml", "[checks.F1]\nblockin = false\n");
    let error = config_error(&repo, &[]);
    assert!(
        error.contains("[REPO]/prpd.toml:2:1: unknown field `blockin`, expected one of `blocking`"),
        "{error}"
    );
    repo.file("prpd.toml", "[commands]\ntests = \"npm test\"\n");
    let error = config_error(&repo, &[]);
    assert!(
        error.contains("[REPO]/prpd.toml:2:1: unknown field `tests`, expected one of `test`"),
        "{error}"
    );
    repo.file("prpd.toml", "[checks.C1]\nvalidation = \"lint_errors <\"\n");
    let error = config_error(&repo, &[]);
    assert!(
        error.contains(
            "[REPO]/prpd.toml:2:14: `checks.C1.validation`: invalid validation expression"
        ),
        "{error}"
    );
    repo.file("prpd.toml", "");
    repo.file(
        "qa-checklist.yml",
        "qa_checklist:\n  functionality:\n    - id: T1\n      command: make it\n",
    );
    let error = config_error(&repo, &[]);
    assert!(
        error.contains(
            "[REPO]/qa-checklist.yml:3:7: check `T1` has no `criterio` and is not a built-in check"
        ),
        "{error}"
    );
}
