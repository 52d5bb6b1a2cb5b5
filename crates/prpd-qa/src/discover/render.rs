//! `prpd detect`'s human output: the stacks, the package manager, then the seed's "Quality
//! Commands" table (a command prpd guessed says so), every sub-project's own table, and the
//! candidates refused as unsafe.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Detection, Discovered, PackageManager};
use crate::command::CommandKind;

impl Detection {
    /// The human report: stacks, package manager, then the seed's "Quality Commands" table
    /// with "Not found" for missing kinds and "fallback" for guessed ones, the sub-projects,
    /// and the unsafe commands that were skipped.
    pub fn render_table(&self) -> String {
        let mut out = String::new();
        let stacks = if self.stacks.is_empty() {
            "none found".to_owned()
        } else {
            self.stacks
                .iter()
                .map(|stack| format!("{} ({})", stack.id, stack.path.display()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let package_manager = self.package_manager.map_or("none", PackageManager::name);
        let _ = writeln!(out, "Stacks: {stacks}");
        let _ = writeln!(out, "Package manager: {package_manager}");
        let _ = writeln!(out);
        let _ = writeln!(out, "## Quality Commands");
        let _ = writeln!(out);
        write_commands(&mut out, &self.commands);
        let guessed = fallback_kinds(&self.commands);
        let subproject_guesses = self
            .subprojects
            .iter()
            .any(|subproject| !fallback_kinds(&subproject.commands).is_empty());
        if !self.subprojects.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "## Sub-projects");
            for subproject in &self.subprojects {
                let path = subproject.path.display();
                let _ = writeln!(out);
                let _ = writeln!(
                    out,
                    "### {path} ({}; package manager: {})",
                    subproject.stacks.join(", "),
                    subproject
                        .package_manager
                        .map_or("none", PackageManager::name)
                );
                let _ = writeln!(out);
                write_commands(&mut out, &subproject.commands);
                let _ = writeln!(out);
                let _ = writeln!(out, "Gate it alone: `prpd qa --path {path}`");
            }
        }
        if !guessed.is_empty() || subproject_guesses {
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "A *fallback* is a stack default of qa-tools-mapping.yml: the project declares no \
                 such command, so prpd guessed it{}. Declare the command (a package.json \
                 script, a Makefile target, a CI step) or set it in prpd.toml `[commands]`.",
                if guessed.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", guessed.join(", "))
                }
            );
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "Skipped as unsafe:");
            for skipped in &self.skipped {
                let _ = writeln!(
                    out,
                    "- {}: `{}` ({}): it {}",
                    skipped.kind.label(),
                    skipped.command,
                    skipped.source,
                    skipped.reason
                );
            }
        }
        out
    }
}

/// The "Quality Commands" table of one set of commands.
fn write_commands(out: &mut String, commands: &BTreeMap<CommandKind, Option<Discovered>>) {
    let _ = writeln!(out, "| Type | Command | Source |");
    let _ = writeln!(out, "|------|---------|--------|");
    for kind in CommandKind::ALL {
        match commands.get(&kind).and_then(Option::as_ref) {
            Some(found) => {
                let marker = if found.fallback { "fallback: " } else { "" };
                let _ = writeln!(
                    out,
                    "| {} | `{}` | {marker}{} |",
                    kind.label(),
                    table_cell(&found.command),
                    table_cell(&found.source)
                );
            }
            None => {
                let _ = writeln!(out, "| {} | Not found | - |", kind.label());
            }
        }
    }
}

/// The names of the kinds whose command is a fallback.
fn fallback_kinds(commands: &BTreeMap<CommandKind, Option<Discovered>>) -> Vec<&'static str> {
    commands
        .iter()
        .filter(|(_, found)| found.as_ref().is_some_and(|found| found.fallback))
        .map(|(kind, _)| kind.name())
        .collect()
}

/// `text` made safe for a Markdown table cell: a `|` would end the cell.
fn table_cell(text: &str) -> String {
    text.replace('|', r"\|")
}
