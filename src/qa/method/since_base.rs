//! Documentation judged on what a run added. Inside a run, the README and CHANGELOG checks look
//! only at the lines added since the run's base: a README that mentioned the feature before the
//! agents started (or one stuffed with keywords that were always there) proves nothing about
//! the work being documented. Standalone `prpd qa` has no base and reads whole files.

use std::collections::{BTreeMap, HashMap};

/// The text of the documentation files at the run's base, by path relative to the repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaseDocs {
    texts: BTreeMap<String, String>,
}

impl BaseDocs {
    /// The base's documentation texts (files missing at the base are simply absent).
    pub fn new(texts: BTreeMap<String, String>) -> BaseDocs {
        BaseDocs { texts }
    }

    /// `text` (the file `name` now) with every line that was already there at the base blanked
    /// out, so line numbers stay right and only added lines can match.
    pub fn added_lines(&self, name: &str, text: &str) -> String {
        let mut before: HashMap<&str, usize> = HashMap::new();
        for line in self.texts.get(name).map_or("", String::as_str).lines() {
            *before.entry(line).or_default() += 1;
        }
        let mut added = String::with_capacity(text.len());
        for line in text.lines() {
            match before.get_mut(line) {
                Some(count) if *count > 0 => *count -= 1,
                Some(_) | None => added.push_str(line),
            }
            added.push('\n');
        }
        added
    }
}

/// What a README or CHANGELOG check reads: inside a run, only the lines the run added to the
/// file `name`, and a name that says so; standalone, the whole file.
pub(super) fn judged_text(base: Option<&BaseDocs>, name: String, text: String) -> (String, String) {
    match base {
        Some(base) => (
            base.added_lines(&name, &text),
            format!("{name} (the lines added since the run started)"),
        ),
        None => (text, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_added_lines_remain_in_place() {
        let base = BaseDocs::new(BTreeMap::from([(
            "README.md".to_owned(),
            "# calc\n\n- `multiply(a, b)`: old\n".to_owned(),
        )]));
        assert_eq!(
            base.added_lines(
                "README.md",
                "# calc\n\n- `multiply(a, b)`: old\n- `divide`\n"
            ),
            "\n\n\n- `divide`\n"
        );
        assert_eq!(base.added_lines("CHANGELOG.md", "- new\n"), "- new\n");
    }
}
