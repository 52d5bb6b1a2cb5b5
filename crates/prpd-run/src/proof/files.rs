//! Which test file a test name comes from, so that the proof holds RED's tests — those in the
//! files RED added or changed — to the fail-to-pass rule, and no test elsewhere that happens
//! to flip can stand in for them.
//!
//! Runners name tests differently. pytest and vitest start a name with the file's path
//! (`tests/test_calc.py::test_mul`, `test/calc.test.js > calc > adds`) and name a file that
//! could not load by its path; unittest and nose2 use the dotted module
//! (`tests.test_calc.CalcTest.test_mul`, or `test_calc.…` when the tests folder is the top of
//! the discovery) and name a module that could not load as the loader's stand-in
//! (`unittest.loader._FailedTest.test_calc`); JVM runners use the class's qualified name. Many
//! runners name only the test (`node --test`, mocha, jest, go, cargo): such names belong to no
//! file, and the proof says when it could not tell RED's tests apart.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The frozen harness's test files, split by who wrote them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestFiles {
    /// The test files RED added or changed (and, after a REJECT, those GREEN added): the ones
    /// that differ from the run's base.
    pub red: BTreeSet<PathBuf>,
    /// The harness's other test files, as the base had them.
    pub other: BTreeSet<PathBuf>,
}

/// The file a test name belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner<'a> {
    /// One of the files RED added or changed.
    Red(&'a Path),
    /// Another test file of the harness.
    Other(&'a Path),
    /// The name does not say its file.
    Unknown,
}

/// The loaders' stand-ins for a module that could not be imported, followed by its name.
const LOADER_STAND_INS: &[&str] = &["_FailedTest.", "ModuleImportFailure."];

/// Languages whose runners name a test by its module's dotted path.
const DOTTED_EXTENSIONS: &[&str] = &["py", "java", "kt", "scala", "groovy"];

/// Test names looked up by the keys their files go by.
#[derive(Debug)]
pub struct Owners<'a> {
    /// A file's path as text (`tests/test_calc.py`).
    paths: HashMap<String, Owner<'a>>,
    /// Every dotted tail of a file's module path (`tests.test_calc`, `test_calc`).
    dotted: HashMap<String, Owner<'a>>,
}

impl<'a> Owners<'a> {
    pub fn new(files: &'a TestFiles) -> Owners<'a> {
        let mut owners = Owners {
            paths: HashMap::new(),
            dotted: HashMap::new(),
        };
        // RED's files go in last, so a key two files share (two `test_calc.py` in different
        // folders) keeps RED's: its tests stay required rather than becoming stand-ins.
        let all = files
            .other
            .iter()
            .map(|path| Owner::Other(path.as_path()))
            .chain(files.red.iter().map(|path| Owner::Red(path.as_path())));
        for owner in all {
            let (Owner::Red(path) | Owner::Other(path)) = owner else {
                continue;
            };
            owners
                .paths
                .insert(path.to_string_lossy().into_owned(), owner);
            for tail in dotted_tails(path) {
                owners.dotted.insert(tail, owner);
            }
        }
        owners
    }

    /// The file the test `name` belongs to, when its name says.
    pub fn of(&self, name: &str) -> Owner<'a> {
        if let Some(owner) = self.paths.get(name) {
            return *owner;
        }
        for (index, character) in name.char_indices() {
            if matches!(character, ':' | ' ' | '>' | '(' | '[')
                && let Some(owner) = self.paths.get(&name[..index])
            {
                return *owner;
            }
        }
        for stand_in in LOADER_STAND_INS {
            if let Some((_, module)) = name.split_once(stand_in)
                && let Some(owner) = self.dotted.get(module)
            {
                return *owner;
            }
        }
        let mut prefix_ends: Vec<usize> = name.match_indices('.').map(|(at, _)| at).collect();
        prefix_ends.push(name.len());
        for end in prefix_ends.into_iter().rev() {
            if let Some(owner) = self.dotted.get(&name[..end]) {
                return *owner;
            }
        }
        Owner::Unknown
    }
}

/// `tests/unit/test_calc.py` → `tests.unit.test_calc`, `unit.test_calc`, `test_calc`; nothing
/// for a language whose runners do not name tests by module.
fn dotted_tails(path: &Path) -> Vec<String> {
    let dotted_language = path
        .extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| DOTTED_EXTENSIONS.contains(&extension));
    if !dotted_language {
        return Vec::new();
    }
    let parts: Vec<String> = path
        .with_extension("")
        .components()
        .map(|component| component.as_os_str().to_string_lossy().into_owned())
        .collect();
    (0..parts.len())
        .map(|start| parts[start..].join("."))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_tied_to_their_files_the_way_each_runner_writes_them() {
        let files = TestFiles {
            red: ["tests/test_multiply.py", "test/multiply.test.js"]
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            other: [
                "tests/test_calc.py",
                "src/test/java/com/acme/CalcTest.java",
                "test/calc.test.js",
            ]
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        };
        let owners = Owners::new(&files);
        let red = |path: &'static str| Owner::Red(Path::new(path));
        let other = |path: &'static str| Owner::Other(Path::new(path));
        let cases = [
            (
                "tests/test_multiply.py::test_mul",
                red("tests/test_multiply.py"),
            ),
            (
                "tests/test_multiply.py::test_mul[2-3]",
                red("tests/test_multiply.py"),
            ),
            ("tests/test_multiply.py", red("tests/test_multiply.py")),
            (
                "tests.test_multiply.MultiplyTest.test_ac_1",
                red("tests/test_multiply.py"),
            ),
            (
                "test_multiply.MultiplyTest.test_ac_1",
                red("tests/test_multiply.py"),
            ),
            (
                "unittest.loader._FailedTest.test_multiply",
                red("tests/test_multiply.py"),
            ),
            (
                "nose2.loader.ModuleImportFailure.test_multiply",
                red("tests/test_multiply.py"),
            ),
            (
                "test/multiply.test.js > multiply > works",
                red("test/multiply.test.js"),
            ),
            ("test/multiply.test.js", red("test/multiply.test.js")),
            ("tests/test_calc.py::test_add", other("tests/test_calc.py")),
            ("test_calc.AddTest.test_add", other("tests/test_calc.py")),
            (
                "com.acme.CalcTest.adds",
                other("src/test/java/com/acme/CalcTest.java"),
            ),
            ("test/calc.test.js > adds", other("test/calc.test.js")),
            ("adds", Owner::Unknown),
            ("tests::mul_zero", Owner::Unknown),
            ("TestMul/zero", Owner::Unknown),
            ("calc.test.adds", Owner::Unknown),
        ];
        for (name, expected) in cases {
            assert_eq!(owners.of(name), expected, "{name}");
        }
    }
}
