//! What a batch of changed files asks the daemon to do. Pure: the watcher reports paths, this
//! sorts them into PRPs to queue, configuration to reload and source changes (which re-run QA
//! while idle when `[watch] qa_on_change` is on). Nothing under the PRP folder is a source.

use std::path::{Path, PathBuf};

use prpd_base::config_file::FILE_NAME;

/// The files besides `prpd.toml` whose change reloads the daemon's configuration.
pub const CONFIG_FILES: [&str; 2] = ["qa-checklist.yml", "qa-tools-mapping.yml"];

/// What one batch of changes asks for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Triggers {
    /// PRPs (relative to the repository) that were created or changed.
    pub prps: Vec<PathBuf>,
    /// prpd.toml, qa-checklist.yml or qa-tools-mapping.yml changed.
    pub config: bool,
    /// Some other file changed: the project itself.
    pub sources: bool,
}

/// Where the daemon looks, to sort paths.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The repository's root (canonical).
    pub repo: PathBuf,
    /// The PRP folder, relative to the root (`[watch] prp_dir`).
    pub prp_dir: PathBuf,
    /// `--config FILE` when the daemon was given one outside the usual place.
    pub config: Option<PathBuf>,
}

impl Layout {
    /// Sorts `changed` (absolute paths) into triggers. Paths outside the repository and
    /// prpd's own `.prpd/` folder (prompt overrides, the scripted agents) trigger nothing.
    pub fn triggers(&self, changed: &[PathBuf]) -> Triggers {
        let mut triggers = Triggers::default();
        for path in changed {
            if self.config.as_deref() == Some(path.as_path()) {
                triggers.config = true;
                continue;
            }
            let Ok(relative) = path.strip_prefix(&self.repo) else {
                continue;
            };
            if relative.starts_with(".prpd") || relative.as_os_str().is_empty() {
                continue;
            }
            if is_config_file(relative) {
                triggers.config = true;
            } else if self.is_prp(relative) {
                if !triggers.prps.iter().any(|known| known == relative) {
                    triggers.prps.push(relative.to_path_buf());
                }
            } else if relative.starts_with(&self.prp_dir) {
                // The folder itself appearing, a README, a template: not the project's sources.
            } else {
                triggers.sources = true;
            }
        }
        triggers
    }

    /// Whether `relative` names a PRP: a Markdown file under the PRP folder, other than a
    /// folder's README and a hidden file (`.progress.md`, which `prpd verify` keeps beside the
    /// task list it verified).
    pub fn is_prp(&self, relative: &Path) -> bool {
        let name = relative
            .file_name()
            .map(|name| name.to_string_lossy())
            .unwrap_or_default();
        relative.starts_with(&self.prp_dir)
            && relative
                .extension()
                .is_some_and(|extension| extension.eq_ignore_ascii_case("md"))
            && !name.eq_ignore_ascii_case("README.md")
            && !name.starts_with('.')
    }
}

fn is_config_file(relative: &Path) -> bool {
    relative == Path::new(FILE_NAME) || CONFIG_FILES.iter().any(|name| relative == Path::new(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            repo: PathBuf::from("/repo"),
            prp_dir: PathBuf::from("PRPs"),
            config: None,
        }
    }

    fn paths(relative: &[&str]) -> Vec<PathBuf> {
        relative
            .iter()
            .map(|path| Path::new("/repo").join(path))
            .collect()
    }

    #[test]
    fn paths_are_sorted_into_what_they_ask_for() {
        for (changed, expected) in [
            (
                &["PRPs/rate-limit.md"][..],
                Triggers {
                    prps: vec![PathBuf::from("PRPs/rate-limit.md")],
                    ..Triggers::default()
                },
            ),
            (
                &[
                    "PRPs",
                    "PRPs/nested/b.MD",
                    "PRPs/nested/b.MD",
                    "PRPs/README.md",
                    "PRPs/.progress.md",
                ],
                Triggers {
                    prps: vec![PathBuf::from("PRPs/nested/b.MD")],
                    ..Triggers::default()
                },
            ),
            (
                &["prpd.toml"],
                Triggers {
                    config: true,
                    ..Triggers::default()
                },
            ),
            (
                &["qa-tools-mapping.yml", "src/lib.rs"],
                Triggers {
                    config: true,
                    sources: true,
                    ..Triggers::default()
                },
            ),
            (
                &["docs/PRPs/x.md", "PRPs.md", "sub/prpd.toml"],
                Triggers {
                    sources: true,
                    ..Triggers::default()
                },
            ),
            (&[".prpd/agents/agent.mjs", ""], Triggers::default()),
        ] {
            assert_eq!(layout().triggers(&paths(changed)), expected, "{changed:?}");
        }
    }

    #[test]
    fn paths_outside_the_repository_trigger_nothing_unless_they_are_the_config() {
        let mut layout = layout();
        let outside = vec![PathBuf::from("/elsewhere/PRPs/x.md")];
        assert_eq!(layout.triggers(&outside), Triggers::default());
        layout.config = Some(PathBuf::from("/etc/prpd/app.toml"));
        let config = vec![PathBuf::from("/etc/prpd/app.toml")];
        assert!(layout.triggers(&config).config);
    }
}
