//! Waiting for the remote CI against the mock API: checks that pass, fail, finish after a
//! while, never finish, never appear; statuses beside check runs; pages of check runs; and
//! the pure rules under the wait (conclusions, when a wait ends, the Markdown).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::{authorized, client, fixture, requests_to, route, token_only_in_authorization};
use crate::github::checks::{Look, look};
use crate::github::{
    CheckSource, ChecksOutcome, Conclusion, GitHubError, PollPolicy, RemoteCheck, RemoteChecks,
};

const SHA: &str = "ce587453ced02b1526dfb4cb910479d431683101";

/// GitHub's example check run with another name, state and details page.
fn check_run(name: &str, status: &str, conclusion: Option<&str>) -> Value {
    let mut run = fixture("check-runs.json")["check_runs"][0].clone();
    run["name"] = json!(name);
    run["status"] = json!(status);
    run["conclusion"] = json!(conclusion);
    run["details_url"] = json!(format!("https://ci.example.com/{name}"));
    run
}

fn check_runs(runs: &[Value]) -> Value {
    json!({ "total_count": runs.len(), "check_runs": runs })
}

/// GitHub's example combined status holding `statuses` (`(context, state)`).
fn combined_status(statuses: &[(&str, &str)]) -> Value {
    let mut combined = fixture("combined-status.json");
    let template = combined["statuses"][0].clone();
    let listed: Vec<Value> = statuses
        .iter()
        .map(|(context, state)| {
            let mut status = template.clone();
            status["context"] = json!(context);
            status["state"] = json!(state);
            status["target_url"] = json!(format!("https://jenkins.example.com/{context}"));
            status["description"] = json!(format!("{context} is {state}"));
            status
        })
        .collect();
    combined["state"] = json!(if statuses.is_empty() {
        "pending"
    } else {
        "success"
    });
    combined["total_count"] = json!(listed.len());
    combined["statuses"] = json!(listed);
    combined
}

async fn mount_check_runs(server: &MockServer, body: Value, times: Option<u64>) {
    let mock = Mock::given(method("GET"))
        .and(path(route(&format!("commits/{SHA}/check-runs"))))
        .and(query_param("per_page", "100"))
        .and(authorized())
        .respond_with(ResponseTemplate::new(200).set_body_json(body));
    match times {
        Some(times) => mock.up_to_n_times(times).mount(server).await,
        None => mock.mount(server).await,
    }
}

async fn mount_statuses(server: &MockServer, body: Value) {
    Mock::given(method("GET"))
        .and(path(route(&format!("commits/{SHA}/status"))))
        .and(authorized())
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(server)
        .await;
}

fn quick(timeout_ms: u64) -> PollPolicy {
    PollPolicy {
        timeout: Duration::from_millis(timeout_ms),
        first_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(40),
        no_checks_grace: Duration::from_millis(timeout_ms),
    }
}

fn names(checks: &[&RemoteCheck]) -> Vec<String> {
    checks.iter().map(|check| check.name.clone()).collect()
}

#[tokio::test]
async fn checks_that_all_pass_finish_the_wait_at_the_first_look() {
    let server = MockServer::start().await;
    mount_check_runs(&server, fixture("check-runs.json"), None).await;
    mount_statuses(&server, fixture("combined-status.json")).await;

    let checks = client(&server)
        .wait_for_checks(SHA, &quick(5_000))
        .await
        .expect("asked");

    assert_eq!(checks.outcome, ChecksOutcome::Finished);
    assert!(checks.passed() && checks.all_finished());
    assert_eq!(
        checks
            .checks
            .iter()
            .map(|check| (check.name.as_str(), check.source, check.conclusion.word()))
            .collect::<Vec<_>>(),
        vec![
            ("mighty_readme", CheckSource::CheckRun, "success"),
            (
                "continuous-integration/jenkins",
                CheckSource::Status,
                "success"
            ),
        ]
    );
    assert_eq!(
        requests_to(&server, &route(&format!("commits/{SHA}/check-runs")))
            .await
            .len(),
        1
    );
    token_only_in_authorization(&server).await;
}

#[tokio::test]
async fn a_failed_check_is_named_with_its_details_page_and_output() {
    let server = MockServer::start().await;
    let mut failed = check_run("test (ubuntu-latest)", "completed", Some("failure"));
    failed["output"]["title"] = json!("3 tests failed");
    failed["output"]["summary"] = json!("greeting::says_hello failed\ngreeting::says_bye failed");
    mount_check_runs(
        &server,
        check_runs(&[check_run("lint", "completed", Some("success")), failed]),
        None,
    )
    .await;
    mount_statuses(&server, combined_status(&[])).await;

    let checks = client(&server)
        .wait_for_checks(SHA, &quick(5_000))
        .await
        .expect("asked");

    assert_eq!(checks.outcome, ChecksOutcome::Finished);
    assert!(!checks.passed());
    let failed = checks.failed();
    assert_eq!(names(&failed), ["test (ubuntu-latest)"]);
    assert_eq!(
        failed[0].conclusion,
        Conclusion::Failed("failure".to_owned())
    );
    assert_eq!(
        failed[0].url.as_deref(),
        Some("https://ci.example.com/test (ubuntu-latest)")
    );
    assert_eq!(failed[0].title.as_deref(), Some("3 tests failed"));
    let markdown = checks.render_markdown();
    assert!(
        markdown.contains("- FAILED `test (ubuntu-latest)` (failure) https://ci.example.com/test (ubuntu-latest)\n  3 tests failed\n  > greeting::says_hello failed\n  > greeting::says_bye failed"),
        "{markdown}"
    );
}

#[tokio::test]
async fn pending_checks_are_looked_at_again_with_growing_delays_until_they_finish() {
    let server = MockServer::start().await;
    mount_check_runs(
        &server,
        check_runs(&[check_run("build", "queued", None)]),
        Some(1),
    )
    .await;
    mount_check_runs(
        &server,
        check_runs(&[check_run("build", "in_progress", None)]),
        Some(2),
    )
    .await;
    mount_check_runs(
        &server,
        check_runs(&[check_run("build", "completed", Some("success"))]),
        None,
    )
    .await;
    mount_statuses(&server, combined_status(&[])).await;

    let policy = PollPolicy {
        first_delay: Duration::from_millis(60),
        max_delay: Duration::from_millis(240),
        ..quick(10_000)
    };

    let started = Instant::now();
    let checks = client(&server)
        .wait_for_checks(SHA, &policy)
        .await
        .expect("asked");

    assert_eq!(checks.outcome, ChecksOutcome::Finished);
    assert!(checks.passed());
    assert_eq!(
        requests_to(&server, &route(&format!("commits/{SHA}/check-runs")))
            .await
            .len(),
        4
    );
    assert!(
        started.elapsed() >= Duration::from_millis(60 + 120 + 240),
        "the delays did not double: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn checks_still_pending_at_the_timeout_are_listed_not_passed() {
    let server = MockServer::start().await;
    mount_check_runs(
        &server,
        check_runs(&[
            check_run("lint", "completed", Some("success")),
            check_run("deploy-preview", "waiting", None),
        ]),
        None,
    )
    .await;
    mount_statuses(&server, combined_status(&[("ci/jenkins", "pending")])).await;

    let started = Instant::now();
    let checks = client(&server)
        .wait_for_checks(SHA, &quick(150))
        .await
        .expect("asked");

    assert!(
        matches!(checks.outcome, ChecksOutcome::TimedOut { waited } if waited >= Duration::from_millis(150))
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!checks.passed() && !checks.all_finished());
    assert_eq!(names(&checks.pending()), ["deploy-preview", "ci/jenkins"]);
    assert!(checks.failed().is_empty());
    assert!(checks.render_markdown().contains("timed out after"));
}

#[tokio::test]
async fn a_commit_with_no_checks_at_all_says_so_after_the_grace() {
    let server = MockServer::start().await;
    mount_check_runs(&server, check_runs(&[]), None).await;
    mount_statuses(&server, combined_status(&[])).await;
    let policy = PollPolicy {
        no_checks_grace: Duration::from_millis(60),
        ..quick(10_000)
    };

    let started = Instant::now();
    let checks = client(&server)
        .wait_for_checks(SHA, &policy)
        .await
        .expect("asked");

    assert!(
        matches!(checks.outcome, ChecksOutcome::NoChecksReported { .. }),
        "{:?}",
        checks.outcome
    );
    assert!(started.elapsed() >= Duration::from_millis(60));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "waited for the timeout, not the grace"
    );
    assert!(!checks.passed(), "no checks must not read as a pass");
    assert!(
        checks
            .render_markdown()
            .contains("no remote checks reported")
    );
}

#[tokio::test]
async fn checks_that_appear_within_the_grace_are_waited_for() {
    let server = MockServer::start().await;
    mount_check_runs(&server, check_runs(&[]), Some(2)).await;
    mount_check_runs(
        &server,
        check_runs(&[check_run("build", "completed", Some("success"))]),
        None,
    )
    .await;
    mount_statuses(&server, combined_status(&[])).await;

    let checks = client(&server)
        .wait_for_checks(SHA, &quick(10_000))
        .await
        .expect("asked");

    assert_eq!(checks.outcome, ChecksOutcome::Finished);
    assert!(checks.passed());
}

#[tokio::test]
async fn a_failed_commit_status_fails_like_a_check_run() {
    let server = MockServer::start().await;
    mount_check_runs(&server, check_runs(&[]), None).await;
    mount_statuses(
        &server,
        combined_status(&[
            ("ci/jenkins", "success"),
            ("ci/circle", "error"),
            ("security/scan", "failure"),
        ]),
    )
    .await;

    let checks = client(&server)
        .wait_for_checks(SHA, &quick(5_000))
        .await
        .expect("asked");

    assert_eq!(checks.outcome, ChecksOutcome::Finished);
    assert!(!checks.passed());
    let failed = checks.failed();
    assert_eq!(names(&failed), ["ci/circle", "security/scan"]);
    assert_eq!(failed[0].source, CheckSource::Status);
    assert_eq!(
        failed[0].url.as_deref(),
        Some("https://jenkins.example.com/ci/circle")
    );
    assert_eq!(failed[0].title.as_deref(), Some("ci/circle is error"));
}

#[tokio::test]
async fn a_server_error_during_the_wait_is_looked_past_a_refusal_is_not() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(route(&format!("commits/{SHA}/check-runs"))))
        .respond_with(ResponseTemplate::new(502).set_body_string("<html>Bad gateway</html>"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    mount_check_runs(&server, fixture("check-runs.json"), None).await;
    mount_statuses(&server, fixture("combined-status.json")).await;

    let checks = client(&server)
        .wait_for_checks(SHA, &quick(5_000))
        .await
        .expect("looked again after the 502");
    assert!(checks.passed());

    let refused = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(route(&format!("commits/{SHA}/check-runs"))))
        .respond_with(
            ResponseTemplate::new(403).set_body_json(fixture("error-403-permission.json")),
        )
        .expect(1)
        .mount(&refused)
        .await;
    let error = client(&refused)
        .wait_for_checks(SHA, &quick(5_000))
        .await
        .expect_err("a refusal ends the wait");
    assert!(matches!(error, GitHubError::Forbidden { .. }), "{error:?}");
}

#[tokio::test]
async fn check_runs_are_read_from_every_page() {
    let server = MockServer::start().await;
    let first_page: Vec<Value> = (0..100)
        .map(|index| check_run(&format!("shard-{index}"), "completed", Some("success")))
        .collect();
    Mock::given(method("GET"))
        .and(path(route(&format!("commits/{SHA}/check-runs"))))
        .and(query_param("per_page", "100"))
        .and(query_param("page", "1"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({ "total_count": 101, "check_runs": first_page })),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(route(&format!("commits/{SHA}/check-runs"))))
        .and(query_param("per_page", "100"))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": 101,
            "check_runs": [check_run("shard-100", "completed", Some("timed_out"))],
        })))
        .expect(1)
        .mount(&server)
        .await;
    mount_statuses(&server, combined_status(&[])).await;

    let checks = client(&server)
        .wait_for_checks(SHA, &quick(5_000))
        .await
        .expect("asked");

    assert_eq!(checks.checks.len(), 101);
    assert_eq!(names(&checks.failed()), ["shard-100"]);
}

#[test]
fn only_success_neutral_and_skipped_pass() {
    let table = [
        (
            "completed",
            Some("success"),
            Conclusion::Passed("success".to_owned()),
        ),
        (
            "completed",
            Some("neutral"),
            Conclusion::Passed("neutral".to_owned()),
        ),
        (
            "completed",
            Some("skipped"),
            Conclusion::Passed("skipped".to_owned()),
        ),
        (
            "completed",
            Some("failure"),
            Conclusion::Failed("failure".to_owned()),
        ),
        (
            "completed",
            Some("cancelled"),
            Conclusion::Failed("cancelled".to_owned()),
        ),
        (
            "completed",
            Some("timed_out"),
            Conclusion::Failed("timed_out".to_owned()),
        ),
        (
            "completed",
            Some("action_required"),
            Conclusion::Failed("action_required".to_owned()),
        ),
        (
            "completed",
            Some("startup_failure"),
            Conclusion::Failed("startup_failure".to_owned()),
        ),
        (
            "completed",
            Some("stale"),
            Conclusion::Failed("stale".to_owned()),
        ),
        (
            "completed",
            Some("a_word_from_the_future"),
            Conclusion::Failed("a_word_from_the_future".to_owned()),
        ),
        (
            "completed",
            None,
            Conclusion::Failed("completed without a conclusion".to_owned()),
        ),
        ("queued", None, Conclusion::Pending("queued".to_owned())),
        (
            "in_progress",
            None,
            Conclusion::Pending("in_progress".to_owned()),
        ),
        ("waiting", None, Conclusion::Pending("waiting".to_owned())),
    ];
    for (status, conclusion, expected) in table {
        let run: crate::github::checks::CheckRunJson =
            serde_json::from_value(check_run("c", status, conclusion)).expect("a check run");
        assert_eq!(
            run.into_check().conclusion,
            expected,
            "{status} {conclusion:?}"
        );
    }
    for (state, expected) in [
        ("success", Conclusion::Passed("success".to_owned())),
        ("pending", Conclusion::Pending("pending".to_owned())),
        ("failure", Conclusion::Failed("failure".to_owned())),
        ("error", Conclusion::Failed("error".to_owned())),
    ] {
        let status: crate::github::checks::StatusJson =
            serde_json::from_value(combined_status(&[("c", state)])["statuses"][0].clone())
                .expect("a status");
        assert_eq!(status.into_check().conclusion, expected, "{state}");
    }
}

fn check(conclusion: Conclusion) -> RemoteCheck {
    RemoteCheck {
        name: "build".to_owned(),
        source: CheckSource::CheckRun,
        conclusion,
        url: None,
        title: None,
        summary: None,
    }
}

#[test]
fn a_wait_ends_when_all_finished_at_the_timeout_or_after_the_grace_with_nothing() {
    let ms = Duration::from_millis;
    let pending = [check(Conclusion::Pending("queued".to_owned()))];
    let failed = [check(Conclusion::Failed("failure".to_owned()))];
    let table: [(&str, &[RemoteCheck], Duration, Look); 7] = [
        (
            "finished at once",
            &failed,
            ms(0),
            Look::Done(ChecksOutcome::Finished),
        ),
        ("pending", &pending, ms(50), Look::Again),
        (
            "pending at the timeout",
            &pending,
            ms(100),
            Look::Done(ChecksOutcome::TimedOut { waited: ms(100) }),
        ),
        ("nothing yet", &[], ms(10), Look::Again),
        (
            "nothing after the grace",
            &[],
            ms(30),
            Look::Done(ChecksOutcome::NoChecksReported { waited: ms(30) }),
        ),
        (
            "finished after the timeout",
            &failed,
            ms(500),
            Look::Done(ChecksOutcome::Finished),
        ),
        (
            "nothing, grace past the timeout",
            &[],
            ms(100),
            Look::Done(ChecksOutcome::NoChecksReported { waited: ms(100) }),
        ),
    ];
    for (name, checks, elapsed, expected) in table {
        let grace = if name.contains("grace past") {
            ms(1_000)
        } else {
            ms(30)
        };
        assert_eq!(look(checks, elapsed, ms(100), grace), expected, "{name}");
    }
}

#[test]
fn the_markdown_lists_every_check_and_quotes_the_failures() {
    let mut failed = check(Conclusion::Failed("failure".to_owned()));
    failed.name = "test".to_owned();
    failed.url = Some("https://ci.example.com/test".to_owned());
    failed.title = Some("2 tests failed".to_owned());
    failed.summary = Some("a failed\nb failed".to_owned());
    let mut status = check(Conclusion::Pending("pending".to_owned()));
    status.name = "ci/jenkins".to_owned();
    status.source = CheckSource::Status;
    let checks = RemoteChecks {
        sha: "ce587453ced02b1526dfb4cb910479d431683101".to_owned(),
        outcome: ChecksOutcome::TimedOut {
            waited: Duration::from_secs(1800),
        },
        checks: vec![
            check(Conclusion::Passed("success".to_owned())),
            failed,
            status,
        ],
    };
    insta::assert_snapshot!(checks.render_markdown());
}

#[test]
fn the_checks_read_as_json_for_the_run_summary() {
    let mut failed = check(Conclusion::Failed("timed_out".to_owned()));
    failed.url = Some("https://ci.example.com/build".to_owned());
    let checks = RemoteChecks {
        sha: SHA.to_owned(),
        outcome: ChecksOutcome::TimedOut {
            waited: Duration::from_millis(1_800_400),
        },
        checks: vec![failed],
    };
    assert_eq!(
        serde_json::to_value(&checks).expect("JSON"),
        json!({
            "sha": SHA,
            "outcome": { "outcome": "timed_out", "waited_seconds": 1800 },
            "checks": [{
                "name": "build",
                "source": "check_run",
                "conclusion": { "state": "failed", "word": "timed_out" },
                "url": "https://ci.example.com/build",
                "title": null,
                "summary": null,
            }],
        })
    );
}

#[tokio::test]
async fn prpds_own_verdict_is_not_a_remote_check() {
    let server = MockServer::start().await;
    mount_check_runs(
        &server,
        check_runs(&[check_run("prpd / verdict", "completed", Some("success"))]),
        None,
    )
    .await;
    mount_statuses(&server, combined_status(&[("prpd / verdict", "success")])).await;

    let checks = client(&server)
        .wait_for_checks(SHA, &quick(60))
        .await
        .expect("asked");

    assert!(
        matches!(checks.outcome, ChecksOutcome::NoChecksReported { .. }),
        "{checks:?}"
    );
    assert!(checks.checks.is_empty(), "{checks:?}");
    assert!(!checks.passed());
}
