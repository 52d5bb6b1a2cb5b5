//! The tests of command discovery (`discover.rs`): detection and the judgement of a
//! found command, over fixture repositories made in temporary folders.

use super::*;

#[test]
fn an_all_target_is_clearly_the_build_only_when_it_only_builds() {
    let cases = [
        ("go build -o bin/app ./cmd/app", true),
        ("cargo build --release\nstrip target/release/app", true),
        ("npm run build", true),
        ("python -m build", true),
        ("go vet ./...\ngo test ./...", false),
        ("golangci-lint run\ngo build ./...", false),
        ("go build ./... && go test ./...", false),
        ("cargo fmt --check\ncargo build", false),
        ("$(CC) -o calc calc.c", false),
        ("", false),
    ];
    for (judged, expected) in cases {
        assert_eq!(clearly_builds(judged), expected, "{judged:?}");
    }
}

#[test]
fn kind_names_match_their_serde_names() {
    for kind in CommandKind::ALL {
        let json = serde_json::to_string(&kind).expect("serialize");
        assert_eq!(json, format!("\"{}\"", kind.name()));
    }
}

fn write(repo: &Path, name: &str, text: &str) {
    let path = repo.join(name);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write a fixture file");
}

#[test]
fn a_found_command_is_judged_again_on_the_files_as_they_are_now() {
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = dir.path();
    write(repo, "pyproject.toml", "[project]\nname = \"x\"\n");
    write(repo, "Makefile", "lint:\n\truff check .\n");
    write(
        repo,
        "web/package.json",
        r#"{"scripts": {"test": "node --test"}}"#,
    );
    let detection = detect(repo, &ToolsMapping::builtin()).expect("detects");
    let lint = detection.commands[&CommandKind::Lint]
        .clone()
        .expect("make lint");
    let node = &detection.subprojects[0].commands[&CommandKind::Test];
    let web_test = node.clone().expect("cd web && npm test");
    let format = detection.commands[&CommandKind::FormatCheck]
        .clone()
        .expect("the python default");
    assert_eq!(
        (lint.command.as_str(), web_test.command.as_str()),
        ("make lint", "cd web && npm test")
    );
    for discovered in [&lint, &web_test, &format] {
        assert_eq!(judge_now(repo, discovered), Ok(()), "{discovered:?}");
    }

    write(
        repo,
        "Makefile",
        "RUN = docker run --rm img\nlint:\n\t$(RUN) ruff check .\n",
    );
    write(
        repo,
        "web/package.json",
        r#"{"scripts": {"test": "node --test && npm publish"}}"#,
    );
    write(repo, "ruff.toml", "fix = true\n");
    let refused = |discovered: &Discovered| {
        judge_now(repo, discovered)
            .expect_err("the files changed")
            .to_string()
    };
    assert_eq!(refused(&lint), "runs containers (`docker`)");
    assert!(
        refused(&web_test).contains("publishes"),
        "{}",
        refused(&web_test)
    );
    assert_eq!(
        judge_now(
            repo,
            &Discovered {
                command: "ruff check .".to_owned(),
                source: "qa-tools-mapping.yml default (python)".to_owned(),
                fallback: true,
                configured: false,
            }
        )
        .expect_err("ruff now fixes")
        .to_string(),
        "rewrites files (`ruff check` with `fix = true` in ruff.toml)"
    );
    write(repo, "Makefile", "lint:\n\truff check --no-fix .\n");
    write(repo, "GNUmakefile", "lint:\n\tgit push\n");
    assert!(refused(&lint).contains("pushes"), "{}", refused(&lint));
    let configured = Discovered {
        configured: true,
        ..lint
    };
    assert_eq!(judge_now(repo, &configured), Ok(()));
}

#[test]
fn missing_repository_is_a_read_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("nope");
    let error = detect(&missing, &ToolsMapping::builtin()).expect_err("no such directory");
    assert_eq!(
        error.to_string(),
        format!("failed to read {}", missing.display())
    );
}

#[test]
fn detection_json_has_every_kind_and_table_says_not_found() {
    let detection = Detection {
        stacks: vec![Stack {
            id: "rust".to_owned(),
            path: PathBuf::from("."),
        }],
        package_manager: Some(PackageManager::Pnpm),
        commands: CommandKind::ALL
            .into_iter()
            .map(|kind| {
                let found = match kind {
                    CommandKind::Test => Some(Discovered {
                        command: "cargo test | tee log".to_owned(),
                        source: "Makefile target test".to_owned(),
                        fallback: false,
                        configured: false,
                    }),
                    CommandKind::Lint => Some(Discovered {
                        command: "cargo clippy".to_owned(),
                        source: "qa-tools-mapping.yml default (rust)".to_owned(),
                        fallback: true,
                        configured: false,
                    }),
                    _ => None,
                };
                (kind, found)
            })
            .collect(),
        subprojects: Vec::new(),
        skipped: Vec::new(),
    };
    let json = serde_json::to_string(&detection).expect("serialize");
    assert_eq!(
        json,
        r#"{"stacks":[{"id":"rust","path":"."}],"package_manager":"pnpm","commands":{"test":{"command":"cargo test | tee log","source":"Makefile target test","fallback":false},"lint":{"command":"cargo clippy","source":"qa-tools-mapping.yml default (rust)","fallback":true},"typecheck":null,"build":null,"format_check":null,"complexity":null,"duplication":null},"subprojects":[]}"#
    );
    let table = detection.render_table();
    assert!(
        table.starts_with("Stacks: rust (.)\nPackage manager: pnpm\n"),
        "{table}"
    );
    assert!(
        table.contains("| Test | `cargo test \\| tee log` | Makefile target test |"),
        "{table}"
    );
    assert!(
        table.contains("| Lint | `cargo clippy` | fallback: qa-tools-mapping.yml default (rust) |"),
        "{table}"
    );
    assert!(table.contains("| Build | Not found | - |"), "{table}");
    assert!(table.contains("so prpd guessed it (lint)"), "{table}");
}
