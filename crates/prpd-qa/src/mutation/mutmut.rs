//! mutmut 3's results. mutmut takes no file or line arguments: prpd writes the changed Python
//! files as its `source_paths` into the `pyproject.toml` of the copy it runs in (`only_mutate`
//! when the project names its own `source_paths`). mutmut then writes, per mutated file,
//! `mutants/<file>.meta` (each mutant's test exit code) and `mutants/<file>` (every mutant as
//! a copy of its function, `x_clamp__mutmut_1` beside the original `x_clamp__mutmut_orig`).
//! mutmut reports no line numbers, so prpd finds the line a mutant changes by comparing its
//! function with the original and placing that function in the source file; a mutant it cannot
//! place still counts, since its file changed.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::changed::ChangedLines;
use super::mutant::{Mutant, Status};

/// The extension mutmut mutates.
pub(crate) const EXTENSIONS: &[&str] = &["py"];

/// `[tool.mutmut]` of the copy's `pyproject.toml` (`text`, empty when there is none), set to
/// mutate `files`; the project's other mutmut settings stay.
pub(crate) fn pyproject_with(text: &str, files: &[&str]) -> Result<String, toml::de::Error> {
    let mut document: toml::Table = toml::from_str(text)?;
    let tool = document
        .entry("tool")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(tool) = tool {
        let mutmut = tool
            .entry("mutmut")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let toml::Value::Table(mutmut) = mutmut {
            let list = toml::Value::Array(
                files
                    .iter()
                    .map(|file| toml::Value::String((*file).to_owned()))
                    .collect(),
            );
            let own_paths = ["source_paths", "paths_to_mutate"]
                .into_iter()
                .any(|key| mutmut.contains_key(key));
            let key = if own_paths {
                "only_mutate"
            } else {
                "source_paths"
            };
            mutmut.insert(key.to_owned(), list);
        }
    }
    Ok(toml::to_string(&document).unwrap_or_default())
}

#[derive(Debug, Deserialize)]
struct Meta {
    exit_code_by_key: BTreeMap<String, Option<i64>>,
}

/// The mutants of `file` (its source `source`) from its `.meta` (`meta`) and mutated copy
/// (`mutated`), those placed off the changed lines left out.
pub(crate) fn parse(
    file: &str,
    source: &str,
    meta: &str,
    mutated: &str,
    changed: &ChangedLines,
) -> Result<Vec<Mutant>, serde_json::Error> {
    let meta: Meta = serde_json::from_str(meta)?;
    let mut mutants = Vec::new();
    for (key, exit_code) in meta.exit_code_by_key {
        let placed = place(&key, source, mutated);
        let line = placed.as_ref().map(|(line, _)| *line);
        if line.is_some_and(|line| !changed.contains(file, line)) {
            continue;
        }
        let mutation = match placed {
            Some((_, text)) => format!("`{text}`"),
            None => format!("mutant {key}"),
        };
        mutants.push(Mutant {
            file: file.to_owned(),
            line,
            mutation,
            status: status(exit_code),
        });
    }
    Ok(mutants)
}

/// mutmut's `status_by_exit_code`: 1 and 3 killed, 37 caught by the type checker; 0 survived,
/// 5 and 33 "no tests" (a survivor); 24, 36, 152, 255 and -24 timed out; the rest (not
/// checked, skipped, interrupted, crashed) were not tested.
fn status(exit_code: Option<i64>) -> Status {
    match exit_code {
        Some(1 | 3 | 37) => Status::Killed,
        Some(0 | 5 | 33) => Status::Survived,
        Some(24 | 36 | 152 | 255 | -24) => Status::TimedOut,
        Some(_) | None => Status::Unviable,
    }
}

/// The line of `source` the mutant `key` (`calc.x_clamp__mutmut_1`) changes, and the changed
/// line as the mutant has it.
fn place(key: &str, source: &str, mutated: &str) -> Option<(u32, String)> {
    let (prefix, _) = key.rsplit_once("__mutmut_")?;
    let mangled = prefix.rsplit_once('.').map_or(prefix, |(_, name)| name);
    let original = function(mutated, &format!("{mangled}__mutmut_orig"))?;
    let mutant_name = key.rsplit_once('.').map_or(key, |(_, name)| name);
    let mutant = function(mutated, mutant_name)?;
    let offset = original
        .iter()
        .zip(&mutant)
        .enumerate()
        .skip(1)
        .find(|(_, (before, after))| before != after)
        .map(|(index, _)| index)?;
    // `x_clamp` is `clamp`; a method `xǁCalcǁadd` is `add`.
    let plain = mangled.rsplit_once('ǁ').map_or_else(
        || mangled.strip_prefix("x_").unwrap_or(mangled),
        |(_, name)| name,
    );
    let def_line = source.lines().position(|line| defines(line, plain))?;
    let line = u32::try_from(def_line + offset + 1).ok()?;
    Some((line, mutant[offset].trim().to_owned()))
}

/// Whether `line` starts the definition of the function `name`.
fn defines(line: &str, name: &str) -> bool {
    let line = line.trim_start();
    let line = line.strip_prefix("async ").unwrap_or(line);
    line.strip_prefix("def ")
        .and_then(|rest| rest.strip_prefix(name))
        .is_some_and(|rest| rest.trim_start().starts_with('('))
}

/// The lines of the function `name` in `text`: its `def` line and every line indented deeper
/// after it (blank lines inside included).
fn function<'text>(text: &'text str, name: &str) -> Option<Vec<&'text str>> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|line| defines(line, name))?;
    let indent = indentation(lines[start]);
    let mut body: Vec<&str> = lines[start..]
        .iter()
        .enumerate()
        .take_while(|(index, line)| {
            *index == 0 || line.trim().is_empty() || indentation(line) > indent
        })
        .map(|(_, line)| *line)
        .collect();
    while body.last().is_some_and(|line| line.trim().is_empty()) {
        body.pop();
    }
    Some(body)
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::mutant::Tally;

    /// The real files of `tests/fixtures/mutation/mutmut/` (see its README).
    const SOURCE: &str = include_str!("../../../../tests/fixtures/mutation/mutmut/calc.py");
    const META: &str = include_str!("../../../../tests/fixtures/mutation/mutmut/calc.py.meta");
    const MUTATED: &str =
        include_str!("../../../../tests/fixtures/mutation/mutmut/mutants-calc.py");

    fn changed(start: u32, end: u32) -> ChangedLines {
        let mut changed = ChangedLines::default();
        changed
            .files
            .insert("calc.py".to_owned(), vec![(start, end)]);
        changed
    }

    #[test]
    fn the_captured_run_gives_each_mutant_its_line_and_status() {
        let mutants = parse("calc.py", SOURCE, META, MUTATED, &changed(1, 14)).expect("a run");
        let found: Vec<(Option<u32>, &str, Status)> = mutants
            .iter()
            .map(|mutant| (mutant.line, mutant.mutation.as_str(), mutant.status))
            .collect();
        assert_eq!(
            found,
            [
                (Some(2), "`return a - b`", Status::Killed),
                (Some(10), "`if value <= low:`", Status::Survived),
                (Some(12), "`if value >= high:`", Status::Survived),
                (Some(6), "`return a / b`", Status::Killed),
            ]
        );
    }

    /// The change the run was made on: lines 3 to 14 of `calc.py`.
    const CHANGE: &str = include_str!("../../../../tests/fixtures/mutation/mutmut/change.diff");

    #[test]
    fn mutants_off_the_changed_lines_do_not_count() {
        let change = ChangedLines::from_diff(CHANGE);
        assert_eq!(change.files, changed(3, 14).files);
        let mutants = parse("calc.py", SOURCE, META, MUTATED, &change).expect("a run");
        let mut tally = Tally::default();
        tally.add(mutants);
        assert_eq!((tally.killed, tally.survived), (1, 2));
        assert!(parse("calc.py", SOURCE, "[]", MUTATED, &changed(1, 1)).is_err());
    }

    #[test]
    fn a_mutant_prpd_cannot_place_still_counts() {
        let meta =
            r#"{"exit_code_by_key": {"calc.x_gone__mutmut_1": 1, "calc.x_gone__mutmut_2": null}}"#;
        let mutants = parse("calc.py", SOURCE, meta, MUTATED, &changed(1, 1)).expect("a run");
        assert_eq!(mutants.len(), 2);
        assert_eq!(mutants[0].line, None);
        assert_eq!(mutants[0].mutation, "mutant calc.x_gone__mutmut_1");
        assert_eq!(mutants[1].status, Status::Unviable);
    }

    #[test]
    fn the_changed_files_become_what_mutmut_mutates() {
        let fresh = pyproject_with("", &["calc.py"]).expect("valid");
        assert_eq!(fresh, "[tool.mutmut]\nsource_paths = [\"calc.py\"]\n");
        let own = pyproject_with(
            "[project]\nname = \"calc\"\n\n[tool.mutmut]\nsource_paths = [\"src\"]\n",
            &["src/calc.py"],
        )
        .expect("valid");
        assert!(own.contains("source_paths = [\"src\"]"), "{own}");
        assert!(own.contains("only_mutate = [\"src/calc.py\"]"), "{own}");
        assert!(own.contains("name = \"calc\""), "{own}");
        assert!(pyproject_with("[tool\n", &["a.py"]).is_err());
    }
}
