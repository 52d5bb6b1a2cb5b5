//! Which addresses an exploration may visit: http(s) on the start page's origin (scheme, host
//! and port), matching an include pattern when there are any, and no exclude pattern. Patterns
//! are regular expressions searched in the whole address (`/logout`, `\?page=\d{2,}`); the
//! start page is always in scope. Fragments are dropped, so `/a#top` and `/a` are one page.

use regex::Regex;
use url::Url;

/// The rules of one exploration.
#[derive(Debug, Clone)]
pub struct Scope {
    start: Url,
    include: Vec<Regex>,
    exclude: Vec<Regex>,
}

/// A pattern that is not a regular expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {list} pattern {pattern:?} is not a regular expression: {message}")]
pub struct PatternError {
    pub list: &'static str,
    pub pattern: String,
    pub message: String,
}

/// The extensions of files that are not pages (downloads, media, assets): a browser would
/// download or merely show them, and a link to one is no path through the app.
const NOT_PAGES: [&str; 24] = [
    "pdf", "zip", "gz", "tgz", "bz2", "xz", "7z", "rar", "exe", "dmg", "msi", "png", "jpg", "jpeg",
    "gif", "svg", "webp", "ico", "mp3", "mp4", "webm", "mov", "woff2", "csv",
];

/// Why an address is not visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfScope {
    NotHttp,
    NotAPage,
    External,
    NotIncluded,
    Excluded,
}

impl OutOfScope {
    /// The reason as `graph.json` records it.
    pub fn as_str(self) -> &'static str {
        match self {
            OutOfScope::NotHttp => "not-http",
            OutOfScope::NotAPage => "not-a-page",
            OutOfScope::External => "external",
            OutOfScope::NotIncluded => "not-included",
            OutOfScope::Excluded => "excluded",
        }
    }
}

impl Scope {
    pub fn new(start: &Url, include: &[String], exclude: &[String]) -> Result<Scope, PatternError> {
        let compile = |list: &'static str, patterns: &[String]| {
            patterns
                .iter()
                .map(|pattern| {
                    Regex::new(pattern).map_err(|error| PatternError {
                        list,
                        pattern: pattern.clone(),
                        message: error.to_string(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Scope {
            start: normalise(start),
            include: compile("include", include)?,
            exclude: compile("exclude", exclude)?,
        })
    }

    /// Adds an exclude pattern (one prpd chose: signed in, the walk leaves the sign-out links
    /// alone).
    pub fn exclude_also(&mut self, pattern: &Regex) {
        self.exclude.push(pattern.clone());
    }

    /// The start page, normalised.
    pub fn start(&self) -> &Url {
        &self.start
    }

    /// `href` resolved against `base`, normalised, if it may be visited.
    pub fn judge(&self, base: &Url, href: &str) -> Result<Url, (String, OutOfScope)> {
        let Ok(resolved) = base.join(href) else {
            return Err((href.to_owned(), OutOfScope::NotHttp));
        };
        let url = normalise(&resolved);
        let reason = if !matches!(url.scheme(), "http" | "https") {
            Some(OutOfScope::NotHttp)
        } else if url.origin() != self.start.origin() {
            Some(OutOfScope::External)
        } else if url == self.start {
            None
        } else if is_file(&url) {
            Some(OutOfScope::NotAPage)
        } else if self
            .exclude
            .iter()
            .any(|pattern| pattern.is_match(url.as_str()))
        {
            Some(OutOfScope::Excluded)
        } else if !self.include.is_empty()
            && !self
                .include
                .iter()
                .any(|pattern| pattern.is_match(url.as_str()))
        {
            Some(OutOfScope::NotIncluded)
        } else {
            None
        };
        match reason {
            Some(reason) => Err((url.to_string(), reason)),
            None => Ok(url),
        }
    }
}

/// Whether `url`'s path ends in the extension of a file that is not a page.
fn is_file(url: &Url) -> bool {
    url.path()
        .rsplit_once('.')
        .is_some_and(|(_, extension)| NOT_PAGES.contains(&extension.to_ascii_lowercase().as_str()))
}

/// `url` without its fragment.
pub fn normalise(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_fragment(None);
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(include: &[&str], exclude: &[&str]) -> Scope {
        let owned = |list: &[&str]| {
            list.iter()
                .map(|item| (*item).to_owned())
                .collect::<Vec<_>>()
        };
        Scope::new(
            &Url::parse("http://127.0.0.1:8080/#intro").expect("url"),
            &owned(include),
            &owned(exclude),
        )
        .expect("scope")
    }

    #[test]
    fn only_same_origin_http_in_the_patterns_is_visited() {
        let scope = scope(&[], &["/logout"]);
        let base = Url::parse("http://127.0.0.1:8080/a/").expect("url");
        assert_eq!(scope.start().as_str(), "http://127.0.0.1:8080/");
        assert_eq!(
            scope.judge(&base, "b#x").map(|url| url.to_string()),
            Ok("http://127.0.0.1:8080/a/b".to_owned())
        );
        let reason = |href: &str| scope.judge(&base, href).err().map(|(_, reason)| reason);
        assert_eq!(reason("https://example.com/"), Some(OutOfScope::External));
        assert_eq!(reason("http://127.0.0.1:9090/"), Some(OutOfScope::External));
        assert_eq!(reason("mailto:a@b.test"), Some(OutOfScope::NotHttp));
        assert_eq!(reason("/logout"), Some(OutOfScope::Excluded));
        assert_eq!(reason("/files/Report.PDF"), Some(OutOfScope::NotAPage));
        assert_eq!(
            reason("/v1.2/notes"),
            None,
            "a dot in a folder is no extension"
        );
        assert_eq!(reason("/"), None);
    }

    #[test]
    fn include_patterns_keep_the_start_page() {
        let scope = scope(&["/docs/"], &[]);
        let base = scope.start().clone();
        assert!(scope.judge(&base, "/").is_ok());
        assert!(scope.judge(&base, "/docs/intro").is_ok());
        assert_eq!(
            scope.judge(&base, "/blog").err().map(|(_, reason)| reason),
            Some(OutOfScope::NotIncluded)
        );
    }

    #[test]
    fn a_bad_pattern_names_itself() {
        let error = Scope::new(
            &Url::parse("http://a.test/").expect("url"),
            &[],
            &["(".to_owned()],
        )
        .expect_err("bad");
        assert_eq!((error.list, error.pattern.as_str()), ("exclude", "("));
    }
}
