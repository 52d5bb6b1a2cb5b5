//! The frozen measurement: what decides a verdict, which no agent may change once it is fixed
//! (DESIGN §3, "The frozen measurement").
//!
//! Two families freeze at two moments. prpd's own inputs (`prpd.toml`, `qa-checklist.yml`,
//! `qa-tools-mapping.yml`, everything under `.prpd/`) freeze when the run starts: an agent never
//! configures the loop that judges it. The test harness freezes at the end of RED: every file
//! under the test paths (RED's tests and those that were there before), the files the test
//! command and the PRP's `[VERIFY]` commands run through (a Makefile or justfile recipe, a
//! script it names, runner configuration, `conftest.py`, `sitecustomize.py`, `*.pth`; a check
//! the PRP runs is judged by its script, which no agent may rewrite to pass), and the test
//! sections of files that also hold
//! other things (`package.json` scripts and runner keys, `pyproject.toml` `[tool.pytest]`,
//! `setup.cfg` `[tool:pytest]`), so that GREEN may still add a dependency there.
//!
//! Everything here is pure: files come in as a snapshot's blob ids, and a file's text through a
//! reader the caller gives. A change is reported as a [`Violation`] naming the file; the driver
//! restores it from the last accepted snapshot and fails the iteration's gate with it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use prpd_base::phase::Phase;
mod command;

use command::command_files;

use crate::gate::GateResult;
use crate::snapshot::Snapshot;
use prpd_qa::method;

/// What a freeze covers, by family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// prpd's configuration and prompt overrides, frozen from the start of the run.
    PrpdInputs,
    /// The test files and the files the test command runs through, frozen from the end of RED.
    Harness,
}

impl Family {
    fn describe(self) -> &'static str {
        match self {
            Family::PrpdInputs => "one of prpd's own inputs, frozen for the whole run",
            Family::Harness => "part of the test harness, frozen since the end of RED",
        }
    }
}

/// One frozen file: its whole content, or one part of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Frozen {
    /// The file's blob id.
    Whole { blob: String },
    /// A part of a file that holds other things too, as canonical text (`None`: the part is
    /// absent, and must stay so).
    Part { part: Part, text: Option<String> },
}

/// The parts of shared files that decide how tests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// `package.json`: `scripts` and the runners' own keys (`jest`, `mocha`, `ava`, `c8`, `nyc`).
    PackageJsonTesting,
    /// `pyproject.toml`: `[tool.pytest]` and `[tool.pytest.ini_options]`.
    PyprojectPytest,
    /// `setup.cfg`: the `[tool:pytest]` section.
    SetupCfgPytest,
}

impl Part {
    fn of(path: &Path) -> Option<Part> {
        if is_generated(path) {
            return None;
        }
        match path.file_name()?.to_str()? {
            "package.json" => Some(Part::PackageJsonTesting),
            "pyproject.toml" => Some(Part::PyprojectPytest),
            "setup.cfg" => Some(Part::SetupCfgPytest),
            _ => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Part::PackageJsonTesting => "its `scripts` or test-runner settings",
            Part::PyprojectPytest => "its `[tool.pytest]` settings",
            Part::SetupCfgPytest => "its `[tool:pytest]` section",
        }
    }

    /// The part of `text` that is frozen, in a canonical form.
    fn extract(self, text: &str) -> Option<String> {
        match self {
            Part::PackageJsonTesting => {
                let value: serde_json::Value = serde_json::from_str(text).ok()?;
                let object = value.as_object()?;
                let kept: serde_json::Map<String, serde_json::Value> =
                    ["scripts", "jest", "mocha", "ava", "c8", "nyc"]
                        .iter()
                        .filter_map(|key| Some(((*key).to_owned(), object.get(*key)?.clone())))
                        .collect();
                (!kept.is_empty()).then(|| serde_json::Value::Object(kept).to_string())
            }
            Part::PyprojectPytest => {
                let value: toml::Table = toml::from_str(text).ok()?;
                let pytest = value.get("tool")?.get("pytest")?;
                Some(pytest.to_string())
            }
            Part::SetupCfgPytest => {
                let mut section = None::<String>;
                let mut inside = false;
                for line in text.lines() {
                    let trimmed = line.trim();
                    if trimmed.starts_with('[') {
                        inside = trimmed == "[tool:pytest]";
                        if inside {
                            section.get_or_insert_with(String::new);
                        }
                        continue;
                    }
                    if inside && let Some(section) = section.as_mut() {
                        section.push_str(trimmed);
                        section.push('\n');
                    }
                }
                section
            }
        }
    }
}

/// Everything frozen so far in a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Freeze {
    /// The families in force: a new file of a frozen family is refused too.
    pub families: BTreeSet<Family>,
    /// The frozen files and parts, with the family that froze them.
    pub entries: BTreeMap<PathBuf, (Family, Frozen)>,
    /// The snapshot each family was last frozen in: what a refused change is restored from.
    pub frozen_at: BTreeMap<Family, Snapshot>,
    /// The repository's `.git/info/exclude` at the run's start (`None`: there was none). It
    /// decides what a snapshot holds, like a `.gitignore`, but lives outside the tree.
    pub git_exclude: Option<String>,
}

/// A change to something frozen, with the sentence that goes into the gate's feedback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The file, relative to the repository.
    pub path: PathBuf,
    /// What happened to it, and why it is not allowed.
    pub message: String,
    /// The snapshot the file was frozen in, to restore it from; `None`: the file is new and is
    /// removed.
    pub restore_from: Option<Snapshot>,
}

/// Whether `path` is one of prpd's own inputs.
pub fn is_prpd_input(path: &Path) -> bool {
    path.starts_with(".prpd")
        || matches!(
            path.to_str(),
            Some("prpd.toml" | "qa-checklist.yml" | "qa-tools-mapping.yml")
        )
}

/// Folders of caches and installed dependencies: their contents are not the harness, even when
/// they look like tests (a `tests/__pycache__/` an agent's own test run left, a dependency's
/// tests under `node_modules/`), so running the tests or installing a package is never refused.
/// Measurement never reads bytecode from the tree, and test runners do not collect these
/// folders. A root `vendor/` (Go, PHP) is exempt the same way; anywhere else it is not, since
/// pytest would collect a `conftest.py` there.
const GENERATED_DIRS: &[&str] = &[
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "node_modules",
];

/// Python start-up hooks: they change every Python process that sees them, wherever they sit.
fn is_startup_hook(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("pth"))
        || path
            .file_name()
            .is_some_and(|name| name == "sitecustomize.py" || name == "usercustomize.py")
}

fn is_generated(path: &Path) -> bool {
    path.starts_with("vendor")
        || path.components().any(|component| {
            GENERATED_DIRS.contains(&component.as_os_str().to_string_lossy().as_ref())
        })
        || path.extension().is_some_and(|extension| {
            extension.eq_ignore_ascii_case("pyc") || extension.eq_ignore_ascii_case("pyo")
        })
}

/// Whether `path` is a test file of the project (not one in a cache or dependency folder).
pub fn is_test_file(path: &Path) -> bool {
    !is_generated(path) && method::is_test_path(path)
}

/// Whether `path` is a test module GREEN may add after a REJECT: a test file that is not
/// runner configuration or a package initialiser (which runs before every test beside it).
fn is_test_module(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    is_test_file(path)
        && !matches!(name, "conftest.py" | "__init__.py" | "setup.py")
        && !is_startup_hook(path)
        && !is_runner_config(name)
}

/// Runner configuration by file name.
fn is_runner_config(name: &str) -> bool {
    let stem_is = |stems: &[&str]| {
        stems
            .iter()
            .any(|stem| name.starts_with(&format!("{stem}.")) || name == *stem)
    };
    matches!(
        name,
        "conftest.py"
            | "pytest.ini"
            | "tox.ini"
            | "noxfile.py"
            | ".rspec"
            | "phpunit.xml"
            | "phpunit.xml.dist"
            | ".gitignore"
    ) || stem_is(&[
        "jest.config",
        "jest.setup",
        "vitest.config",
        "vitest.workspace",
        "vitest.setup",
        ".mocharc",
        "karma.conf",
        "ava.config",
        "babel.config",
        ".babelrc",
    ])
}

/// Whether `path` is a file that shapes how tests run wherever it sits (runner configuration,
/// Python start-up hooks), or a test file.
pub fn is_harness_file(path: &Path) -> bool {
    if is_startup_hook(path) {
        return true;
    }
    if is_generated(path) {
        return false;
    }
    if is_test_file(path) {
        return true;
    }
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(is_runner_config)
}

impl Freeze {
    /// prpd's frozen inputs as one text, a line per file (its path and what froze): what a
    /// cached measurement's settings hold of them (`cache.rs`).
    pub fn prpd_inputs_text(&self) -> String {
        let mut text = String::new();
        for (path, (family, frozen)) in &self.entries {
            if *family == Family::PrpdInputs {
                let _ = writeln!(text, "{}: {frozen:?}", path.display());
            }
        }
        text
    }

    /// Adds prpd's own inputs as they are in `files`, the files of `snapshot` (the run's base).
    pub fn prpd_inputs(&mut self, snapshot: &Snapshot, files: &BTreeMap<PathBuf, String>) {
        self.families.insert(Family::PrpdInputs);
        self.frozen_at.insert(Family::PrpdInputs, snapshot.clone());
        for (path, blob) in files {
            if is_prpd_input(path) {
                self.entries.insert(
                    path.clone(),
                    (Family::PrpdInputs, Frozen::Whole { blob: blob.clone() }),
                );
            }
        }
    }

    /// Takes prpd's own inputs anew from `files`: a human accepted their change.
    pub fn reload_prpd_inputs(&mut self, snapshot: &Snapshot, files: &BTreeMap<PathBuf, String>) {
        self.entries
            .retain(|_, (family, _)| *family != Family::PrpdInputs);
        self.prpd_inputs(snapshot, files);
    }

    /// Adds the test harness as it is in `files`, the files of `snapshot` (the end of RED, and
    /// again the end of GREEN), with the files `commands` (the test command, the PRP's
    /// `[VERIFY]` commands) run through; `read` gives the text of a file of that snapshot.
    pub fn harness(
        &mut self,
        snapshot: &Snapshot,
        files: &BTreeMap<PathBuf, String>,
        commands: &[&str],
        read: impl Fn(&Path) -> Option<String>,
    ) {
        self.families.insert(Family::Harness);
        self.frozen_at.insert(Family::Harness, snapshot.clone());
        let named: BTreeSet<PathBuf> = commands
            .iter()
            .flat_map(|command| command_files(command, files, &read))
            .collect();
        for (path, blob) in files {
            if is_prpd_input(path) {
                continue;
            }
            if let Some(part) = Part::of(path) {
                let text = read(path).and_then(|text| part.extract(&text));
                self.entries
                    .insert(path.clone(), (Family::Harness, Frozen::Part { part, text }));
            } else if is_harness_file(path) || named.contains(path) {
                self.entries.insert(
                    path.clone(),
                    (Family::Harness, Frozen::Whole { blob: blob.clone() }),
                );
            }
        }
    }

    /// What in `files` (a later snapshot) differs from the freeze, by path. With
    /// `allow_new_tests`, new test files are not counted (GREEN after a REJECT).
    pub fn violations(
        &self,
        files: &BTreeMap<PathBuf, String>,
        allow_new_tests: bool,
        read: impl Fn(&Path) -> Option<String>,
    ) -> Vec<Violation> {
        let mut violations = Vec::new();
        for (path, (family, frozen)) in &self.entries {
            let what = match frozen {
                Frozen::Whole { blob } => match files.get(path) {
                    None => Some("deleted".to_owned()),
                    Some(current) if current != blob => Some("changed".to_owned()),
                    Some(_) => None,
                },
                Frozen::Part { part, text } => {
                    let current = files
                        .contains_key(path)
                        .then(|| read(path))
                        .flatten()
                        .and_then(|current| part.extract(&current));
                    (current != *text).then(|| format!("changed {}", part.describe()))
                }
            };
            if let Some(what) = what {
                violations.push(Violation {
                    path: path.clone(),
                    message: format!(
                        "`{}` was {what}: it is {}; prpd restored it",
                        path.display(),
                        family.describe()
                    ),
                    restore_from: self.frozen_at.get(family).cloned(),
                });
            }
        }
        for path in files.keys() {
            if self.entries.contains_key(path) || (allow_new_tests && is_test_module(path)) {
                continue;
            }
            let family = if is_prpd_input(path) {
                Family::PrpdInputs
            } else if is_harness_file(path) {
                Family::Harness
            } else if let Some(part) = Part::of(path) {
                // A new package.json or pyproject.toml is fine while it says nothing about how
                // tests run (a project gaining its first dependency).
                if read(path).and_then(|text| part.extract(&text)).is_none() {
                    continue;
                }
                Family::Harness
            } else {
                continue;
            };
            if self.families.contains(&family) {
                violations.push(Violation {
                    path: path.clone(),
                    message: format!(
                        "`{}` is new: it would be {}; prpd removed it",
                        path.display(),
                        family.describe()
                    ),
                    restore_from: None,
                });
            }
        }
        violations
    }
}

/// The gate of an iteration whose agent changed something frozen. In a working phase the
/// changes fail gate 1, by name. In QA they fail gate 2 instead: the QA agent misbehaved, which
/// is another QA iteration, not a REJECT that would send GREEN's work back.
pub fn refuse(mut gate: GateResult, violations: &[Violation]) -> GateResult {
    if violations.is_empty() {
        return gate;
    }
    let messages: Vec<String> = violations
        .iter()
        .map(|violation| violation.message.clone())
        .collect();
    if gate.phase == Phase::Qa {
        gate.gate2 = Err(format!(
            "the QA agent changed what is frozen: {}",
            messages.join("; ")
        ));
    } else {
        let mut reasons = messages;
        if let Err(unmet) = gate.gate1 {
            reasons.extend(unmet);
        }
        gate.gate1 = Err(reasons);
    }
    gate
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(entries: &[(&str, &str)]) -> BTreeMap<PathBuf, String> {
        entries
            .iter()
            .map(|(path, blob)| (PathBuf::from(path), (*blob).to_owned()))
            .collect()
    }

    fn no_text(_: &Path) -> Option<String> {
        None
    }

    fn snapshot(name: &str) -> Snapshot {
        Snapshot {
            commit: format!("{name}-commit"),
            tree: format!("{name}-tree"),
        }
    }

    #[test]
    fn the_text_of_prpds_inputs_leaves_the_harness_out() {
        let mut freeze = Freeze::default();
        let base = files(&[("prpd.toml", "p1"), ("test/a.test.js", "t1")]);
        freeze.prpd_inputs(&snapshot("base"), &base);
        let before = freeze.prpd_inputs_text();
        assert!(
            before.contains("prpd.toml") && before.contains("p1"),
            "{before}"
        );
        freeze.harness(&snapshot("red"), &base, &["npm test"], no_text);
        assert_eq!(freeze.prpd_inputs_text(), before);
    }

    #[test]
    fn a_frozen_file_changed_deleted_or_a_new_harness_file_is_a_violation() {
        let at_red_end = files(&[
            ("Makefile", "m1"),
            ("run_tests.py", "r1"),
            ("tests/test_calc.py", "t1"),
            ("tests/__init__.py", "i1"),
            ("calc.py", "c1"),
        ]);
        let mut freeze = Freeze::default();
        freeze.harness(&snapshot("red"), &at_red_end, &["make test"], no_text);
        let honest = files(&[
            ("Makefile", "m1"),
            ("run_tests.py", "r1"),
            ("tests/test_calc.py", "t1"),
            ("tests/__init__.py", "i1"),
            ("calc.py", "c2"),
            ("calc_helpers.py", "h"),
        ]);
        assert_eq!(freeze.violations(&honest, false, no_text), Vec::new());

        let cheating = files(&[
            ("Makefile", "m2"),
            ("tests/test_calc.py", "t1"),
            ("tests/__init__.py", "i2"),
            ("tests/test_padding.py", "p"),
            ("sitecustomize.py", "s"),
            ("calc.py", "c1"),
        ]);
        let paths: Vec<String> = freeze
            .violations(&cheating, false, no_text)
            .iter()
            .map(|violation| violation.path.display().to_string())
            .collect();
        assert_eq!(
            paths,
            [
                "Makefile",
                "run_tests.py",
                "tests/__init__.py",
                "sitecustomize.py",
                "tests/test_padding.py"
            ]
        );
    }

    #[test]
    fn prpd_inputs_are_frozen_from_the_start_including_new_ones() {
        let mut freeze = Freeze::default();
        freeze.prpd_inputs(
            &snapshot("base"),
            &files(&[("prpd.toml", "p1"), ("src/a.rs", "a")]),
        );
        let edited = files(&[
            ("prpd.toml", "p2"),
            ("qa-checklist.yml", "q"),
            (".prpd/prompts/qa.md", "x"),
            ("src/a.rs", "b"),
            ("tests/new_test.rs", "t"),
        ]);
        let messages: Vec<String> = freeze
            .violations(&edited, false, no_text)
            .into_iter()
            .map(|violation| violation.message)
            .collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].starts_with("`prpd.toml` was changed: it is one of prpd's own inputs"));
        assert!(
            messages
                .iter()
                .all(|message| !message.contains("tests/new_test.rs"))
        );
    }

    #[test]
    fn package_json_freezes_its_scripts_not_its_dependencies() {
        let before = r#"{"scripts":{"test":"node --test"},"dependencies":{}}"#;
        let more_deps = r#"{"dependencies":{"left-pad":"1"},"scripts":{"test":"node --test"}}"#;
        let new_script = r#"{"scripts":{"test":"echo '3 passed, 0 failed'"}}"#;
        let at = |text: &'static str| move |_: &Path| Some(text.to_owned());
        let repo = files(&[("package.json", "x")]);
        let mut freeze = Freeze::default();
        freeze.harness(&snapshot("red"), &repo, &["npm test"], at(before));
        assert!(freeze.violations(&repo, false, at(more_deps)).is_empty());
        let violations = freeze.violations(&repo, false, at(new_script));
        assert_eq!(violations.len(), 1);
        assert!(
            violations[0]
                .message
                .contains("`scripts` or test-runner settings")
        );
    }

    #[test]
    fn pytest_sections_are_frozen_in_pyproject_and_setup_cfg() {
        assert_eq!(
            Part::PyprojectPytest
                .extract("[project]\nname='x'\n[tool.pytest.ini_options]\naddopts='-q'\n"),
            Part::PyprojectPytest
                .extract("[tool.pytest.ini_options]\naddopts='-q'\n[project]\nname='y'\n")
        );
        assert_eq!(
            Part::SetupCfgPytest.extract("[metadata]\nname=x\n[tool:pytest]\naddopts = -q\n"),
            Some("addopts = -q\n".to_owned())
        );
        assert_eq!(Part::SetupCfgPytest.extract("[metadata]\nname=x\n"), None);
    }

    #[test]
    fn a_refused_change_fails_gate_1_in_a_working_phase_and_gate_2_in_qa() {
        let violation = Violation {
            path: PathBuf::from("Makefile"),
            message: "`Makefile` was changed".to_owned(),
            restore_from: None,
        };
        let passing = |phase| GateResult {
            phase,
            gate1: Ok(()),
            gate2: Ok(()),
        };
        let green = refuse(passing(Phase::Green), std::slice::from_ref(&violation));
        assert_eq!(green.gate1, Err(vec!["`Makefile` was changed".to_owned()]));
        assert!(!green.can_exit());
        let qa = refuse(passing(Phase::Qa), std::slice::from_ref(&violation));
        assert!(qa.gate1.is_ok(), "not a REJECT");
        assert!(qa.gate2.is_err());
        assert_eq!(refuse(passing(Phase::Green), &[]), passing(Phase::Green));
    }

    #[test]
    fn generated_and_vendored_files_are_not_the_harness_but_startup_hooks_are() {
        for path in [
            "tests/__pycache__/test_calc.cpython-311.pyc",
            "vendor/github.com/x/y/y_test.go",
            "node_modules/left-pad/test.js",
            ".pytest_cache/v/cache/lastfailed",
        ] {
            assert!(!is_harness_file(Path::new(path)), "{path}");
        }
        for path in [
            "tests/test_calc.py",
            "conftest.py",
            "vendor/evil.pth",
            "build/sitecustomize.py",
            "jest.config.js",
        ] {
            assert!(is_harness_file(Path::new(path)), "{path}");
        }
    }
}
