//! SHIP through the GitHub API end to end: the real binary runs the `calc` fixture to APPROVE,
//! pushes to a real bare repository, and talks to a local mock of the GitHub REST API
//! (wiremock) that answers with the documented response shapes (`tests/fixtures/github/`).
//! The scenarios: a pull request opened with its labels and the QA report, then updated (not
//! duplicated) by a later run with a comment; a failed remote check that sends the run back to
//! GREEN until the CI passes; and GitHub's refusals (403, 401, 429, the network), each
//! escalating with a message that says what to do, resumed without a second commit; and the
//! verdict's check run `prpd / verdict` (a commit status for a token that is not a GitHub
//! App's), asserted with `ship_proof.rs`. In every
//! one, the token is only ever in the `Authorization` header: never in a file under
//! `.prp-session/`, the output, the logs or the pull request's body.

use std::net::TcpListener;
use std::path::Path;

use git2::Repository;
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::run::{PRP, run_dir};
use crate::ship::{BRANCH, bare_remote, branch_tip, files_under, oid, prpd, ship_repo};
use crate::ship_proof::{
    assert_verdict_check_run, assert_verdict_went_out_once_as_a_commit_status,
};
use crate::util::TestRepo;

/// The token prpd finds in `$GITHUB_TOKEN`; long and odd enough that finding it is a leak.
pub(crate) const TOKEN: &str = "ghp_prpdItToken0123456789abcdefGHIJKL";

/// The repository `[ship] repository` names (the remote is a local path).
pub(crate) const REPOSITORY: &str = "/repos/acme/calc";

/// The body of a documented GitHub answer from `tests/fixtures/github/`.
pub(crate) fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/github")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

/// The pull request GitHub answers with, for the run's branch.
fn pull_request() -> Value {
    let mut pull = fixture("pull-request.json");
    pull["head"]["ref"] = json!(BRANCH);
    pull
}

/// `GET …/check-runs` listing one finished check run named `ci / test` with `conclusion`.
pub(crate) fn check_runs(conclusion: &str) -> Value {
    let mut page = fixture("check-runs.json");
    let run = &mut page["check_runs"][0];
    run["name"] = json!("ci / test");
    run["conclusion"] = json!(conclusion);
    run["output"]["title"] = json!(format!("ci / test: {conclusion}"));
    page
}

/// A mock GitHub API on its own runtime, which keeps serving while the test thread waits
/// for prpd.
pub(crate) struct Api {
    runtime: tokio::runtime::Runtime,
    server: MockServer,
}

impl Api {
    /// A server of its own (not one of wiremock's pooled servers, which keep listening after
    /// they are dropped), so that dropping it takes the API down.
    pub(crate) fn start() -> Api {
        Api::start_on(0)
    }

    /// A server on `port` (to bring the API back after it was down); 0 for any free port.
    fn start_on(port: u16) -> Api {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("a free port");
        let server = runtime.block_on(MockServer::builder().listener(listener).start());
        Api { runtime, server }
    }

    pub(crate) fn port(&self) -> u16 {
        self.server.address().port()
    }

    pub(crate) fn mount(&self, mock: Mock) {
        self.runtime.block_on(mock.mount(&self.server));
    }

    /// Forgets every mock and every request seen.
    fn reset(&self) {
        self.runtime.block_on(self.server.reset());
    }

    pub(crate) fn requests(&self) -> Vec<Request> {
        self.runtime
            .block_on(self.server.received_requests())
            .expect("recording is on")
    }

    /// The requests `verb path`, in order.
    pub(crate) fn requests_to(&self, verb: &str, route: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|request| request.method.as_str() == verb && request.url.path() == route)
            .collect()
    }

    /// The answers of a repository with no pull request for the branch yet, which opens one.
    fn mount_pull_request_flow(&self) {
        self.mount(
            authorized(Mock::given(method("GET")).and(path(format!("{REPOSITORY}/pulls"))))
                .and(query_param("head", format!("acme:{BRANCH}")))
                .respond_with(ResponseTemplate::new(200).set_body_json(json!([]))),
        );
        self.mount(
            authorized(Mock::given(method("POST")).and(path(format!("{REPOSITORY}/pulls"))))
                .respond_with(ResponseTemplate::new(201).set_body_json(pull_request())),
        );
        self.mount_labels_and_comments();
    }

    /// The answers of a repository whose pull request for the branch is open.
    fn mount_open_pull_request(&self) {
        self.mount(
            authorized(Mock::given(method("GET")).and(path(format!("{REPOSITORY}/pulls"))))
                .respond_with(ResponseTemplate::new(200).set_body_json(json!([pull_request()]))),
        );
        self.mount(
            authorized(Mock::given(method("PATCH")).and(path(format!("{REPOSITORY}/pulls/1347"))))
                .respond_with(ResponseTemplate::new(200).set_body_json(pull_request())),
        );
        self.mount_labels_and_comments();
    }

    /// `POST …/check-runs`: the verdict's check run is created (GitHub's documented answer).
    fn mount_verdict_check_run(&self) {
        self.mount(
            authorized(Mock::given(method("POST")).and(path(format!("{REPOSITORY}/check-runs"))))
                .respond_with(ResponseTemplate::new(201).set_body_json(fixture("check-run.json"))),
        );
    }

    fn mount_labels_and_comments(&self) {
        self.mount_verdict_check_run();
        self.mount(
            authorized(
                Mock::given(method("POST")).and(path(format!("{REPOSITORY}/issues/1347/labels"))),
            )
            .respond_with(ResponseTemplate::new(200).set_body_json(fixture("labels.json"))),
        );
        self.mount(
            authorized(
                Mock::given(method("POST")).and(path(format!("{REPOSITORY}/issues/1347/comments"))),
            )
            .respond_with(ResponseTemplate::new(201).set_body_json(fixture("issue-comment.json"))),
        );
    }

    /// A token that may read pull requests and open issues, but not open pull requests (403
    /// naming the permission it lacks).
    fn mount_token_that_may_not_open_pull_requests(&self) {
        let forbidden = fixture("error-403-permission.json");
        // Not a GitHub App's token: no check run, a commit status instead.
        self.mount(
            authorized(Mock::given(method("POST")).and(path(format!("{REPOSITORY}/check-runs"))))
                .respond_with(
                    ResponseTemplate::new(403).set_body_json(fixture("error-403-check-runs.json")),
                ),
        );
        self.mount(
            authorized(
                Mock::given(method("POST")).and(wiremock::matchers::path_regex(format!(
                    "^{REPOSITORY}/statuses/[0-9a-f]{{40}}$"
                ))),
            )
            .and(body_partial_json(
                json!({ "context": "prpd / verdict", "state": "success" }),
            ))
            .respond_with(ResponseTemplate::new(201).set_body_json(fixture("commit-status.json"))),
        );
        self.mount(
            authorized(Mock::given(method("GET")).and(path(format!("{REPOSITORY}/pulls"))))
                .respond_with(ResponseTemplate::new(200).set_body_json(json!([]))),
        );
        self.mount(
            authorized(Mock::given(method("POST")).and(path(format!("{REPOSITORY}/pulls"))))
                .respond_with(
                    ResponseTemplate::new(403)
                        .insert_header("x-accepted-github-permissions", "pull_requests=write")
                        .set_body_json(forbidden),
                ),
        );
        self.mount(
            authorized(Mock::given(method("POST")).and(path(format!("{REPOSITORY}/issues"))))
                .and(body_partial_json(json!({ "labels": ["prpd", "bot"] })))
                .respond_with(ResponseTemplate::new(201).set_body_json(fixture("issue.json"))),
        );
    }

    /// The commit statuses of any commit: none (the checks come as check runs).
    pub(crate) fn mount_no_statuses(&self) {
        self.mount(
            authorized(Mock::given(method("GET")).and(path_regex_commits("status"))).respond_with(
                ResponseTemplate::new(200).set_body_json(json!({
                    "state": "pending", "total_count": 0, "statuses": []
                })),
            ),
        );
    }
}

/// `mock` answering only requests that carry the token as octocrab sends it.
pub(crate) fn authorized(mock: wiremock::MockBuilder) -> wiremock::MockBuilder {
    mock.and(header("authorization", format!("Bearer {TOKEN}").as_str()))
}

/// Matches `…/commits/<sha>/<tail>` of the repository.
pub(crate) fn path_regex_commits(tail: &str) -> wiremock::matchers::PathRegexMatcher {
    wiremock::matchers::path_regex(format!("^{REPOSITORY}/commits/[0-9a-f]{{40}}/{tail}$"))
}

/// The `calc` fixture shipping to a new bare remote through the mock API, with `extra` lines
/// in `[ship]`.
pub(crate) fn github_repo(
    api: &Api,
    extra: &str,
) -> (TestRepo, tempfile::TempDir, std::path::PathBuf) {
    let (remote_dir, remote) = bare_remote();
    let repo = ship_repo(&format!(
        "remote = \"{}\"\napi_url = \"http://127.0.0.1:{}\"\nrepository = \"acme/calc\"\n\
         labels = [\"prpd\", \"bot\"]\n{extra}",
        remote.display(),
        api.port()
    ));
    (repo, remote_dir, remote)
}

/// `prpd <args> --json` with the token, logging at `info`: the exit code, the summary and
/// everything prpd printed.
pub(crate) fn ship(repo: &TestRepo, args: &[&str]) -> (i32, Value, String) {
    let output = prpd(
        repo.path(),
        &[args, &["--json"]].concat(),
        &[("GITHUB_TOKEN", TOKEN), ("PRPD_LOG", "info")],
    );
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let summary = serde_json::from_str(&stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}):\n{stdout}\nstderr:\n{stderr}"));
    assert!(
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        "the token was printed"
    );
    (
        output.status.code().expect("exit code"),
        summary,
        format!("{stdout}\n{stderr}"),
    )
}

/// The token is nowhere but in `Authorization` headers: not in a file of the session, not in
/// the repository's config, not in a request's URL, other header or body.
pub(crate) fn assert_token_only_in_authorization(repo: &TestRepo, api: &Api) {
    for file in files_under(&repo.join(".prp-session")) {
        let bytes = std::fs::read(&file).expect("read");
        assert!(
            !String::from_utf8_lossy(&bytes).contains(TOKEN),
            "the token is in {}",
            file.display()
        );
    }
    let config = std::fs::read_to_string(repo.join(".git/config")).expect("git config");
    assert!(!config.contains(TOKEN));
    for request in api.requests() {
        assert!(!request.url.as_str().contains(TOKEN), "{}", request.url);
        assert!(
            !String::from_utf8_lossy(&request.body).contains(TOKEN),
            "the body of {} {} holds the token",
            request.method,
            request.url
        );
        for (name, value) in &request.headers {
            let value = value.to_str().unwrap_or_default();
            if name.as_str() == "authorization" {
                assert_eq!(value, format!("Bearer {TOKEN}"));
            } else {
                assert!(!value.contains(TOKEN), "header {name} holds the token");
            }
        }
    }
}

/// `prpd <args>` for a run that must escalate: the summary and the escalation's reason.
fn escalates(repo: &TestRepo, args: &[&str]) -> (Value, String) {
    let (code, summary, output) = ship(repo, args);
    assert_eq!(summary["state"], "ESCALATED", "{summary:#}\n{output}");
    assert_eq!(code, 3);
    let reason = summary["escalation_reason"]
        .as_str()
        .expect("a reason")
        .to_owned();
    (summary, reason)
}

pub(crate) fn body_of(request: &Request) -> Value {
    serde_json::from_slice(&request.body).expect("a JSON body")
}

#[test]
fn the_run_opens_its_pull_request_and_a_later_run_updates_it_with_a_comment() {
    let api = Api::start();
    api.mount_pull_request_flow();
    let (repo, _remote_dir, remote) = github_repo(&api, "");

    let (code, summary, output) = ship(&repo, &["run", PRP]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{output}");
    assert_eq!(code, 0);
    let pull = &summary["ship"]["github_pull_request"];
    assert_eq!(pull["number"], 1347, "{summary:#}");
    assert_eq!(pull["opened"], "new");
    assert_eq!(
        pull["html_url"],
        "https://github.com/octocat/Hello-World/pull/1347"
    );

    // One pull request opened, from the pushed branch into the branch the run started on,
    // with the PRP's title and prpd's own QA report and run summary as its body.
    let opened = api.requests_to("POST", &format!("{REPOSITORY}/pulls"));
    assert_eq!(opened.len(), 1);
    let body = body_of(&opened[0]);
    assert_eq!(body["head"], BRANCH);
    assert_eq!(body["base"], "main");
    assert_eq!(body["title"], "feat: Multiply numbers");
    assert_eq!(body["draft"], false);
    let text = body["body"].as_str().expect("a body");
    for expected in ["## Verdict", "## Run summary", "APPROVE on attempt 1"] {
        assert!(text.contains(expected), "no {expected:?} in:\n{text}");
    }
    let pr_file = std::fs::read_to_string(run_dir(repo.path(), &summary).join("pr.md"))
        .expect("pr.md is written too");
    assert!(pr_file.contains(text.trim_end()), "{pr_file}");
    let labels = api.requests_to("POST", &format!("{REPOSITORY}/issues/1347/labels"));
    assert_eq!(labels.len(), 1);
    assert_eq!(body_of(&labels[0]), json!({ "labels": ["prpd", "bot"] }));
    assert!(
        api.requests_to("POST", &format!("{REPOSITORY}/issues/1347/comments"))
            .is_empty(),
        "a new pull request gets no comment"
    );
    let shipped = oid(&summary["ship"]["commit"]);
    let bare = Repository::open_bare(&remote).expect("remote");
    assert_eq!(branch_tip(&bare, BRANCH), shipped);
    assert_verdict_check_run(&api, &summary, &shipped.to_string(), text);
    assert_token_only_in_authorization(&repo, &api);

    // A later run of the same PRP, from the committed tree (the agents' work is on the
    // branch), finds the open pull request: it updates it and comments, and opens no second.
    repo.git(&["checkout", "--", "."]);
    repo.git(&["clean", "-fdq"]);
    api.reset();
    api.mount_open_pull_request();
    let (code, later, output) = ship(&repo, &["run", PRP]);
    assert_eq!(later["state"], "SHIPPED", "{later:#}\n{output}");
    assert_eq!(code, 0);
    assert_eq!(later["ship"]["github_pull_request"]["opened"], "updated");
    assert!(
        api.requests_to("POST", &format!("{REPOSITORY}/pulls"))
            .is_empty()
    );
    let updated = api.requests_to("PATCH", &format!("{REPOSITORY}/pulls/1347"));
    assert_eq!(updated.len(), 1);
    let update = body_of(&updated[0]);
    assert_eq!(update["title"], "feat: Multiply numbers");
    let later_id = later["run_id"].as_str().expect("run id");
    assert!(
        update["body"]
            .as_str()
            .is_some_and(|text| text.contains(later_id)),
        "{update:#}"
    );
    let comments = api.requests_to("POST", &format!("{REPOSITORY}/issues/1347/comments"));
    assert_eq!(comments.len(), 1);
    let comment = body_of(&comments[0])["body"]
        .as_str()
        .expect("a comment")
        .to_owned();
    assert!(
        comment.contains(later_id) && comment.contains("replaced the description"),
        "{comment}"
    );
    assert_token_only_in_authorization(&repo, &api);
}

#[test]
fn a_failed_remote_check_is_a_reject_back_to_green_and_the_run_ships_when_the_ci_passes() {
    let api = Api::start();
    // The first look at the checks finds `ci / test` failed; every later look, passed. The
    // pull request is opened by the first SHIP and updated by the second.
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
    api.mount(
        authorized(Mock::given(method("GET")).and(path(format!("{REPOSITORY}/pulls"))))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
            .up_to_n_times(1)
            .with_priority(1),
    );
    api.mount_open_pull_request();
    api.mount(
        authorized(Mock::given(method("POST")).and(path(format!("{REPOSITORY}/pulls"))))
            .respond_with(ResponseTemplate::new(201).set_body_json(pull_request())),
    );
    let (repo, _remote_dir, remote) =
        github_repo(&api, "wait_for_checks = true\nchecks_timeout = \"60s\"\n");

    let (code, summary, output) = ship(&repo, &["run", PRP]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{output}");
    assert_eq!(code, 0);

    // QA approved, the remote CI rejected, GREEN worked again, QA approved, the CI passed.
    let verdicts: Vec<(String, u64)> = summary["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|verdict| {
            (
                verdict["verdict"].as_str().expect("word").to_owned(),
                verdict["attempt"].as_u64().expect("attempt"),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("APPROVE".to_owned(), 1),
            ("REJECT".to_owned(), 1),
            ("APPROVE".to_owned(), 2)
        ],
        "{summary:#}"
    );
    let blocking = summary["verdicts"][1]["blocking"][0]
        .as_str()
        .expect("a blocking item");
    assert!(
        blocking.contains("remote check `ci / test` failed: failure"),
        "{blocking}"
    );

    // GREEN's next prompt carried the failed check as feedback.
    let calls = std::fs::read_to_string(run_dir(repo.path(), &summary).join("agent-calls.jsonl"))
        .expect("agent calls");
    let greens: Vec<Value> = calls
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a call"))
        .filter(|call| call["phase"] == "GREEN")
        .collect();
    let feedback = greens
        .last()
        .and_then(|call| call["feedback_text"].as_str())
        .unwrap_or_default();
    assert!(
        feedback.contains("remote check `ci / test` failed")
            && feedback.contains("remote-checks-1.md"),
        "{greens:#?}"
    );

    // Both waits are in the summary; the shipped commit is the one the CI passed.
    let waits = summary["ship"]["remote_checks"].as_array().expect("waits");
    assert_eq!(waits.len(), 2, "{summary:#}");
    assert_eq!(waits[0]["checks"][0]["conclusion"]["state"], "failed");
    assert_eq!(waits[1]["checks"][0]["conclusion"]["state"], "passed");
    assert_eq!(waits[1]["outcome"]["outcome"], "finished");
    let shipped = oid(&summary["ship"]["commit"]);
    assert_eq!(waits[1]["sha"], shipped.to_string());
    assert_ne!(waits[0]["sha"], waits[1]["sha"], "a new commit after GREEN");
    let bare = Repository::open_bare(&remote).expect("remote");
    assert_eq!(branch_tip(&bare, BRANCH), shipped);

    // One pull request, opened once and updated by the second SHIP.
    assert_eq!(
        api.requests_to("POST", &format!("{REPOSITORY}/pulls"))
            .len(),
        1
    );
    assert_eq!(
        api.requests_to("PATCH", &format!("{REPOSITORY}/pulls/1347"))
            .len(),
        1
    );
    assert_token_only_in_authorization(&repo, &api);
}

#[test]
fn githubs_refusals_escalate_with_what_to_do_and_resume_without_a_second_commit() {
    let api = Api::start();
    let port = api.port();
    // 403 on opening the pull request; the escalation report becomes an issue.
    api.mount_token_that_may_not_open_pull_requests();
    let (repo, _remote_dir, remote) = github_repo(&api, "issue_on_escalation = true\n");

    let (summary, reason) = escalates(&repo, &["run", PRP]);
    for expected in [
        "may not open a pull request",
        "pull_requests=write",
        "the commit is pushed on prp/multiply-numbers",
        "`prpd resume`",
    ] {
        assert!(reason.contains(expected), "no {expected:?} in {reason}");
    }
    let commit = oid(&summary["ship"]["commit"]);
    let bare = Repository::open_bare(&remote).expect("remote");
    assert_eq!(
        branch_tip(&bare, BRANCH),
        commit,
        "pushed before the refusal"
    );
    assert_eq!(summary["escalation_issue"]["number"], 1348, "{summary:#}");
    let issues = api.requests_to("POST", &format!("{REPOSITORY}/issues"));
    assert_eq!(issues.len(), 1);
    let issue = body_of(&issues[0]);
    assert!(
        issue["title"]
            .as_str()
            .is_some_and(|title| title.contains("escalated") && title.contains("Multiply numbers")),
        "{issue:#}"
    );
    assert!(
        issue["body"]
            .as_str()
            .is_some_and(|text| text.contains("pull_requests=write")),
        "{issue:#}"
    );

    // 401: the token is refused; the escalation issue cannot be opened either, which the
    // report says.
    api.reset();
    api.mount(
        Mock::given(wiremock::matchers::any())
            .respond_with(ResponseTemplate::new(401).set_body_json(fixture("error-401.json"))),
    );
    let (summary, reason) = escalates(&repo, &["resume"]);
    assert!(
        reason.contains("the token in $GITHUB_TOKEN was refused (401)"),
        "{reason}"
    );
    assert!(summary["escalation_issue"].is_null(), "{summary:#}");
    let report = std::fs::read_to_string(run_dir(repo.path(), &summary).join("escalation.md"))
        .expect("report");
    assert!(
        report.contains("prpd could not open the escalation issue"),
        "{report}"
    );
    assert_eq!(oid(&summary["ship"]["commit"]), commit, "no second commit");

    // 429 with Retry-After: tried again after the wait GitHub asked for, then reported.
    api.reset();
    api.mount(
        Mock::given(wiremock::matchers::any()).respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(fixture("error-429-rate-limit.json")),
        ),
    );
    let (_, reason) = escalates(&repo, &["resume"]);
    assert!(
        reason.contains("rate limit") && reason.contains("GitHub asks to wait 1s"),
        "{reason}"
    );
    let pull_lists = api.requests_to("GET", &format!("{REPOSITORY}/pulls"));
    assert_eq!(pull_lists.len(), 3, "the first try and two more");

    // The network: the API is down.
    drop(api);
    let (_, reason) = escalates(&repo, &["resume"]);
    assert!(
        reason.contains(&format!(
            "could not reach the GitHub API at http://127.0.0.1:{port}"
        )) && reason.contains("check the network"),
        "{reason}"
    );

    // GitHub is back and the token may: the same commit ships, its pull request opened once.
    let api = Api::start_on(port);
    api.mount_pull_request_flow();
    let (code, summary, output) = ship(&repo, &["resume"]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{output}");
    assert_eq!(code, 0);
    assert_eq!(oid(&summary["ship"]["commit"]), commit, "the same commit");
    assert_eq!(branch_tip(&bare, BRANCH), commit);
    assert_eq!(summary["ship"]["github_pull_request"]["number"], 1347);
    assert_eq!(
        api.requests_to("POST", &format!("{REPOSITORY}/pulls"))
            .len(),
        1
    );
    assert_verdict_went_out_once_as_a_commit_status(&repo, &api, &summary);
    assert_token_only_in_authorization(&repo, &api);
}

/// A healthy run with a token in the shell whose `origin` is not on GitHub (here a local bare
/// repository; a GitLab or self-hosted remote alike) and no `[ship] repository`: the branch is
/// pushed, `pr.md` written, nothing asked of GitHub, and the run SHIPPED with the reason no
/// pull request was opened. The same remote with a `[ship] repository` that cannot be reached
/// still escalates: a repository the user named is a promise SHIP must keep.
#[test]
fn a_remote_off_github_ships_the_push_without_a_pull_request_unless_a_repository_is_named() {
    let api = Api::start();
    let (_remote_dir, remote) = bare_remote();
    let repo = ship_repo(&format!("api_url = \"http://127.0.0.1:{}\"\n", api.port()));
    repo.git(&["remote", "add", "origin", &remote.display().to_string()]);

    let (code, summary, output) = ship(&repo, &["run", PRP]);
    assert_eq!(summary["state"], "SHIPPED", "{summary:#}\n{output}");
    assert_eq!(code, 0);
    let commit = oid(&summary["ship"]["commit"]);
    let bare = Repository::open_bare(&remote).expect("remote");
    assert_eq!(branch_tip(&bare, BRANCH), commit, "pushed");
    let why = summary["ship"]["no_pull_request"]
        .as_str()
        .unwrap_or_else(|| panic!("no reason: {summary:#}"));
    for expected in [
        "no pull request was opened",
        &remote.display().to_string(),
        "is not on GitHub",
        "`[ship] repository` is not set",
        "pr.md",
    ] {
        assert!(why.contains(expected), "no {expected:?} in {why}");
    }
    assert!(output.contains("no pull request was opened"), "{output}");
    assert!(summary["ship"]["github_pull_request"].is_null());
    let pr = std::fs::read_to_string(run_dir(repo.path(), &summary).join("pr.md")).expect("pr.md");
    assert!(pr.starts_with("# feat: Multiply numbers"), "{pr}");
    assert!(api.requests().is_empty(), "{:#?}", api.requests());
    assert_token_only_in_authorization(&repo, &api);

    let closed_port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let (_remote_dir, remote) = bare_remote();
    let repo = ship_repo(&format!(
        "api_url = \"http://127.0.0.1:{closed_port}\"\nrepository = \"acme/calc\"\n"
    ));
    repo.git(&["remote", "add", "origin", &remote.display().to_string()]);
    let (summary, reason) = escalates(&repo, &["run", PRP]);
    assert!(
        reason.contains(&format!(
            "could not reach the GitHub API at http://127.0.0.1:{closed_port}"
        )),
        "{reason}"
    );
    assert!(summary["ship"]["no_pull_request"].is_null(), "{summary:#}");
    let bare = Repository::open_bare(&remote).expect("remote");
    assert_eq!(
        branch_tip(&bare, BRANCH),
        oid(&summary["ship"]["commit"]),
        "pushed before"
    );
}
