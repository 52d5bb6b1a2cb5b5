//! prpd's own time: at the end of a session the debug log says how long the session took, how
//! much of it the run's agents and commands ran, and prpd's own steps part by part — what
//! `cargo bench --bench overhead` reads. The fixture is the benchmark's: a shell agent that
//! makes one case pass per GREEN iteration, and a shell test command that prints TAP.

use crate::util::TestRepo;

const RUN_TESTS: &str = "[ -f tests/cases.txt ] || { echo 1..0; exit 0; }\n\
n=0\nfail=0\ncount=$(grep -c . tests/cases.txt)\necho \"1..$count\"\n\
while read -r name; do\n  n=$((n + 1))\n\
  if [ -f \"src/$name\" ]; then echo \"ok $n - AC-1 $name\"; else echo \"not ok $n - AC-1 $name\"; fail=1; fi\n\
done < tests/cases.txt\nexit $fail\n";

const AGENT: &str = "mkdir -p tests src\ndone=true\ncase \"$PRPD_PHASE\" in\n\
RED) printf 'case1\\ncase2\\ncase3\\n' > tests/cases.txt ;;\n\
GREEN) for i in 1 2 3; do if [ ! -f src/case$i ]; then echo $i > src/case$i; break; fi; done\n\
  [ $i -ge 3 ] || done=false ;;\n\
DOCUMENT) echo 'Each case has its file under src/.' >> README.md; echo '- cases' >> CHANGELOG.md ;;\n\
esac\nif [ $done = true ]; then status=COMPLETE; exit_signal=true; else status=IN_PROGRESS; exit_signal=false; fi\n\
printf -- '---PRP_PHASE_STATUS---\\nPHASE: %s\\nSTATUS: %s\\nITERATION: %s\\n' \"$PRPD_PHASE\" $status \"$PRPD_ITERATION\"\n\
if [ \"$PRPD_PHASE\" = QA ]; then echo 'VERDICT: APPROVE'; fi\n\
printf 'EXIT_SIGNAL: %s\\nRECOMMENDATION: continue\\n---END_PRP_PHASE_STATUS---\\n' $exit_signal\n";

const PRP: &str = "# Cases\n\n## Goal\n\nAdd one file under `src/` per case of `tests/cases.txt`.\n\n\
## Success Criteria\n\n- [ ] every case passes\n\n\
## Acceptance Criteria\n\n- AC-1: each case has its file under `src/`.\n";

/// The `name=number` figures of the own-time line (the parts' too: `parts_ms=snapshot=1.2,…`).
fn figure<T: std::str::FromStr>(line: &str, name: &str) -> T {
    line.split(|c: char| c.is_whitespace() || c == ',')
        .map(|field| field.strip_prefix("parts_ms=").unwrap_or(field))
        .find_map(|field| field.strip_prefix(&format!("{name}=")))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in: {line}"))
}

#[test]
fn a_session_reports_prpd_s_own_time_apart_from_its_agents_and_commands() {
    let outside = tempfile::tempdir().expect("tempdir");
    let agent = outside.path().join("agent.sh");
    std::fs::write(&agent, AGENT).expect("write the agent");
    let remote = outside.path().join("remote.git");
    let repo = TestRepo::new();
    repo.file("README.md", "# cases\n")
        .file("CHANGELOG.md", "# Changelog\n")
        .file("run-tests.sh", RUN_TESTS)
        .file("PRPs/cases.md", PRP)
        .file(
            "prpd.toml",
            &format!(
                "[commands]\ntest = \"sh run-tests.sh\"\n\n\
                 [agents.default]\ncommand = [\"sh\", {:?}]\n\n[run]\nholdout = 0\n",
                agent.display().to_string()
            ),
        )
        .commit("cases");
    repo.git(&["init", "-q", "--bare", &remote.display().to_string()]);
    repo.git(&["remote", "add", "origin", &remote.display().to_string()]);

    let output = repo
        .prpd()
        .args(["run", "PRPs/cases.md"])
        .env("PRPD_LOG", "prpd=warn,prpd_run::driver::own_time=debug")
        .env("NO_COLOR", "1")
        .output()
        .expect("run prpd");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("SHIPPED"),
        "{stdout}\n{stderr}"
    );
    let line = stderr
        .lines()
        .find(|line| line.contains("prpd's own time in this session"))
        .unwrap_or_else(|| panic!("no own-time line:\n{stderr}"));
    // RED, GREEN three times (a case each), REFACTOR, DOCUMENT, QA.
    assert_eq!(figure::<u32>(line, "iterations"), 7, "{line}");
    let wall: f64 = figure(line, "wall_ms");
    let processes: f64 = figure(line, "processes_ms");
    let own: f64 = figure(line, "own_ms");
    assert!(
        processes > 0.0,
        "the agents and test runs took time: {line}"
    );
    assert!(
        (wall - processes - own).abs() < 0.5,
        "prpd's own time is the rest: {line}"
    );
    let parts: f64 = [
        "snapshot", "freeze", "record", "status", "memory", "sweep", "prompt",
    ]
    .iter()
    .map(|part| figure::<f64>(line, part))
    .sum();
    assert!(
        figure::<f64>(line, "snapshot") > 0.0 && figure::<f64>(line, "record") > 0.0,
        "{line}"
    );
    assert!(parts <= own + 0.5, "the parts are prpd's own time: {line}");
}
