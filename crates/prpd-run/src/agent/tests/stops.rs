//! Calls prpd ends before the agent does, or escalates at once: a model the agent cannot use, a
//! budget its streamed usage crosses, a network it never reached (issue 28).

use super::*;

/// Issue 28: an agent that cannot use its model at all is said so, not read as stuck.
#[tokio::test]
async fn an_agent_that_cannot_use_its_model_names_the_line_and_prose_about_keys_does_not() {
    let fixture = Fixture::new();
    // Aider without its provider's key prints litellm's exception and exits 0.
    let aider = "Aider v0.86.1\nMain model: anthropic/claude-sonnet-4-5 with diff edit format\n\n\
                 litellm.AuthenticationError: AnthropicException - {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}\n";
    let report = fixture.invoke(&fixture.printing(aider, 0)).await;
    let line = report.setup_error.expect("a set-up error");
    assert!(line.starts_with("litellm.AuthenticationError"), "{line}");

    // Claude Code without a key: its result is an error.
    let json = claude_result("Invalid API key · Please run /login", true);
    let report = fixture
        .invoke(&fixture.printing(&format!("{json}\n"), 1))
        .await;
    assert_eq!(
        report.setup_error.as_deref(),
        Some("Invalid API key · Please run /login")
    );

    // Codex CLI's provider refusing the key, with a non-zero exit.
    let codex =
        "ERROR: unexpected status 401 Unauthorized: {\"error\":{\"code\":\"invalid_api_key\"}}\n";
    let report = fixture.invoke(&fixture.printing(codex, 1)).await;
    assert!(report.setup_error.is_some(), "{}", report.note);

    // An agent that worked on an API client says these words and exits 0, or gives its block.
    let prose = "Handled invalid_api_key and model_not_found from the provider.\n";
    assert_eq!(
        fixture
            .invoke(&fixture.printing(prose, 0))
            .await
            .setup_error,
        None
    );
    let answered = format!("API Error: 401 is mapped to AuthError now.\n{BLOCK}");
    assert_eq!(
        fixture
            .invoke(&fixture.printing(&answered, 1))
            .await
            .setup_error,
        None
    );
}

/// An Aider that reports a dollar of session cost more every 100 ms, in a run that spent $0.50,
/// is stopped by a $3 budget at the report that crosses it, long before its own end.
#[tokio::test]
async fn a_budget_stops_the_agent_within_one_streamed_usage_report() {
    let fixture = Fixture::new();
    let config = fixture.agent(
        "for i in 1 2 3 4 5 6 7 8 9 10; do\n  echo \"Tokens: 1.0k sent, 10 received. Cost: \\$1.00 message, \\$$i.00 session.\"\n  sleep 0.1\ndone\necho finished\n",
        &[],
        PromptMode::Stdin,
    );
    let budget = CallBudget {
        allowances: crate::budget::allowances(
            &crate::config::Guardrails {
                max_cost_usd: Some(3.0),
                ..crate::config::Config::default().guardrails
            },
            &[],
            &crate::budget::Spent {
                run_cost: 0.5,
                ..crate::budget::Spent::default()
            },
            0,
        ),
        prices: crate::config::Prices::default(),
    };
    let report = fixture
        .invoke_within(&config, &[], Some(&budget))
        .await
        .expect("agent starts");
    let crossing = report.budget_crossed.expect("crossed");
    assert_eq!(crossing.budget, crate::budget::Budget::RunCost);
    assert!((crossing.spent - 3.5).abs() < 1e-9, "{crossing}");
    let log = std::fs::read_to_string(&report.log_path).expect("log");
    assert!(!log.contains("finished"), "{log}");
    assert!(
        !log.contains("$5.00 session"),
        "stopped at the third report: {log}"
    );
    let usage = report.usage.expect("streamed usage");
    assert!(
        usage
            .cost_usd
            .is_some_and(|cost| (3.0..=4.0).contains(&cost)),
        "{usage:?}"
    );
    assert_eq!(report.exit_code, None);
}

/// Issue 28: what the real Codex CLI 0.171 printed when it could not use its model
/// (`tests/fixtures/agents/`), with the exit it gave, is a set-up error naming its message; its
/// outage is not.
#[tokio::test]
async fn codex_refusals_and_an_endpoint_it_never_reached_are_set_up_errors() {
    let fixture = Fixture::new();
    let cases = [
        (
            "codex-0.171-401-invalid-key.log",
            1,
            Some("unexpected status 401 Unauthorized: Incorrect API key provided"),
        ),
        (
            "codex-0.171-404-unknown-model.log",
            1,
            Some("The model `nope` does not exist or you do not have access to it."),
        ),
        (
            "codex-0.171-400-bad-request.log",
            1,
            Some("bc {\"error\":{\"message\":\"Unsupported parameter"),
        ),
        (
            "codex-0.171-closed-port.log",
            124,
            Some("Reconnecting... waiting for network (Connection failed: error sending request)"),
        ),
        (
            "codex-0.171-openai-base-url-ignored.log",
            124,
            Some("Reconnecting... waiting for network"),
        ),
        ("codex-0.171-500-outage.log", 1, None),
    ];
    for (name, code, expected) in cases {
        let path = format!(
            "{}/../../tests/fixtures/agents/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let output = std::fs::read_to_string(&path).expect("a fixture");
        let report = fixture.invoke(&fixture.printing(&output, code)).await;
        if let Some(start) = expected {
            let line = report.setup_error.unwrap_or_default();
            assert!(line.starts_with(start), "{name}: {line}");
            assert_ne!(
                report.end,
                AgentEnd::Quota,
                "{name}: not an outage to wait out"
            );
        } else {
            assert_eq!(report.setup_error, None, "{name}");
            assert_eq!(report.end, AgentEnd::Quota, "{name}: {}", report.note);
        }
    }
}

/// Issue 28: a Codex that waits for a network it never reached in the call is stopped at that
/// line, long before its timeout, and the line is the set-up error the run escalates with.
#[tokio::test]
async fn an_agent_waiting_for_a_network_it_never_reached_is_stopped_at_that_line() {
    let fixture = Fixture::new();
    let mut config = fixture.agent(
        r#"printf '%s\n' '{"type":"thread.started","thread_id":"t"}' '{"type":"turn.started"}'
printf '%s\n' '{"type":"error","message":"Reconnecting... 5/5 (stream disconnected before completion: Connection refused (os error 111))"}'
sleep 0.5
printf '%s\n' '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}'
sleep 60
"#,
        &[],
        PromptMode::Stdin,
    );
    config.timeout = Duration::from_secs(120);
    let report = fixture.invoke(&config).await;
    assert!(
        report.duration < Duration::from_secs(20),
        "{:?}",
        report.duration
    );
    assert_eq!(
        report.setup_error.as_deref(),
        Some("Reconnecting... waiting for network (Connection failed: error sending request)")
    );
    assert!(
        report
            .note
            .starts_with("stopped by prpd: it cannot reach its model"),
        "{}",
        report.note
    );
}

/// The same line after the model answered in the call is a network that went away mid-work:
/// the agent is left to wait, and ends by itself.
#[tokio::test]
async fn an_agent_whose_model_answered_is_not_stopped_when_the_network_goes() {
    let fixture = Fixture::new();
    let config = fixture.agent(
        r#"printf '%s\n' '{"type":"turn.started"}' '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"working"}}'
printf '%s\n' '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}'
sleep 0.5
echo done
"#,
        &[],
        PromptMode::Stdin,
    );
    let report = fixture.invoke(&config).await;
    assert_eq!(report.exit_code, Some(0), "{}", report.note);
    assert!(
        std::fs::read_to_string(&report.log_path)
            .expect("log")
            .ends_with("done\n")
    );
}
