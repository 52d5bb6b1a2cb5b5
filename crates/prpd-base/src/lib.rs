//! The shared base: what every subsystem stands on and nothing in it knows about QA, PRPs or
//! the loop.
//!
//! It owns process supervision ([`process`], the only place that starts processes), writing
//! prpd's files ([`files`]), the `.prp-session/` layout ([`paths`]), finding the repository a
//! command works on ([`repo`]), the one-prpd-per-repository lock ([`lock`]), the reader of
//! `prpd.toml` and the other configuration files ([`config_file`]; each crate turns the tables
//! it owns into its settings), the exit codes ([`exit`]), the stop request of SIGINT and SIGTERM
//! ([`shutdown`]), a credential that never shows ([`secret`]), and the small vocabulary more
//! than one subsystem speaks: phases ([`phase`]) and the `PRP_PHASE_STATUS` block
//! ([`status_block`]).
//!
//! It uses no other prpd crate; every other one but `prpd-prp` uses it.

pub mod config_file;
pub mod exit;
pub mod files;
pub mod lock;
pub mod markup;
pub mod paths;
pub mod phase;
pub mod process;
pub mod repo;
pub mod secret;
pub mod shutdown;
pub mod status_block;
