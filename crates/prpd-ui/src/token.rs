//! The dashboard's token: the secret a browser must send, in the `X-Prpd-Token` header, before
//! the dashboard resumes or aborts a run. A header and not a cookie: a page of another site can
//! make a browser send its cookies to `127.0.0.1`, but it cannot set a custom header on a
//! cross-site request without a CORS preflight, which the dashboard never grants.
//!
//! One token per repository, in `.prp-session/ui.token` (mode 0600), made once from the
//! kernel's random source and kept, so a tab opened before a restart still works. `prpd ui`
//! prints it in the URL's fragment (`#token=…`), which browsers never send to a server or put
//! in a `Referer`.

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use prpd_base::secret::Secret;

use crate::UiError;

/// The token's length in bytes (64 hexadecimal digits).
const BYTES: usize = 32;

/// The repository's dashboard token.
#[derive(Debug, Clone)]
pub struct Token(Secret);

impl Token {
    /// The token in `path`, when there is a sound one: 64 hexadecimal digits that only the
    /// owner can read.
    pub fn load(path: &Path) -> Result<Option<Token>, UiError> {
        let failed = |source| UiError::Token {
            path: path.to_path_buf(),
            source,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(failed(error)),
        };
        let mode = std::fs::metadata(path)
            .map_err(failed)?
            .permissions()
            .mode();
        if !is_token(text.trim()) || mode & 0o077 != 0 {
            return Ok(None);
        }
        Ok(Some(Token(Secret::new(text.trim()))))
    }

    /// The token in `path`, made owner-only when there is none or what is there is not sound.
    /// A token others could read may have leaked, so it is replaced, not made owner-only.
    /// Two processes making one at once agree on the file's: the second finds it there.
    pub fn load_or_create(path: &Path) -> Result<Token, UiError> {
        let failed = |source| UiError::Token {
            path: path.to_path_buf(),
            source,
        };
        if let Some(token) = Token::load(path)? {
            return Ok(token);
        }
        match std::fs::remove_file(path) {
            Ok(()) => {
                tracing::warn!(path = %path.display(), "the dashboard token was unsound or readable by others; made a new one");
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(failed(error)),
        }
        let hex = random_hex().map_err(failed)?;
        let directory = path.parent().unwrap_or(Path::new("."));
        // A named temporary file is created owner-only: at no moment can another user read it.
        let mut file = tempfile::NamedTempFile::new_in(directory).map_err(failed)?;
        file.write_all(hex.as_bytes()).map_err(failed)?;
        file.write_all(b"\n").map_err(failed)?;
        file.as_file().sync_all().map_err(failed)?;
        match file.persist_noclobber(path) {
            Ok(_) => Ok(Token(Secret::new(hex))),
            Err(persist) if persist.error.kind() == std::io::ErrorKind::AlreadyExists => {
                Token::load(path)?.ok_or_else(|| failed(persist.error))
            }
            Err(persist) => Err(failed(persist.error)),
        }
    }

    /// Whether `offered` is the token, compared in time that does not depend on where they
    /// differ.
    pub fn matches(&self, offered: &str) -> bool {
        let expected = self.0.expose().as_bytes();
        let offered = offered.as_bytes();
        if expected.len() != offered.len() {
            return false;
        }
        expected
            .iter()
            .zip(offered)
            .fold(0u8, |difference, (a, b)| difference | (a ^ b))
            == 0
    }

    /// What a dashboard says of itself in its `X-Prpd-Dashboard` header: a hash of its token,
    /// so `prpd ui` can tell the repository's dashboard from whatever else listens on a port
    /// a stale address names, without anyone learning the token.
    pub fn fingerprint(&self) -> String {
        prpd_base::files::content_hash(self.0.expose().as_bytes())
    }

    /// The token itself, for the URL `prpd ui` prints and the header a request carries.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }
}

fn is_token(text: &str) -> bool {
    text.len() == BYTES * 2 && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; BYTES];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_owner_only_once_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ui.token");
        assert!(Token::load(&path).expect("none yet").is_none());
        let token = Token::load_or_create(&path).expect("made");
        assert_eq!(token.expose().len(), 64);
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let again = Token::load_or_create(&path).expect("kept");
        assert_eq!(again.expose(), token.expose());
        assert_eq!(
            Token::load(&path)
                .expect("read")
                .map(|token| token.fingerprint()),
            Some(token.fingerprint())
        );
        assert!(token.matches(again.expose()));
        assert!(!token.matches(""));
        assert!(!token.matches(&"0".repeat(64)));
        assert!(!token.matches(&token.expose()[..63]));
    }

    #[test]
    fn a_readable_token_is_replaced_and_so_is_garbage() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ui.token");
        let leaked = "ab".repeat(32);
        std::fs::write(&path, &leaked).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        assert!(Token::load(&path).expect("read").is_none());
        let token = Token::load_or_create(&path).expect("replaced");
        assert_ne!(token.expose(), leaked);
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        std::fs::write(&path, "not a token").expect("write");
        let fresh = Token::load_or_create(&path).expect("replaced");
        assert!(is_token(fresh.expose()));
        assert!(!format!("{fresh:?}").contains(fresh.expose()));
    }
}
