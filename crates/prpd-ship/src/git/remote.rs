//! Where SHIP pushes: `[ship] remote` read as a remote's name (`origin`), a URL
//! (`https://github.com/acme/widgets.git`, `git@github.com:acme/widgets.git`) or a local path
//! (`../remote.git`, `/srv/git/widgets.git`, `file:///…`), relative paths from the repository
//! root. A bare word is a remote's name only; a local path must hold a slash, so a misspelt
//! name is never taken for a folder.
//!
//! Whether the destination is local matters for a dry run, which pushes only there, and for
//! the messages: a local path that is not a repository is named as such. A URL is shown
//! without any credentials written into it.

use std::path::{Path, PathBuf};

use git2::Repository;

use super::ShipError;

/// A resolved push destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// What the messages call it: the remote's name and URL, or the URL or path as
    /// configured (never with credentials).
    pub shown: String,
    /// The URL (or absolute path) git pushes to.
    pub url: String,
    /// The local repository it is, when it is one (a path or a `file://` URL).
    pub local: Option<PathBuf>,
}

/// Resolves `spec` for the repository at `root`. `Ok(None)` when `spec` is a bare word that
/// names no remote (the caller decides whether that is an error: a dry run skips the push).
pub fn destination(root: &Path, spec: &str) -> Result<Option<Destination>, ShipError> {
    let repo = Repository::open(root).map_err(|source| ShipError::Git {
        action: "open the repository",
        repo: root.to_path_buf(),
        source,
    })?;
    if let Ok(remote) = repo.find_remote(spec) {
        let url = remote
            .pushurl()
            .ok()
            .flatten()
            .or_else(|| remote.url().ok())
            .unwrap_or_default()
            .to_owned();
        let local = local_path(root, &url);
        return Ok(Some(Destination {
            shown: format!("{spec} ({})", without_credentials(&url)),
            url,
            local,
        }));
    }
    if spec.contains("://") || is_scp_like(spec) {
        return Ok(Some(Destination {
            shown: without_credentials(spec),
            url: spec.to_owned(),
            local: local_path(root, spec),
        }));
    }
    if !spec.contains('/') {
        return Ok(None);
    }
    let path = root.join(spec);
    Ok(Some(Destination {
        shown: spec.to_owned(),
        url: path.display().to_string(),
        local: Some(path),
    }))
}

/// The error for `[ship] remote` = `name` when it names no remote of the repository at `root`.
pub fn no_such_remote(root: &Path, name: &str) -> ShipError {
    ShipError::NoSuchRemote {
        name: name.to_owned(),
        repo: root.to_path_buf(),
        known: known_remotes(root),
    }
}

/// The remotes of the repository at `root`, for a message that says which exist.
fn known_remotes(root: &Path) -> String {
    let names: Vec<String> = Repository::open(root)
        .ok()
        .and_then(|repo| repo.remotes().ok())
        .map(|names| {
            names
                .iter()
                .flatten()
                .flatten()
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        "it has no remote".to_owned()
    } else {
        format!("its remotes: {}", names.join(", "))
    }
}

/// `[user@]host:path` with no slash before the colon: git's scp-like SSH form.
fn is_scp_like(spec: &str) -> bool {
    spec.split_once(':').is_some_and(|(host, path)| {
        !host.is_empty() && !host.contains('/') && !path.is_empty() && !spec.starts_with('.')
    })
}

/// The local repository a URL or path names, if it names one.
fn local_path(root: &Path, url: &str) -> Option<PathBuf> {
    if let Some(path) = url.strip_prefix("file://") {
        return Some(PathBuf::from(path));
    }
    if url.contains("://") || is_scp_like(url) {
        return None;
    }
    Some(root.join(url))
}

/// `url` without a `user[:password]@` part: what a message may show.
pub(super) fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_urls_and_paths_are_told_apart() {
        let (dir, _) = crate::git::commit::tests::repo_with(&[("a.txt", "a\n")]);
        let repo = Repository::open(dir.path()).expect("open");
        repo.remote("origin", "https://github.com/acme/widgets.git")
            .expect("remote");
        let root = dir.path();

        let origin = destination(root, "origin").expect("ok").expect("a remote");
        assert_eq!(origin.url, "https://github.com/acme/widgets.git");
        assert_eq!(origin.local, None);
        assert_eq!(origin.shown, "origin (https://github.com/acme/widgets.git)");

        assert_eq!(destination(root, "upstream").expect("ok"), None);

        let ssh = destination(root, "git@github.com:acme/widgets.git")
            .expect("ok")
            .expect("a URL");
        assert_eq!(ssh.local, None);

        let path = destination(root, "../remote.git")
            .expect("ok")
            .expect("a path");
        assert_eq!(path.local, Some(root.join("../remote.git")));
        assert_eq!(path.shown, "../remote.git");

        let file = destination(root, "file:///srv/git/w.git")
            .expect("ok")
            .expect("a URL");
        assert_eq!(file.local, Some(PathBuf::from("/srv/git/w.git")));
    }

    #[test]
    fn credentials_written_into_a_url_are_never_shown() {
        assert_eq!(
            without_credentials("https://x-access-token:ghp_secret@github.com/a/b.git"),
            "https://github.com/a/b.git"
        );
        assert_eq!(
            without_credentials("https://github.com/a/b@c.git"),
            "https://github.com/a/b@c.git"
        );
        let (dir, _) = crate::git::commit::tests::repo_with(&[("a.txt", "a\n")]);
        let shown = destination(dir.path(), "https://me:ghp_secret@example.com/a/b.git")
            .expect("ok")
            .expect("a URL")
            .shown;
        assert!(!shown.contains("ghp_secret"), "{shown}");
    }
}
