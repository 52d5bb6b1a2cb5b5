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
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use crate::UiError;

/// The token's length in bytes (64 hexadecimal digits).
const BYTES: usize = 32;

/// The repository's dashboard token.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// The token in `path`, made (owner-only) when there is none or what is there is not one.
    /// A token file others could read is made owner-only again.
    pub fn load_or_create(path: &Path) -> Result<Token, UiError> {
        let failed = |source| UiError::Token {
            path: path.to_path_buf(),
            source,
        };
        match std::fs::read_to_string(path) {
            Ok(text) if is_token(text.trim()) => {
                let mode = std::fs::metadata(path)
                    .map_err(failed)?
                    .permissions()
                    .mode();
                if mode & 0o077 != 0 {
                    tracing::warn!(path = %path.display(), "the dashboard token was readable by others; made owner-only");
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                        .map_err(failed)?;
                }
                return Ok(Token(text.trim().to_owned()));
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(failed(error)),
        }
        let token = Token(random_hex().map_err(failed)?);
        write_owner_only(path, &token.0).map_err(failed)?;
        Ok(token)
    }

    /// Whether `offered` is the token, compared in time that does not depend on where they
    /// differ.
    pub fn matches(&self, offered: &str) -> bool {
        let expected = self.0.as_bytes();
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

    /// The token itself, for the URL `prpd ui` prints.
    pub fn reveal(&self) -> &str {
        &self.0
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

/// Writes `text` to `path` through a temporary file created owner-only, then renamed over it:
/// at no moment can another user read the token.
fn write_owner_only(path: &Path, text: &str) -> std::io::Result<()> {
    let temporary = PathBuf::from(format!("{}.tmp", path.display()));
    let _ = std::fs::remove_file(&temporary);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_owner_only_once_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ui.token");
        let token = Token::load_or_create(&path).expect("made");
        assert_eq!(token.reveal().len(), 64);
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let again = Token::load_or_create(&path).expect("kept");
        assert_eq!(again.reveal(), token.reveal());
        assert!(token.matches(again.reveal()));
        assert!(!token.matches(""));
        assert!(!token.matches(&"0".repeat(64)));
        assert!(!token.matches(&token.reveal()[..63]));
    }

    #[test]
    fn a_readable_token_is_made_owner_only_and_garbage_is_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ui.token");
        let known = "ab".repeat(32);
        std::fs::write(&path, &known).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let token = Token::load_or_create(&path).expect("loaded");
        assert_eq!(token.reveal(), known);
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        std::fs::write(&path, "not a token").expect("write");
        let fresh = Token::load_or_create(&path).expect("replaced");
        assert_ne!(fresh.reveal(), "not a token");
        assert!(is_token(fresh.reveal()));
        assert!(!format!("{fresh:?}").contains(fresh.reveal()));
    }
}
