//! sourcehut builds: the `tasks` of `.build.yml`, or of every file under `.builds/`.
//!
//! A build clones each of its `sources` into a folder named after the repository, so tasks
//! start with `cd <name>`: that line (or `cd <name> && ` in front of a command) is where prpd
//! already is and is dropped. A manifest whose `image` is another operating system
//! (`freebsd/latest`, `openbsd/7.5`) is skipped.

use super::{
    Candidate, DetectError, Directory, command_lines, line_candidates, names_other_system,
    yaml_files,
};

/// The single-manifest file name.
const BUILD_FILE: &str = ".build.yml";

/// The folder of several manifests.
const BUILDS_DIR: &str = ".builds";

pub(super) fn candidates(directory: &Directory<'_>) -> Result<Vec<Candidate>, DetectError> {
    let mut files = vec![BUILD_FILE.to_owned()];
    files.extend(
        yaml_files(directory, BUILDS_DIR)
            .into_iter()
            .map(|name| format!("{BUILDS_DIR}/{name}")),
    );
    let mut candidates = Vec::new();
    for file in files {
        if let Some(text) = directory.read(&file)? {
            candidates.extend(manifest_candidates(&file, &text));
        }
    }
    Ok(candidates)
}

/// The folder a source URL is cloned into: its last path segment, without `.git` or a ref.
fn clone_folder(url: &str) -> Option<&str> {
    let url = url.split('#').next().unwrap_or(url).trim_end_matches('/');
    let name = url.rsplit(['/', ':']).next()?;
    let name = name.strip_suffix(".git").unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

/// `line` without a leading `cd <folder>` into one of the clones; `None` when nothing is left.
fn without_clone_cd<'a>(line: &'a str, folders: &[&str]) -> Option<&'a str> {
    for folder in folders {
        for prefix in [format!("cd {folder}"), format!("cd ~/{folder}")] {
            if let Some(rest) = line.strip_prefix(&prefix) {
                let rest = rest.trim_start();
                if rest.is_empty() {
                    return None;
                }
                if let Some(command) = rest.strip_prefix("&&") {
                    return Some(command.trim_start());
                }
            }
        }
    }
    Some(line)
}

fn manifest_candidates(file: &str, text: &str) -> Vec<Candidate> {
    let document: yaml_serde::Value = match yaml_serde::from_str(text) {
        Ok(document) => document,
        Err(error) => {
            tracing::warn!(file, %error, "skipping a CI file prpd cannot parse");
            return Vec::new();
        }
    };
    if document
        .get("image")
        .and_then(yaml_serde::Value::as_str)
        .is_some_and(names_other_system)
    {
        return Vec::new();
    }
    let folders: Vec<&str> = document
        .get("sources")
        .and_then(yaml_serde::Value::as_sequence)
        .map(|sources| {
            sources
                .iter()
                .filter_map(yaml_serde::Value::as_str)
                .filter_map(clone_folder)
                .collect()
        })
        .unwrap_or_default();
    let Some(tasks) = document
        .get("tasks")
        .and_then(yaml_serde::Value::as_sequence)
    else {
        return Vec::new();
    };
    let mut candidates = Vec::new();
    for task in tasks {
        let Some(mapping) = task.as_mapping() else {
            continue;
        };
        for (name, script) in mapping {
            let (Some(name), Some(script)) = (name.as_str(), script.as_str()) else {
                continue;
            };
            let source = format!("{file} task {name}");
            for line in command_lines(script) {
                if let Some(command) = without_clone_cd(&line, &folders) {
                    candidates.extend(line_candidates(command, &source, None));
                }
            }
        }
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::CommandKind;

    #[test]
    fn tasks_give_their_lines_without_the_clone_cd() {
        let text = "image: alpine/edge\npackages:\n  - go\nsources:\n  - https://git.sr.ht/~someone/tool\ntasks:\n  - build: |\n      cd tool\n      go build ./...\n  - test: |\n      cd tool && go test -race ./...\n";
        let summary: Vec<(CommandKind, String, String)> = manifest_candidates(".build.yml", text)
            .into_iter()
            .map(|candidate| (candidate.kind, candidate.command, candidate.source))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    CommandKind::Build,
                    "go build ./...".to_owned(),
                    ".build.yml task build".to_owned()
                ),
                (
                    CommandKind::Test,
                    "go test -race ./...".to_owned(),
                    ".build.yml task test".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn a_manifest_for_another_system_gives_nothing() {
        let text = "image: freebsd/latest\nsources: [https://git.sr.ht/~a/b]\ntasks:\n  - test: cd b && make test\n";
        assert!(manifest_candidates(".builds/freebsd.yml", text).is_empty());
    }

    #[test]
    fn clone_folders_come_from_source_urls() {
        let cases = [
            ("https://git.sr.ht/~a/tool", Some("tool")),
            ("https://github.com/a/b.git#main", Some("b")),
            ("git@git.sr.ht:~a/thing", Some("thing")),
        ];
        for (url, expected) in cases {
            assert_eq!(clone_folder(url), expected, "{url}");
        }
    }
}
