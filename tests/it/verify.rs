//! `[VERIFY]` tasks end to end: `prpd verify` on fixture repositories (real `node --test`
//! suites, real scripts, a local mock of the GitHub API for the remote CI), and the loop, where
//! a scripted GREEN that loses a number's sign passes RED's test but not the PRP's `[VERIFY]`
//! task, is rejected with the task's output, and fixes it.
//!
//! Each honesty rule has its adversary and an honest control: a failing command (then fixed), a
//! command that is not installed (beside one that is), a task that ran nothing, a timeout, an
//! acceptance criterion only a comment mentions or whose test fails (then tested), a remote CI
//! prpd cannot see or that is red (then green).

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

use crate::run::{
    PRP, agent_calls, calc_repo, measured, prp, prpd_toml, read, run, run_dir, verdicts,
};
use crate::ship::files_under;
use crate::ship_github::{Api, REPOSITORY, TOKEN, authorized, check_runs, path_regex_commits};
use crate::util::TestRepo;

/// The upper bound for one `prpd verify`.
const TIMEOUT: Duration = Duration::from_secs(240);

/// A small Node project whose lint and tests pass: `npm run lint`, `npm test` (`node --test`).
fn node_repo(tests: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.file(
        "package.json",
        r#"{
  "name": "calc",
  "version": "1.0.0",
  "type": "module",
  "private": true,
  "scripts": {
    "test": "node --test",
    "lint": "node scripts/lint.mjs",
    "lint:strict": "prpd-no-such-linter --strict ."
  }
}
"#,
    )
    .file("scripts/lint.mjs", "console.log(\"lint: 0 problems\");\n")
    .file("test/calc.test.js", tests);
    repo
}

/// Two tests that pass.
const PASSING_TESTS: &str = "import { test } from \"node:test\";\n\
    import assert from \"node:assert/strict\";\n\n\
    test(\"adds\", () => assert.equal(1 + 1, 2));\n\
    test(\"subtracts\", () => assert.equal(3 - 1, 2));\n";

/// `prpd verify` with `args` in `repo`.
fn verify(repo: &TestRepo, args: &[&str]) -> Output {
    repo.prpd()
        .arg("verify")
        .args(args)
        .timeout(TIMEOUT)
        .output()
        .expect("run prpd verify")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The exit code, with the output shown when it is not `expected`.
fn assert_exit(output: &Output, expected: i32) {
    assert_eq!(
        output.status.code(),
        Some(expected),
        "stdout:\n{}\nstderr:\n{}",
        stdout(output),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn passing_tasks_exit_0_tick_their_checkbox_and_append_to_the_learnings() {
    let repo = node_repo(PASSING_TESTS);
    let tasks = "# Tasks: calc\n\n## Phase 1\n\n- [x] 1.1 Write the code\n\
                 - [ ] 1.2 [VERIFY] Quality check: npm run lint && npm test\n\
                 \x20 - **Do**: run the quality commands\n\
                 \x20 - **Done when**: lint and tests pass\n- [ ] 1.3 Write the docs\n";
    repo.file("tasks.md", tasks)
        .file(
            ".progress.md",
            "# Progress\n\n## Learnings\n- the tests use node:test\n\n## Next\n- 1.3\n",
        )
        .commit("calc");

    let output = verify(&repo, &[]);
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "Verified 1.2 [VERIFY] Quality check\n- npm run lint: PASS\n\
         - npm test: PASS (2 passed, 0 failed)\n\nVERIFICATION_PASS\n",
        "results only on stdout"
    );
    assert_eq!(
        read(&repo.join("tasks.md")),
        tasks.replace("- [ ] 1.2", "- [x] 1.2"),
        "only the verified task's checkbox is ticked"
    );
    let progress = read(&repo.join(".progress.md"));
    let learning = progress.find("- the tests use node:test").expect("kept");
    let entry = progress
        .find("### 1.2 [VERIFY] Quality check: VERIFICATION_PASS (")
        .expect("the entry");
    let next = progress.find("## Next").expect("kept");
    assert!(learning < entry && entry < next, "{progress}");
    assert!(
        progress.contains("Done when: lint and tests pass\n\n```text\nVerified 1.2"),
        "{progress}"
    );
}

#[test]
fn a_failing_command_exits_1_leaves_the_checkbox_and_keeps_the_last_50_lines() {
    let repo = node_repo(PASSING_TESTS);
    let flood = |exit: u8| {
        format!(
            "for (let i = 1; i <= 120; i++) console.log(`line ${{i}}`);\nprocess.exit({exit});\n"
        )
    };
    let tasks = "# Tasks\n\n- [ ] V1 [VERIFY] Quality check: node scripts/flood.mjs && npm test\n";
    repo.file("tasks.md", tasks)
        .file("scripts/flood.mjs", &flood(1))
        .commit("calc");

    let output = verify(&repo, &["tasks.md"]);
    assert_exit(&output, 1);
    let shown = stdout(&output);
    assert!(
        shown.starts_with(
            "Verified V1 [VERIFY] Quality check\n- node scripts/flood.mjs: FAIL\n  exit 1\n"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("  line 101\n") && !shown.contains("line 100\n"),
        "{shown}"
    );
    assert!(
        shown.ends_with(
            "  line 120\n- npm test: SKIPPED (node scripts/flood.mjs failed first)\n\n\
             VERIFICATION_FAIL\n"
        ),
        "{shown}"
    );
    assert_eq!(
        read(&repo.join("tasks.md")),
        tasks,
        "a failed task stays unticked"
    );
    let progress = read(&repo.join(".progress.md"));
    assert!(
        progress.starts_with("## Learnings\n\n### V1 [VERIFY] Quality check: VERIFICATION_FAIL"),
        "{progress}"
    );
    assert!(
        progress.contains("  line 71\n") && progress.contains("  line 120\n"),
        "{progress}"
    );
    assert!(!progress.contains("line 70\n"), "only the last 50 lines");

    // The honest control: fixed, the same task passes and is ticked.
    repo.file("scripts/flood.mjs", &flood(0));
    let output = verify(&repo, &["tasks.md"]);
    assert_exit(&output, 0);
    assert!(read(&repo.join("tasks.md")).contains("- [x] V1 [VERIFY]"));
    let progress = read(&repo.join(".progress.md"));
    let fail = progress
        .find("VERIFICATION_FAIL (")
        .expect("the first entry");
    let pass = progress
        .find("VERIFICATION_PASS (")
        .expect("the second entry");
    assert!(fail < pass, "{progress}");
}

#[test]
fn a_command_that_cannot_be_found_fails_by_name_and_never_passes_silently() {
    let repo = node_repo(PASSING_TESTS);
    let tasks = "# Tasks\n\n- [ ] V1 [VERIFY] Tools: prpd-no-such-linter --strict && npm test\n\
                 - [ ] V2 [VERIFY] Strict lint: npm run lint:strict\n\
                 - [ ] V3 [VERIFY] Installed: node --version\n\
                 - [ ] V4 [VERIFY] Template: <lint>\n\
                 - [ ] V5 [VERIFY] Review the wording\n";
    repo.file("tasks.md", tasks).commit("calc");

    let output = verify(&repo, &[]);
    assert_exit(&output, 1);
    let shown = stdout(&output);
    assert!(
        shown.contains(
            "Verified V1 [VERIFY] Tools\n- prpd-no-such-linter --strict: FAIL\n\
             \x20 command not found: prpd-no-such-linter\n\
             - npm test: SKIPPED (prpd-no-such-linter --strict failed first)\n\n\
             VERIFICATION_FAIL\n"
        ),
        "{shown}"
    );
    assert!(
        shown.contains(
            "- npm run lint:strict: FAIL\n  command not found: prpd-no-such-linter (exit 127)\n"
        ),
        "a program missing behind a script is named too: {shown}"
    );
    assert!(
        shown.contains("Verified V3 [VERIFY] Installed\n- node --version: PASS\n"),
        "{shown}"
    );
    assert!(
        shown.contains("- <lint>: FAIL\n  `<lint>` is a placeholder of the task template"),
        "{shown}"
    );
    assert!(
        shown.contains("Verified V5 [VERIFY] Review the wording\n- nothing to run: FAIL\n"),
        "{shown}"
    );
    assert_eq!(shown.matches("VERIFICATION_FAIL").count(), 4, "{shown}");
    assert_eq!(
        read(&repo.join("tasks.md")),
        tasks.replace("- [ ] V3", "- [x] V3"),
        "only the task that ran and passed is ticked"
    );

    let output = verify(&repo, &["--task", "v1"]);
    assert_exit(&output, 1);
    assert!(stdout(&output).starts_with("Verified V1 [VERIFY] Tools\n"));
    assert!(!stdout(&output).contains("V3"), "--task runs one task");
}

#[test]
fn a_command_past_the_timeout_fails_and_its_group_is_stopped() {
    let repo = node_repo(PASSING_TESTS);
    repo.file(
        "prpd.toml",
        "[qa]\ncheck_timeout = \"1s\"\ngrace = \"1s\"\n",
    )
    .file(
        "tasks.md",
        "- [ ] V1 [VERIFY] Slow: sleep 30\n- [ ] V2 [VERIFY] Quick: node --version\n",
    )
    .commit("calc");
    let started = std::time::Instant::now();
    let output = verify(&repo, &[]);
    assert_exit(&output, 1);
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the timeout ended it"
    );
    let shown = stdout(&output);
    assert!(
        shown.contains(
            "- sleep 30: FAIL\n  did not finish within 1s; its process group was stopped\n"
        ),
        "{shown}"
    );
    assert!(shown.contains("- node --version: PASS"), "{shown}");
}

/// The AC fixture: the criteria of `specs/calc/requirements.md` and the tests that name them.
fn acceptance_repo(tests: &str) -> TestRepo {
    let repo = node_repo(tests);
    repo.file(
        "specs/calc/requirements.md",
        "# Requirements: calc\n\n### US-1\n\n**Acceptance Criteria:**\n\
         - [ ] AC-1.1: add sums two numbers\n- [ ] AC-1.2: sub subtracts\n\
         - [ ] AC-1.3: mul multiplies\n- [ ] AC-1.4: the docs read well (manual)\n",
    )
    .file(
        "specs/calc/tasks.md",
        "# Tasks\n\n- [ ] V6 [VERIFY] AC checklist\n  - **Do**: verify each AC-*\n",
    )
    .commit("calc");
    repo
}

#[test]
fn an_ac_checklist_passes_only_criteria_whose_named_tests_passed() {
    let repo = acceptance_repo(
        "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\n\
         test(\"AC-1.1: add sums two numbers\", () => assert.equal(1 + 1, 2));\n\
         test(\"AC-1.2: sub subtracts\", () => assert.equal(3 - 1, 1));\n\
         // AC-1.3 is covered elsewhere, trust me\n",
    );
    let output = verify(&repo, &["specs/calc/tasks.md"]);
    assert_exit(&output, 1);
    let shown = stdout(&output);
    let rows = [
        "| AC-1.1 | add sums two numbers | PASS | `npm test`: test \"AC-1.1: add sums two \
         numbers\" passed (test/calc.test.js) |",
        "| AC-1.2 | sub subtracts | FAIL | `npm test`: test \"AC-1.2: sub subtracts\" failed \
         (test/calc.test.js) |",
        "| AC-1.3 | mul multiplies | FAIL | no test of the `npm test` run is named after AC-1.3, \
         though test/calc.test.js mention it: name the test after the criterion |",
        "| AC-1.4 | the docs read well (manual) | SKIP | marked manual: a human checks it; prpd \
         does not |",
    ];
    for row in rows {
        assert!(shown.contains(row), "{row}\n{shown}");
    }
    assert!(
        shown.starts_with(
            "Verified V6 [VERIFY] AC checklist\n\n| AC | Description | Status | Evidence |\n"
        ),
        "{shown}"
    );
    assert!(
        shown.ends_with("\n\n2 AC failed: AC-1.2, AC-1.3\n\nVERIFICATION_FAIL\n"),
        "{shown}"
    );
    assert!(read(&repo.join("specs/calc/tasks.md")).contains("- [ ] V6"));
    assert!(read(&repo.join("specs/calc/.progress.md")).contains("2 AC failed: AC-1.2, AC-1.3"));

    // The honest control: every criterion tested and passing; the manual one stays a skip.
    repo.file(
        "test/calc.test.js",
        "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\n\n\
         test(\"AC-1.1: add sums two numbers\", () => assert.equal(1 + 1, 2));\n\
         test(\"AC-1.2: sub subtracts\", () => assert.equal(3 - 1, 2));\n\
         test(\"AC-1.3: mul multiplies\", () => assert.equal(2 * 3, 6));\n",
    );
    let output = verify(&repo, &["specs/calc/tasks.md"]);
    assert_exit(&output, 0);
    let shown = stdout(&output);
    assert!(
        shown.contains("| AC-1.3 | mul multiplies | PASS |"),
        "{shown}"
    );
    assert!(shown.contains("| AC-1.4 | the docs read well (manual) | SKIP |"));
    assert!(!shown.contains("AC failed"), "{shown}");
    assert!(shown.ends_with("|\n\nVERIFICATION_PASS\n"), "{shown}");
    assert!(read(&repo.join("specs/calc/tasks.md")).contains("- [x] V6"));
}

#[test]
fn the_remote_ci_of_head_must_be_seen_and_green() {
    let api = Api::start();
    let repo = node_repo(PASSING_TESTS);
    repo.file(
        "prpd.toml",
        &format!(
            "[ship]\napi_url = \"http://127.0.0.1:{}\"\nrepository = \"acme/calc\"\n",
            api.port()
        ),
    )
    .file("tasks.md", "- [ ] V5 [VERIFY] CI pipeline passes\n")
    .commit("calc");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    api.mount(
        authorized(Mock::given(method("GET")).and(path_regex_commits("check-runs")))
            .respond_with(ResponseTemplate::new(200).set_body_json(check_runs("failure")))
            .up_to_n_times(1)
            .with_priority(1),
    );
    api.mount(
        authorized(Mock::given(method("GET")).and(path_regex_commits("check-runs")))
            .respond_with(ResponseTemplate::new(200).set_body_json(check_runs("success")))
            .with_priority(2),
    );
    api.mount_no_statuses();

    // Without a token prpd cannot see the CI: a failure that says what to set, not a pass.
    let output = verify(&repo, &[]);
    assert_exit(&output, 1);
    assert_eq!(
        stdout(&output),
        "Verified V5 [VERIFY] CI pipeline passes\n- remote checks: FAIL\n  no token in \
         $GITHUB_TOKEN: set it to a GitHub token that may read this repository's checks \
         (`[ship] token_env` in prpd.toml names the variable); a remote CI prpd cannot see does \
         not pass\n\nVERIFICATION_FAIL\n"
    );
    let route = format!("{REPOSITORY}/commits/{head}/check-runs");
    assert!(api.requests_to("GET", &route).is_empty());

    // A red check fails the task with its name, conclusion and title.
    let with_token = |repo: &TestRepo| {
        repo.prpd()
            .args(["verify", "tasks.md"])
            .env("GITHUB_TOKEN", TOKEN)
            .timeout(TIMEOUT)
            .output()
            .expect("run prpd verify")
    };
    let red = with_token(&repo);
    assert_exit(&red, 1);
    let shown = stdout(&red);
    assert!(
        shown.starts_with(
            "Verified V5 [VERIFY] CI pipeline passes\n- ci / test: FAIL (failure)\n  ci / test: \
             failure\n"
        ),
        "{shown}"
    );
    assert!(read(&repo.join("tasks.md")).contains("- [ ] V5"));

    // The honest control: green, it passes and is ticked.
    let green = with_token(&repo);
    assert_exit(&green, 0);
    assert_eq!(
        stdout(&green),
        "Verified V5 [VERIFY] CI pipeline passes\n- ci / test: PASS\n\nVERIFICATION_PASS\n"
    );
    assert!(read(&repo.join("tasks.md")).contains("- [x] V5"));
    assert_eq!(
        api.requests_to("GET", &route).len(),
        2,
        "the checks of HEAD"
    );

    for output in [&red, &green] {
        assert!(!String::from_utf8_lossy(&output.stdout).contains(TOKEN));
        assert!(!String::from_utf8_lossy(&output.stderr).contains(TOKEN));
    }
    for file in files_under(&repo.join(".prp-session")) {
        let bytes = std::fs::read(&file).expect("read a session file");
        assert!(
            !String::from_utf8_lossy(&bytes).contains(TOKEN),
            "{} holds the token",
            file.display()
        );
    }
    assert!(!read(&repo.join(".progress.md")).contains(TOKEN));
}

#[test]
fn mistakes_in_what_to_verify_exit_2_and_name_the_file() {
    let repo = node_repo(PASSING_TESTS);
    repo.file(
        "notes.md",
        "# Notes\n\n- [ ] 1.1 [verify the docs] by hand\n",
    )
    .file(
        "specs/x/tasks.md",
        "- [ ] V1 [VERIFY] Quality check: npm test\n",
    )
    .commit("calc");
    let cases: [(&[&str], &str); 4] = [
        (
            &["missing.md"],
            "missing.md: no such file; name the task list to verify",
        ),
        (
            &["notes.md"],
            "notes.md: no `[VERIFY]` task; a task is a list item such as",
        ),
        (
            &["specs/x/tasks.md", "--task", "V9"],
            "specs/x/tasks.md: no `[VERIFY]` task V9; its tasks are V1",
        ),
        (&[], "no task list to verify"),
    ];
    for (args, expected) in cases {
        let output = verify(&repo, args);
        assert_exit(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(stdout(&output).is_empty(), "{args:?}");
    }
    assert!(!repo.join(".progress.md").exists());
    assert!(!repo.join("specs/x/.progress.md").exists());
}

/// Fails unless `multiply` keeps the sign of its result.
pub(crate) const NEGATIVES: &str = "import { multiply } from \"../src/calc.js\";\n\
    const got = multiply(-2, 3);\n\
    if (got !== -6) {\n\
    \x20 console.error(`multiply(-2, 3) is ${got}, expected -6`);\n\
    \x20 process.exit(1);\n}\n\
    console.log(\"multiply keeps signs\");\n";

/// The `calc` fixture whose PRP has `[VERIFY]` tasks (a sign check, the remote CI, the AC
/// checklist), GREEN played by `green`; and the PRP's text.
fn verify_loop_repo(green: &str) -> (TestRepo, String) {
    verify_loop_repo_with(&[("green", green)], "")
}

/// [`verify_loop_repo`] with the phases' `behaviours` and more prpd.toml (the sign check
/// committed too).
pub(crate) fn verify_loop_repo_with(
    behaviours: &[(&str, &str)],
    extra_config: &str,
) -> (TestRepo, String) {
    let tasks = "- [ ] V1 [VERIFY] Negative numbers: node scripts/negatives.mjs\n\
                 - [ ] V5 [VERIFY] CI pipeline passes\n- [ ] V6 [VERIFY] AC checklist\n";
    let prp_text = prp("").replace(
        "2. Implement `multiply` in `src/calc.js`.\n",
        &format!("2. Implement `multiply` in `src/calc.js`.\n{tasks}"),
    );
    let repo = calc_repo(&prp_text, &prpd_toml("plain", behaviours, extra_config));
    repo.file("scripts/negatives.mjs", NEGATIVES)
        .commit("the sign check");
    (repo, prp_text)
}

#[test]
fn in_the_loop_a_failed_verify_task_rejects_and_its_output_reaches_green() {
    let (repo, prp_text) = verify_loop_repo("verify-late");

    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);
    assert_eq!(
        verdicts(&summary),
        [(1, "REJECT".to_owned()), (2, "APPROVE".to_owned())],
        "{summary:#}"
    );
    let reject: Vec<&str> = summary["verdicts"][0]["blocking"]
        .as_array()
        .expect("blocking")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        reject.iter().any(|item| item.starts_with(
            "blocking check failed: verify:V1: V1 [VERIFY] Negative numbers: VERIFICATION_FAIL \
             — `node scripts/negatives.mjs`: exit 1\nVerified V1 [VERIFY] Negative numbers\n"
        )),
        "the REJECT names the task: {reject:#?}"
    );
    assert_eq!(
        reject.len(),
        1,
        "RED's test passed: only the task failed: {reject:#?}"
    );

    let first_report = read(Path::new(
        summary["verdicts"][0]["report"].as_str().expect("a report"),
    ));
    for expected in [
        "| verify:V1 | V1 [VERIFY] Negative numbers | ❌ |",
        "multiply(-2, 3) is 6, expected -6",
        "| verify:V5 | V5 [VERIFY] CI pipeline passes |",
        "deferred to SHIP",
        "| verify:V6 | V6 [VERIFY] AC checklist | ✅ |",
    ] {
        assert!(
            first_report.contains(expected),
            "{expected}\n{first_report}"
        );
    }

    let greens: Vec<Value> = agent_calls(repo.path(), &summary)
        .into_iter()
        .filter(|call| call["phase"] == "GREEN")
        .collect();
    let feedback = greens
        .last()
        .and_then(|call| call["feedback_text"].as_str())
        .expect("GREEN's last feedback");
    assert!(
        feedback.contains("VERIFICATION_FAIL")
            && feedback.contains("multiply(-2, 3) is 6, expected -6"),
        "the task's output reached GREEN: {feedback}"
    );
    assert!(read(&repo.join("src/calc.js")).contains("return a * b;"));

    let progress = read(&run_dir(repo.path(), &summary).join("progress.md"));
    let failed = progress
        .find("### V1 [VERIFY] Negative numbers: VERIFICATION_FAIL")
        .expect("the first QA's entry");
    let passed = progress
        .find("### V1 [VERIFY] Negative numbers: VERIFICATION_PASS")
        .expect("the second QA's entry");
    assert!(failed < passed, "{progress}");
    assert!(progress.contains("QA attempt 1") && progress.contains("QA attempt 2"));
    assert!(progress.contains("VERIFICATION_DEFERRED"), "{progress}");
    assert_eq!(
        read(&repo.join(PRP)),
        prp_text,
        "the loop never edits the PRP, its frozen input"
    );
    assert!(!repo.join("PRPs/.progress.md").exists());

    // Outside the loop, the run's PRP is the default task list, and its checkbox is ticked.
    let output = verify(&repo, &["--task", "V1"]);
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "Verified V1 [VERIFY] Negative numbers\n- node scripts/negatives.mjs: PASS\n\n\
         VERIFICATION_PASS\n"
    );
    assert!(read(&repo.join(PRP)).contains("- [x] V1 [VERIFY] Negative numbers"));
    assert!(read(&repo.join("PRPs/.progress.md")).contains("VERIFICATION_PASS"));
}

#[test]
fn in_the_loop_an_agent_cannot_rewrite_the_script_a_verify_task_runs() {
    let (repo, _) = verify_loop_repo("cheat-verify");
    let (code, summary) = run(&repo);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "GREEN", "never reached QA: {summary:#}");
    let expected = "`scripts/negatives.mjs` was changed: it is part of the test harness";
    let green = measured(repo.path(), &summary, "green");
    assert!(!green.is_empty());
    for measured in &green {
        assert!(
            measured["gate_1"].to_string().contains(expected),
            "{measured:#}"
        );
    }
    assert_eq!(
        read(&repo.join("scripts/negatives.mjs")),
        NEGATIVES,
        "the check is back as the PRP's author wrote it"
    );
}
