//! The error of a command-line argument that names something that is not there or cannot be
//! used (`--repo`, `--dir`, an existing prpd.toml for `prpd init`): the user's to fix, exit 2.

/// A command-line argument that names something that is not there or cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub(crate) String);
