//! The follower on small repositories written to temporary folders: each chain a trap or an
//! honest control, cycles, caps and calls prpd cannot read.

use std::path::Path;

use super::{Follower, MAX_CALLS, MAX_DEPTH};
use crate::command::CommandKind;
use crate::discover::{Discovered, Origin, detect, judge_now};
use crate::safety::Unsafe;
use crate::tools_mapping::ToolsMapping;

/// A temporary repository holding `files`.
fn repository(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write a fixture file");
    }
    dir
}

/// What following `command` (whose source read `judged`) from the root finds.
fn follow(files: &[(&str, &str)], command: &str, judged: &str) -> Result<String, String> {
    let dir = repository(files);
    Follower::new(dir.path())
        .follow(Path::new("."), command, judged, Origin::Declared)
        .map_err(|Unsafe(reason)| reason)
}

#[test]
fn a_chain_across_runners_is_judged_to_its_end() {
    let files = [
        (
            "Makefile",
            "test:\n\tnpm run check\nfmt:\n\tcd web && yarn fmt\n",
        ),
        (
            "package.json",
            r#"{"scripts": {"check": "make fmt && jest", "honest": "jest"}}"#,
        ),
        (
            "web/package.json",
            r#"{"scripts": {"fmt": "prettier --write ."}}"#,
        ),
    ];
    assert_eq!(
        follow(&files, "make test", "npm run check"),
        Err("runs `npm run check` (package.json scripts.check) → `make fmt` (Makefile target fmt) → `cd web && yarn fmt` (web/package.json scripts.fmt), which rewrites files (`--write`)".to_owned())
    );
    assert_eq!(
        follow(&files, "make honest", "npm run honest"),
        Ok("jest\n".to_owned())
    );
}

#[test]
fn npm_test_runs_its_lifecycle_scripts_and_the_arguments_passed_on() {
    let trap = [(
        "package.json",
        r#"{"scripts": {"test": "jest", "pretest": "prettier --write ."}}"#,
    )];
    assert_eq!(
        follow(&trap, "make test", "npm test"),
        Err(
            "runs `npm test` (package.json scripts.test), which rewrites files (`--write`)"
                .to_owned()
        )
    );
    let honest = [(
        "package.json",
        r#"{"scripts": {"test": "jest", "pretest": "tsc --noEmit"}}"#,
    )];
    assert_eq!(
        follow(&honest, "make test", "npm test"),
        Ok("tsc --noEmit\njest\n".to_owned())
    );
    assert_eq!(
        follow(&honest, "make test", "npm test -- -u"),
        Err(
            "runs `npm test -- -u` (package.json scripts.test), which rewrites files (`jest -u`)"
                .to_owned()
        )
    );
}

#[test]
fn a_call_prpd_cannot_read_is_refused_unless_it_is_the_first_of_a_guess() {
    let files = [
        ("package.json", r#"{"scripts": {"lint": "npm run fix"}}"#),
        ("Makefile", "all:\n\t$(CC) -o calc calc.c\n"),
        ("calc.c", "int main(void) { return 0; }\n"),
    ];
    let cases = [
        (
            "npm run fix",
            "runs `npm run fix`, which prpd cannot read: package.json has no script `fix`",
        ),
        (
            "make lint",
            "runs `make lint`, which prpd cannot read: Makefile has no target `lint`",
        ),
        (
            "make -C docs html",
            "runs `make -C docs html`, which prpd cannot read: the folder docs/ is not there",
        ),
        (
            "just fmt",
            "runs `just fmt`, which prpd cannot read: there is no justfile in the repository root or above it",
        ),
        (
            "cd $SUB && make",
            "runs `make`, which prpd cannot read: the folder `$SUB` is not a path inside the repository that prpd can follow",
        ),
        (
            "pnpm -r test",
            "runs `pnpm -r test`, which prpd cannot read: `pnpm -r` runs the scripts of workspace packages, which prpd does not read",
        ),
    ];
    for (judged, reason) in cases {
        assert_eq!(
            follow(&files, "make x", judged),
            Err(reason.to_owned()),
            "{judged}"
        );
    }
    for honest in [
        "make calc",
        "make calc.o",
        "npm run fix --if-present",
        "yarn eslint .",
        "bun test",
        "echo make lint",
    ] {
        assert!(follow(&files, "make x", honest).is_ok(), "{honest}");
    }
    let dir = repository(&files);
    let mut follower = Follower::new(dir.path());
    assert_eq!(
        follower.follow(Path::new("."), "npm test", "npm test", Origin::Fallback),
        Ok(String::new())
    );
    assert!(
        follower
            .follow(Path::new("."), "npm test", "npm test", Origin::Declared)
            .is_err()
    );
    assert_eq!(
        follower.follow(Path::new("."), "npm run lint", "npm run lint", Origin::Fallback),
        Err(Unsafe("runs `npm run lint` (package.json scripts.lint) → `npm run fix`, which prpd cannot read: package.json has no script `fix`".to_owned()))
    );
}

#[test]
fn a_call_that_comes_back_to_itself_is_refused_as_a_cycle() {
    let files = [
        ("Makefile", "test:\n\tnpm test\nlint:\n\t$(MAKE) lint\n"),
        (
            "package.json",
            r#"{"scripts": {"test": "make test", "a": "npm run b", "b": "npm run a"}}"#,
        ),
    ];
    assert_eq!(
        follow(&files, "make test", "npm test"),
        Err("could not be judged: `make test` calls itself (`make test` → `npm test` → `make test`)".to_owned())
    );
    assert_eq!(
        follow(&files, "make lint", "make lint"),
        Err("could not be judged: `make lint` calls itself (`make lint` → `make lint`)".to_owned())
    );
    assert_eq!(
        follow(&files, "npm run x", "npm run a"),
        Err("could not be judged: `npm run a` calls itself (`npm run a` → `npm run b` → `npm run a`)".to_owned())
    );
}

#[test]
fn deep_and_wide_chains_stop_at_the_caps_quickly() {
    let deep: String = (0..=MAX_DEPTH)
        .map(|level| format!("\"s{level}\": \"npm run s{}\"", level + 1))
        .collect::<Vec<_>>()
        .join(", ");
    let deep = format!(
        "{{\"scripts\": {{{deep}, \"s{}\": \"jest\"}}}}",
        MAX_DEPTH + 1
    );
    let reason = follow(&[("package.json", &deep)], "make x", "npm run s0").expect_err("too deep");
    assert!(
        reason.starts_with(&format!("could not be judged: its task-runner calls go more than {MAX_DEPTH} deep (`npm run s0` → … → `npm run s")),
        "{reason}"
    );
    let shallow = follow(
        &[("package.json", &deep)],
        "make x",
        &format!("npm run s{}", 2),
    );
    assert!(shallow.is_ok(), "{shallow:?}");

    let wide: String = (0..=MAX_CALLS)
        .map(|index| format!("\"w{index}\": \"jest {index}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let calls: Vec<String> = (0..=MAX_CALLS)
        .map(|index| format!("npm run w{index}"))
        .collect();
    let started = std::time::Instant::now();
    let reason = follow(
        &[("package.json", &format!("{{\"scripts\": {{{wide}}}}}"))],
        "make x",
        &calls.join(" && "),
    )
    .expect_err("too many calls");
    assert_eq!(
        reason,
        format!("could not be judged: it reaches more than {MAX_CALLS} task-runner calls")
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn each_folder_judges_under_its_own_tools_and_files_are_read_once() {
    let files = [
        (
            "Makefile",
            "lint:\n\t$(MAKE) -C api lint\n\t$(MAKE) -C api lint\n",
        ),
        ("api/Makefile", "lint:\n\truff check .\n"),
        ("api/ruff.toml", "fix = true\n"),
    ];
    assert_eq!(
        follow(&files, "make x", "make -C api lint"),
        Err("runs `make -C api lint` (api/Makefile target lint), which rewrites files (`ruff check` with `fix = true` in api/ruff.toml)".to_owned())
    );
    let dir = repository(&[
        ("Makefile", "test:\n\tpytest\n"),
        ("package.json", r#"{"scripts": {"test": "make test"}}"#),
    ]);
    let mut follower = Follower::new(dir.path());
    assert!(
        follower
            .follow(Path::new("."), "npm test", "npm test", Origin::Declared)
            .is_ok()
    );
    std::fs::write(dir.path().join("Makefile"), "test:\n\tblack .\n").expect("rewrite");
    assert!(
        follower
            .follow(Path::new("."), "npm test", "npm test", Origin::Declared)
            .is_ok(),
        "one follower reads each file once: discovery sees one tree"
    );
    assert!(
        Follower::new(dir.path())
            .follow(Path::new("."), "npm test", "npm test", Origin::Declared)
            .is_err()
    );
}

#[test]
fn a_command_is_judged_again_down_its_chain_right_before_it_runs() {
    let dir = repository(&[
        ("Makefile", "test:\n\tcd web && npm test\n"),
        (
            "web/package.json",
            r#"{"scripts": {"test": "node --test"}}"#,
        ),
        ("web/Makefile", "lint:\n\teslint .\n"),
    ]);
    let repo = dir.path();
    let detection = detect(repo, &ToolsMapping::builtin()).expect("detects");
    let test = detection.commands[&CommandKind::Test]
        .clone()
        .expect("make test");
    let lint = Discovered {
        command: "make -C web lint".to_owned(),
        source: ".github/workflows/ci.yml step \"Lint\"".to_owned(),
        fallback: false,
        configured: false,
    };
    assert_eq!(test.command, "make test");
    assert_eq!(judge_now(repo, &test), Ok(()));
    assert_eq!(judge_now(repo, &lint), Ok(()));

    std::fs::write(
        repo.join("web/package.json"),
        r#"{"scripts": {"test": "node --test", "posttest": "prettier --write ."}}"#,
    )
    .expect("an agent rewrites the script behind the recipe");
    std::fs::write(repo.join("web/Makefile"), "lint:\n\teslint --fix .\n")
        .expect("and the sub-make");
    assert_eq!(
        judge_now(repo, &test),
        Err(Unsafe("runs `cd web && npm test` (web/package.json scripts.test), which rewrites files (`--write`)".to_owned()))
    );
    assert_eq!(
        judge_now(repo, &lint),
        Err(Unsafe(
            "runs `make -C web lint` (web/Makefile target lint), which rewrites files (`--fix`)"
                .to_owned()
        ))
    );
}
