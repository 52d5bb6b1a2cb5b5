//! `owner/repo` read from a git remote's URL, so `[ship] repository` can stay empty when the
//! remote is a GitHub (or GitHub Enterprise) repository. Credentials in the URL are dropped,
//! never returned; a local path, a `file://` URL or a URL that does not end in exactly
//! `owner/repo` gives `None`, and the caller asks for `repository` instead of guessing.

/// The `(owner, repo)` a remote URL names: `https://github.com/o/r(.git)`,
/// `git@github.com:o/r.git`, `ssh://git@host[:port]/o/r.git`, `git://host/o/r.git`, a GitHub
/// Enterprise host in any of these forms, and `https://user:token@host/o/r` (the credentials
/// are ignored). `None` for local paths and anything that is not `host` + `owner/repo`.
pub fn repository_from_remote_url(url: &str) -> Option<(String, String)> {
    let url = url.trim();
    let path = match url.split_once("://") {
        Some((scheme, rest)) => {
            if !matches!(
                scheme.to_ascii_lowercase().as_str(),
                "https" | "http" | "ssh" | "git" | "git+ssh" | "ssh+git"
            ) {
                return None;
            }
            let (authority, path) = rest.split_once('/')?;
            let host = authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host);
            if host.is_empty() {
                return None;
            }
            path
        }
        None => scp_like_path(url)?,
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let mut segments = path.trim_matches('/').split('/');
    let owner = segments.next()?;
    let repo = segments.next()?;
    if segments.next().is_some() {
        return None;
    }
    let repo = repo.strip_suffix(".git").unwrap_or(repo);
    (is_name(owner) && is_name(repo)).then(|| (owner.to_owned(), repo.to_owned()))
}

/// The path of git's scp-like form `[user@]host:path`: a colon before any slash, and a host
/// before it. Anything else (`/srv/repo.git`, `../remote`, `./a:b`) is a local path.
fn scp_like_path(url: &str) -> Option<&str> {
    let colon = url.find(':')?;
    if url.find('/').is_some_and(|slash| slash < colon) {
        return None;
    }
    let (authority, path) = url.split_at(colon);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    (!host.is_empty()).then(|| &path[1..])
}

/// Whether `name` can be a GitHub owner or repository name: letters, digits, `-`, `_`, `.`,
/// and not `.` or `..`.
pub(super) fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "-_.".contains(character))
}

#[cfg(test)]
mod tests {
    use super::repository_from_remote_url;

    fn pair(owner: &str, repo: &str) -> (String, String) {
        (owner.to_owned(), repo.to_owned())
    }

    #[test]
    fn remote_urls_name_their_repository() {
        let table = [
            (
                "https://github.com/octocat/Hello-World",
                pair("octocat", "Hello-World"),
            ),
            (
                "https://github.com/octocat/Hello-World.git",
                pair("octocat", "Hello-World"),
            ),
            (
                "https://github.com/octocat/Hello-World/",
                pair("octocat", "Hello-World"),
            ),
            (
                "http://github.com/octocat/hello.world",
                pair("octocat", "hello.world"),
            ),
            (
                "git@github.com:octocat/Hello-World.git",
                pair("octocat", "Hello-World"),
            ),
            (
                "github.com:octocat/Hello-World",
                pair("octocat", "Hello-World"),
            ),
            (
                "ssh://git@github.com/octocat/Hello-World.git",
                pair("octocat", "Hello-World"),
            ),
            (
                "ssh://git@ghe.example.com:2222/team/tool.git",
                pair("team", "tool"),
            ),
            (
                "git://github.com/octocat/Hello-World.git",
                pair("octocat", "Hello-World"),
            ),
            (
                "https://ghe.example.com/team/tool.git",
                pair("team", "tool"),
            ),
            ("git@ghe.example.com:team/tool.git", pair("team", "tool")),
            (
                "https://x-access-token:ghp_secret123@github.com/octocat/Hello-World",
                pair("octocat", "Hello-World"),
            ),
            (
                "https://user@github.com/octocat/Hello-World.git",
                pair("octocat", "Hello-World"),
            ),
            ("  https://github.com/o/r.git\n", pair("o", "r")),
        ];
        for (url, expected) in table {
            assert_eq!(repository_from_remote_url(url), Some(expected), "{url}");
        }
    }

    #[test]
    fn local_paths_and_other_shapes_name_no_repository() {
        for url in [
            "/srv/git/remote.git",
            "../remote.git",
            "./a:b/c",
            "remote.git",
            "file:///tmp/remote.git",
            "C:\\repos\\remote.git",
            "https://github.com/octocat",
            "https://github.com/",
            "https://gitlab.example.com/group/sub/repo.git",
            "https://github.com/octocat/..",
            "https://github.com/octo cat/repo",
            ":octocat/repo",
            "",
        ] {
            assert_eq!(repository_from_remote_url(url), None, "{url}");
        }
    }

    #[test]
    fn credentials_in_the_url_never_reach_the_result() {
        let (owner, repo) =
            repository_from_remote_url("https://x-access-token:ghp_secret123@github.com/o/r.git")
                .expect("a repository");
        assert!(!owner.contains("ghp_") && !repo.contains("ghp_"));
    }
}
