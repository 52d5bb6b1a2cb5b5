//! A plan written to disk: `<plan dir>/test-plan.json` (the normalised plan) and one Markdown spec
//! per case under `<plan dir>/specs/`, each file atomically (`prpd-base/src/files.rs`). It stands
//! apart because it is the one part of test plans that touches the file system.
//!
//! The plan directory is emptied first: the specs of an earlier plan would otherwise lie
//! beside the new ones as if they were still planned, and whatever someone placed there (a
//! symbolic link out of the run directory) is removed rather than followed. Each spec's path
//! is checked again before it is written, whatever `normalise.rs` said: a plain relative path
//! whose folders are real directories under `specs/`.

use std::io;
use std::path::{Component, Path, PathBuf};

use prpd_base::files;

use super::model::TestPlan;
use super::render::markdown;

/// The plan directory's name in a run directory (`runs/<id>/plan/`), as the seed lays it out.
pub const PLAN_DIR: &str = "plan";

/// The normalised plan, in the plan directory.
pub const PLAN_FILE: &str = "test-plan.json";

/// The folder of the specs, in the plan directory.
pub const SPECS_DIR: &str = "specs";

/// prpd could not write a plan's files.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("failed to write {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to write the spec `{path}`: it is not a plain relative path under specs/")]
    UnsafePath { path: String },
}

/// Where a plan was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// `test-plan.json`.
    pub plan_file: PathBuf,
    /// The specs, in the plan's order.
    pub specs: Vec<PathBuf>,
}

/// Writes `plan` into `plan_dir`, which it empties first (see the module docs).
pub fn write_plan(plan_dir: &Path, plan: &TestPlan) -> Result<Written, WriteError> {
    let io_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError::Io { path, source }
    };
    clear(plan_dir).map_err(io_error(plan_dir))?;
    let specs_dir = plan_dir.join(SPECS_DIR);
    std::fs::create_dir_all(&specs_dir).map_err(io_error(&specs_dir))?;
    let mut specs = Vec::new();
    for case in &plan.cases {
        let relative = Path::new(&case.markdown_path);
        let is_plain_relative = relative.components().count() > 0
            && relative
                .components()
                .all(|part| matches!(part, Component::Normal(_)));
        if !is_plain_relative {
            return Err(WriteError::UnsafePath {
                path: case.markdown_path.clone(),
            });
        }
        let path = specs_dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
            if !real_directories(&specs_dir, parent) {
                return Err(WriteError::UnsafePath {
                    path: case.markdown_path.clone(),
                });
            }
        }
        files::write_atomically(&path, markdown(case).as_bytes()).map_err(io_error(&path))?;
        specs.push(path);
    }
    let plan_file = plan_dir.join(PLAN_FILE);
    let json = serde_json::to_string_pretty(plan)
        .map_err(|error| io_error(&plan_file)(io::Error::other(error)))?;
    files::write_atomically(&plan_file, format!("{json}\n").as_bytes())
        .map_err(io_error(&plan_file))?;
    Ok(Written { plan_file, specs })
}

/// Removes `dir` and what it holds; a symbolic link or a file there is removed, not followed.
fn clear(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(dir),
        Ok(_) => std::fs::remove_file(dir),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

/// Whether `dir` and every folder between it and `root` are directories, not symbolic links.
fn real_directories(root: &Path, dir: &Path) -> bool {
    dir.ancestors()
        .take_while(|ancestor| ancestor.starts_with(root))
        .all(|ancestor| {
            std::fs::symlink_metadata(ancestor).is_ok_and(|meta| meta.file_type().is_dir())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_plan::model::{CaseType, Priority, StepPlan, TestCasePlan};

    fn plan(paths: &[&str]) -> TestPlan {
        TestPlan {
            run_id: "run-1".to_owned(),
            generated_at: "2025-01-15T10:30:00Z".to_owned(),
            config_snapshot: None,
            flows: vec![],
            cases: paths
                .iter()
                .enumerate()
                .map(|(index, path)| TestCasePlan {
                    id: format!("c{index}"),
                    name: format!("Case {index}"),
                    case_type: CaseType::Security,
                    priority: Priority::P1,
                    related_page_ids: vec![],
                    markdown_path: (*path).to_owned(),
                    preconditions: vec![],
                    steps: vec![StepPlan {
                        description: "Send {{API_KEY}}".to_owned(),
                        expected_result: None,
                    }],
                })
                .collect(),
        }
    }

    #[test]
    fn the_plan_and_its_specs_are_written_and_an_earlier_plan_goes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan_dir = dir.path().join("plan");
        write_plan(&plan_dir, &plan(&["old.md"])).expect("first plan");
        let written = write_plan(&plan_dir, &plan(&["a.md", "auth/b.md"])).expect("writes");
        assert_eq!(
            written.specs,
            [
                plan_dir.join("specs/a.md"),
                plan_dir.join("specs/auth/b.md")
            ]
        );
        assert!(
            !plan_dir.join("specs/old.md").exists(),
            "the earlier plan's spec is gone"
        );
        let spec = std::fs::read_to_string(&written.specs[1]).expect("spec");
        assert!(spec.starts_with("# Case 1\n"), "{spec}");
        assert!(spec.contains("1. Send {{API_KEY}}"), "{spec}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&written.plan_file).expect("plan"))
                .expect("JSON");
        assert_eq!(json["runId"], "run-1");
        assert_eq!(json["generatedAt"], "2025-01-15T10:30:00Z");
        assert_eq!(json["cases"][1]["markdownPath"], "auth/b.md");
    }

    #[test]
    fn a_path_out_of_specs_is_refused_even_unnormalised() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan_dir = dir.path().join("plan");
        for path in ["../escape.md", "/tmp/escape.md", "a/../../escape.md", ""] {
            let error = write_plan(&plan_dir, &plan(&[path])).expect_err(path);
            assert!(
                matches!(error, WriteError::UnsafePath { .. }),
                "{path}: {error}"
            );
        }
        assert!(!dir.path().join("escape.md").exists());
    }

    #[test]
    fn a_symbolic_link_in_the_plan_directory_is_removed_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).expect("mkdir");
        let plan_dir = dir.path().join("plan");
        std::fs::create_dir_all(&plan_dir).expect("mkdir");
        std::os::unix::fs::symlink(&outside, plan_dir.join(SPECS_DIR)).expect("symlink");
        write_plan(&plan_dir, &plan(&["a.md"])).expect("writes");
        assert!(plan_dir.join("specs/a.md").is_file());
        assert_eq!(std::fs::read_dir(&outside).expect("read").count(), 0);

        std::fs::remove_dir_all(&plan_dir).expect("rm");
        std::os::unix::fs::symlink(&outside, &plan_dir).expect("symlink the plan dir");
        write_plan(&plan_dir, &plan(&["a.md"])).expect("writes");
        assert!(
            !std::fs::symlink_metadata(&plan_dir)
                .expect("meta")
                .is_symlink()
        );
        assert_eq!(std::fs::read_dir(&outside).expect("read").count(), 0);
    }
}
