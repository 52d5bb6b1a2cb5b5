//! Tests that do not even build without the feature: RED's tests call what the feature adds,
//! and RED's stubs are not in the base, so a compiled project's test run without the feature
//! stops at the compiler and names no test. That is the tests failing there — but only when it
//! is the *tests* that do not build.
//!
//! The shortcuts this closes. A library that does not build for a reason of its own (cargo's
//! `(lib)`, a binary, a build script, an example, a dependency) fails every test without the
//! feature, whatever the tests do: it proves nothing, even when cargo also reports the library's
//! unit tests (`(lib test)`) failing with it. And an integration test target that does not
//! build is RED's evidence only when it is not a test file RED left alone: an old test that
//! happened not to build at the base, mended by GREEN, cannot stand in for RED's tests.

use std::path::Path;

use super::TestFiles;

/// What cargo's `error: could not compile `crate` (…)` line says about the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CargoTarget<'a> {
    /// An integration test, `(test "clamp")`: `tests/clamp.rs` or `tests/clamp/main.rs`.
    Integration(&'a str),
    /// Other code built as tests: `(lib test)`, `(bin "app" test)`, `(bench "b" test)`.
    OtherTests,
    /// Code that is no test: `(lib)`, `(bin "app")`, `(build script)`, `(example "demo")`,
    /// or a line that names no target (an older cargo, or a dependency).
    NotTests,
}

/// The lines with which build tools say that the tests did not compile, joined with `; `:
/// cargo's for its test targets, Maven's and Gradle's. `None` when no test target failed to
/// build, or when cargo says code that is no test did not build either (see the module
/// comment). go's `[build failed]` is a failed package in the figures already.
pub fn build_failure(log: &str) -> Option<String> {
    let mut lines: Vec<&str> = Vec::new();
    for line in log.lines().map(str::trim) {
        let tests = match cargo_target(line) {
            Some(CargoTarget::NotTests) => return None,
            Some(CargoTarget::Integration(_) | CargoTarget::OtherTests) => true,
            None => {
                line.contains("[ERROR] COMPILATION ERROR")
                    || line.contains("Compilation failed; see the compiler error output")
            }
        };
        if tests && !lines.contains(&line) {
            lines.push(line);
        }
    }
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// When the line is cargo's "could not compile": which target it names.
fn cargo_target(line: &str) -> Option<CargoTarget<'_>> {
    let rest = line.strip_prefix("error: could not compile `")?;
    let (_, after_crate) = rest.split_once('`')?;
    let Some(target) = after_crate
        .trim_start()
        .strip_prefix('(')
        .and_then(|inside| inside.split_once(')'))
        .map(|(target, _)| target.trim())
    else {
        return Some(CargoTarget::NotTests);
    };
    if let Some(name) = target
        .strip_prefix("test \"")
        .and_then(|name| name.strip_suffix('"'))
    {
        return Some(CargoTarget::Integration(name));
    }
    Some(if target.ends_with(" test") {
        CargoTarget::OtherTests
    } else {
        CargoTarget::NotTests
    })
}

/// Why the tests that did not build (`line`, from [`build_failure`]) are not RED's, when they
/// are not: every one is an integration test target whose file is one of the harness's test
/// files RED did not add or change. A target whose file prpd cannot place (a `[[test]]` with
/// its own `path`) is not held against the run.
pub fn not_reds(line: &str, files: &TestFiles) -> Option<String> {
    let mut others = Vec::new();
    for part in line.split("; ") {
        let Some(CargoTarget::Integration(name)) = cargo_target(part) else {
            return None;
        };
        if files.red.iter().any(|path| is_target_file(path, name)) {
            return None;
        }
        let file = files.other.iter().find(|path| is_target_file(path, name))?;
        others.push(format!("`{name}` ({})", file.display()));
    }
    (!others.is_empty()).then(|| {
        format!(
            "without the feature the test target(s) {} do not build, but none is a file RED added or changed: a test elsewhere cannot stand in for RED's",
            others.join(", ")
        )
    })
}

/// Whether `path` is the source of cargo's integration test target `name`: `tests/<name>.rs`,
/// or a file of `tests/<name>/` (its `main.rs` and modules).
fn is_target_file(path: &Path, name: &str) -> bool {
    let mut components = path.components().map(std::path::Component::as_os_str);
    if components.next().is_none_or(|first| first != "tests") {
        return false;
    }
    match (components.next(), components.next()) {
        (Some(file), None) => file.to_str() == Some(&format!("{name}.rs")),
        (Some(folder), Some(_)) => folder.to_str() == Some(name),
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// Real cargo output (1.95): which runs without the feature show tests that do not build.
    #[test]
    fn only_test_targets_that_do_not_build_are_the_tests_failing() {
        let integration = "   Compiling numkit v0.1.0 (/tmp/numkit)\n\
            error[E0432]: unresolved import `numkit::clamp`\n\
            error: could not compile `numkit` (test \"clamp\") due to 1 previous error\n\
            warning: build failed, waiting for other jobs to finish...\n";
        let cases: &[(&str, &str, Option<&str>)] = &[
            (
                "an integration test target",
                integration,
                Some("error: could not compile `numkit` (test \"clamp\") due to 1 previous error"),
            ),
            (
                "the library's unit tests",
                "error: could not compile `calc` (lib test) due to 1 previous error\n",
                Some("error: could not compile `calc` (lib test) due to 1 previous error"),
            ),
            (
                "a binary's unit tests",
                "error: could not compile `app` (bin \"app\" test) due to 2 previous errors\n",
                Some("error: could not compile `app` (bin \"app\" test) due to 2 previous errors"),
            ),
            (
                "a library that does not build, whose unit tests then do not either",
                "error: could not compile `numkit` (lib) due to 1 previous error\n\
                 warning: build failed, waiting for other jobs to finish...\n\
                 error: could not compile `numkit` (lib test) due to 1 previous error\n",
                None,
            ),
            (
                "a library that does not build",
                "error: could not compile `numkit` (lib) due to 1 previous error\n",
                None,
            ),
            (
                "an example",
                "error: could not compile `numkit` (example \"demo\") due to 1 previous error\n",
                None,
            ),
            (
                "a dependency's build script",
                "error: could not compile `openssl-sys` (build script)\n",
                None,
            ),
            (
                "a line that names no target",
                "error: could not compile `numkit` due to 2 previous errors\n",
                None,
            ),
            (
                "Maven",
                "[ERROR] COMPILATION ERROR : \n",
                Some("[ERROR] COMPILATION ERROR :"),
            ),
            (
                "no build failure",
                "Ran 3 tests\nFAILED (failures=1)\n",
                None,
            ),
        ];
        for (name, log, expected) in cases {
            assert_eq!(build_failure(log).as_deref(), *expected, "{name}");
        }
        assert_eq!(
            build_failure(
                "error: could not compile `numkit` (test \"clamp\") due to 1 previous error\n\
                 error: could not compile `numkit` (test \"bounds\") due to 1 previous error\n"
            )
            .as_deref(),
            Some(
                "error: could not compile `numkit` (test \"clamp\") due to 1 previous error; \
                 error: could not compile `numkit` (test \"bounds\") due to 1 previous error"
            ),
            "every target that did not build is kept"
        );
    }

    #[test]
    fn an_integration_target_red_left_alone_cannot_stand_in_for_reds() {
        let files = TestFiles {
            red: [PathBuf::from("tests/clamp.rs")].into_iter().collect(),
            other: [
                PathBuf::from("tests/legacy.rs"),
                PathBuf::from("tests/api/main.rs"),
            ]
            .into_iter()
            .collect(),
        };
        let line = |target: &str| {
            format!("error: could not compile `numkit` (test \"{target}\") due to 1 previous error")
        };
        assert_eq!(not_reds(&line("clamp"), &files), None, "RED's own file");
        assert_eq!(
            not_reds(&line("custom"), &files),
            None,
            "a target prpd cannot place"
        );
        assert_eq!(
            not_reds(&line("legacy"), &files).as_deref(),
            Some(
                "without the feature the test target(s) `legacy` (tests/legacy.rs) do not build, but none is a file RED added or changed: a test elsewhere cannot stand in for RED's"
            )
        );
        assert!(
            not_reds(&line("api"), &files).is_some_and(|why| why.contains("tests/api/main.rs"))
        );
        assert_eq!(
            not_reds(&format!("{}; {}", line("legacy"), line("clamp")), &files),
            None,
            "RED's target is among them"
        );
        assert_eq!(
            not_reds(
                "error: could not compile `numkit` (lib test) due to 1 previous error",
                &files
            ),
            None,
            "unit tests say no file"
        );
    }
}
