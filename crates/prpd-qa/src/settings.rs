//! The repository's own word on its QA gate, laid over what prpd finds by itself. A project
//! knows its test command and which checks apply to it better than any heuristic, so what it
//! states wins, in this order (highest first):
//!
//! 1. `prpd.toml`: `[commands]` (a command of any kind) and `[checks.<ID>]` (one check);
//! 2. the repository's `qa-checklist.yml` and `qa-tools-mapping.yml` (the commands its file
//!    names for a detected stack);
//! 3. discovery (`discover.rs`): package.json scripts, Makefile and justfile targets, CI,
//!    Python configuration;
//! 4. the built-in checklist and the built-in mapping's defaults.
//!
//! Every caller that needs the checklist or the commands (`prpd qa`, `prpd detect`, a run)
//! goes through here, so the four never disagree about what QA runs.
//!
//! What the user writes in prpd's inputs runs as written: a command of `[commands]`, of
//! `[checks.<ID>]` or of the repository's checklist and tools mapping is the user's own, and a
//! run freezes those files, so no agent writes them. [`crate::safety::is_safe`] judges
//! what prpd *finds* in files an agent can write (discovery, and again right before a found
//! command runs: [`discover::judge_now`]); it is a heuristic made for guessing, which also
//! refuses harmless lines and the container a project's tests may need.

use std::path::Path;

use crate::checklist::Checklist;
use crate::command::CommandKind;
use crate::config::GateSettings;
use crate::discover::{self, DetectError, Detection, Discovered, in_directory};
use crate::tools_mapping::{FILE_NAME as MAPPING_FILE_NAME, ToolsMapping};
use prpd_base::config_file::ConfigError;

/// The checklist QA runs in `repo`: the built-in one, the repository's `qa-checklist.yml` laid
/// over it, and `prpd.toml`'s `[checks.<ID>]` over both.
pub fn checklist(repo: &Path, gate: &GateSettings) -> Result<Checklist, ConfigError> {
    let mut checklist = Checklist::load(repo)?;
    checklist.adjust(&gate.checks)?;
    Ok(checklist)
}

/// The commands QA runs in `repo`: discovery's, then the commands the repository's
/// `qa-tools-mapping.yml` names for a detected stack, then `prpd.toml`'s `[commands]`; the
/// last two are marked [`Discovered::configured`].
pub fn detect(
    repo: &Path,
    mapping: &ToolsMapping,
    gate: &GateSettings,
) -> Result<Detection, DetectError> {
    let mut detection = discover::detect(repo, mapping)?;
    for kind in CommandKind::ALL {
        let declared = detection.stacks.iter().find_map(|stack| {
            let command = mapping.stack(&stack.id)?.declared(kind)?;
            Some(Discovered {
                command: in_directory(&stack.path, command),
                source: format!("{MAPPING_FILE_NAME} stacks.{}.{}", stack.id, kind.name()),
                fallback: false,
                configured: true,
            })
        });
        if let Some(declared) = declared {
            detection.commands.insert(kind, Some(declared));
        }
    }
    for setting in &gate.commands {
        let Some(kind) = CommandKind::ALL
            .into_iter()
            .find(|kind| kind.name() == setting.kind)
        else {
            return Err(DetectError::Malformed(setting.command.place.error(
                format!(
                    "`commands.{}` is not a kind of command prpd knows",
                    setting.kind
                ),
            )));
        };
        let command = &setting.command.value;
        let file = setting.command.place.path.file_name().map_or_else(
            || setting.command.place.path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
        detection.commands.insert(
            kind,
            Some(Discovered {
                command: command.clone(),
                source: format!("{file} [commands] {}", setting.kind),
                fallback: false,
                configured: true,
            }),
        );
    }
    Ok(detection)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temporary directory");
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("test fixture");
            std::fs::write(path, text).expect("test fixture");
        }
        dir
    }

    fn commands(repo: &Path, config: &str) -> Result<Detection, String> {
        let config = crate::config::QaSettings::parse(&repo.join("prpd.toml"), config)
            .expect("valid prpd.toml");
        let mapping = ToolsMapping::load(repo).expect("valid mapping");
        detect(repo, &mapping, &config.gate).map_err(|error| match error {
            DetectError::Malformed(error) => error
                .to_string()
                .replace(&*repo.display().to_string(), "[REPO]"),
            DetectError::Read { .. } | DetectError::NotAFolder { .. } => error.to_string(),
        })
    }

    fn found(detection: &Detection, kind: CommandKind) -> (String, String) {
        let discovered = detection.commands[&kind].clone().expect("a command");
        (discovered.command, discovered.source)
    }

    #[test]
    fn the_repository_mapping_wins_over_discovery_and_prpd_toml_over_both() {
        let repo = repo_with(&[
            (
                "package.json",
                r#"{"scripts": {"test": "node --test", "lint": "eslint ."}}"#,
            ),
            ("web/pyproject.toml", "[project]\nname = \"web\"\n"),
            (
                "qa-tools-mapping.yml",
                "qa_tools:\n  stacks:\n    node_typescript:\n      test: node --test test/\n    python:\n      typecheck: mypy src\n",
            ),
        ]);
        let detection = commands(repo.path(), "").expect("detects");
        assert_eq!(
            found(&detection, CommandKind::Test),
            (
                "node --test test/".to_owned(),
                "qa-tools-mapping.yml stacks.node_typescript.test".to_owned()
            )
        );
        assert_eq!(found(&detection, CommandKind::Lint).0, "npm run lint");
        let lint = detection.commands[&CommandKind::Lint]
            .as_ref()
            .expect("lint");
        assert!(!lint.fallback);
        let format = detection.commands[&CommandKind::FormatCheck]
            .as_ref()
            .expect("a default format check");
        assert!(format.fallback, "{format:?}");
        assert_eq!(
            found(&detection, CommandKind::Typecheck),
            (
                "cd web && mypy src".to_owned(),
                "qa-tools-mapping.yml stacks.python.typecheck".to_owned()
            )
        );
        let detection =
            commands(repo.path(), "[commands]\ntest = \"make check\"\n").expect("detects");
        assert_eq!(
            found(&detection, CommandKind::Test),
            (
                "make check".to_owned(),
                "prpd.toml [commands] test".to_owned()
            )
        );
    }

    #[test]
    fn a_command_the_user_writes_runs_as_written_and_is_never_judged_again() {
        let repo = repo_with(&[
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
            ("Makefile", "lint:\n\tcargo clippy --fix\n"),
        ]);
        let detection = commands(
            repo.path(),
            "[qa]\njobs = 1\n\n[commands]\nlint = \"make lint\"\ntest = \"docker compose run --rm app cargo test\"\n",
        )
        .expect("the user's commands are the user's");
        for kind in [CommandKind::Lint, CommandKind::Test] {
            let discovered = detection.commands[&kind].as_ref().expect("configured");
            assert!(discovered.configured, "{discovered:?}");
            assert_eq!(discover::judge_now(repo.path(), discovered), Ok(()));
        }
    }
}
