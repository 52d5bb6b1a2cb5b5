//! Which files are a project's documentation, changelog and decision records. Projects write
//! them in Markdown, reStructuredText, Asciidoc or plain text, and keep a changelog as one file
//! (`CHANGELOG.md`, `CHANGES.rst`, `HISTORY.md`, `NEWS`) or as one fragment per change
//! (`changelog.d/`, `newsfragments/`, `.changeset/`), so the documentation checks recognise all
//! of these. The same rules pick the files read at a change's base (`since_base.rs`), so a
//! file is judged against its own earlier text.

use std::path::{Path, PathBuf};

/// Extensions of documentation text; the empty one is a file without (`NEWS`, `CHANGES`).
const DOC_EXTENSIONS: &[&str] = &["md", "markdown", "rst", "adoc", "asciidoc", "txt", ""];

/// Names (before the extension, lowercase) of a changelog file.
const CHANGELOG_STEMS: &[&str] = &[
    "changelog",
    "changes",
    "history",
    "news",
    "releasenotes",
    "release-notes",
    "release_notes",
];

/// Folders of documentation besides the README.
const DOC_FOLDERS: &[&str] = &["docs", "doc"];

/// How deep below a documentation folder files are read (`docs/guide/api/x.rst` is depth 3).
const DOC_FOLDER_DEPTH: usize = 3;

/// Folders where a project keeps one changelog fragment per change (towncrier, changesets,
/// changie, scriv).
pub(super) const FRAGMENT_FOLDERS: &[&str] = &[
    "changelog.d",
    "changes.d",
    "changelog",
    "changes",
    "newsfragments",
    "news",
    ".changeset",
    ".changes/unreleased",
    "unreleased",
];

/// At most this many documentation files are read: a documentation check stays cheap however
/// large `docs/` is.
pub(super) const MAX_DOCUMENTS: usize = 2_000;

/// The file name's lowercase stem (before the first dot) and extension (after the last).
fn stem_and_extension(name: &str) -> (String, String) {
    let lower = name.to_lowercase();
    let stem = lower.split('.').next().unwrap_or("").to_owned();
    let extension = Path::new(&lower)
        .extension()
        .map(|extension| extension.to_string_lossy().into_owned())
        .unwrap_or_default();
    (stem, extension)
}

/// `README.md`, `README.rst`, `readme.adoc`, `README`.
pub(super) fn is_readme(name: &str) -> bool {
    let (stem, extension) = stem_and_extension(name);
    stem == "readme" && DOC_EXTENSIONS.contains(&extension.as_str())
}

/// `CHANGELOG.md`, `CHANGES.rst`, `HISTORY.md`, `NEWS`, `NEWS.txt`.
pub(super) fn is_changelog(name: &str) -> bool {
    let (stem, extension) = stem_and_extension(name);
    CHANGELOG_STEMS.contains(&stem.as_str()) && DOC_EXTENSIONS.contains(&extension.as_str())
}

/// A file of a fragment folder that is a fragment, not the folder's configuration or template.
fn is_fragment(name: &str) -> bool {
    let lower = name.to_lowercase();
    !(lower.starts_with('.')
        || lower.starts_with("readme")
        || lower.starts_with("template")
        || lower == "config.json"
        || [".j2", ".jinja", ".jinja2", ".tmpl"]
            .iter()
            .any(|suffix| lower.ends_with(suffix)))
}

fn slash_path(relative: &Path) -> String {
    relative
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether the file at `relative` (to the repository root) is documentation the checks read:
/// a README or changelog at the root, a changelog in `docs/` or `doc/`, a document under them,
/// or a fragment in a fragment folder.
pub(super) fn is_document(relative: &Path) -> bool {
    let Some(name) = relative.file_name().map(|name| name.to_string_lossy()) else {
        return false;
    };
    let parent = relative.parent().map(slash_path).unwrap_or_default();
    if parent.is_empty() {
        return is_readme(&name) || is_changelog(&name);
    }
    if FRAGMENT_FOLDERS.contains(&parent.as_str()) {
        return is_fragment(&name);
    }
    let in_doc_folder = DOC_FOLDERS
        .iter()
        .any(|folder| parent == *folder || parent.starts_with(&format!("{folder}/")));
    let depth = relative.components().count() - 1;
    let (_, extension) = stem_and_extension(&name);
    in_doc_folder
        && depth <= DOC_FOLDER_DEPTH
        && !extension.is_empty()
        && DOC_EXTENSIONS.contains(&extension.as_str())
}

/// Whether the folder at `relative` may hold documents, so a walk goes into it.
pub(super) fn may_hold_documents(relative: &Path) -> bool {
    let path = slash_path(relative);
    let depth = relative.components().count();
    let under_doc_folder = DOC_FOLDERS.iter().any(|folder| {
        (path == *folder || path.starts_with(&format!("{folder}/"))) && depth <= DOC_FOLDER_DEPTH
    });
    under_doc_folder
        || FRAGMENT_FOLDERS
            .iter()
            .any(|folder| *folder == path || folder.starts_with(&format!("{path}/")))
}

/// The documentation files of `repo`'s working tree, sorted, at most [`MAX_DOCUMENTS`].
pub(super) fn documents(repo: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    collect(repo, Path::new(""), &mut found);
    found.sort();
    found
}

fn collect(repo: &Path, relative: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(repo.join(relative)) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        if found.len() >= MAX_DOCUMENTS {
            return;
        }
        let path = relative.join(entry.file_name());
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if may_hold_documents(&path) {
                collect(repo, &path, found);
            }
        } else if kind.is_file() && is_document(&path) {
            found.push(path);
        }
    }
}

/// The fragment folders `repo` has.
pub(super) fn fragment_folders(repo: &Path) -> Vec<&'static str> {
    FRAGMENT_FOLDERS
        .iter()
        .copied()
        .filter(|folder| repo.join(folder).is_dir())
        .collect()
}

/// Whether `relative` is a changelog: a changelog file at the root or in a documentation
/// folder, or a fragment.
pub(super) fn is_changelog_document(relative: &Path) -> bool {
    let parent = relative.parent().map(slash_path).unwrap_or_default();
    let name = relative
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    FRAGMENT_FOLDERS.contains(&parent.as_str())
        || ((parent.is_empty() || DOC_FOLDERS.contains(&parent.as_str())) && is_changelog(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_in_every_common_format_and_place() {
        for document in [
            "README.md",
            "README.rst",
            "readme.adoc",
            "README",
            "CHANGELOG.md",
            "CHANGES.rst",
            "HISTORY.md",
            "NEWS",
            "NEWS.txt",
            "docs/index.rst",
            "docs/guide/usage.md",
            "doc/changelog.rst",
            "changelog.d/123.feature.md",
            "newsfragments/42.bugfix",
            ".changeset/brave-lions-sing.md",
            ".changes/unreleased/Added-20240101.yaml",
        ] {
            assert!(is_document(Path::new(document)), "{document}");
        }
        for other in [
            "src/README.md",
            "LICENSE",
            "CHANGELOG.json",
            "docs/conf.py",
            "docs/a/b/c/deep.md",
            "docs/Makefile",
            ".changeset/config.json",
            ".changeset/README.md",
            "changelog.d/.gitkeep",
            "changelog.d/template.rst.j2",
        ] {
            assert!(!is_document(Path::new(other)), "{other}");
        }
        assert!(is_changelog_document(Path::new("doc/changelog.rst")));
        assert!(is_changelog_document(Path::new("newsfragments/42.bugfix")));
        assert!(!is_changelog_document(Path::new("docs/index.rst")));
        assert!(may_hold_documents(Path::new(".changes")));
        assert!(may_hold_documents(Path::new("docs/guide")));
        assert!(!may_hold_documents(Path::new("src")));
    }

    #[test]
    fn the_walk_finds_only_documents() {
        let repo = tempfile::tempdir().expect("temporary directory");
        for file in [
            "README.rst",
            "CHANGES.rst",
            "src/README.md",
            "docs/index.rst",
            "docs/conf.py",
            "changelog.d/1.feature.md",
            "changelog.d/.gitkeep",
        ] {
            let path = repo.path().join(file);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("test fixture");
            std::fs::write(path, "x\n").expect("test fixture");
        }
        let found: Vec<String> = documents(repo.path())
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        assert_eq!(
            found,
            [
                "CHANGES.rst",
                "README.rst",
                "changelog.d/1.feature.md",
                "docs/index.rst"
            ]
        );
        assert_eq!(fragment_folders(repo.path()), ["changelog.d"]);
    }
}
