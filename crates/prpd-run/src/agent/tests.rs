//! The agent module's tests: real scripts stand in for the agent CLIs, printing the output
//! formats the CLIs document, so reading, classifying and the environment are checked end to
//! end through `process::run`.
use serde_json::Value as Json;

use super::*;
use prpd_base::status_block::StatusBlock;

const BLOCK: &str = "---PRP_PHASE_STATUS---\nPHASE: GREEN\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_PRP_PHASE_STATUS---\n";
const PROMPT: &str = "# GREEN\nMake the tests pass.\n";

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("prpd-agent-")
            .tempdir()
            .expect("temp dir");
        std::fs::create_dir_all(dir.path().join("repo")).expect("repo dir");
        Fixture { dir }
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn iteration_dir(&self) -> PathBuf {
        self.dir.path().join("run/iterations/green-3")
    }

    /// An agent script run by `sh` (exec'ing a file just written can fail with ETXTBSY
    /// while other test threads fork).
    fn agent(&self, script: &str, arguments: &[&str], prompt: PromptMode) -> AgentConfig {
        let path = self.dir.path().join("agent.sh");
        std::fs::write(&path, script).expect("write script");
        let mut command = vec!["sh".to_owned(), path.display().to_string()];
        command.extend(arguments.iter().map(|argument| (*argument).to_owned()));
        AgentConfig {
            command,
            model: Some("test-model".to_owned()),
            prompt,
            timeout: Duration::from_secs(20),
            env: Vec::new(),
        }
    }

    /// An agent that prints `output` exactly and exits with `code`.
    fn printing(&self, output: &str, code: i32) -> AgentConfig {
        std::fs::write(self.dir.path().join("output.txt"), output).expect("write output");
        let script = format!(
            "cat '{}'\nexit {code}\n",
            self.dir.path().join("output.txt").display()
        );
        self.agent(&script, &[], PromptMode::Stdin)
    }

    async fn invoke_with(
        &self,
        config: &AgentConfig,
        extra_env: &[(String, String)],
    ) -> Result<AgentReport, AgentError> {
        self.invoke_within(config, extra_env, None).await
    }

    async fn invoke_within(
        &self,
        config: &AgentConfig,
        extra_env: &[(String, String)],
        budget: Option<&CallBudget>,
    ) -> Result<AgentReport, AgentError> {
        let repo = self.repo();
        let run_dir = self.dir.path().join("run");
        let iteration_dir = self.iteration_dir();
        invoke(&Invocation {
            phase: Phase::Green,
            iteration: 3,
            attempt: 2,
            run_id: "run-1",
            run_dir: &run_dir,
            repo: &repo,
            prp_path: &repo.join("PRPs/feature.md"),
            feedback_path: &run_dir.join("feedback.md"),
            prompt: PROMPT,
            config,
            iteration_dir: &iteration_dir,
            extra_env,
            group_file: None,
            commands: &Commands::default(),
            budget,
        })
        .await
    }

    async fn invoke(&self, config: &AgentConfig) -> AgentReport {
        self.invoke_with(config, &[]).await.expect("agent starts")
    }

    fn read(&self, path: impl AsRef<Path>) -> String {
        let path = self.dir.path().join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }
}

fn block(status: &Found) -> &StatusBlock {
    match status {
        Found::Block(block) => block,
        other => panic!("expected a block, got {other:?}"),
    }
}

fn claude_result(result: &str, is_error: bool) -> Json {
    serde_json::json!({
        "type": "result",
        "subtype": "success",
        "is_error": is_error,
        "duration_ms": 1234,
        "result": result,
        "session_id": "0f9a3c2e-1111-2222-3333-444455556666",
        "usage": {
            "input_tokens": 10,
            "output_tokens": 7,
            "cache_creation_input_tokens": 5,
            "cache_read_input_tokens": 100
        },
        "total_cost_usd": 0.12
    })
}

#[tokio::test]
async fn a_plain_status_block_is_read_and_the_artifacts_are_written() {
    let fixture = Fixture::new();
    let config = fixture.printing(&format!("working on it\n{BLOCK}"), 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    let found = block(&report.status);
    assert_eq!(found.exit_signal(), Some(true));
    assert_eq!(report.exit_code, Some(0));
    assert_eq!(report.usage, None);
    assert_eq!(report.error_signature, None);
    assert_eq!(
        report.note,
        "exited 0 with a status block (EXIT_SIGNAL: true)"
    );
    assert_eq!(report.log_path, fixture.iteration_dir().join(OUTPUT_LOG));
    assert!(report.output_tail.starts_with("working on it\n"));
    let iteration = fixture.iteration_dir();
    assert_eq!(fixture.read(iteration.join(PROMPT_FILE)), PROMPT);
    assert_eq!(fixture.read(iteration.join(STATUS_BLOCK_FILE)), BLOCK);
    assert!(
        fixture
            .read(iteration.join(OUTPUT_LOG))
            .contains("working on it")
    );
}

#[tokio::test]
async fn claude_json_gives_the_block_inside_result_and_the_usage() {
    let fixture = Fixture::new();
    let json = claude_result(&format!("All tests pass.\n\n{BLOCK}"), false).to_string();
    assert!(
        !json.contains('\n'),
        "compact JSON keeps the newlines escaped"
    );
    let config = fixture.printing(&format!("{json}\n"), 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    assert_eq!(block(&report.status).exit_signal(), Some(true));
    assert_eq!(
        report.usage,
        Some(Usage {
            input_tokens: 10,
            cache_write_tokens: 5,
            cache_read_tokens: 100,
            output_tokens: 7,
            cost_usd: Some(0.12)
        })
    );
    assert_eq!(report.usage.map(|usage| usage.billed_tokens()), Some(22));
    assert!(
        report.output_tail.starts_with("All tests pass."),
        "{}",
        report.output_tail
    );
    assert!(!report.output_tail.contains("\"type\""));
}

#[tokio::test]
async fn stream_json_is_read_from_its_last_result_line() {
    let fixture = Fixture::new();
    let quoted = BLOCK.replace("EXIT_SIGNAL: true", "EXIT_SIGNAL: false");
    let lines = [
        serde_json::json!({"type": "system", "subtype": "init", "model": "test-model"}),
        serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": quoted}]}}),
        claude_result(&format!("Done.\n{BLOCK}"), false),
    ];
    let output = lines.map(|line| line.to_string()).join("\n");
    let config = fixture.printing(&format!("warning: on stderr too\n{output}"), 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    assert_eq!(block(&report.status).exit_signal(), Some(true));
    assert_eq!(report.usage.map(|usage| usage.output_tokens), Some(7));
}

#[tokio::test]
async fn output_without_a_usable_block_is_malformed() {
    let fixture = Fixture::new();
    let config = fixture.printing("I am done. EXIT_SIGNAL: true\n", 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Malformed);
    assert_eq!(report.status, Found::None);
    assert_eq!(report.note, "exited 0 without a status block");
    assert!(report.error_signature.is_some());
    assert!(!fixture.iteration_dir().join(STATUS_BLOCK_FILE).exists());

    let broken = "---PRP_PHASE_STATUS---\nPHASE GREEN\n---END_PRP_PHASE_STATUS---\n";
    let config = fixture.printing(broken, 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Malformed);
    assert!(matches!(report.status, Found::Malformed(_)));
    assert!(report.note.contains("does not parse"), "{}", report.note);
}

#[tokio::test]
async fn a_non_zero_exit_is_a_crash_with_an_error_signature() {
    let fixture = Fixture::new();
    let config = fixture.printing(
        &format!("{BLOCK}compiling\nerror: boom at src/lib.rs:12:5\n"),
        1,
    );
    let report = fixture.invoke(&config).await;
    assert_eq!(
        report.end,
        AgentEnd::Crashed,
        "a block does not excuse a failed exit"
    );
    assert_eq!(report.exit_code, Some(1));
    assert_eq!(
        report.error_signature.as_deref(),
        Some("error: boom at src/lib.rs:<n>:<n>")
    );
    assert_eq!(report.note, "exited 1: error: boom at src/lib.rs:12:5");
}

#[tokio::test]
async fn a_usage_limit_is_quota() {
    let fixture = Fixture::new();
    let json = claude_result("Claude AI usage limit reached|1760000000", true);
    let config = fixture.printing(&format!("{json}\n"), 1);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Quota, "{}", report.note);
    assert!(
        report.note.contains("usage limit reached"),
        "{}",
        report.note
    );

    assert_eq!(report.reset_at, Some(1_760_000_000));

    let config = fixture.printing("Error: 429 Too Many Requests\n", 1);
    assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Quota);
}

/// Issue 10: an API 500 ("usually temporary") ended as Crashed and escalated as "stuck".
#[tokio::test]
async fn a_claude_api_outage_is_transient() {
    let fixture = Fixture::new();
    for status in [500, 502, 503, 408, 529] {
        let mut json = claude_result(
            &format!(
                "API Error: {status} {{\"type\":\"error\",\"error\":{{\"type\":\"api_error\",\"message\":\"Internal server error\"}}}}"
            ),
            true,
        );
        json["api_error_status"] = serde_json::json!(status);
        let config = fixture.printing(&format!("{json}\n"), 1);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Quota, "{status}: {}", report.note);
        assert!(
            report.note.contains(&format!("API status {status}")),
            "{}",
            report.note
        );
        assert_eq!(report.reset_at, None);
    }
    let mut json = claude_result("API Error: 400 invalid model", true);
    json["api_error_status"] = serde_json::json!(400);
    let config = fixture.printing(&format!("{json}\n"), 1);
    assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Crashed);
}

/// Issue 10: Codex's "high demand" and broken streams are transient, not crashes.
#[tokio::test]
async fn codex_high_demand_and_stream_errors_are_transient() {
    let fixture = Fixture::new();
    let events = [
        serde_json::json!({"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}),
        serde_json::json!({"type": "turn.started"}),
        serde_json::json!({"type": "error", "message": "Reconnecting... 1/5"}),
        serde_json::json!({"type": "turn.failed", "error": {"message": "We're currently experiencing high demand, which may cause temporary errors."}}),
    ];
    let output = events.map(|event| event.to_string()).join("\n");
    let config = fixture.printing(&format!("{output}\n"), 1);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Quota, "{}", report.note);

    let config = fixture.printing(
        "ERROR: stream disconnected before completion: An error occurred while processing your request.\n",
        1,
    );
    assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Quota);
}

/// Issue 10: Aider exits 0 after a rate limit; that is not malformed output.
#[tokio::test]
async fn aider_rate_limit_and_connection_errors_at_exit_0_are_transient() {
    let fixture = Fixture::new();
    for error in [
        "litellm.RateLimitError: AnthropicException - {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}",
        "litellm.APIConnectionError: AnthropicException - [Errno 111] Connection refused",
    ] {
        let output = format!(
            "Aider v0.86.1\nMain model: anthropic/claude-sonnet-4-5 with diff edit format\nGit repo: .git with 12 files\n\n{error}\nThe API provider has rate limited you. Try again later or check your quotas.\n"
        );
        let config = fixture.printing(&output, 0);
        let report = fixture.invoke(&config).await;
        assert_eq!(report.end, AgentEnd::Quota, "{}", report.note);
        assert!(report.note.contains("litellm."), "{}", report.note);
    }
}

#[tokio::test]
async fn a_rate_limit_in_the_output_of_a_successful_run_is_not_quota() {
    let fixture = Fixture::new();
    let config = fixture.printing(&format!("Implemented the rate limit.\n{BLOCK}"), 0);
    assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Ok);

    // Without a block the run is malformed, never quota: a quota end would make prpd wait
    // and retry an agent that only talked about rate limits.
    let config = fixture.printing("Added the API quota and rate limit checks.\n", 0);
    assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Malformed);
}

#[tokio::test]
async fn claude_permission_denials_without_a_block_are_permission_denied() {
    let fixture = Fixture::new();
    let mut json = claude_result("I could not run the tests.", false);
    json["permission_denials"] = serde_json::json!([
        {"tool_name": "Bash", "tool_use_id": "toolu_01", "tool_input": {"command": "cargo test"}}
    ]);
    let config = fixture.printing(&format!("{json}\n"), 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::PermissionDenied, "{}", report.note);
    assert_eq!(report.note, "permission denied for Bash(cargo test)");
    assert_eq!(report.denials, ["Bash(cargo test)"]);

    json["result"] = Json::String(format!("Done another way.\n{BLOCK}"));
    let config = fixture.printing(&format!("{json}\n"), 0);
    assert_eq!(fixture.invoke(&config).await.end, AgentEnd::Ok);
}

/// Issue 10: Claude Code refused `npm test` ("This command requires approval"), the agent said
/// `STATUS: BLOCKED` with a status block, and the iteration was classified `Ok`.
#[tokio::test]
async fn claude_denials_with_a_blocked_status_block_are_permission_denied() {
    let fixture = Fixture::new();
    let blocked = "---PRP_PHASE_STATUS---\nPHASE: RED\nSTATUS: BLOCKED\nEXIT_SIGNAL: false\nBLOCKERS:\n  - npm test requires approval\n---END_PRP_PHASE_STATUS---\n";
    let mut json = claude_result(
        &format!("I wrote the test but cannot run it.\n\n{blocked}"),
        false,
    );
    json["permission_denials"] = serde_json::json!([
        {"tool_name": "Bash", "tool_use_id": "toolu_01Xk", "tool_input": {"command": "npm test", "description": "Run the tests"}},
        {"tool_name": "Bash", "tool_use_id": "toolu_02Yq", "tool_input": {"command": "node --test test/"}}
    ]);
    let config = fixture.printing(&format!("{json}\n"), 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::PermissionDenied, "{}", report.note);
    assert_eq!(
        report.denials,
        ["Bash(npm test)", "Bash(node --test test/)"]
    );
    assert_eq!(report.blockers, ["npm test requires approval"]);
    assert!(
        matches!(report.status, Found::Block(_)),
        "the block is still read"
    );
    assert!(report.error_signature.is_some());
}

/// Issue 10: `codex exec` echoes the whole prompt on stderr, template block included; an
/// answer without a block of its own must not borrow the template's.
#[tokio::test]
async fn a_template_block_echoed_from_the_prompt_is_not_the_agents_block() {
    let fixture = Fixture::new();
    let template = "---PRP_PHASE_STATUS---\nPHASE: GREEN\nSTATUS: <IN_PROGRESS|COMPLETE|BLOCKED>\nEXIT_SIGNAL: <true|false>\nTESTS:\n  PASSING: <integer>\n---END_PRP_PHASE_STATUS---\n";
    let echoed = format!(
        "OpenAI Codex v0.169.0 (research preview)\n--------\nworkdir: /repo\nmodel: gpt-5-codex\n--------\nuser\n# GREEN\nEnd with:\n{template}"
    );
    let config = fixture.printing(&format!("{echoed}codex\nI changed src/lib.rs.\n"), 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Malformed, "{}", report.note);
    assert_eq!(report.status, Found::None);

    let config = fixture.printing(&format!("{echoed}codex\nDone.\n{BLOCK}"), 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    assert_eq!(block(&report.status).exit_signal(), Some(true));
}

#[tokio::test]
async fn a_hanging_agent_times_out() {
    let fixture = Fixture::new();
    let mut config = fixture.agent("echo started\nsleep 30\n", &[], PromptMode::Stdin);
    config.timeout = Duration::from_millis(300);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::TimedOut);
    assert_eq!(report.exit_code, None);
    assert!(
        report.duration < Duration::from_secs(10),
        "{:?}",
        report.duration
    );
    assert_eq!(report.note, "stopped at its timeout of 300ms");
}

#[tokio::test]
async fn file_mode_passes_the_prompt_path_and_the_model_in_the_argv() {
    let fixture = Fixture::new();
    let script = format!(
        "printf '%s' \"$1\" > args.txt\ncat \"$2\" > seen.txt\ncat > stdin.txt\nprintf '%s' '{BLOCK}'\n"
    );
    let config = fixture.agent(
        &script,
        &["--model={model}", "{prompt_file}"],
        PromptMode::File,
    );
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    assert_eq!(fixture.read("repo/args.txt"), "--model=test-model");
    assert_eq!(fixture.read("repo/seen.txt"), PROMPT);
    assert_eq!(fixture.read("repo/stdin.txt"), "");
}

#[tokio::test]
async fn stdin_mode_writes_the_prompt_to_stdin() {
    let fixture = Fixture::new();
    let script = format!("cat > seen.txt\npwd > cwd.txt\nprintf '%s' '{BLOCK}'\n");
    let config = fixture.agent(&script, &[], PromptMode::Stdin);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    assert_eq!(fixture.read("repo/seen.txt"), PROMPT);
    let cwd = PathBuf::from(fixture.read("repo/cwd.txt").trim());
    assert_eq!(
        cwd.canonicalize().expect("cwd"),
        fixture.repo().canonicalize().expect("repo")
    );
}

#[tokio::test]
async fn the_agent_sees_allow_listed_and_prpd_variables_only() {
    let fixture = Fixture::new();
    let mut names: Vec<(String, String)> = std::env::vars()
        .filter(|(name, value)| {
            !["PATH", "HOME"].contains(&name.as_str())
                && !name.starts_with("PRPD_")
                && !value.contains('\n')
        })
        .collect();
    names.sort();
    assert!(
        names.len() >= 2,
        "the test process has few variables: {names:?}"
    );
    let (allowed, allowed_value) = names[0].clone();
    let (hidden, _) = names
        .iter()
        .find(|(name, _)| !name.starts_with(&allowed))
        .cloned()
        .expect("a variable the pattern does not match");
    let mut config = fixture.agent("env > env.txt\n", &[], PromptMode::Stdin);
    // A pattern, as the presets write them (`ANTHROPIC_*`), passes the variable through.
    config.env = vec![format!("{allowed}*")];
    let extra = [("PRPD_QA_REPORT".to_owned(), "/tmp/qa.md".to_owned())];
    fixture.invoke_with(&config, &extra).await.expect("starts");

    let env = fixture.read("repo/env.txt");
    let has = |line: &str| env.lines().any(|seen| seen == line);
    let run_dir = fixture.dir.path().join("run");
    assert!(has(&format!("{allowed}={allowed_value}")), "{env}");
    assert!(
        !env.lines()
            .any(|line| line.starts_with(&format!("{hidden}="))),
        "{hidden} leaked"
    );
    assert!(has("PRPD_PHASE=GREEN"));
    assert!(has("PRPD_ITERATION=3"));
    assert!(has("PRPD_ATTEMPT=2"));
    assert!(has("PRPD_RUN_ID=run-1"));
    assert!(has(&format!("PRPD_RUN_DIR={}", run_dir.display())));
    assert!(has(&format!(
        "PRPD_PRP={}",
        fixture.repo().join("PRPs/feature.md").display()
    )));
    assert!(has(&format!(
        "PRPD_FEEDBACK={}",
        run_dir.join("feedback.md").display()
    )));
    assert!(has("PRPD_QA_REPORT=/tmp/qa.md"));
}

#[tokio::test]
async fn a_missing_program_is_an_error_naming_it_and_the_config_key() {
    let fixture = Fixture::new();
    let config = AgentConfig {
        command: vec!["prpd-no-such-agent".to_owned(), "-p".to_owned()],
        model: None,
        prompt: PromptMode::Stdin,
        timeout: Duration::from_secs(5),
        env: Vec::new(),
    };
    let error = fixture
        .invoke_with(&config, &[])
        .await
        .expect_err("cannot start");
    assert!(matches!(error, AgentError::Start { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("`prpd-no-such-agent`"), "{message}");
    assert!(message.contains("`agents.green.command`"), "{message}");
}

#[test]
fn the_debug_of_an_invocation_shows_no_env_values() {
    let config = AgentConfig {
        command: vec!["agent".to_owned()],
        model: None,
        prompt: PromptMode::Stdin,
        timeout: Duration::from_secs(1),
        env: vec!["ANTHROPIC_API_KEY".to_owned()],
    };
    let extra = [("PRPD_TOKEN".to_owned(), "sk-secret-value".to_owned())];
    let invocation = Invocation {
        phase: Phase::Qa,
        iteration: 1,
        attempt: 1,
        run_id: "run-1",
        run_dir: Path::new("run"),
        repo: Path::new("."),
        prp_path: Path::new("PRPs/x.md"),
        feedback_path: Path::new("run/feedback.md"),
        prompt: "prompt",
        config: &config,
        iteration_dir: Path::new("run/qa-1"),
        extra_env: &extra,
        group_file: None,
        commands: &Commands::default(),
        budget: None,
    };
    let shown = format!("{invocation:?}");
    assert!(shown.contains("PRPD_TOKEN"), "{shown}");
    assert!(!shown.contains("sk-secret-value"), "{shown}");
}

/// Issue 10: `--json` hid Codex's status block from prpd and its usage was never read.
#[tokio::test]
async fn codex_json_events_give_the_usage_and_the_last_message_file_the_block() {
    let fixture = Fixture::new();
    let events = [
        r#"{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Implemented it."}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":1500,"output_tokens":90}}"#,
    ];
    std::fs::write(
        fixture.dir.path().join("events.jsonl"),
        events.join("\n") + "\n",
    )
    .expect("write events");
    std::fs::write(
        fixture.dir.path().join("answer.md"),
        format!("Implemented it.\n{BLOCK}"),
    )
    .expect("write answer");
    let script = format!(
        "cat > /dev/null\ncp '{answer}' \"$2\"\ncat '{events}'\n",
        answer = fixture.dir.path().join("answer.md").display(),
        events = fixture.dir.path().join("events.jsonl").display(),
    );
    let config = fixture.agent(
        &script,
        &["--output-last-message", "{last_message_file}"],
        PromptMode::Stdin,
    );
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    assert_eq!(block(&report.status).exit_signal(), Some(true));
    let usage = report.usage.expect("turn.completed usage");
    assert_eq!(
        (
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.output_tokens
        ),
        (500, 1500, 90)
    );
    assert!(fixture.iteration_dir().join(LAST_MESSAGE_FILE).exists());
}

/// Issue 10: Aider's `Tokens: … Cost: …` line was not read.
#[tokio::test]
async fn aider_token_and_cost_lines_are_read() {
    let fixture = Fixture::new();
    let output = format!(
        "Aider v0.86.1\nMain model: anthropic/claude-sonnet-4-5 with diff edit format\n\nsrc/words.js\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n\nTokens: 3.2k sent, 331 received. Cost: $0.01 message, $0.01 session.\nApplied edit to src/words.js\n{BLOCK}"
    );
    let config = fixture.printing(&output, 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    let usage = report.usage.expect("aider usage");
    assert_eq!((usage.input_tokens, usage.output_tokens), (3200, 331));
    assert_eq!(usage.cost_usd, Some(0.01));
    assert_eq!(
        report.model.as_deref(),
        Some("anthropic/claude-sonnet-4-5"),
        "the model of Aider's banner"
    );
}

/// Issue 10: Aider stages the files it edits (`--no-auto-commits` only stops the commit);
/// prpd never changes the user's index during a run.
#[tokio::test]
async fn the_index_aider_stages_files_in_is_put_back() {
    let fixture = Fixture::new();
    let repo = fixture.repo();
    let repository = git2::Repository::init(&repo).expect("init");
    std::fs::write(repo.join("a.js"), "1\n").expect("write");
    let mut index = repository.index().expect("index");
    index.add_path(Path::new("a.js")).expect("add");
    index.write().expect("write index");
    let tree = repository
        .find_tree(index.write_tree().expect("tree"))
        .expect("find tree");
    let signature = git2::Signature::now("t", "t@example.com").expect("signature");
    repository
        .commit(Some("HEAD"), &signature, &signature, "base", &tree, &[])
        .expect("commit");
    let index_before = std::fs::read(repo.join(".git/index")).expect("index");

    // A program named `aider` (a link to sh) running a script that behaves as Aider does.
    let aider = fixture.dir.path().join("aider");
    std::os::unix::fs::symlink("/bin/sh", &aider).expect("link");
    let script = fixture.dir.path().join("aider-script.sh");
    std::fs::write(
        &script,
        format!(
            "echo 2 > new.js\ngit add --intent-to-add new.js\necho 2 > a.js\ngit add a.js\necho chat > .aider.chat.history.md\nprintf '%s' '{BLOCK}'\n"
        ),
    )
    .expect("write script");
    let config = AgentConfig {
        command: vec![aider.display().to_string(), script.display().to_string()],
        model: None,
        prompt: PromptMode::Stdin,
        timeout: Duration::from_secs(20),
        env: vec!["GIT_*".to_owned()],
    };
    assert!(is_aider(&config));
    let report = fixture.invoke(&config).await;
    assert_eq!(report.end, AgentEnd::Ok, "{}", report.note);
    assert_eq!(
        std::fs::read(repo.join(".git/index")).expect("index"),
        index_before
    );
    let statuses = repository.statuses(None).expect("statuses");
    let status_of = |path: &str| {
        statuses
            .iter()
            .find(|entry| entry.path().ok() == Some(path))
            .map(|entry| entry.status())
    };
    assert_eq!(status_of("a.js"), Some(git2::Status::WT_MODIFIED));
    assert_eq!(status_of("new.js"), Some(git2::Status::WT_NEW));
}

/// Issue 10: model diversity compared strings; the model Claude Code reports is what counts.
#[tokio::test]
async fn claude_reports_the_model_it_worked_with() {
    let fixture = Fixture::new();
    let mut json = claude_result(&format!("Done.\n{BLOCK}"), false);
    json["modelUsage"] = serde_json::json!({
        "claude-3-5-haiku-20241022": {"inputTokens": 300, "outputTokens": 20, "costUSD": 0.0004},
        "claude-sonnet-4-5-20250929": {"inputTokens": 10, "outputTokens": 700, "cacheReadInputTokens": 9000, "costUSD": 0.12}
    });
    let config = fixture.printing(&format!("{json}\n"), 0);
    let report = fixture.invoke(&config).await;
    assert_eq!(report.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert!(crate::config::model::same(
        report.model.as_deref().unwrap_or_default(),
        "sonnet"
    ));
}

mod stops;
