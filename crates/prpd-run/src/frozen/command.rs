//! The files a test command runs through: followed from the command line into the Makefile or
//! justfile recipe, or the `package.json` script, it names (and the scripts and targets those
//! run in turn), so that a script such as `scripts/test.sh` behind `npm test` is frozen with the
//! rest of the harness. Only the test command's own chain is followed: a file a build recipe
//! names stays editable.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// How many commands (the test command, then recipes and scripts it runs) are followed at most;
/// a recipe that runs itself cannot loop.
const MAX_FOLLOWED: usize = 32;

/// Every file of `files` the test `command` runs through. `read` gives a file's text.
pub fn command_files(
    command: &str,
    files: &BTreeMap<PathBuf, String>,
    read: impl Fn(&Path) -> Option<String>,
) -> BTreeSet<PathBuf> {
    let mut named = BTreeSet::new();
    let mut work = vec![(PathBuf::new(), command.to_owned())];
    let mut followed = 0;
    while let Some((start_dir, text)) = work.pop() {
        followed += 1;
        if followed > MAX_FOLLOWED {
            break;
        }
        let mut dir = start_dir;
        for segment in text.split(['&', ';', '|', '(', ')', '\n']) {
            let words: Vec<&str> = segment
                .split_whitespace()
                .map(|word| {
                    word.trim_matches(|character| matches!(character, '"' | '\''))
                        .trim_start_matches(['@', '-'])
                })
                .filter(|word| !word.is_empty())
                .collect();
            let Some(first) = words.first() else {
                continue;
            };
            let in_dir = |word: &str| normal(&dir.join(word));
            if *first == "cd" {
                if let Some(target) = words.get(1) {
                    dir = in_dir(target);
                }
                continue;
            }
            for (runner_file, body) in runner_bodies(&words, &dir, files, &read) {
                named.insert(runner_file);
                work.push((dir.clone(), body));
            }
            for word in &words {
                let path = in_dir(word);
                if files.contains_key(&path) && !is_compiled_source(&path) {
                    named.insert(path);
                }
            }
        }
    }
    named
}

/// Source files of compiled languages: a test command that compiles them (`cc calc.c
/// tests.c && ./a.out`) names the project's code, which GREEN must be free to change.
fn is_compiled_source(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            [
                "c", "h", "cc", "cpp", "cxx", "hpp", "go", "rs", "java", "kt", "swift", "cs", "zig",
            ]
            .contains(&extension.to_ascii_lowercase().as_str())
        })
}

/// `path` without `.` components and with `..` applied, as the snapshot names files.
fn normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::Normal(part) => normal.push(part),
            std::path::Component::CurDir
            | std::path::Component::RootDir
            | std::path::Component::Prefix(_) => {}
        }
    }
    normal
}

/// Reads the body a task runner runs for a target out of its file's text.
type BodyOf = fn(&str, &str) -> Option<String>;

/// The task runner file a command goes through, with the body it runs: `make [target]`,
/// `just [recipe]`, or `npm|pnpm|yarn|bun [run] <script>` (`test` by default).
fn runner_bodies(
    words: &[&str],
    dir: &Path,
    files: &BTreeMap<PathBuf, String>,
    read: &impl Fn(&Path) -> Option<String>,
) -> Vec<(PathBuf, String)> {
    let Some(first) = words.first() else {
        return Vec::new();
    };
    let target = words
        .iter()
        .skip(1)
        .find(|word| !word.starts_with('-') && !matches!(**word, "run" | "run-script"))
        .copied();
    let (names, body): (&[&str], BodyOf) = match *first {
        "make" | "gmake" => (&["GNUmakefile", "makefile", "Makefile"], make_recipe),
        "just" => (&["justfile", "Justfile", ".justfile"], just_recipe),
        "npm" | "pnpm" | "yarn" | "bun" => (&["package.json"], package_script),
        _ => return Vec::new(),
    };
    let Some(path) = names
        .iter()
        .map(|name| dir.join(name))
        .find(|path| files.contains_key(path))
    else {
        return Vec::new();
    };
    let text = read(&path).unwrap_or_default();
    let body = body(&text, target.unwrap_or("test")).unwrap_or_default();
    vec![(path, body)]
}

/// The recipe of `target` in a Makefile. Its prerequisites are not followed: `test: build` is
/// common, and what a build recipe names is the project's code, which GREEN must change.
fn make_recipe(text: &str, target: &str) -> Option<String> {
    let mut lines = text.lines();
    lines.find(|line| {
        line.split_once(':').is_some_and(|(name, rest)| {
            name.split_whitespace().any(|name| name == target) && !rest.starts_with('=')
        })
    })?;
    let body: Vec<&str> = lines
        .take_while(|line| line.starts_with('\t'))
        .map(str::trim)
        .collect();
    Some(body.join("\n"))
}

/// The body of `recipe` in a justfile (its indented lines).
fn just_recipe(text: &str, recipe: &str) -> Option<String> {
    let mut lines = text.lines();
    lines.find(|line| {
        !line.starts_with([' ', '\t'])
            && line.split_once(':').is_some_and(|(head, rest)| {
                head.split_whitespace().next() == Some(recipe) && !rest.starts_with('=')
            })
    })?;
    let body: Vec<&str> = lines
        .take_while(|line| line.starts_with([' ', '\t']) || line.trim().is_empty())
        .map(str::trim)
        .collect();
    Some(body.join("\n"))
}

/// The text of `scripts.<name>` in a `package.json`.
fn package_script(text: &str, name: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    Some(value.get("scripts")?.get(name)?.as_str()?.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(entries: &[(&str, &str)]) -> (BTreeMap<PathBuf, String>, BTreeMap<PathBuf, String>) {
        let files = entries
            .iter()
            .map(|(path, _)| (PathBuf::from(path), "blob".to_owned()))
            .collect();
        let texts = entries
            .iter()
            .map(|(path, text)| (PathBuf::from(path), (*text).to_owned()))
            .collect();
        (files, texts)
    }

    fn named(command: &str, entries: &[(&str, &str)]) -> Vec<String> {
        let (files, texts) = repo(entries);
        command_files(command, &files, |path| texts.get(path).cloned())
            .iter()
            .map(|path| path.display().to_string())
            .collect()
    }

    #[test]
    fn the_command_line_names_its_runner_file_and_scripts() {
        let entries = [
            ("Makefile", "test:\n\tpython3 run_tests.py\n"),
            ("run_tests.py", ""),
            ("calc.py", ""),
        ];
        assert_eq!(named("make test", &entries), ["Makefile", "run_tests.py"]);
        assert_eq!(
            named("cd . && python3 ./run_tests.py -v", &entries),
            ["run_tests.py"]
        );
    }

    #[test]
    fn scripts_behind_npm_and_make_are_followed_but_build_recipes_are_not() {
        let package = r#"{"scripts":{"test":"npm run unit","unit":"node scripts/run.mjs","build":"node scripts/build.mjs"}}"#;
        let entries = [
            ("package.json", package),
            ("scripts/run.mjs", ""),
            ("scripts/build.mjs", ""),
        ];
        assert_eq!(
            named("npm test", &entries),
            ["package.json", "scripts/run.mjs"]
        );

        let makefile = "build:\n\tcc main.c\n\ntest: build\n\t@./scripts/check.sh\n\tcc calc.c tests.c && ./a.out\n";
        let entries = [
            ("Makefile", makefile),
            ("main.c", ""),
            ("calc.c", ""),
            ("scripts/check.sh", ""),
        ];
        assert_eq!(
            named("make test", &entries),
            ["Makefile", "scripts/check.sh"],
            "neither the build recipe nor compiled sources are the harness"
        );
    }

    #[test]
    fn a_command_in_a_sub_folder_resolves_there() {
        let entries = [
            (
                "packages/x/package.json",
                r#"{"scripts":{"test":"node test/run.js"}}"#,
            ),
            ("packages/x/test/run.js", ""),
            ("sub/justfile", "test:\n    ./t.sh\n"),
            ("sub/t.sh", ""),
        ];
        assert_eq!(
            named("cd packages/x && npm test", &entries),
            ["packages/x/package.json", "packages/x/test/run.js"]
        );
        assert_eq!(
            named("cd sub && just test", &entries),
            ["sub/justfile", "sub/t.sh"]
        );
    }

    #[test]
    fn a_recipe_that_runs_itself_ends() {
        let entries = [("Makefile", "test:\n\tmake test\n")];
        assert_eq!(named("make test", &entries), ["Makefile"]);
    }
}
