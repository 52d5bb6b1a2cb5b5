//! The one integration test binary: every test drives the real `prpd` binary against fixture
//! repositories built in temporary directories (see `util::TestRepo`).

mod cache;
mod config_errors;
mod critical_points;
mod detect;
mod discovery;
mod first_hour;
mod gate_settings;
mod healthy;
mod honesty;
mod isolation;
mod junit;
mod layout;
mod leftovers;
mod memory;
mod memory_loop;
mod presets;
mod process;
mod python;
mod qa;
mod real_claude;
mod run;
mod ship;
mod ship_github;
mod snapshots;
mod task_runners;
mod test_plan;
mod util;
mod verify;
mod watch;
mod web_plan;
mod web_plan_processes;
mod web_site;
mod web_workspace;
