//! `[VERIFY]` tasks (seed `002_…`, DESIGN §10): the tasks of a PRP or a ralph-specum
//! `tasks.md` tagged `[VERIFY]`, which prpd verifies itself instead of asking an agent, and
//! reports in the seed's layout ending in `VERIFICATION_PASS` or `VERIFICATION_FAIL`.
//!
//! Theory of operation. [`parse`] (`task.rs`, pure) finds the tasks and what each asks: commands
//! after its colon (`commands.rs` splits them on top-level `&&`), a `Full local CI` (those
//! commands, or the repository's discovered lint, typecheck, test and build), a `CI pipeline
//! passes` (the remote checks of `HEAD` through `prpd-ship/src/github`, `pipeline.rs`), or an `AC
//! checklist` (each `AC-*` traced to the tests named after it and their results, `acceptance.rs`).
//! A [`Runner`] (`runner.rs`) verifies tasks in order; each command goes through the one spawner as
//! a measurement (`command_run.rs`), and a command already run on the same tree is read back, not
//! run twice. What it finds is plain data (`result.rs`), whose verdict is computed in one place;
//! `render.rs` writes the seed's layout and the `.progress.md` entry, `progress.rs` places that
//! entry under `## Learnings`, `checkbox.rs` ticks a passed task's `- [ ]`.
//!
//! Two callers. `prpd verify` (`standalone.rs`) runs a file's tasks, appends to `.progress.md`
//! beside it and ticks the checkboxes of the tasks that passed. The loop runs the PRP's tasks
//! at QA and adds each as a blocking check (`check.rs`, `verify:V4`), so a failed task is a
//! REJECT whose output goes back to GREEN; there the PRP is prpd's frozen input and is never
//! edited, the acceptance criteria are the PRP's own, and a remote CI is left to SHIP's wait.
//!
//! No vacuous pass: a command that cannot be found fails (`command not found: …`; the seed
//! skipped it), as do a timeout, a test command that ran no test, a task with nothing to run,
//! an AC checklist with no criterion or no test named after one, and a remote CI prpd cannot
//! see. Only a criterion marked `(manual)` is skipped.

mod acceptance;
mod check;
mod checkbox;
mod command_run;
mod commands;
mod pipeline;
mod progress;
mod render;
mod result;
mod runner;
mod standalone;
mod task;

pub use check::as_check;
pub use command_run::{Ran, Settings};
pub use progress::append_learning;
pub use render::progress_entry;
pub use result::{
    AcceptanceRow, CommandOutcome, CommandRun, Finding, PipelineFinding, RowStatus, TaskResult,
    TestCounts, Verdict,
};
pub use runner::{Context, Criteria, PipelineMode, Runner};
pub use standalone::{TasksFileError, VerifyError, VerifyRequest, VerifySummary, verify};
pub use task::{BodyField, Checkbox, TaskId, TaskKind, VerifyTask, parse};
