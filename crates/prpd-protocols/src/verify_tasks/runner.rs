//! Verifying tasks one after the other, no agent involved: each kind of task goes to what
//! verifies it (its commands, the discovered local CI, the acceptance criteria, the remote
//! CI), and every command run is kept so a later task on the same tree reads it back instead
//! of running it again.
//!
//! A local CI with no command after its colon runs the project's discovered commands in the
//! seed's order (lint, typecheck, test, build), each judged again on the tree as it is before
//! it runs (`discover::judge_now`, as QA does); a stack default prpd only guessed is skipped
//! and named, except the test command; no test command at all fails the task, loudly. In a
//! command list, once a command fails the rest are skipped (`SKIPPED (… failed first)`).

use std::path::PathBuf;

use super::acceptance::{self, TestEvidence};
use super::command_run::{Ran, Settings, run_command};
use super::pipeline;
use super::result::{CommandOutcome, CommandRun, Finding, TaskResult};
use super::task::{TaskKind, VerifyTask};
use prpd_base::process::{ProcessError, Termination};
use prpd_prp::Acceptance;
use prpd_qa::command::CommandKind;
use prpd_qa::discover::{self, Detection};
use prpd_ship::config::ShipConfig;

/// The local CI's kinds of command, in the seed's order.
const LOCAL_CI: [CommandKind; 4] = [
    CommandKind::Lint,
    CommandKind::Typecheck,
    CommandKind::Test,
    CommandKind::Build,
];

/// What an AC checklist checks: the criteria and where they were read.
#[derive(Debug, Clone)]
pub struct Criteria {
    pub items: Vec<Acceptance>,
    /// The file they came from, as the output names it.
    pub source: String,
}

/// What a `CI pipeline passes` task does.
#[derive(Debug, Clone)]
pub enum PipelineMode {
    /// Ask GitHub for the checks of `HEAD` (`prpd verify`).
    Ask(Box<ShipConfig>),
    /// In the loop: SHIP waits for the remote checks after the push (when `waits`); QA reports
    /// the task as deferred, neither passed nor failed.
    DeferredToShip { waits: bool },
}

/// Everything verifying needs besides the tasks.
#[derive(Debug, Clone)]
pub struct Context {
    /// How commands run (the repository, timeout, grace, the test command).
    pub settings: Settings,
    /// The repository's commands, from discovery and its configuration.
    pub detection: Detection,
    /// Where command logs go.
    pub logs: PathBuf,
    pub criteria: Criteria,
    pub pipeline: PipelineMode,
}

/// Verifies tasks, keeping the commands it ran.
#[derive(Debug)]
pub struct Runner {
    context: Context,
    ran: Vec<Ran>,
    logs_written: usize,
}

impl Runner {
    /// A runner; `ran` are commands already run on this tree (QA's checks in the loop).
    pub fn new(context: Context, ran: Vec<Ran>) -> Runner {
        Runner {
            context,
            ran,
            logs_written: 0,
        }
    }

    /// Verifies `task`.
    pub async fn verify(&mut self, task: &VerifyTask) -> Result<TaskResult, ProcessError> {
        let heading = task.heading();
        let finding = match &task.kind {
            TaskKind::Commands(commands) => {
                let planned = commands.iter().map(|command| Planned::Run(command.clone()));
                Finding::Commands(self.run_all(planned.collect(), &heading).await?)
            }
            TaskKind::LocalCi(given) if !given.is_empty() => {
                let planned = given.iter().map(|command| Planned::Run(command.clone()));
                Finding::Commands(self.run_all(planned.collect(), &heading).await?)
            }
            TaskKind::LocalCi(_) => {
                let planned = local_ci(&self.context.detection, &self.context.settings.repo);
                Finding::Commands(self.run_all(planned, &heading).await?)
            }
            TaskKind::Pipeline => match &self.context.pipeline {
                PipelineMode::Ask(ship) => Finding::Pipeline(
                    pipeline::remote_checks(&self.context.settings.repo, ship).await,
                ),
                PipelineMode::DeferredToShip { waits: true } => Finding::Deferred(
                    "SHIP waits for the remote checks of the pushed commit; a failed check \
                     sends the run back to GREEN like a REJECT"
                        .to_owned(),
                ),
                PipelineMode::DeferredToShip { waits: false } => Finding::Deferred(
                    "but `[ship] wait_for_checks` is false, so nothing waits for the remote \
                     CI: set it to true in prpd.toml to have this task verified"
                        .to_owned(),
                ),
            },
            TaskKind::AcceptanceChecklist => self.acceptance(&heading).await?,
            TaskKind::NothingToRun => Finding::NothingToRun(format!(
                "\"{}\" names no kind of task prpd runs (Full local CI, CI pipeline passes, AC \
                 checklist) and no command follows a colon; write the commands after a colon, \
                 as in `- [ ] V1 [VERIFY] Quality check: npm run lint && npm test`",
                task.title
            )),
        };
        Ok(TaskResult {
            task: task.clone(),
            finding,
        })
    }

    /// Runs `planned` in order; after the first failure the rest are skipped.
    async fn run_all(
        &mut self,
        planned: Vec<Planned>,
        heading: &str,
    ) -> Result<Vec<CommandRun>, ProcessError> {
        let mut runs: Vec<CommandRun> = Vec::new();
        let mut failed_first: Option<String> = None;
        for step in planned {
            let run = match (step, &failed_first) {
                (Planned::Run(command) | Planned::Refused(command, _), Some(first)) => {
                    skipped(command, format!("{first} failed first"))
                }
                (Planned::Skip(command, why), _) => skipped(command, why),
                (Planned::Refused(command, why), None) => CommandRun {
                    outcome: CommandOutcome::Failed(why),
                    ..skipped(command, String::new())
                },
                (Planned::Run(command), None) => self.command(&command, heading).await?,
            };
            if matches!(run.outcome, CommandOutcome::Failed(_)) && failed_first.is_none() {
                failed_first = Some(run.command.clone());
            }
            runs.push(run);
        }
        Ok(runs)
    }

    /// Runs `command` (or reads back its earlier run on this tree).
    async fn command(&mut self, command: &str, heading: &str) -> Result<CommandRun, ProcessError> {
        self.logs_written += 1;
        let log = self.context.logs.join(format!(
            "{:02}-{}.log",
            self.logs_written,
            file_name(heading)
        ));
        let (run, fresh) =
            run_command(&self.context.settings, command, &log, &self.ran, heading).await?;
        self.ran.extend(fresh);
        Ok(run)
    }

    /// The AC checklist: the test command's run (fresh or read back), then each criterion.
    async fn acceptance(&mut self, heading: &str) -> Result<Finding, ProcessError> {
        let criteria = self.context.criteria.clone();
        if criteria.items.is_empty() {
            return Ok(Finding::Acceptance {
                source: criteria.source,
                rows: Vec::new(),
            });
        }
        let test_command = self
            .context
            .detection
            .command(CommandKind::Test)
            .map(str::to_owned);
        let files = acceptance::gather(&self.context.settings.repo, &criteria.items);
        let rows = match test_command {
            None => {
                let why = no_test_command(&self.context.detection);
                acceptance::judge(&criteria.items, TestEvidence::Unavailable(&why), &files)
            }
            Some(command) => {
                let run = self.command(&command, heading).await?;
                let ran = self
                    .ran
                    .iter()
                    .rev()
                    .find(|ran| ran.command == command && run.log.as_ref() == Some(&ran.log));
                match ran {
                    Some(ran) if matches!(ran.termination, Termination::Exited(code) if code != 126 && code != 127) => {
                        acceptance::judge(
                            &criteria.items,
                            TestEvidence::Ran {
                                command: &command,
                                cases: ran.metrics.test_cases(),
                            },
                            &files,
                        )
                    }
                    Some(_) | None => {
                        let why = match &run.outcome {
                            CommandOutcome::Failed(why) | CommandOutcome::Skipped(why) => {
                                format!("the test command `{command}` gave no usable run: {why}")
                            }
                            CommandOutcome::Passed => {
                                format!("the test command `{command}` left no output to read")
                            }
                        };
                        acceptance::judge(&criteria.items, TestEvidence::Unavailable(&why), &files)
                    }
                }
            }
        };
        Ok(Finding::Acceptance {
            source: criteria.source,
            rows,
        })
    }
}

/// One step of a command list.
#[derive(Debug, Clone)]
enum Planned {
    /// Run it.
    Run(String),
    /// Do not run it; the text says why (a guessed command).
    Skip(String, String),
    /// It fails without running; the text says why (no test command, refused on the tree).
    Refused(String, String),
}

fn skipped(command: String, why: String) -> CommandRun {
    CommandRun {
        command,
        outcome: CommandOutcome::Skipped(why),
        counts: None,
        tail: String::new(),
        log: None,
        reused_from: None,
        duration: std::time::Duration::ZERO,
    }
}

/// The discovered local CI of `detection`, each command judged on the tree at `repo`.
fn local_ci(detection: &Detection, repo: &std::path::Path) -> Vec<Planned> {
    let mut planned = Vec::new();
    for kind in LOCAL_CI {
        let Some(Some(found)) = detection.commands.get(&kind) else {
            if kind == CommandKind::Test {
                planned.push(Planned::Refused(
                    "(test)".to_owned(),
                    no_test_command(detection),
                ));
            }
            continue;
        };
        if found.fallback && kind != CommandKind::Test {
            planned.push(Planned::Skip(
                found.command.clone(),
                format!(
                    "not declared by the project: prpd's guess from {}",
                    found.source
                ),
            ));
        } else if let Err(reason) = discover::judge_now(repo, found) {
            planned.push(Planned::Refused(
                found.command.clone(),
                format!(
                    "not run: read again before it ran ({}), it {reason}",
                    found.source
                ),
            ));
        } else {
            planned.push(Planned::Run(found.command.clone()));
        }
    }
    planned
}

/// Why there is no test run: discovery found no test command.
fn no_test_command(detection: &Detection) -> String {
    let stacks: Vec<&str> = detection
        .stacks
        .iter()
        .map(|stack| stack.id.as_str())
        .collect();
    let stacks = if stacks.is_empty() {
        "no stack detected".to_owned()
    } else {
        format!("stacks: {}", stacks.join(", "))
    };
    format!(
        "no test command found ({stacks}); prpd looked in package.json scripts, Makefile and \
         justfile targets, CI configuration, pyproject/tox and the tools mapping's defaults. \
         Declare one, or set `[commands] test` in prpd.toml: without tests nothing is verified"
    )
}

/// `V4 [VERIFY] Full local CI` → `V4-VERIFY-Full-local-CI`, for a log's name.
fn file_name(heading: &str) -> String {
    let name: String = heading
        .chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() || character == '.' {
                character
            } else {
                '-'
            }
        })
        .collect();
    let mut collapsed = String::new();
    for part in name.split('-').filter(|part| !part.is_empty()) {
        if !collapsed.is_empty() {
            collapsed.push('-');
        }
        collapsed.push_str(part);
    }
    collapsed.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_are_plain() {
        assert_eq!(
            file_name("V4 [VERIFY] Full local CI"),
            "V4-VERIFY-Full-local-CI"
        );
        assert_eq!(file_name("[VERIFY] x/y (line 3)"), "VERIFY-x-y-line-3");
    }
}
