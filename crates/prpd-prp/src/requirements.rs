//! Assembling a PRP's requirements from what the reader found: the items with the document's
//! own ids first keep them, then every other item gets `R1`, `R2`, … in document order, so the
//! same PRP always yields the same ids and RED's prompt, QA's report and the tests agree.

use std::collections::BTreeSet;

use super::requirement::{IdOrigin, Requirement, RequirementKind, classify};
use super::sections::ValidationCommand;
use super::{Acceptance, Criterion};

/// What the reader found, by kind.
pub(super) struct Found<'a> {
    /// Acceptance criteria (`AC-n`, given or numbered by prpd).
    pub(super) acceptance: &'a [Acceptance],
    /// Items with another id of the document (`FR-001`, `SC-002`, Kiro's `1.2`).
    pub(super) identified: &'a [Acceptance],
    /// Gherkin scenarios: (line, title).
    pub(super) scenarios: &'a [(usize, String)],
    /// Success criteria without an id.
    pub(super) success_criteria: &'a [Criterion],
    /// Final validation checklist items without an id.
    pub(super) checklist: &'a [Criterion],
    /// Validation Loop commands.
    pub(super) validation_commands: &'a [ValidationCommand],
}

/// Every requirement, ordered by line, each id used once.
pub(super) fn assemble(found: &Found<'_>) -> Vec<Requirement> {
    let mut used = BTreeSet::new();
    let mut requirements = Vec::new();
    let identified = found
        .acceptance
        .iter()
        .chain(found.identified)
        .map(|item| (item.line, item.id.clone(), item.text.clone()))
        .chain(
            found
                .scenarios
                .iter()
                .map(|(line, title)| (*line, title.clone(), title.clone())),
        );
    for (line, id, text) in identified {
        if used.insert(id.to_lowercase()) {
            requirements.push(Requirement {
                kind: classify(&text),
                id,
                text,
                line,
                origin: IdOrigin::Document,
            });
        }
    }
    let mut unnamed: Vec<(usize, String, RequirementKind)> = found
        .success_criteria
        .iter()
        .chain(found.checklist)
        .map(|criterion| {
            (
                criterion.line,
                criterion.text.clone(),
                classify(&criterion.text),
            )
        })
        .chain(found.validation_commands.iter().map(|validation| {
            let command = &validation.command;
            let kind = if validation.runnable {
                classify(&format!("`{command}`"))
            } else {
                RequirementKind::Manual {
                    command: command.clone(),
                }
            };
            (
                validation.line,
                format!("`{command}` (Validation Loop)"),
                kind,
            )
        }))
        .collect();
    unnamed.sort_by_key(|(line, _, _)| *line);
    let mut next = 1;
    for (line, text, kind) in unnamed {
        while used.contains(&format!("r{next}")) {
            next += 1;
        }
        let id = format!("R{next}");
        used.insert(id.to_lowercase());
        requirements.push(Requirement {
            id,
            text,
            line,
            origin: IdOrigin::Assigned,
            kind,
        });
    }
    requirements.sort_by_key(|requirement| requirement.line);
    requirements
}
