//! The layout rules of `ARCHITECTURE.md`, checked on the source tree so they stay true: imports
//! only point down the subsystem order, no two modules of a subsystem import each other through
//! any chain, and no file passes 800 lines unless ARCHITECTURE.md says why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// The subsystems from the bottom up: a module may import from its own subsystem and the ones
/// before it. A new top-level module must be placed here.
const ORDER: [&str; 10] = [
    "base",
    "browser",
    "prp",
    "qa",
    "memory",
    "ship",
    "protocols",
    "run",
    "watch",
    "cli",
];

/// Lines a file may have before ARCHITECTURE.md must name it under "Long files".
const MAX_LINES: usize = 800;

/// One source file: its module path (`run::machine`) and its text.
struct SourceFile {
    path: PathBuf,
    module: Vec<String>,
    text: String,
}

fn source_files() -> Vec<SourceFile> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&src, &src, &mut files);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

fn collect(src: &Path, dir: &Path, files: &mut Vec<SourceFile>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("read src/ entry").path();
        if path.is_dir() {
            collect(src, &path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let relative = path.strip_prefix(src).expect("under src/");
            let mut module: Vec<String> = relative
                .with_extension("")
                .components()
                .map(|component| component.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|last| last == "mod") {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).expect("read a source file");
            files.push(SourceFile { path, module, text });
        }
    }
}

/// The module a `crate::…` path points into, cut to subsystem and unit (`run::machine`).
fn unit_of(module: &[String]) -> Option<(String, String)> {
    let subsystem = module.first()?.clone();
    let unit = match module.get(1) {
        Some(second) => format!("{subsystem}::{second}"),
        None => subsystem.clone(),
    };
    Some((subsystem, unit))
}

fn rank(subsystem: &str) -> Option<usize> {
    ORDER.iter().position(|name| *name == subsystem)
}

/// Every `crate::a::b` path in `text`, as its segments (lowercase segments only: modules).
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let pattern = Regex::new(r"crate::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)").expect("regex");
    pattern
        .captures_iter(text)
        .map(|captures| captures[1].split("::").map(str::to_owned).collect())
        .collect()
}

#[test]
fn imports_only_point_down_the_subsystem_order() {
    let mut violations = Vec::new();
    for file in source_files() {
        assert!(
            !file.text.contains("crate::{"),
            "{}: name one subsystem path per `use crate::…` so this test can read it",
            file.path.display()
        );
        let Some((from, _)) = unit_of(&file.module) else {
            continue;
        };
        if matches!(from.as_str(), "lib" | "main") {
            continue;
        }
        let from_rank = rank(&from).unwrap_or_else(|| {
            panic!(
                "{}: subsystem `{from}` is not in ORDER",
                file.path.display()
            )
        });
        for path in crate_paths(&file.text) {
            let Some((to, _)) = unit_of(&path) else {
                continue;
            };
            let to_rank = rank(&to)
                .unwrap_or_else(|| panic!("{}: `crate::{to}` unknown", file.path.display()));
            if to_rank > from_rank {
                violations.push(format!(
                    "{} ({from}) imports crate::{} ({to} is above {from})",
                    file.path.display(),
                    path.join("::")
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn no_import_circle_between_the_modules_of_a_subsystem() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in source_files() {
        let Some((_, from)) = unit_of(&file.module) else {
            continue;
        };
        for path in crate_paths(&file.text) {
            let Some((_, to)) = unit_of(&path) else {
                continue;
            };
            if to != from && to.contains("::") && from.contains("::") {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    let circles = circles(&edges);
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles
            .iter()
            .map(|circle| circle.join(" -> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Each circle in the graph, as a path that starts and ends at the same module.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        found: &mut Vec<Vec<String>>,
    ) {
        if let Some(position) = stack.iter().position(|entry| entry == node) {
            let mut circle = stack[position..].to_vec();
            circle.push(node.to_owned());
            found.push(circle);
            return;
        }
        if done.contains(node) {
            return;
        }
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            visit(next, edges, stack, done, found);
        }
        stack.pop();
        done.insert(node.to_owned());
    }
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        visit(node, edges, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

#[test]
fn no_file_passes_800_lines_unless_architecture_md_says_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("read ARCHITECTURE.md");
    let long_files = architecture
        .split("### Long files")
        .nth(1)
        .and_then(|section| section.split("\n#").next())
        .unwrap_or("");
    let mut too_long = Vec::new();
    for file in source_files() {
        let lines = file.text.lines().count();
        let relative = file.path.strip_prefix(root).expect("under the package");
        let named = format!("`{}`", relative.display());
        if lines > MAX_LINES && !long_files.contains(&named) {
            too_long.push(format!("{} has {lines} lines", relative.display()));
        }
    }
    assert!(
        too_long.is_empty(),
        "split these files, or say why under \"### Long files\" in ARCHITECTURE.md:\n{}",
        too_long.join("\n")
    );
}

#[test]
fn the_circle_finder_finds_a_circle_and_nothing_else() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges
        .entry("run::a".into())
        .or_default()
        .insert("run::b".into());
    edges
        .entry("run::b".into())
        .or_default()
        .insert("run::c".into());
    assert!(circles(&edges).is_empty());
    edges
        .entry("run::c".into())
        .or_default()
        .insert("run::a".into());
    assert_eq!(
        circles(&edges),
        vec![vec!["run::a", "run::b", "run::c", "run::a"]]
    );
}
