//! SHIP's local side end to end: the real binary runs the `calc` fixture to APPROVE and ships
//! into real bare repositories in temporary directories; what it committed, branched and pushed
//! is read back with git2. The adversaries: a test run that leaves a file in the tree, a remote
//! that is missing and then fixed, a remote branch holding someone else's commit, the user's own
//! uncommitted work, an HTTP remote that refuses the token, a broken `[ship]` table.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use git2::{Oid, Repository};
use serde_json::Value;

use crate::run::{PRP, calc_repo, prp, prpd_toml, run_dir};
use crate::util::TestRepo;

/// The branch the `calc` fixture's PRP ("Multiply numbers") ships on.
pub(crate) const BRANCH: &str = "prp/multiply-numbers";

/// A test file of the fixture that writes `measured.txt` at the root on every run (a leftover
/// of prpd's own measurements, like a report a real test suite writes) and `run.log`, which
/// the fixture's `.gitignore` ignores.
const REPORT_TEST: &str = "import { test } from \"node:test\";\n\
    import { writeFileSync } from \"node:fs\";\n\n\
    test(\"the suite writes a report\", () => {\n\
    \x20 writeFileSync(new URL(\"../measured.txt\", import.meta.url), `${Date.now()}\\n`);\n\
    \x20 writeFileSync(new URL(\"../run.log\", import.meta.url), \"ignored\\n\");\n});\n";

/// The `calc` fixture with honest agents, the report-writing test and `ship_config` (the body
/// of `[ship]`), committed.
pub(crate) fn ship_repo(ship_config: &str) -> TestRepo {
    let repo = calc_repo(
        &prp(""),
        &prpd_toml("plain", &[], &format!("[ship]\n{ship_config}")),
    );
    repo.file("test/report.test.js", REPORT_TEST)
        .file(".gitignore", "*.log\n")
        .commit("a test that writes a report");
    repo
}

/// A new bare repository in a temporary directory, and its path.
pub(crate) fn bare_remote() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("remote.git");
    Repository::init_bare(&path).expect("bare repository");
    (dir, path)
}

/// Runs prpd with `args` in `repo`, without the developer's token, with `env` set.
pub(crate) fn prpd(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = assert_cmd::Command::cargo_bin("prpd").expect("prpd binary is built");
    command
        .args(args)
        .current_dir(repo)
        .env("PRPD_LOG", "warn")
        .env_remove("GITHUB_TOKEN")
        .timeout(Duration::from_secs(240));
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run prpd")
}

/// `prpd <args> --json`: the exit code and the summary.
pub(crate) fn prpd_json(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Value, String) {
    let output = prpd(repo, &[args, &["--json"]].concat(), env);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let summary = serde_json::from_str(&stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}):\n{stdout}\nstderr:\n{stderr}"));
    (output.status.code().expect("exit code"), summary, stderr)
}

/// Every file of `commit`'s tree, with its contents.
fn files_of(repo: &Repository, commit: Oid) -> BTreeMap<String, Vec<u8>> {
    let tree = repo
        .find_commit(commit)
        .expect("commit")
        .tree()
        .expect("tree");
    let mut files = BTreeMap::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |folder, entry| {
        if let Ok(blob) = entry
            .to_object(repo)
            .and_then(|object| object.peel_to_blob())
        {
            files.insert(
                format!("{folder}{}", entry.name().unwrap_or("")),
                blob.content().to_vec(),
            );
        }
        git2::TreeWalkResult::Ok
    })
    .expect("walk");
    files
}

/// The working tree as git sees it (tracked and untracked files that are not ignored).
fn working_files(repo: &TestRepo) -> BTreeMap<String, Vec<u8>> {
    repo.git(&["ls-files", "--cached", "--others", "--exclude-standard"])
        .lines()
        .filter(|path| repo.join(path).is_file())
        .map(|path| {
            (
                path.to_owned(),
                std::fs::read(repo.join(path)).expect("read"),
            )
        })
        .collect()
}

pub(crate) fn branch_tip(repo: &Repository, name: &str) -> Oid {
    repo.find_branch(name, git2::BranchType::Local)
        .unwrap_or_else(|error| panic!("no branch {name}: {error}"))
        .get()
        .peel_to_commit()
        .expect("commit")
        .id()
}

pub(crate) fn oid(value: &Value) -> Oid {
    Oid::from_str(
        value
            .as_str()
            .unwrap_or_else(|| panic!("not a commit id: {value}")),
    )
    .expect("commit id")
}

#[test]
fn the_approved_tree_ships_on_its_branch_without_measurement_leftovers_or_touching_head() {
    let (_remote_dir, remote_path) = bare_remote();
    let repo = ship_repo(&format!(
        "remote = {:?}\n",
        remote_path.display().to_string()
    ));
    let start = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let (code, summary, stderr) = prpd_json(repo.path(), &["run", "--in-place", PRP], &[]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{stderr}");
    assert_eq!(code, 0);
    let ship = &summary["ship"];
    assert_eq!(ship["branch"], BRANCH, "{summary:#}");
    assert_eq!(
        ship["pushed_to"].as_str(),
        Some(remote_path.display().to_string().as_str())
    );
    let commit = oid(&ship["commit"]);

    let local = Repository::open(repo.path()).expect("open");
    assert_eq!(branch_tip(&local, BRANCH), commit);
    let remote = Repository::open_bare(&remote_path).expect("remote");
    assert_eq!(branch_tip(&remote, BRANCH), commit, "pushed");

    // The commit is the tree QA approved: the working tree as git sees it, except the file the
    // test runs left, which no agent wrote.
    let mut expected = working_files(&repo);
    assert!(
        expected.remove("measured.txt").is_some(),
        "the fixture's test run leaves measured.txt: {:?}",
        expected.keys()
    );
    let shipped = files_of(&local, commit);
    assert_eq!(
        shipped.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    assert_eq!(shipped, expected);
    assert!(
        String::from_utf8_lossy(&shipped["src/calc.js"]).contains("export function multiply"),
        "the agents' work is in it"
    );
    assert!(!shipped.keys().any(|path| path.starts_with(".prp-session")));
    assert!(
        repo.join("run.log").is_file(),
        "the tests wrote an ignored file"
    );
    assert!(!shipped.contains_key("run.log"), ".gitignore is honoured");

    // One commit on the commit the run started from, with a Conventional Commit message.
    let shipped_commit = local.find_commit(commit).expect("commit");
    assert_eq!(
        shipped_commit.parent_id(0).expect("parent").to_string(),
        start
    );
    assert_eq!(shipped_commit.parent_count(), 1);
    let message = shipped_commit.message().expect("message");
    assert!(message.starts_with("feat: Multiply numbers\n"), "{message}");
    assert!(
        message.contains("\nPrpd-PRP: PRPs/multiply.md\n"),
        "{message}"
    );

    // The user's branch, HEAD and index are as they were.
    assert_eq!(
        repo.git(&["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main"
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), start);
    assert_eq!(repo.git(&["diff", "--cached", "--name-only"]), "");

    let pr = std::fs::read_to_string(run_dir(repo.path(), &summary).join("pr.md")).expect("pr.md");
    assert!(pr.starts_with("# feat: Multiply numbers\n"), "{pr}");
    assert!(pr.contains("## Verdict: ✅ APPROVED"), "{pr}");
    assert!(pr.contains("## Run summary"), "{pr}");
}

#[test]
fn what_an_agent_staged_in_the_users_index_does_not_ship() {
    let repo = calc_repo(
        &prp(""),
        &prpd_toml("plain", &[("green", "stage-only")], ""),
    );
    let (code, summary, stderr) = prpd_json(repo.path(), &["run", "--in-place", PRP], &[]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{stderr}");
    assert_eq!(code, 0);
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]),
        "staged-only.txt\n",
        "the agent did stage it"
    );
    let local = Repository::open(repo.path()).expect("open");
    let shipped = files_of(&local, oid(&summary["ship"]["commit"]));
    assert!(
        !shipped.contains_key("staged-only.txt"),
        "{:?}",
        shipped.keys()
    );
    assert!(String::from_utf8_lossy(&shipped["src/calc.js"]).contains("multiply"));
}

#[test]
fn a_failed_push_is_resumed_without_a_second_commit_or_branch() {
    let remote_dir = tempfile::tempdir().expect("tempdir");
    let remote_path = remote_dir.path().join("later.git");
    let repo = ship_repo(&format!(
        "remote = {:?}\n",
        remote_path.display().to_string()
    ));
    let (code, summary, stderr) = prpd_json(repo.path(), &["run", "--in-place", PRP], &[]);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}\n{stderr}");
    assert_eq!(code, 3);
    assert_eq!(summary["phase"], "SHIP");
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(
        reason.contains("does not exist") && reason.contains("prpd resume"),
        "{reason}"
    );
    let commit = oid(&summary["ship"]["commit"]);
    let local = Repository::open(repo.path()).expect("open");
    assert_eq!(
        branch_tip(&local, BRANCH),
        commit,
        "the commit is kept on its branch"
    );

    Repository::init_bare(&remote_path).expect("the remote, fixed");
    let (code, resumed, stderr) = prpd_json(repo.path(), &["resume"], &[]);
    assert_eq!(resumed["state"], "SHIPPED", "{resumed:#}\n{stderr}");
    assert_eq!(code, 0);
    assert_eq!(oid(&resumed["ship"]["commit"]), commit, "the same commit");
    let remote = Repository::open_bare(&remote_path).expect("remote");
    assert_eq!(branch_tip(&remote, BRANCH), commit);
    assert_eq!(
        repo.git(&["rev-list", "--count", &format!("main..{BRANCH}")])
            .trim(),
        "1"
    );
    assert_eq!(
        repo.git(&["for-each-ref", "--format=%(refname)", "refs/heads"]),
        format!("refs/heads/main\nrefs/heads/{BRANCH}\n")
    );
}

#[test]
fn a_remote_branch_holding_someone_elses_commit_is_rejected_as_non_fast_forward() {
    let (_remote_dir, remote_path) = bare_remote();
    // Someone else's work on the branch prpd would ship on.
    let other = TestRepo::new();
    other
        .file("theirs.txt", "their work\n")
        .commit("their work");
    other.git(&[
        "push",
        "-q",
        &remote_path.display().to_string(),
        &format!("main:refs/heads/{BRANCH}"),
    ]);
    let theirs = other.git(&["rev-parse", "HEAD"]).trim().to_owned();

    let repo = ship_repo(&format!(
        "remote = {:?}\n",
        remote_path.display().to_string()
    ));
    let (code, summary, stderr) = prpd_json(repo.path(), &["run", "--in-place", PRP], &[]);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}\n{stderr}");
    assert_eq!(code, 3);
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(
        reason.contains(&format!("rejected {BRANCH}: non-fast-forward")),
        "{reason}"
    );
    assert!(reason.contains("prpd resume"), "{reason}");
    let remote = Repository::open_bare(&remote_path).expect("remote");
    assert_eq!(
        branch_tip(&remote, BRANCH).to_string(),
        theirs,
        "their work is untouched"
    );
    let local = Repository::open(repo.path()).expect("open");
    assert_eq!(
        branch_tip(&local, BRANCH),
        oid(&summary["ship"]["commit"]),
        "the commit is kept locally"
    );
    let escalation = std::fs::read_to_string(
        summary["escalation_report"]
            .as_str()
            .expect("an escalation report"),
    )
    .expect("read");
    assert!(escalation.contains("non-fast-forward"), "{escalation}");
}

#[test]
fn a_branch_the_remote_itself_refuses_is_reported_with_the_remotes_answer() {
    let (_remote_dir, remote_path) = bare_remote();
    let hook = remote_path.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'branches are protected here' >&2\nexit 1\n",
    )
    .expect("write hook");
    let mut permissions = std::fs::metadata(&hook).expect("hook").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&hook, permissions).expect("chmod");
    let daemon = GitDaemon::serve(remote_path.parent().expect("parent"));
    let repo = ship_repo(&format!(
        "remote = \"git://127.0.0.1:{}/remote.git\"\n",
        daemon.port
    ));
    // A token makes it a live run (git:// never asks for it), so the push goes out.
    let (code, summary, stderr) = prpd_json(
        repo.path(),
        &["run", "--in-place", PRP],
        &[("GITHUB_TOKEN", "ghp_notAskedForOverGit0123456789")],
    );
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}\n{stderr}");
    assert_eq!(code, 3);
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(
        reason.contains(&format!("rejected {BRANCH}: pre-receive hook declined")),
        "{reason}"
    );
    let remote = Repository::open_bare(&remote_path).expect("remote");
    assert!(
        remote.find_branch(BRANCH, git2::BranchType::Local).is_err(),
        "nothing landed"
    );
}

#[test]
fn a_later_run_of_the_same_prp_replaces_prpds_own_commit_on_the_remote() {
    let (_remote_dir, remote_path) = bare_remote();
    let repo = ship_repo(&format!(
        "remote = {:?}\n",
        remote_path.display().to_string()
    ));
    let (_, first, stderr) = prpd_json(repo.path(), &["run", "--in-place", PRP], &[]);
    assert_eq!(first["state"], "SHIPPED", "{first:#}\n{stderr}");
    let first_commit = oid(&first["ship"]["commit"]);
    // Back to the committed tree (the agents' work is on the branch), then the same PRP again.
    repo.git(&["checkout", "--", "."]);
    repo.git(&["clean", "-fdq"]);
    let (code, second, stderr) = prpd_json(repo.path(), &["run", "--in-place", PRP], &[]);
    assert_eq!(second["state"], "SHIPPED", "{second:#}\n{stderr}");
    assert_eq!(code, 0);
    let second_commit = oid(&second["ship"]["commit"]);
    assert_ne!(second_commit, first_commit);
    let remote = Repository::open_bare(&remote_path).expect("remote");
    assert_eq!(branch_tip(&remote, BRANCH), second_commit);
    let local = Repository::open(repo.path()).expect("open");
    assert_eq!(branch_tip(&local, BRANCH), second_commit);
    assert_eq!(
        repo.git(&["rev-list", "--count", &format!("main..{BRANCH}")])
            .trim(),
        "1",
        "replaced, not stacked"
    );
}

#[test]
fn uncommitted_work_is_refused_and_with_allow_dirty_it_stays_out_of_the_shipped_commit() {
    let (_remote_dir, remote_path) = bare_remote();
    let repo = ship_repo(&format!(
        "remote = {:?}\n",
        remote_path.display().to_string()
    ));
    let adr = "docs/adr/0001-plain-javascript.md";
    let committed_adr = std::fs::read(repo.join(adr)).expect("read");
    repo.file(adr, "# 1. Plain JavaScript\n\nMy draft, not for this PR.\n")
        .file("scratch.txt", "my notes\n");

    let output = prpd(repo.path(), &["run", "--in-place", PRP, "--json"], &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    for expected in [adr, "scratch.txt", "--allow-dirty", "uncommitted changes"] {
        assert!(stderr.contains(expected), "no {expected:?} in:\n{stderr}");
    }
    assert!(
        crate::util::run_record(&repo.join("")).is_none(),
        "no run was started"
    );

    let (code, summary, stderr) = prpd_json(
        repo.path(),
        &["run", "--in-place", PRP, "--allow-dirty"],
        &[],
    );
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{stderr}");
    assert_eq!(code, 0);
    let local = Repository::open(repo.path()).expect("open");
    let shipped = files_of(&local, oid(&summary["ship"]["commit"]));
    assert_eq!(shipped[adr], committed_adr, "the user's edit stays out");
    assert!(
        !shipped.contains_key("scratch.txt"),
        "the user's file stays out"
    );
    assert!(String::from_utf8_lossy(&shipped["src/calc.js"]).contains("multiply"));
    assert_eq!(
        std::fs::read_to_string(repo.join("scratch.txt")).expect("read"),
        "my notes\n",
        "and stays in the working tree"
    );
}

#[test]
fn the_token_reaches_the_remote_only_through_the_credentials_callback() {
    let server = RefusingGitServer::start();
    let token = "ghp_prpdTestToken0123456789abcdefXYZ";
    // The local server stands for a GitHub Enterprise host: `[ship] api_url` names its host.
    let repo = ship_repo(&format!(
        "remote = \"http://127.0.0.1:{port}/acme/calc.git\"\napi_url = \"http://127.0.0.1:{port}/api/v3\"\n",
        port = server.port
    ));
    let output = prpd(
        repo.path(),
        &["run", "--in-place", PRP, "--json"],
        &[("GITHUB_TOKEN", token)],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let summary: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}\n{stderr}");
    assert_eq!(output.status.code(), Some(3));
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(
        reason.contains("refused the token in $GITHUB_TOKEN"),
        "{reason}"
    );

    // The remote got the token as the password of x-access-token, in a header, never in a URL.
    let requests = server.requests();
    let expected = format!(
        "Basic {}",
        base64(format!("x-access-token:{token}").as_bytes())
    );
    let sent: Vec<&str> = requests
        .iter()
        .flat_map(|request| request.lines())
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("authorization")
                .then_some(value.trim())
        })
        .collect();
    assert_eq!(sent, [expected.as_str()], "{requests:#?}");
    for request in &requests {
        let request_line = request.lines().next().unwrap_or("");
        assert!(!request_line.contains(token), "{request_line}");
    }

    // And nowhere else.
    assert!(!stdout.contains(token) && !stderr.contains(token));
    for file in files_under(&repo.join(".prp-session")) {
        let bytes = std::fs::read(&file).expect("read");
        assert!(
            !String::from_utf8_lossy(&bytes).contains(token),
            "the token is in {}",
            file.display()
        );
    }
    let config = std::fs::read_to_string(repo.join(".git/config")).expect("config");
    assert!(!config.contains(token));
    assert!(
        !summary["ship"]["commit"].is_null(),
        "committed, and resumable: {summary:#}"
    );
}

#[test]
fn a_github_token_is_never_given_to_a_remote_that_is_not_on_github() {
    // The same server, but nothing says it is GitHub: it asks for credentials and is refused
    // the token by name, and no request it got carries it.
    let server = RefusingGitServer::start();
    let token = "ghp_prpdTestToken0123456789abcdefXYZ";
    let repo = ship_repo(&format!(
        "remote = \"http://127.0.0.1:{}/acme/calc.git\"\n",
        server.port
    ));
    let output = prpd(
        repo.path(),
        &["run", "--in-place", PRP, "--json"],
        &[("GITHUB_TOKEN", token)],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(
        reason.contains("127.0.0.1 is not GitHub: prpd gives $GITHUB_TOKEN only to"),
        "{reason}"
    );
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .all(|request| !request.to_ascii_lowercase().contains("authorization:")),
        "{requests:#?}"
    );
    assert!(!stdout.contains(token));
}

#[test]
fn a_dry_run_uses_no_token_and_pushes_nowhere_but_a_local_path() {
    let server = RefusingGitServer::start();
    let repo = ship_repo(&format!(
        "remote = \"http://127.0.0.1:{}/acme/calc.git\"\n",
        server.port
    ));
    let (code, summary, stderr) = prpd_json(
        repo.path(),
        &["run", "--in-place", PRP, "--dry-run"],
        &[("GITHUB_TOKEN", "ghp_notUsedInADryRun0123456789")],
    );
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{stderr}");
    assert_eq!(code, 0);
    assert!(server.requests().is_empty(), "{:#?}", server.requests());
    let not_pushed = summary["ship"]["not_pushed"].as_str().expect("why");
    assert!(
        not_pushed.contains("dry run (--dry-run)") && not_pushed.contains("not a local path"),
        "{not_pushed}"
    );
    let local = Repository::open(repo.path()).expect("open");
    assert_eq!(branch_tip(&local, BRANCH), oid(&summary["ship"]["commit"]));
    assert!(run_dir(repo.path(), &summary).join("pr.md").is_file());
}

#[test]
fn a_remote_that_names_nothing_is_skipped_in_a_dry_run_and_refused_with_a_token() {
    // No token: a dry run; the fixture has no remote called origin.
    let repo = ship_repo("");
    let (code, summary, stderr) = prpd_json(repo.path(), &["run", "--in-place", PRP], &[]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{stderr}");
    assert_eq!(code, 0);
    let not_pushed = summary["ship"]["not_pushed"].as_str().expect("why");
    assert!(
        not_pushed.contains("no token in $GITHUB_TOKEN") && not_pushed.contains("names no remote"),
        "{not_pushed}"
    );

    let repo = ship_repo("remote = \"upstream\"\n");
    let (code, summary, stderr) = prpd_json(
        repo.path(),
        &["run", "--in-place", PRP],
        &[("GITHUB_TOKEN", "ghp_aTokenThatIsNeverSent0123456789")],
    );
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}\n{stderr}");
    assert_eq!(code, 3);
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(
        reason.contains("`[ship] remote` = \"upstream\" is neither a remote"),
        "{reason}"
    );
}

#[test]
fn an_unreachable_remote_is_named_and_the_commit_waits_for_a_resume() {
    let closed_port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let repo = ship_repo(&format!(
        "remote = \"http://127.0.0.1:{closed_port}/acme/calc.git\"\n"
    ));
    let (code, summary, stderr) = prpd_json(
        repo.path(),
        &["run", "--in-place", PRP],
        &[("GITHUB_TOKEN", "ghp_neverSentNobodyListens0123456789")],
    );
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}\n{stderr}");
    assert_eq!(code, 3);
    let reason = summary["escalation_reason"].as_str().expect("reason");
    assert!(
        reason.contains(&format!(
            "cannot reach the remote http://127.0.0.1:{closed_port}/acme/calc.git"
        )) && reason.contains("prpd resume"),
        "{reason}"
    );
    let local = Repository::open(repo.path()).expect("open");
    assert_eq!(branch_tip(&local, BRANCH), oid(&summary["ship"]["commit"]));
    assert!(summary["ship"]["pushed_to"].is_null(), "{summary:#}");
}

#[test]
fn a_broken_ship_table_is_refused_before_the_run_with_its_file_and_line() {
    for (table, expected) in [
        ("branch = \"prp/fixed\"\n", "must hold `{slug}` once"),
        ("remtoe = \"origin\"\n", "unknown field `remtoe`"),
        (
            "token_env = \"ghp_0123456789abcdefghijklmnopqrstuvwxyz\"\n",
            "not hold the token",
        ),
    ] {
        let repo = calc_repo(
            &prp(""),
            &prpd_toml("plain", &[], &format!("[ship]\n{table}")),
        );
        let config = std::fs::read_to_string(repo.join("prpd.toml")).expect("read");
        let line = config
            .lines()
            .position(|line| line == table.trim_end())
            .expect("the table's line")
            + 1;
        let output = prpd(repo.path(), &["run", "--in-place", PRP], &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{table}: {stderr}");
        assert!(
            stderr.contains(&format!("prpd.toml:{line}:")),
            "{table}: {stderr}"
        );
        assert!(stderr.contains(expected), "{table}: {stderr}");
        assert!(!stderr.contains("ghp_0123456789"), "{stderr}");
        assert!(crate::util::run_record(&repo.join("")).is_none());
    }
}

/// `git daemon` serving the repositories of a folder over `git://`, pushes allowed; stopped
/// when dropped.
struct GitDaemon {
    port: u16,
    child: std::process::Child,
}

impl GitDaemon {
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays a remote server with git's own daemon, outside prpd"
    )]
    fn serve(base: &Path) -> GitDaemon {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let child = std::process::Command::new("git")
            .args([
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
                "--listen=127.0.0.1",
                &format!("--port={port}"),
                &format!("--base-path={}", base.display()),
            ])
            .arg(base)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // `git daemon` starts `git-daemon` as its child: a group of their own lets the drop
            // stop both, so no daemon outlives the test.
            .process_group(0)
            .spawn()
            .expect("git daemon");
        let daemon = GitDaemon { port, child };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "git daemon did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        daemon
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.wait();
    }
}

/// Every file under `dir`, at any depth.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// A local HTTP server that plays a git remote asking for credentials and refusing every one:
/// each request gets `401` with a Basic challenge, and its head is kept for the test to read.
struct RefusingGitServer {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl RefusingGitServer {
    fn start() -> RefusingGitServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut head = String::new();
                let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) if line == "\r\n" => break,
                        Ok(_) => head.push_str(&line),
                    }
                }
                seen.lock().expect("lock").push(head);
                let _ = stream.write_all(
                    b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\n\
                      Content-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        RefusingGitServer { port, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

/// Standard base64, as an HTTP Basic header carries credentials.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let value = chunk.iter().enumerate().fold(0u32, |value, (index, byte)| {
            value | (u32::from(*byte) << (16 - 8 * index))
        });
        for index in 0..4 {
            if index <= chunk.len() {
                out.push(char::from(
                    ALPHABET[((value >> (18 - 6 * index)) & 0x3f) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn base64_encodes_as_http_basic_does() {
    assert_eq!(base64(b"x-access-token:abc"), "eC1hY2Nlc3MtdG9rZW46YWJj");
    assert_eq!(base64(b"ab"), "YWI=");
    assert_eq!(base64(b"a"), "YQ==");
}
