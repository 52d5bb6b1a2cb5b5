//! Every run in a worktree of its own, end to end: `prpd run` works in a linked worktree under
//! `.git/prpd/worktrees/` and ships from there while the user's working tree, index, `HEAD`
//! and uncommitted work stay exactly as they were; `prpd watch` with `[watch] parallel = 3`
//! drives three PRPs dropped at once side by side, each to its own branch with nothing of the
//! others in it; a `kill -9` with three runs in flight loses none of them; and a run record
//! edited by anyone but prpd is refused by `prpd status`, which names the file.
//!
//! The daemon tests run a small Python `calc` repository (python.rs's fixture) with
//! `agents/feature-agent.py`, an honest agent that implements whichever function its run's PRP
//! asks for, so what a branch holds of another PRP's feature can only be cross-talk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::python::calc_python_repo;
use crate::run::{PRP, calc_repo, every_phase_toml, prp, prpd_json, prpd_toml, read};
use crate::ship::{BRANCH, bare_remote};
use crate::util::TestRepo;
use crate::watch::{Daemon, status};

pub(crate) const FEATURE_AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/agents/feature-agent.py"
);

/// The three features of the parallel tests: function, PRP title, and the branch SHIP names
/// after the title.
const FEATURES: [(&str, &str, &str); 3] = [
    ("subtract", "Subtract numbers", "prp/subtract-numbers"),
    ("divide", "Divide numbers", "prp/divide-numbers"),
    ("power", "Raise to a power", "prp/raise-to-a-power"),
];

/// What the user has in the main tree and never committed, while the runs go.
const USERS_DRAFT: &str = "\n# my draft, not for any pull request\n";

/// The PRP of one feature of the Python `calc` fixture.
pub(crate) fn feature_prp(name: &str, title: &str) -> String {
    format!(
        "# {title}\n\n## Goal\n\nAdd `{name}(a, b)` to calc.\n\n\
         ## Success Criteria\n\n- [ ] `{name}` is defined in `calc.py`\n\
         - [ ] Every acceptance criterion has a test that names it\n\n\
         ## Tasks\n\n1. Write a failing test for each acceptance criterion.\n\
         2. Implement `{name}` in `calc.py`.\n\n\
         ## Acceptance Criteria\n\n\
         - AC-1: `{name}(a, b)` is computed from `a` and `b`.\n"
    )
}

/// `git status --porcelain` of the repository (its untracked files listed one by one).
fn porcelain(repo: &TestRepo) -> String {
    repo.git(&["status", "--porcelain", "--untracked-files=all"])
}

/// The paths of `git worktree list --porcelain`.
fn worktrees(repo: &TestRepo) -> Vec<PathBuf> {
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect()
}

/// What is left in the folder of the runs' worktrees (`.git/prpd/worktrees/`).
fn leftover_worktrees(repo: &TestRepo) -> Vec<String> {
    std::fs::read_dir(repo.join(".git/prpd/worktrees"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The file `path` as committed on `branch`, or `None` when the branch does not hold it.
pub(crate) fn on_branch(repo: &TestRepo, branch: &str, path: &str) -> Option<String> {
    let listed = repo.git(&["ls-tree", "--name-only", branch, "--", path]);
    (!listed.trim().is_empty()).then(|| repo.git(&["show", &format!("{branch}:{path}")]))
}

/// The files `branch` changed since `main`.
fn changed_on(repo: &TestRepo, branch: &str) -> BTreeSet<String> {
    repo.git(&["diff", "--name-only", &format!("main...{branch}")])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The `runs` table of `prpd status --json`: run id → (PRP, state), the state of a refused
/// record being `REFUSED: ` and why.
fn runs(repo: &Path) -> BTreeMap<String, (String, String)> {
    status(repo)["runs"]
        .as_array()
        .map(|runs| {
            runs.iter()
                .map(|run| {
                    (
                        run["run_id"].as_str().unwrap_or("").to_owned(),
                        (
                            run["prp"].as_str().unwrap_or("").to_owned(),
                            match run["refused"].as_str() {
                                Some(why) => format!("REFUSED: {why}"),
                                None => run["state"].as_str().unwrap_or("").to_owned(),
                            },
                        ),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One line of the feature agent's log.
#[derive(Debug)]
struct Call {
    /// `start` or `end`.
    event: String,
    run: String,
    phase: String,
    /// The function the agent implemented: the one its run's PRP asks for.
    feature: String,
    /// Seconds since the epoch.
    time: f64,
}

/// The committed Python `calc` repository with no PRP yet, the agents' configuration (feature
/// agent with `agent_args` after the log file, the daemon driving three runs at once, SHIP to
/// a local bare remote), and the user's uncommitted draft in `calc.py` and `notes.txt`.
struct ParallelFixture {
    repo: TestRepo,
    remote: PathBuf,
    /// Holds the remote, the agents' log and their markers.
    scratch: tempfile::TempDir,
    users_calc: Vec<u8>,
}

impl ParallelFixture {
    fn new(agent_args: &[&str]) -> ParallelFixture {
        let (remote_dir, remote) = bare_remote();
        let log = remote_dir.path().join("agent-calls.log");
        let argv = [
            &["python3", FEATURE_AGENT, log.to_str().expect("utf-8")],
            agent_args,
        ]
        .concat()
        .iter()
        .map(|arg| format!("{arg:?}"))
        .collect::<Vec<_>>()
        .join(", ");
        let config = format!(
            "{}[watch]\ndebounce = \"100ms\"\nparallel = 3\nmax_agents = 3\n\n\
             [ship]\nremote = {:?}\n",
            every_phase_toml(&argv, "120s"),
            remote.display().to_string()
        );
        let repo = calc_python_repo("", &config);
        repo.git(&["rm", "-q", PRP]);
        repo.commit("no PRP yet");
        let users_calc = [
            read(&repo.join("calc.py")).as_bytes(),
            USERS_DRAFT.as_bytes(),
        ]
        .concat();
        std::fs::write(repo.join("calc.py"), &users_calc).expect("the user's draft");
        repo.file("notes.txt", "the user's own notes\n");
        ParallelFixture {
            repo,
            remote,
            scratch: remote_dir,
            users_calc,
        }
    }

    /// Drops the three PRPs into `PRPs/`, untracked, as a user saves them.
    fn drop_prps(&self) {
        for (name, title, _) in FEATURES {
            self.repo
                .file(&format!("PRPs/{name}.md"), &feature_prp(name, title));
        }
    }

    /// The agents' log, one call start or end per line.
    fn agent_calls(&self) -> Vec<Call> {
        std::fs::read_to_string(self.scratch.path().join("agent-calls.log"))
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let fields: Vec<&str> = line.split(' ').collect();
                let [event, run, phase, feature, time] = fields.as_slice() else {
                    panic!("not an agent log line: {line:?}");
                };
                Call {
                    event: (*event).to_owned(),
                    run: (*run).to_owned(),
                    phase: (*phase).to_owned(),
                    feature: (*feature).to_owned(),
                    time: time.parse().expect("time"),
                }
            })
            .collect()
    }

    /// Waits until every run of the three PRPs shipped; a run that ends otherwise fails the
    /// test at once.
    fn wait_for_three_shipped(&self, daemon: &Daemon) {
        daemon.wait_for("the three runs to ship", || {
            assert_no_blocked_run(daemon);
            let runs = runs(self.repo.path());
            for (run_id, (prp, state)) in &runs {
                assert!(
                    !matches!(state.as_str(), "ESCALATED" | "ABORTED")
                        && !state.starts_with("REFUSED"),
                    "run {run_id} of {prp} ended {state}: {}\nthe daemon's log:\n{}",
                    std::fs::read_to_string(
                        self.repo
                            .join(".prp-session/runs")
                            .join(run_id)
                            .join("escalation.md")
                    )
                    .unwrap_or_default(),
                    daemon.log()
                );
            }
            runs.len() == 3 && runs.values().all(|(_, state)| state == "SHIPPED")
        });
    }

    /// Checks what the three shipped runs left: one run, record, `pr.md` and branch per PRP,
    /// each branch holding its own feature only, and the user's tree as it was.
    fn assert_shipped_without_cross_talk(&self, porcelain_before: &str) {
        let repo = &self.repo;
        let runs = runs(repo.path());
        let by_prp: BTreeMap<String, String> = runs
            .iter()
            .map(|(run_id, (prp, _))| (prp.clone(), run_id.clone()))
            .collect();
        assert_eq!(
            by_prp.keys().cloned().collect::<BTreeSet<_>>(),
            FEATURES
                .iter()
                .map(|(name, _, _)| format!("PRPs/{name}.md"))
                .collect::<BTreeSet<_>>(),
            "one run per PRP: {runs:?}"
        );
        let calls = self.agent_calls();
        for (name, title, branch) in FEATURES {
            let prp = format!("PRPs/{name}.md");
            let run_id = &by_prp[&prp];
            let run_dir = repo.join(".prp-session/runs").join(run_id);

            // The run's record, iterations and pull request are its own.
            let record: Value =
                serde_json::from_str(&read(&run_dir.join("state.json"))).expect("record");
            assert_eq!(record["run_id"], run_id.as_str());
            assert_eq!(record["prp"], prp.as_str());
            assert_eq!(
                record["ship"]["base_branch"], "main",
                "the pull request's base is the branch the user was on when the PRP was \
                 dropped: {:#}",
                record["ship"]
            );
            let mine: Vec<&Call> = calls.iter().filter(|call| &call.run == run_id).collect();
            assert!(
                !mine.is_empty() && mine.iter().all(|call| call.feature == name),
                "run {run_id} of {prp}: its agents worked on {mine:?}"
            );
            let pr = read(&run_dir.join("pr.md"));
            // (Its memory context may name the other runs: the memory store is shared.)
            assert!(pr.starts_with(&format!("# feat: {title}\n")), "{pr}");
            assert!(
                pr.contains(&format!("Implements `{prp}` (prpd run `{run_id}`)")),
                "{pr}"
            );

            // The branch holds this feature and nothing of the others or of the user.
            let calc = on_branch(repo, branch, "calc.py").expect("calc.py on the branch");
            assert!(
                calc.contains(&format!("def {name}(a, b):")),
                "{branch}:\n{calc}"
            );
            assert!(
                !calc.contains("my draft"),
                "{branch} holds the user's draft:\n{calc}"
            );
            let changed = changed_on(repo, branch);
            let expected: BTreeSet<String> = [
                "CHANGELOG.md",
                "README.md",
                "calc.py",
                &format!("tests/test_{name}.py"),
            ]
            .into_iter()
            .map(str::to_owned)
            .collect();
            assert_eq!(
                changed, expected,
                "{branch} changed only its own feature's files"
            );
            for (other, _, _) in FEATURES {
                if other != name {
                    assert!(
                        !calc.contains(&format!("def {other}(")),
                        "{branch}:\n{calc}"
                    );
                    assert!(
                        !read_branch_text(repo, branch, "README.md")
                            .contains(&format!("`{other}(")),
                        "{branch}'s README documents {other}"
                    );
                }
            }
            assert_eq!(on_branch(repo, branch, "notes.txt"), None);
            let pushed =
                self.repo
                    .git(&["ls-remote", self.remote.to_str().expect("utf-8"), branch]);
            assert!(
                pushed.starts_with(repo.git(&["rev-parse", branch]).trim()),
                "{branch} was pushed: {pushed}"
            );
        }

        // The user's tree is exactly as they left it, and every run's worktree is gone.
        assert_eq!(
            std::fs::read(repo.join("calc.py")).expect("calc.py"),
            self.users_calc
        );
        assert_eq!(read(&repo.join("notes.txt")), "the user's own notes\n");
        assert_eq!(porcelain(repo), porcelain_before);
        assert_eq!(
            repo.git(&["symbolic-ref", "HEAD"]).trim(),
            "refs/heads/main"
        );
        assert_eq!(
            worktrees(repo),
            [repo.path().canonicalize().expect("canonical")]
        );
        assert_eq!(leftover_worktrees(repo), Vec::<String>::new());
    }
}

/// Fails at once when the daemon stopped driving a run because prpd itself could not act (its
/// log says "the run cannot go on"): such a run waits for a human, not for more time.
fn assert_no_blocked_run(daemon: &Daemon) {
    assert!(
        !daemon.logged("the run cannot go on"),
        "a run cannot go on; the daemon's log:\n{}",
        daemon.log()
    );
}

fn read_branch_text(repo: &TestRepo, branch: &str, path: &str) -> String {
    on_branch(repo, branch, path).unwrap_or_default()
}

#[test]
fn a_run_works_in_its_own_worktree_and_leaves_the_users_tree_alone() {
    let (_remote_dir, remote) = bare_remote();
    let repo = calc_repo(
        &prp(""),
        &prpd_toml(
            "plain",
            &[],
            &format!("[ship]\nremote = {:?}\n", remote.display().to_string()),
        ),
    );
    let start = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    // The user's work in progress: an edit of the very file the agents implement the feature
    // in, and a file git does not know.
    let users_calc = format!(
        "{}// my draft, not for this PR\n",
        read(&repo.join("src/calc.js"))
    );
    repo.file("src/calc.js", &users_calc)
        .file("notes.txt", "the user's own notes\n");
    let before = porcelain(&repo);
    assert_eq!(before, " M src/calc.js\n?? notes.txt\n");

    let (code, summary) = prpd_json(repo.path(), &["run", PRP, "--json"]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}");
    assert_eq!(code, 0);

    // The agents worked in the run's worktree, inside the git directory.
    let calls = crate::run::agent_calls(repo.path(), &summary);
    let run_id = summary["run_id"].as_str().expect("run id");
    let worktree = repo
        .path()
        .canonicalize()
        .expect("canonical")
        .join(".git/prpd/worktrees")
        .join(run_id);
    assert!(!calls.is_empty());
    for call in &calls {
        assert_eq!(
            call["cwd"].as_str().map(PathBuf::from),
            Some(worktree.clone()),
            "{call:#}"
        );
    }

    // The user's tree, index, HEAD and branch are as they were.
    assert_eq!(read(&repo.join("src/calc.js")), users_calc);
    assert_eq!(read(&repo.join("notes.txt")), "the user's own notes\n");
    assert_eq!(porcelain(&repo), before);
    assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), start);
    assert_eq!(
        repo.git(&["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main"
    );
    assert!(!repo.join("test/multiply.test.js").exists());

    // The branch holds the feature, on the start commit, without the user's work; the pull
    // request's base is the user's branch.
    assert_eq!(summary["ship"]["branch"], BRANCH, "{summary:#}");
    let record: Value = serde_json::from_str(&read(
        &repo
            .join(".prp-session/runs")
            .join(run_id)
            .join("state.json"),
    ))
    .expect("record");
    assert_eq!(
        record["ship"]["base_branch"], "main",
        "{:#}",
        record["ship"]
    );
    assert_eq!(
        repo.git(&["rev-parse", &format!("{BRANCH}^")]).trim(),
        start
    );
    let calc = on_branch(&repo, BRANCH, "src/calc.js").expect("src/calc.js");
    assert!(calc.contains("export function multiply"), "{calc}");
    assert!(!calc.contains("my draft"), "{calc}");
    assert_eq!(on_branch(&repo, BRANCH, "notes.txt"), None);
    let pushed = repo.git(&["ls-remote", remote.to_str().expect("utf-8"), BRANCH]);
    assert!(
        pushed.starts_with(repo.git(&["rev-parse", BRANCH]).trim()),
        "{pushed}"
    );

    // SHIPPED: the worktree is gone, and git forgot it.
    assert!(!worktree.exists(), "{}", worktree.display());
    assert_eq!(
        worktrees(&repo),
        [repo.path().canonicalize().expect("canonical")]
    );
    assert_eq!(leftover_worktrees(&repo), Vec::<String>::new());
    let (code, shown) = prpd_json(repo.path(), &["status", "--json"]);
    assert_eq!(code, 0, "{shown:#}");
    assert_eq!(shown["worktree"], Value::Null, "{shown:#}");
}

#[test]
fn three_prps_dropped_at_once_ship_in_parallel_without_cross_talk() {
    let fixture = ParallelFixture::new(&[]);
    let repo = &fixture.repo;
    let daemon = Daemon::start(repo.path());
    fixture.drop_prps();
    let porcelain_before = porcelain(repo);
    fixture.wait_for_three_shipped(&daemon);
    fixture.assert_shipped_without_cross_talk(&porcelain_before);

    // Each run's iteration folders are its own agent's calls, one each.
    let calls = fixture.agent_calls();
    for run_id in runs(repo.path()).keys() {
        let folders = std::fs::read_dir(
            repo.join(".prp-session/runs")
                .join(run_id)
                .join("iterations"),
        )
        .expect("iterations")
        .count();
        let ended = calls
            .iter()
            .filter(|call| call.event == "end" && &call.run == run_id)
            .count();
        assert_eq!(folders, ended, "run {run_id}: {calls:?}");
    }

    // The three were driven at once: each started before any ended, and their agents' RED
    // calls (a second each) overlapped.
    let log = daemon.log();
    let first_end = log.find("\"run ended\"").expect("a run ended");
    assert_eq!(
        log[..first_end].matches("\"starting a run\"").count(),
        3,
        "{log}"
    );
    let red = |run: &str| {
        let time = |wanted: &str| {
            calls
                .iter()
                .find(|call| call.event == wanted && call.run == run && call.phase == "RED")
                .map_or_else(
                    || panic!("no RED {wanted} of {run}: {calls:?}"),
                    |call| call.time,
                )
        };
        (time("start"), time("end"))
    };
    let spans: Vec<(f64, f64)> = runs(repo.path()).keys().map(|run| red(run)).collect();
    let overlapping = spans
        .iter()
        .enumerate()
        .flat_map(|(index, a)| spans[index + 1..].iter().map(move |b| (a, b)))
        .filter(|(a, b)| a.0 < b.1 && b.0 < a.1)
        .count();
    assert!(
        overlapping >= 1,
        "RED calls ran one after another: {spans:?}"
    );
    drop(daemon);
}

#[test]
fn kill_9_with_three_runs_in_flight_resumes_all_three() {
    let blocks = Blocks(tempfile::tempdir().expect("tempdir"));
    let fixture = ParallelFixture::new(&[blocks.path().to_str().expect("utf-8")]);
    let repo = &fixture.repo;
    let daemon = Daemon::start(repo.path());
    fixture.drop_prps();
    let porcelain_before = porcelain(repo);

    // Every run's GREEN agent is half way: it waits for `release`.
    let blocked = || -> BTreeMap<String, i32> {
        std::fs::read_dir(blocks.path())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let (run, pid) = name.strip_prefix("blocked-")?.rsplit_once('-')?;
                Some((run.to_owned(), pid.parse().ok()?))
            })
            .collect()
    };
    daemon.wait_for("three GREEN agents to block", || {
        assert_no_blocked_run(&daemon);
        blocked().len() == 3
    });
    let orphans = blocked();
    let in_flight = runs(repo.path());
    assert_eq!(
        in_flight.keys().collect::<Vec<_>>(),
        orphans.keys().collect::<Vec<_>>()
    );
    assert!(
        in_flight.values().all(|(_, state)| state == "GREEN"),
        "{in_flight:?}"
    );
    assert_eq!(daemon.stop(nix::sys::signal::Signal::SIGKILL), None);

    // The next daemon stops the agents the killed one left and runs GREEN again.
    let daemon = Daemon::start(repo.path());
    daemon.wait_for("the orphaned agents to be stopped", || {
        orphans.values().all(|pid| !crate::run::alive(*pid))
    });
    blocks.release();
    fixture.wait_for_three_shipped(&daemon);
    fixture.assert_shipped_without_cross_talk(&porcelain_before);
    assert_eq!(
        runs(repo.path()).keys().collect::<Vec<_>>(),
        orphans.keys().collect::<Vec<_>>(),
        "the same three runs, resumed"
    );
    drop(daemon);
}

/// The folder where the feature agents block (see `agents/feature-agent.py`); released when
/// dropped, so a failed test leaves no agent waiting.
struct Blocks(tempfile::TempDir);

impl Blocks {
    fn path(&self) -> &Path {
        self.0.path()
    }

    fn release(&self) {
        std::fs::write(self.path().join("release"), "").expect("release the agents");
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        let _ = std::fs::write(self.path().join("release"), "");
    }
}

#[test]
fn an_edited_record_is_refused_by_status_naming_the_file() {
    let repo = calc_repo(&prp(""), &prpd_toml("plain", &[("green", "idle")], ""));
    let (code, summary) = prpd_json(repo.path(), &["run", PRP, "--json"]);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}");
    assert_eq!(code, 3);
    let run_id = summary["run_id"].as_str().expect("run id");
    let record_path = repo
        .join(".prp-session/runs")
        .join(run_id)
        .join("state.json");
    let sealed = read(&record_path);
    // The escalation report tells the user what to run, in their repository: the run's
    // worktree has no `.prp-session/`.
    let escalation = read(Path::new(
        summary["escalation_report"].as_str().expect("a report"),
    ));
    let canonical = repo.path().canonicalize().expect("canonical");
    assert!(
        escalation.contains(&format!(
            "`prpd resume {run_id} --repo {}`",
            canonical.display()
        )),
        "{escalation}"
    );
    assert!(
        !escalation.contains(&format!("--repo {}/.git/prpd", canonical.display())),
        "{escalation}"
    );
    let output = repo.prpd().arg("status").output().expect("status");
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    // Someone marks the escalated run as shipped.
    let mut edited: Value = serde_json::from_str(&sealed).expect("record");
    assert!(
        edited["machine"]["state"]["Escalated"].is_object(),
        "{sealed}"
    );
    edited["machine"]["state"] = serde_json::json!({ "Shipped": {} });
    std::fs::write(
        &record_path,
        serde_json::to_string_pretty(&edited).expect("JSON"),
    )
    .expect("edit the record");
    let output = repo.prpd().arg("status").output().expect("status");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(".prp-session/runs/{run_id}/state.json")),
        "{stderr}"
    );
    assert!(stdout.starts_with("Runs:\n"), "{stdout}");
    assert!(
        stdout.contains(&format!("  {run_id}  REFUSED: ")),
        "{stdout}"
    );
    assert!(!stdout.contains("SHIPPED"), "{stdout}");

    // The record prpd sealed is trusted again.
    std::fs::write(&record_path, &sealed).expect("restore the record");
    let output = repo.prpd().arg("status").output().expect("status");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("ESCALATED"),
        "{output:?}"
    );
}
