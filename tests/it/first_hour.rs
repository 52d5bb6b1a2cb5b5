//! What a new user meets in their first hour: `prpd init`, commands run from a sub-directory or
//! outside any repository, an agent CLI that is not installed, the exit code of every user
//! mistake, colours, and the demo's short output. Each test drives the real binary.

use std::path::Path;

use crate::run::{PRP, calc_repo, prp, prpd_toml};
use crate::util::TestRepo;

/// Runs `prpd args` in `dir` with a quiet log; returns the exit code, stdout and stderr.
fn prpd_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = assert_cmd::Command::cargo_bin("prpd")
        .expect("prpd binary is built")
        .args(args)
        .current_dir(dir)
        .env("PRPD_LOG", "warn")
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("run prpd");
    (
        output.status.code().expect("prpd exited by itself"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A repository with a passing `node --test` suite and a PRP, but no prpd.toml.
fn node_repo() -> TestRepo {
    let repo = calc_repo(&prp(""), "");
    repo.git(&["rm", "-q", "prpd.toml"]);
    repo.commit("no prpd.toml");
    repo
}

#[test]
fn qa_from_a_sub_directory_checks_the_repository_root() {
    let repo = node_repo();
    std::fs::create_dir_all(repo.join("src/deep")).expect("mkdir");
    let (code, stdout, stderr) = prpd_in(&repo.join("src/deep"), &["qa", "--json"]);
    let report: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}\n{stderr}"));
    let f1 = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|check| check["id"] == "F1")
        .expect("F1");
    assert_eq!(f1["status"], "pass", "the root's tests ran: {report:#}");
    assert!(code == 0 || code == 1, "{stderr}");
    assert!(repo.join(".prp-session/runs").is_dir());
    assert!(!repo.join("src/deep/.prp-session").exists());
}

#[test]
fn detect_and_status_from_a_sub_directory_use_the_root() {
    let repo = node_repo();
    std::fs::create_dir_all(repo.join("test/unit")).expect("mkdir");
    let (code, stdout, stderr) = prpd_in(&repo.join("test/unit"), &["detect", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\"command\": \"npm test\""), "{stdout}");
    let (code, stdout, stderr) = prpd_in(&repo.join("test/unit"), &["status"]);
    assert_eq!(code, 0, "{stderr}");
    let root = repo.path().canonicalize().expect("canonical");
    assert!(
        stdout.contains(&format!("No run in {}", root.display())),
        "{stdout}"
    );
}

#[test]
fn a_directory_outside_any_git_repository_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("package.json"),
        r#"{"scripts":{"test":"node --test"}}"#,
    )
    .expect("write");
    for args in [
        &["qa"][..],
        &["detect"],
        &["status"],
        &["diff"],
        &["abort"],
        &["resume"],
        &["init"],
        &["run", "--in-place", "PRPs/x.md"],
    ] {
        let (code, stdout, stderr) = prpd_in(dir.path(), args);
        assert_eq!(code, 2, "{args:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains("is not a git repository (nor inside one)")
                && stderr.contains("git init"),
            "{args:?}: {stderr}"
        );
        assert!(!dir.path().join(".prp-session").exists(), "{args:?}");
        assert!(!dir.path().join("prpd.toml").exists(), "{args:?}");
    }
}

#[test]
fn a_missing_agent_cli_is_a_configuration_error_before_any_phase() {
    let repo = calc_repo(
        &prp(""),
        "[agents.default]\ncommand = [\"prpd-test-no-such-agent\", \"-p\"]\nmodel = \"a\"\n\n\
         [agents.qa]\nmodel = \"b\"\n",
    );
    let (code, stdout, stderr) = prpd_in(repo.path(), &["run", "--in-place", PRP, "--json"]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("prpd.toml: an agent cannot be started, so nothing was run"),
        "{stderr}"
    );
    assert!(
        stderr.contains("[agents.default] command `prpd-test-no-such-agent`: it is not on PATH"),
        "{stderr}"
    );
    assert!(crate::util::run_record(&repo.join("")).is_none());
    assert!(!repo.join(".prp-session/runs").exists());
}

#[test]
fn the_builtin_claude_agent_missing_names_its_install_command() {
    let repo = node_repo();
    let bin = tempfile::tempdir().expect("tempdir");
    // A PATH with git and node but certainly no `claude`.
    for tool in ["git", "node", "sh"] {
        let found = which(tool);
        std::os::unix::fs::symlink(found, bin.path().join(tool)).expect("symlink");
    }
    let output = repo
        .prpd()
        .args(["run", "--in-place", PRP])
        .env("PATH", bin.path())
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("[agents.default] command `claude`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("npm install -g @anthropic-ai/claude-code"),
        "{stderr}"
    );
    assert!(stderr.contains("prpd init"), "{stderr}");
    assert!(crate::util::run_record(&repo.join("")).is_none());
}

#[test]
fn an_agent_script_without_its_execute_bit_is_named() {
    let repo = calc_repo(
        &prp(""),
        "[agents.default]\ncommand = [\"node\", \"agent.mjs\"]\nmodel = \"a\"\n\n\
         [agents.qa]\ncommand = [\"./review.sh\"]\nmodel = \"b\"\n",
    );
    repo.file("review.sh", "#!/bin/sh\necho review\n");
    repo.commit("a review script without +x");
    let (code, _, stderr) = prpd_in(repo.path(), &["run", "--in-place", PRP, "--json"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("[agents.qa] command `./review.sh`")
            && stderr.contains("is not an executable file"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("[agents.default]"),
        "node is installed: {stderr}"
    );
}

/// The absolute path of `tool` on the test's PATH.
fn which(tool: &str) -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").expect("PATH"))
        .map(|dir| dir.join(tool))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{tool} is not on PATH"))
}

#[test]
fn an_agents_setting_never_stops_prpd_qa() {
    let repo = node_repo();
    for config in [
        "[agents.default]\ntimeout = \"1h\"\n",
        "[agents.default]\ncommand = [\"prpd-test-no-such-agent\"]\nmodel = \"same\"\n",
        "[agents.default]\ncommand = []\n",
    ] {
        repo.file("prpd.toml", config);
        let (code, stdout, stderr) = prpd_in(repo.path(), &["qa", "--json"]);
        assert!(
            code == 0 || code == 1,
            "{config}: exit {code}\n{stdout}\n{stderr}"
        );
        assert!(stdout.contains("\"verdict\""), "{config}: {stdout}");
    }
}

#[test]
fn a_default_agent_timeout_keeps_the_builtin_qa_model_for_a_run() {
    let repo = node_repo();
    repo.file("prpd.toml", "[agents.default]\ntimeout = \"1h\"\n");
    let bin = tempfile::tempdir().expect("tempdir");
    for tool in ["git", "node", "sh"] {
        std::os::unix::fs::symlink(which(tool), bin.path().join(tool)).expect("symlink");
    }
    let output = repo
        .prpd()
        .args(["run", "--in-place", PRP])
        .env("PATH", bin.path())
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        !stderr.contains("allow_same_model"),
        "the built-in QA model stays: {stderr}"
    );
    assert!(stderr.contains("command `claude`"), "{stderr}");
}

/// Every user mistake exits 2 with a message, never 4 ("internal error") and never a panic.
#[test]
fn user_mistakes_exit_2() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    std::fs::write(repo.join("a-file"), "not a directory").expect("write");
    let cases: &[(&[&str], &str)] = &[
        (
            &["qa", "--repo", "no/such/dir"],
            "--repo no/such/dir: not a directory",
        ),
        (&["qa", "--prp", "PRPs/missing.md"], "PRPs/missing.md"),
        (&["qa", "--config", "missing.toml"], "missing.toml"),
        (
            &["qa", "--report", "a-file/report.md"],
            "--report a-file/report.md",
        ),
        (&["qa", "--jobs", "0"], "--jobs"),
        (&["run", "--in-place", "PRPs/missing.md"], "PRPs/missing.md"),
        (
            &["run", "--in-place", "/etc/hostname"],
            "not inside the repository",
        ),
        (&["run", "--in-place", "PRPs"], "PRPs"),
        (&["resume"], "no run to resume"),
        (&["abort"], "no run to abort"),
        (&["diff"], "no run to diff"),
        (&["diff", "7", "--run", "run-x"], "no run to diff"),
        (&["demo", "--dir", "a-file"], "--dir a-file"),
        (&["demo", "--dir", "src"], "--dir src: not empty"),
        (&["init"], "prpd.toml already exists"),
        (&["no-such-command"], "unrecognized subcommand"),
    ];
    for (args, expected) in cases {
        let (code, stdout, stderr) = prpd_in(repo.path(), args);
        assert_eq!(
            code, 2,
            "prpd {args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(
            stderr.contains(expected),
            "prpd {args:?}: no {expected:?} in\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "prpd {args:?}: {stderr}");
    }
}

#[test]
fn an_unknown_placeholder_in_a_prompt_override_is_refused_before_the_run() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    repo.file(
        ".prpd/prompts/document.md",
        "# Document\n\n{{prp}}\n{{changelog_path}}\n",
    )
    .commit("a DOCUMENT prompt with a placeholder prpd does not know");
    let (code, _, stderr) = prpd_in(repo.path(), &["run", "--in-place", PRP, "--json"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(".prpd/prompts/document.md:4: unknown placeholder `{{changelog_path}}`"),
        "{stderr}"
    );
    assert!(crate::util::run_record(&repo.join("")).is_none());
}

#[test]
fn a_damaged_run_record_is_named_with_exit_2() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[], ""));
    repo.file(".prp-session/runs/run-1/state.json", "{ not json");
    for args in [&["status"][..], &["resume"], &["abort"]] {
        let (code, _, stderr) = prpd_in(repo.path(), args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("state.json"), "{args:?}: {stderr}");
    }
}

/// Runs `command` under a pseudo-terminal (util-linux `script`), so prpd's stderr is a
/// terminal; returns everything the terminal received.
#[expect(
    clippy::disallowed_methods,
    reason = "the test needs a pseudo-terminal around prpd, which `script` provides"
)]
fn on_a_terminal(dir: &Path, command: &str, no_color: Option<&str>) -> String {
    let mut script = std::process::Command::new("script");
    script
        .args(["-qec", command, "/dev/null"])
        .current_dir(dir)
        .env("PRPD_LOG", "info")
        // A terminal of a known kind: with TERM unset or `dumb` (CI, `env -i`) clap colours
        // nothing even on a terminal.
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
    if let Some(value) = no_color {
        script.env("NO_COLOR", value);
    }
    let output = script.output().expect("util-linux `script` runs");
    assert!(output.status.success() || output.status.code() == Some(1));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn colours_only_on_a_terminal_and_never_with_no_color() {
    let repo = node_repo();
    let prpd = assert_cmd::cargo::cargo_bin("prpd");
    let command = format!("{} qa >/dev/null", prpd.display());
    let coloured = on_a_terminal(repo.path(), &command, None);
    assert!(coloured.contains("QA artifacts written"), "{coloured}");
    assert!(
        coloured.contains('\u{1b}'),
        "a terminal gets colours: {coloured:?}"
    );
    for value in ["1", ""] {
        let plain = on_a_terminal(repo.path(), &command, Some(value));
        assert!(plain.contains("QA artifacts written"), "{plain}");
        assert!(!plain.contains('\u{1b}'), "NO_COLOR={value:?}: {plain:?}");
    }
    // clap's help and usage errors follow the same rule (clap alone ignores an empty NO_COLOR).
    let help = format!("{} --help", prpd.display());
    assert!(on_a_terminal(repo.path(), &help, None).contains('\u{1b}'));
    for value in ["1", ""] {
        let plain = on_a_terminal(repo.path(), &help, Some(value));
        assert!(plain.contains("Write a commented prpd.toml"), "{plain}");
        assert!(!plain.contains('\u{1b}'), "NO_COLOR={value:?}: {plain:?}");
    }
    // Not a terminal: a log file gets no colour either.
    let output = repo
        .prpd()
        .arg("qa")
        .env("PRPD_LOG", "info")
        .env_remove("NO_COLOR")
        .output()
        .expect("run prpd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("QA artifacts written"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
}

/// A directory to use as the whole `PATH`: git, node and sh, plus fake agent CLIs named in
/// `agents` (scripts that only exist to be found).
fn path_with(agents: &[&str]) -> tempfile::TempDir {
    let bin = tempfile::tempdir().expect("tempdir");
    for tool in ["git", "node", "sh"] {
        std::os::unix::fs::symlink(which(tool), bin.path().join(tool)).expect("symlink");
    }
    for agent in agents {
        let path = bin.path().join(agent);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("write");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
    }
    bin
}

fn init_with_path(dir: &Path, path: &Path, args: &[&str]) -> (i32, String, String) {
    prpd_with_path(dir, path, &[&["init"], args].concat())
}

/// `prpd args` in `dir` with `path` as the whole `PATH`.
fn prpd_with_path(dir: &Path, path: &Path, args: &[&str]) -> (i32, String, String) {
    let output = assert_cmd::Command::cargo_bin("prpd")
        .expect("prpd binary is built")
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env("PRPD_LOG", "warn")
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("run prpd");
    (
        output.status.code().expect("exit code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn init_writes_a_prpd_toml_for_the_first_agent_cli_on_path_and_shows_the_commands() {
    let repo = node_repo();
    std::fs::create_dir_all(repo.join("src/deep")).expect("mkdir");
    let bin = path_with(&["aider", "codex", "claude"]);
    let (code, stdout, stderr) = init_with_path(&repo.join("src/deep"), bin.path(), &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let written = std::fs::read_to_string(repo.join("prpd.toml")).expect("prpd.toml at the root");
    assert!(!repo.join("src/deep/prpd.toml").exists());
    assert!(written.starts_with("# prpd.toml"), "{written}");
    assert!(
        written.contains("[agents.default]\nagent = \"claude-code\"\n"),
        "{written}"
    );
    assert!(
        written.contains("# command = [\"claude\", \"-p\""),
        "{written}"
    );
    assert!(written.contains("(QA: \"opus\")"), "{written}");
    assert!(stdout.contains("for Claude Code"), "{stdout}");
    assert!(stdout.contains("it loads without error"), "{stdout}");
    assert!(stdout.contains("| Test | `npm test` |"), "{stdout}");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(repo.join("prpd.toml"))
            .expect("stat")
            .permissions(),
    );
    assert_eq!(
        mode & 0o044,
        0o044,
        "readable like any source file: {mode:o}"
    );

    // The file it wrote is what a run loads: the agent it names is found, the QA model differs.
    // A run checks both before it reads the PRP, so a PRP with nothing to verify is the first
    // and only thing it refuses; without `claude` on PATH it refuses the agent instead.
    std::fs::write(repo.join("PRPs/untitled.md"), "no title here\n").expect("write");
    let run = ["run", "--in-place", "PRPs/untitled.md"];
    let (code, _, stderr) = prpd_with_path(repo.path(), bin.path(), &run);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("PRPs/untitled.md:1: nothing to verify"),
        "the configuration and the agent passed, the PRP did not: {stderr}"
    );
    let without_claude = path_with(&[]);
    let (code, _, stderr) = prpd_with_path(repo.path(), without_claude.path(), &run);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("[agents.default] command `claude`: it is not on PATH"),
        "{stderr}"
    );

    // A second init leaves the file alone; --force replaces it.
    std::fs::write(repo.join("prpd.toml"), "# mine\n").expect("write");
    let (code, _, stderr) = init_with_path(repo.path(), bin.path(), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("already exists") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("prpd.toml")).expect("read"),
        "# mine\n"
    );
    let (code, _, stderr) =
        init_with_path(repo.path(), bin.path(), &["--force", "--agent", "aider"]);
    assert_eq!(code, 0, "{stderr}");
    let written = std::fs::read_to_string(repo.join("prpd.toml")).expect("read");
    assert!(written.contains("agent = \"aider\""), "{written}");
    assert!(
        written.contains("\"--message-file\", \"{prompt_file}\""),
        "{written}"
    );
}

#[test]
fn init_prefers_codex_over_aider_when_claude_is_missing() {
    let repo = node_repo();
    let bin = path_with(&["aider", "codex"]);
    let (code, stdout, stderr) = init_with_path(repo.path(), bin.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("for Codex CLI"), "{stdout}");
    let written = std::fs::read_to_string(repo.join("prpd.toml")).expect("read");
    assert!(
        written.contains("agent = \"codex\"\n# The block's settings"),
        "{written}"
    );
}

#[test]
fn init_without_an_agent_cli_writes_the_scripted_demo_agents() {
    let repo = node_repo();
    let bin = path_with(&[]);
    let (code, stdout, stderr) = init_with_path(repo.path(), bin.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("No agent CLI (claude, codex, aider) is on PATH"),
        "{stdout}"
    );
    let written = std::fs::read_to_string(repo.join("prpd.toml")).expect("read");
    assert!(
        written.contains("command = [\"node\", \".prpd/agents/scripted-agent.mjs\"]"),
        "{written}"
    );
    let script = std::fs::read_to_string(repo.join(".prpd/agents/scripted-agent.mjs"))
        .expect("the script the command names is there");
    assert!(script.contains("PRP_PHASE_STATUS"));
}

#[test]
fn init_without_a_test_command_says_what_run_needs() {
    let repo = TestRepo::new();
    repo.file("README.md", "# empty\n").commit("empty");
    let bin = path_with(&["claude"]);
    let (code, stdout, stderr) = init_with_path(repo.path(), bin.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("No test command was found"), "{stdout}");
}

/// `prpd demo --dir <new dir>` with `extra` arguments; returns the exit code, stdout, stderr.
fn demo_text(extra: &[&str]) -> (tempfile::TempDir, i32, String, String) {
    let parent = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["demo", "--dir", "demo"];
    args.extend_from_slice(extra);
    let output = assert_cmd::Command::cargo_bin("prpd")
        .expect("prpd binary is built")
        .args(&args)
        .current_dir(parent.path())
        .env_remove("PRPD_LOG")
        .timeout(std::time::Duration::from_secs(240))
        .output()
        .expect("run prpd demo");
    (
        parent,
        output.status.code().expect("exit code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn demo_prints_one_line_per_phase_and_the_paths_of_what_it_produced() {
    let (parent, code, stdout, stderr) = demo_text(&[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stdout.contains("PRP_PHASE_STATUS"), "{stdout}");
    assert!(stderr.trim().is_empty(), "a quiet log by default: {stderr}");
    let phases: Vec<&str> = stdout
        .lines()
        .filter(|line| line.contains(" iteration") || line.contains("pull request in pr.md"))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|word| ["RED", "GREEN", "REFACTOR", "DOCUMENT", "QA", "SHIP"].contains(word))
        .collect();
    assert_eq!(
        phases,
        [
            "RED", "GREEN", "REFACTOR", "DOCUMENT", "QA", "GREEN", "REFACTOR", "DOCUMENT", "QA",
            "SHIP"
        ],
        "{stdout}"
    );
    assert!(
        stdout.contains("GREEN     2 iterations  complete"),
        "{stdout}"
    );
    assert!(
        stdout.contains("QA        1 iteration   REJECT: F2:")
            && stdout.contains("(attempt 1 of 3)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("QA        1 iteration   APPROVE (attempt 2 of 3)"),
        "{stdout}"
    );
    assert!(stdout.contains("SHIPPED after 10 iterations"), "{stdout}");
    assert!(stdout.lines().count() < 40, "{stdout}");

    let dir = parent.path().join("demo").canonicalize().expect("demo dir");
    let path_of = |what: &str| -> std::path::PathBuf {
        let line = stdout
            .lines()
            .find(|line| line.trim_start().starts_with(what))
            .unwrap_or_else(|| panic!("no {what:?} line in {stdout}"));
        let rest = line.trim_start()[what.len()..].trim_start();
        std::path::PathBuf::from(rest.split(' ').next().expect("a path"))
    };
    assert_eq!(path_of("repository"), dir);
    for what in ["pull request", "QA report", "status log", "summary"] {
        let path = path_of(what);
        assert!(path.is_file(), "{what}: {}", path.display());
        assert!(path.starts_with(&dir), "{what}: {}", path.display());
    }
    assert!(path_of("iteration logs").is_dir());
    let pr = std::fs::read_to_string(path_of("pull request")).expect("pr.md");
    assert!(pr.starts_with("# feat: Word statistics"), "{pr}");
    for expected in [
        "## Verdict: ✅ APPROVED",
        "### Functionality",
        "### Documentation",
    ] {
        assert!(
            pr.contains(expected),
            "no {expected:?} in the PR body:\n{pr}"
        );
    }
    assert!(
        !pr.contains("Funcionalidade") && !pr.contains("Documentação"),
        "{pr}"
    );
    assert_eq!(path_of("remote"), dir.join("remote.git"));
    the_demo_shipped_to_its_remote(&dir, &stdout);
}

/// SHIP pushed the demo's branch to its own bare remote, and the output names the commit it
/// made; the demo repository holds no trace of the remote (it is excluded).
fn the_demo_shipped_to_its_remote(dir: &std::path::Path, stdout: &str) {
    assert!(
        stdout.contains("SHIP                    prp/word-statistics at "),
        "{stdout}"
    );
    let branch_line = stdout
        .lines()
        .find(|line| line.trim_start().starts_with("branch"))
        .unwrap_or_else(|| panic!("no branch line in {stdout}"));
    let short = branch_line
        .split_whitespace()
        .nth(3)
        .unwrap_or_else(|| panic!("no commit in {branch_line:?}"));
    let remote = git2::Repository::open_bare(dir.join("remote.git")).expect("a bare repository");
    let pushed = remote
        .find_branch("prp/word-statistics", git2::BranchType::Local)
        .expect("the branch was pushed")
        .get()
        .peel_to_commit()
        .expect("a commit");
    assert!(pushed.id().to_string().starts_with(short), "{branch_line}");
    assert!(
        pushed
            .message()
            .expect("message")
            .starts_with("feat: Word statistics"),
        "{:?}",
        pushed.message()
    );
    let repository = git2::Repository::open(dir).expect("the demo repository");
    let mut options = git2::StatusOptions::new();
    options.include_untracked(true);
    let untracked: Vec<String> = repository
        .statuses(Some(&mut options))
        .expect("status")
        .iter()
        .filter_map(|entry| entry.path().ok().map(str::to_owned))
        .collect();
    assert!(
        !untracked.iter().any(|path| path.starts_with("remote.git")),
        "{untracked:?}"
    );
}

#[test]
fn demo_with_v_prints_the_full_status_blocks() {
    let (_parent, code, stdout, stderr) = demo_text(&["-v"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let blocks = stdout.matches("---END_PRP_PHASE_STATUS---").count();
    assert!(blocks >= 10, "{blocks} blocks:\n{stdout}");
    assert!(stdout.contains("What it produced:"), "{stdout}");
}

#[test]
fn standalone_qa_speaks_english_and_of_fixing_and_running_again_not_of_phases() {
    let repo = TestRepo::new();
    repo.file(
        "qa-checklist.yml",
        "qa_checklist:\n  version: \"1.0.0\"\n  replace_builtin: true\n  funcionalidade:\n\
         \x20   - id: T1\n      criterio: precisa de uma ferramenta\n      validacao: exit_code == 0\n      comando: prpd-no-such-tool --check\n      blocking: true\n\
         \x20   - id: T2\n      criterio: ferramenta opcional\n      validacao: exit_code == 0\n      comando: prpd-no-such-tool --check\n      blocking: true\n      optional: true\n",
    )
    .commit("a checklist whose tool is missing");
    let (code, stdout, stderr) = prpd_in(repo.path(), &["qa"]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    for expected in [
        "### Functionality",
        "precisa de uma ferramenta",
        "Fix the 1 blocking issue above, then run `prpd qa` again.",
        "RECOMMENDATION: Fix 1 blocking issues, then run prpd qa again",
        "install it or mark T1 optional",
        "install it to run this check (it is optional, so it is skipped meanwhile)",
    ] {
        assert!(stdout.contains(expected), "no {expected:?} in:\n{stdout}");
    }
    for unexpected in [
        "Return to GREEN",
        "Proceeding to branch creation and PR",
        "Ready for SHIP",
        "**Attempt:**",
        "mark T2 optional",
        "Funcionalidade",
    ] {
        assert!(!stdout.contains(unexpected), "{unexpected:?} in:\n{stdout}");
    }

    // The built-in checklist speaks English too.
    let repo = node_repo();
    let (_, stdout, stderr) = prpd_in(repo.path(), &["qa"]);
    for expected in [
        "### Functionality",
        "### Code Quality",
        "### Documentation",
        "100% of the tests pass",
        "README updated with the feature",
    ] {
        assert!(
            stdout.contains(expected),
            "no {expected:?} in:\n{stdout}\n{stderr}"
        );
    }
}
