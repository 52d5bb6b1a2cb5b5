//! `owner/repo` read from a git remote's URL, so `[ship] repository` can stay empty when the
//! remote is a GitHub (or GitHub Enterprise) repository. Credentials in the URL are dropped,
//! never returned; a local path, a `file://` URL or a URL that does not end in exactly
//! `owner/repo` gives `None`, and the caller asks for `repository` instead of guessing.

/// The `(owner, repo)` a remote URL names: `https://github.com/o/r(.git)`,
/// `git@github.com:o/r.git`, `ssh://git@host[:port]/o/r.git`, `git://host/o/r.git`, a GitHub
/// Enterprise host in any of these forms, and `https://user:token@host/o/r` (the credentials
/// are ignored). `None` for local paths and anything that is not `host` + `owner/repo`.
pub fn repository_from_remote_url(url: &str) -> Option<(String, String)> {
    let (_, path) = host_and_path(url)?;
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

/// The `(owner, repo)` of a remote URL that is on GitHub: its host is `github.com` (or one of
/// its subdomains, `ssh.github.com`), or the host of the GitHub API prpd talks to (`api_url`,
/// `[ship] api_url`), with or without its leading `api.`: `https://ghe.example.com/api/v3`
/// for a GitHub Enterprise server, `https://api.acme.ghe.com` for GitHub Enterprise Cloud.
/// A GitLab, Bitbucket or other self-hosted remote, and a local path, name no GitHub
/// repository, whatever their path looks like.
pub fn github_repository_from_remote_url(url: &str, api_url: &str) -> Option<(String, String)> {
    let (host, _) = host_and_path(url)?;
    let host = host_without_port(host).to_ascii_lowercase();
    let api_host = api_url
        .split_once("://")
        .map(|(_, rest)| rest.split('/').next().unwrap_or_default())
        .map(|authority| host_without_port(authority).to_ascii_lowercase());
    let on_github = host == "github.com"
        || host.ends_with(".github.com")
        || api_host.is_some_and(|api| {
            !api.is_empty() && (api == host || api.strip_prefix("api.") == Some(host.as_str()))
        });
    on_github.then(|| repository_from_remote_url(url)).flatten()
}

/// The host of a remote URL (without port or credentials), when it names one; `None` for a
/// local path or `file://` URL.
pub fn remote_host(url: &str) -> Option<String> {
    let (host, _) = host_and_path(url)?;
    Some(host_without_port(host).to_ascii_lowercase())
}

/// The host (with any port, without credentials) and the path of a remote URL, or `None` for a
/// local path, a `file://` URL or a scheme git does not push over to a hosting service.
fn host_and_path(url: &str) -> Option<(&str, &str)> {
    let url = url.trim();
    if let Some((scheme, rest)) = url.split_once("://") {
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
        (!host.is_empty()).then_some((host, path))
    } else {
        let path = scp_like_path(url)?;
        let authority = &url[..url.len() - path.len() - 1];
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        Some((host, path))
    }
}

/// `host` of `host:port`.
fn host_without_port(authority: &str) -> &str {
    authority
        .rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|digit| digit.is_ascii_digit()))
        .map_or(authority, |(host, _)| host)
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
    use super::{github_repository_from_remote_url, repository_from_remote_url};

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

    /// Only a remote on GitHub names a GitHub repository: github.com, or the host of the API
    /// prpd is told to use; a GitLab or self-hosted remote with an `owner/repo` path does not.
    #[test]
    fn a_github_repository_is_on_github_or_the_configured_api_host() {
        let on_github = [
            ("https://github.com/acme/calc.git", "https://api.github.com"),
            ("git@github.com:acme/calc.git", "https://api.github.com"),
            (
                "ssh://git@ssh.github.com:443/acme/calc.git",
                "https://api.github.com",
            ),
            ("https://GitHub.com/acme/calc", "https://api.github.com/"),
            (
                "git@ghe.example.com:acme/calc.git",
                "https://ghe.example.com/api/v3",
            ),
            ("https://acme.ghe.com/acme/calc", "https://api.acme.ghe.com"),
            ("http://127.0.0.1:8080/acme/calc", "http://127.0.0.1:9999"),
        ];
        for (url, api_url) in on_github {
            assert_eq!(
                github_repository_from_remote_url(url, api_url),
                Some(pair("acme", "calc")),
                "{url} with {api_url}"
            );
        }
        let elsewhere = [
            ("https://gitlab.com/acme/calc.git", "https://api.github.com"),
            (
                "git@gitlab.example.com:acme/calc.git",
                "https://api.github.com",
            ),
            (
                "https://bitbucket.org/acme/calc.git",
                "https://api.github.com",
            ),
            (
                "https://notgithub.com/acme/calc.git",
                "https://api.github.com",
            ),
            (
                "https://github.com.evil.example/acme/calc",
                "https://api.github.com",
            ),
            ("/srv/git/calc.git", "https://api.github.com"),
            ("file:///srv/git/calc.git", "https://api.github.com"),
            (
                "https://gitlab.com/acme/calc.git",
                "https://ghe.example.com/api/v3",
            ),
        ];
        for (url, api_url) in elsewhere {
            assert_eq!(
                github_repository_from_remote_url(url, api_url),
                None,
                "{url} with {api_url}"
            );
        }
    }
}
