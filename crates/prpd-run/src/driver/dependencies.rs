//! The installed dependencies the checkout without the feature borrows from the working tree,
//! and what keeps them from lending it the feature.
//!
//! The checkout holds only tracked files, so the project's ignored dependency folders
//! (`node_modules`, `.venv`, `venv`) are linked in from the working tree; without them the
//! tests could not even import their libraries. But an installed folder can point back at the
//! working tree: an editable install (`pip install -e .`) leaves a `.pth` file or an
//! `__editable__` finder in the virtual environment that names the working tree's source
//! folder, and a workspace package in `node_modules` is a link to the working tree's package.
//! Through them the run without the feature would import the code *with* the feature, and the
//! proof would be wrong. So every place the linked folders point into the working tree is
//! found and redirected to the same place in the checkout: Python gets the checkout (and each
//! such folder of it) first on `PYTHONPATH`, ahead of anything a `.pth` file adds, and a
//! workspace link in `node_modules` is re-made to point into the checkout.

use std::path::{Path, PathBuf};

use crate::snapshot::DEPENDENCY_FOLDERS;

/// What the checkout borrowed, and the environment its test run needs because of it.
#[derive(Debug, Default)]
pub(super) struct Borrowed {
    /// Variables for the test run (`PYTHONPATH`).
    pub env: Vec<(String, String)>,
    /// One sentence per link that pointed into the working tree and was redirected.
    pub redirected: Vec<String>,
}

/// Links each dependency folder of `repo` into `checkout`, where the checkout has none, and
/// redirects what in them points into `repo`. Best effort: a project without them needs none,
/// and a failed link shows up as the test run's own import error.
pub(super) fn borrow(repo: &Path, checkout: &Path) -> Borrowed {
    let repo = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    let mut borrowed = Borrowed::default();
    let mut python_path = vec![checkout.to_path_buf()];
    for folder in DEPENDENCY_FOLDERS {
        let source = repo.join(folder);
        let target = checkout.join(folder);
        if !source.is_dir() || target.exists() {
            continue;
        }
        if *folder == "node_modules" {
            link_node_modules(&repo, checkout, &source, &target, &mut borrowed);
            continue;
        }
        let _ = std::os::unix::fs::symlink(&source, &target);
        for (file, place) in editable_installs(&repo, &source) {
            borrowed.redirected.push(format!(
                "`{folder}/{}` imports from the working tree's `{}`: the checkout's comes first on PYTHONPATH",
                file.display(),
                place.display()
            ));
            python_path.push(checkout.join(place));
        }
    }
    if let Some(inherited) = std::env::var_os("PYTHONPATH") {
        for entry in std::env::split_paths(&inherited) {
            let entry = match entry.strip_prefix(&repo) {
                Ok(inside) => checkout.join(inside),
                Err(_) => entry,
            };
            python_path.push(entry);
        }
    }
    python_path.dedup();
    if let Ok(joined) = std::env::join_paths(&python_path) {
        borrowed.env.push((
            "PYTHONPATH".to_owned(),
            joined.to_string_lossy().into_owned(),
        ));
    }
    borrowed
}

/// The places inside `repo` that a virtual environment's editable installs import from, each
/// with the file that says so (relative to the environment): the path lines of its `.pth` and
/// `.egg-link` files, and the parent of each package folder an `__editable__` finder maps.
fn editable_installs(repo: &Path, venv: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut found = Vec::new();
    let Ok(lib) = std::fs::read_dir(venv.join("lib")) else {
        return found;
    };
    for version in lib.flatten() {
        let site_packages = version.path().join("site-packages");
        let Ok(entries) = std::fs::read_dir(&site_packages) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let extension = path.extension().and_then(|extension| extension.to_str());
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let places: Vec<PathBuf> = if matches!(extension, Some("pth" | "egg-link")) {
                text.lines()
                    .map(str::trim)
                    .filter(|line| !line.starts_with("import ") && !line.starts_with('#'))
                    .filter_map(|line| inside(repo, Path::new(line)))
                    .collect()
            } else if name.starts_with("__editable__") && extension == Some("py") {
                quoted_paths(&text)
                    .filter_map(|quoted| inside(repo, Path::new(quoted).parent()?))
                    .collect()
            } else {
                continue;
            };
            let file = path.strip_prefix(venv).unwrap_or(&path).to_path_buf();
            found.extend(places.into_iter().map(|place| (file.clone(), place)));
        }
    }
    found
}

/// The quoted absolute paths in a Python source (`'/home/u/calc/src/calc'`).
fn quoted_paths(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\'', '"'])
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.starts_with('/'))
}

/// `path` relative to `repo`, when it lies inside it.
fn inside(repo: &Path, path: &Path) -> Option<PathBuf> {
    path.strip_prefix(repo).ok().map(Path::to_path_buf)
}

/// Links `node_modules` as a whole, unless some package in it (a workspace package, an
/// `npm link`) resolves into the working tree: then the checkout gets a folder of its own
/// whose entries link to the working tree's, and those packages link to the checkout's copy.
fn link_node_modules(
    repo: &Path,
    checkout: &Path,
    source: &Path,
    target: &Path,
    borrowed: &mut Borrowed,
) {
    let packages = packages(source);
    let into_repo: Vec<(PathBuf, PathBuf)> = packages
        .iter()
        .filter_map(|package| {
            let real = source.join(package).canonicalize().ok()?;
            if real.starts_with(source) {
                return None;
            }
            Some((package.clone(), inside(repo, &real)?))
        })
        .collect();
    if into_repo.is_empty() {
        let _ = std::os::unix::fs::symlink(source, target);
        return;
    }
    for package in &packages {
        let link = target.join(package);
        if let Some(parent) = link.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let points_to = match into_repo.iter().find(|(name, _)| name == package) {
            Some((_, place)) => {
                borrowed.redirected.push(format!(
                    "`node_modules/{}` links to the working tree's `{}`: the checkout's is linked instead",
                    package.display(),
                    place.display()
                ));
                checkout.join(place)
            }
            None => source.join(package),
        };
        let _ = std::os::unix::fs::symlink(points_to, link);
    }
}

/// The entries of a `node_modules` folder, with each `@scope/` folder opened one level.
fn packages(node_modules: &Path) -> Vec<PathBuf> {
    let mut packages = Vec::new();
    let Ok(entries) = std::fs::read_dir(node_modules) else {
        return packages;
    };
    for entry in entries.flatten() {
        let name = PathBuf::from(entry.file_name());
        let is_scope = name.to_string_lossy().starts_with('@')
            && entry.file_type().is_ok_and(|kind| kind.is_dir());
        match std::fs::read_dir(entry.path()) {
            Ok(scoped) if is_scope => {
                packages.extend(scoped.flatten().map(|inner| name.join(inner.file_name())));
            }
            Ok(_) | Err(_) => packages.push(name),
        }
    }
    packages.sort();
    packages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editable_installs_and_workspace_links_are_redirected_into_the_checkout() {
        let repo = tempfile::tempdir().expect("temporary directory");
        let repo = repo.path().canonicalize().expect("canonical path");
        let checkout = tempfile::tempdir().expect("temporary directory");
        let site = repo.join(".venv/lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).expect("test fixture");
        std::fs::create_dir_all(repo.join("packages/util")).expect("test fixture");
        std::fs::create_dir_all(repo.join("node_modules/@acme")).expect("test fixture");
        std::fs::create_dir_all(repo.join("node_modules/left-pad")).expect("test fixture");
        std::os::unix::fs::symlink(
            repo.join("packages/util"),
            repo.join("node_modules/@acme/util"),
        )
        .expect("test fixture");
        std::fs::write(
            site.join("__editable__.calc-1.0.pth"),
            format!("{}\n", repo.join("src").display()),
        )
        .expect("test fixture");
        std::fs::write(
            site.join("__editable___calc_1_0_finder.py"),
            format!(
                "MAPPING = {{'calc': '{}'}}\n",
                repo.join("lib/calc").display()
            ),
        )
        .expect("test fixture");
        std::fs::write(site.join("other.pth"), "/usr/lib/elsewhere\nimport os\n")
            .expect("test fixture");

        let borrowed = borrow(&repo, checkout.path());
        let python_path = &borrowed
            .env
            .iter()
            .find(|(name, _)| name == "PYTHONPATH")
            .expect("PYTHONPATH")
            .1;
        let entries: Vec<PathBuf> = std::env::split_paths(python_path).collect();
        assert_eq!(entries[0], checkout.path());
        assert!(
            entries.contains(&checkout.path().join("src")),
            "{entries:?}"
        );
        assert!(
            entries.contains(&checkout.path().join("lib")),
            "{entries:?}"
        );
        assert!(
            !entries.iter().any(|entry| entry.starts_with(&repo)),
            "nothing of the working tree: {entries:?}"
        );
        assert_eq!(
            std::fs::read_link(checkout.path().join("node_modules/@acme/util")).expect("a link"),
            checkout.path().join("packages/util")
        );
        assert_eq!(
            std::fs::read_link(checkout.path().join("node_modules/left-pad")).expect("a link"),
            repo.join("node_modules/left-pad")
        );
        assert_eq!(
            std::fs::read_link(checkout.path().join(".venv")).expect("a link"),
            repo.join(".venv")
        );
        assert_eq!(borrowed.redirected.len(), 3, "{:?}", borrowed.redirected);
    }
}
