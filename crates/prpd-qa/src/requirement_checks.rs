//! The checks that measure a PRP's command criteria: a criterion such as `` `make test`
//! passes `` or a `## Validation Loop` command is evidence prpd can produce itself, so QA runs
//! it like any check of the checklist (same process rules, environment and logs) under the id
//! `F2-<requirement id>`, and F2 reads its result.
//!
//! A PRP is text anyone may write, so its commands pass the same safety rule as discovered
//! commands: one that would rewrite the tree (`ruff check --fix`, `prettier --write`) runs in
//! its check form when it has one, and is otherwise not run at all — the check is disabled
//! with the reason and the requirement is left for a person to judge, never passed.

use std::path::Path;

use crate::checklist::{Action, Category, CheckSpec, Severity, Validation};
use crate::discover::{self, Discovered};
use crate::method;
use crate::safety;
use prpd_prp::Prp;

/// Flags that only make a checker fix what it finds; without them it checks.
const FIX_FLAGS: &[&str] = &["--fix", "--fix-only", "--unsafe-fixes", "--write", "-w"];

/// One blocking, optional check per command the PRP's criteria name (two criteria naming the
/// same command share one), in the order of the PRP. The Makefile target, script or recipe
/// behind a command is judged again as it is in `repo` now (`discover::judge_now`), as for a
/// discovered command: an agent that rewrote it to publish or push gets it refused.
pub(crate) fn requirement_checks(prp: &Prp, repo: &Path) -> Vec<CheckSpec> {
    method::command_checks(prp)
        .into_iter()
        .map(|check| {
            let written = &check.command;
            let judged = safe_form(written).and_then(|command| {
                let behind = Discovered {
                    command: command.clone(),
                    source: format!("the PRP's criterion {}", check.requirements.join(", ")),
                    fallback: false,
                    configured: false,
                };
                discover::judge_now(repo, &behind).map(|()| command)
            });
            let (command, disabled) = match judged {
                Ok(command) => (command, None),
                Err(reason) => (
                    written.clone(),
                    Some(format!(
                        "not run: `{written}` {reason}; QA must not change the tree, publish or push"
                    )),
                ),
            };
            CheckSpec {
                id: check.id,
                category: Category::Functionality,
                criterion: format!("{}: `{written}` passes", check.requirements.join(", ")),
                validation: Validation::parse("exit_code == 0")
                    .expect("a fixed, valid expression"),
                action: Action::Command(command),
                severity: Severity::Blocking,
                optional: true,
                timeout: None,
                disabled,
            }
        })
        .collect()
}

/// `command` as QA may run it: as written when it is safe, else in its check form (fix
/// flags dropped, formatters switched to their check mode), else why not.
fn safe_form(command: &str) -> Result<String, safety::Unsafe> {
    let reason = match safety::is_safe(command) {
        Ok(()) => return Ok(command.to_owned()),
        Err(reason) => reason,
    };
    let without_fixes: String = command
        .split_whitespace()
        .filter(|word| !FIX_FLAGS.contains(word))
        .collect::<Vec<_>>()
        .join(" ");
    if safety::is_safe(&without_fixes).is_ok() {
        return Ok(without_fixes);
    }
    safety::check_mode(command).ok_or(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_criteria_become_checks_in_their_check_form_or_are_refused() {
        let prp = prpd_prp::parse(
            Path::new("PRPs/x.md"),
            "# X\n\n## Success Criteria\n\n- [ ] `make test` passes\n\
             - [ ] `ruff check src/ --fix` is clean\n- [ ] `prettier --write .` passes\n\
             - [ ] `npm publish` succeeds\n- [ ] multiply works\n",
        )
        .expect("parses");
        let repo = tempfile::tempdir().expect("a folder");
        std::fs::write(
            repo.path().join("Makefile"),
            "test:\n\tpython3 -m unittest\n",
        )
        .expect("a Makefile");
        let checks: Vec<(String, String, Option<String>)> = requirement_checks(&prp, repo.path())
            .into_iter()
            .map(|check| {
                let Action::Command(command) = check.action else {
                    panic!("a command check");
                };
                (check.id, command, check.disabled)
            })
            .collect();
        assert_eq!(checks.len(), 4, "{checks:?}");
        assert_eq!(
            checks[0],
            ("F2-R1".to_owned(), "make test".to_owned(), None)
        );
        assert_eq!(
            checks[1],
            ("F2-R2".to_owned(), "ruff check src/".to_owned(), None)
        );
        assert_eq!(checks[2].0, "F2-R3");
        assert_eq!(checks[2].1, "prettier --check .");
        assert!(checks[2].2.is_none());
        assert_eq!(checks[3].1, "npm publish");
        assert!(
            checks[3]
                .2
                .as_deref()
                .is_some_and(|why| why.starts_with("not run: `npm publish`")),
            "{checks:?}"
        );
    }
}
