//! `prpd detect`'s human output: the stacks, the package manager, then the seed's "Quality
//! Commands" table, and the candidates refused as unsafe.

use std::fmt::Write as _;

use super::{Detection, PackageManager};
use crate::qa::command::CommandKind;

impl Detection {
    /// The human report: stacks, package manager, then the seed's "Quality Commands" table
    /// with "Not found" for missing kinds, and the unsafe commands that were skipped.
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
        let _ = writeln!(out, "| Type | Command | Source |");
        let _ = writeln!(out, "|------|---------|--------|");
        for kind in CommandKind::ALL {
            match self.commands.get(&kind).and_then(Option::as_ref) {
                Some(found) => {
                    let _ = writeln!(
                        out,
                        "| {} | `{}` | {} |",
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

/// `text` made safe for a Markdown table cell: a `|` would end the cell.
fn table_cell(text: &str) -> String {
    text.replace('|', r"\|")
}
