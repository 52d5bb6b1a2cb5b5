//! The tools mapping: which marker files identify a stack, and which command of each kind prpd
//! falls back to when a project does not name its own (DESIGN §2, §6.2–6.3).
//!
//! The built-in mapping is `qa-tools-mapping.yml` at the root of prpd's repository, compiled in.
//! A target repository's own `qa-tools-mapping.yml` is merged into it **per stack id**: for each
//! stack the repository's file names, its markers replace the built-in markers and each command
//! it names replaces the built-in command of that kind, while the kinds it leaves out keep their
//! built-in defaults. The stacks listed in the repository's `detection` section come first, in
//! that order, followed by the built-in stacks it does not list; the order is the priority order
//! of stack detection (`stack::detect_stacks`). Merging rather than replacing lets a project adjust one
//! command without copying the whole file, and a stack can still be switched off with
//! `markers: []`.
//!
//! A command the repository's file names is the project's own word, not a fallback: it wins
//! over discovery for a detected stack ([`StackTools::declared`], applied by `settings.rs`),
//! while the built-in commands stay the last resort.
//!
//! Every built-in default must pass [`crate::safety::is_safe`]: prpd guesses with them, so
//! a guess can never make QA run `eslint --fix`. The commands of the repository's own file are
//! the user's word and run as written (see `settings.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

use globset::{Glob, GlobMatcher};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

use crate::command::CommandKind;
use crate::safety::is_safe;
use prpd_base::config_file::{ConfigError, parse_yaml, read};

/// The name of the mapping file, at the root of a target repository.
pub const FILE_NAME: &str = "qa-tools-mapping.yml";

/// The built-in mapping's text; see the file itself for the schema.
const BUILTIN_TEXT: &str = include_str!("../../../qa-tools-mapping.yml");

/// How the built-in mapping is named in error messages.
const BUILTIN_NAME: &str = "qa-tools-mapping.yml (built-in)";

/// Every known stack: how to recognise it and its default commands, in priority order.
#[derive(Debug, Clone)]
pub struct ToolsMapping {
    stacks: Vec<StackTools>,
}

/// One stack of the mapping.
#[derive(Debug, Clone)]
pub struct StackTools {
    id: String,
    markers: Vec<Marker>,
    commands: BTreeMap<CommandKind, String>,
    /// The kinds whose command the repository's own file names: those win over discovery.
    declared: BTreeSet<CommandKind>,
}

/// Which file a stack's commands come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// prpd's built-in mapping: defaults, the last resort.
    Builtin,
    /// The repository's `qa-tools-mapping.yml`: the project's word, above discovery.
    Repository,
}

/// One directory entry whose presence means "this stack lives here".
#[derive(Debug, Clone)]
pub enum Marker {
    /// A file or directory with exactly this name (`package.json`).
    Name(String),
    /// Any entry whose name matches this glob (`*.rockspec`).
    Glob(GlobMatcher),
    /// A directory with this name; written with a trailing `/` in the file (`lua/`).
    Dir(String),
}

/// What kind of directory entry a marker is tested against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A directory, or a symbolic link to one.
    Dir,
    /// Anything else.
    Other,
}

impl Marker {
    /// Whether an entry called `name` of kind `kind` is this marker.
    pub fn matches(&self, name: &str, kind: EntryKind) -> bool {
        match self {
            Marker::Name(marker) => marker == name,
            Marker::Glob(glob) => glob.is_match(name),
            Marker::Dir(marker) => kind == EntryKind::Dir && marker == name,
        }
    }
}

impl StackTools {
    /// The stack's id, such as `node_typescript`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The markers that identify the stack; empty when the stack is switched off.
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// The default command of `kind`, if the mapping gives one.
    pub fn command(&self, kind: CommandKind) -> Option<&str> {
        self.commands.get(&kind).map(String::as_str)
    }

    /// The command of `kind` when the repository's own `qa-tools-mapping.yml` names it (not a
    /// built-in default): it wins over what discovery finds.
    pub fn declared(&self, kind: CommandKind) -> Option<&str> {
        self.declared
            .contains(&kind)
            .then(|| self.command(kind))
            .flatten()
    }
}

impl ToolsMapping {
    /// The mapping compiled into prpd.
    pub fn builtin() -> ToolsMapping {
        let partial = parse(Path::new(BUILTIN_NAME), BUILTIN_TEXT, Origin::Builtin)
            .expect("the built-in qa-tools-mapping.yml parses (tested)");
        resolve(
            Path::new(BUILTIN_NAME),
            BUILTIN_TEXT,
            partial,
            Vec::new(),
            Origin::Builtin,
        )
        .expect("the built-in qa-tools-mapping.yml is valid (tested)")
    }

    /// The built-in mapping merged with `repo`'s own `qa-tools-mapping.yml`, if it has one.
    pub fn load(repo: &Path) -> Result<ToolsMapping, ConfigError> {
        let path = repo.join(FILE_NAME);
        if !path.exists() {
            return Ok(ToolsMapping::builtin());
        }
        let text = read(&path)?;
        let partial = parse(&path, &text, Origin::Repository)?;
        resolve(
            &path,
            &text,
            partial,
            ToolsMapping::builtin().stacks,
            Origin::Repository,
        )
    }

    /// The stacks in priority order.
    pub fn stacks(&self) -> &[StackTools] {
        &self.stacks
    }

    /// The stack called `id`.
    pub fn stack(&self, id: &str) -> Option<&StackTools> {
        self.stacks.iter().find(|stack| stack.id == id)
    }
}

/// A YAML mapping read into a list, so that the order of its keys survives (it is the
/// priority order) and a key given twice is an error rather than a silent overwrite.
#[derive(Debug)]
pub(crate) struct Ordered<T>(pub(crate) Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for OrderedVisitor<T> {
            type Value = Ordered<T>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a mapping")
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(Ordered(Vec::new()))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(String, T)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, T>()? {
                    if entries.iter().any(|(seen, _)| *seen == key) {
                        return Err(serde::de::Error::custom(format!("`{key}` is given twice")));
                    }
                    entries.push((key, value));
                }
                Ok(Ordered(entries))
            }
        }

        deserializer.deserialize_map(OrderedVisitor(PhantomData))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    qa_tools: RawQaTools,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQaTools {
    #[serde(default)]
    detection: Ordered<RawDetection>,
    #[serde(default)]
    stacks: Ordered<RawCommands>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDetection {
    markers: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCommands {
    test: Option<String>,
    lint: Option<String>,
    typecheck: Option<String>,
    build: Option<String>,
    format_check: Option<String>,
    complexity: Option<String>,
    duplication: Option<String>,
}

impl RawCommands {
    fn into_map(self) -> BTreeMap<CommandKind, String> {
        let RawCommands {
            test,
            lint,
            typecheck,
            build,
            format_check,
            complexity,
            duplication,
        } = self;
        [
            (CommandKind::Test, test),
            (CommandKind::Lint, lint),
            (CommandKind::Typecheck, typecheck),
            (CommandKind::Build, build),
            (CommandKind::FormatCheck, format_check),
            (CommandKind::Complexity, complexity),
            (CommandKind::Duplication, duplication),
        ]
        .into_iter()
        .filter_map(|(kind, command)| command.map(|command| (kind, command)))
        .collect()
    }
}

/// One stack as a file states it: markers only when its `detection` section names it.
#[derive(Debug)]
struct PartialStack {
    id: String,
    markers: Option<Vec<Marker>>,
    commands: BTreeMap<CommandKind, String>,
}

/// Parses and checks one file, in the order of its `detection` section, then the stacks that
/// only its `stacks` section names.
fn parse(path: &Path, text: &str, origin: Origin) -> Result<Vec<PartialStack>, ConfigError> {
    let raw: RawFile = parse_yaml(path, text)?;
    let RawQaTools { detection, stacks } = raw.qa_tools;
    let mut commands: Vec<(String, BTreeMap<CommandKind, String>)> = Vec::new();
    for (id, raw_commands) in stacks.0 {
        let map = raw_commands.into_map();
        for command in map.values() {
            check_command(path, text, command, origin)?;
        }
        commands.push((id, map));
    }
    let mut partial = Vec::new();
    for (id, raw_detection) in detection.0 {
        let markers = raw_detection
            .markers
            .iter()
            .map(|marker| parse_marker(path, text, marker))
            .collect::<Result<Vec<_>, _>>()?;
        let position = commands.iter().position(|(named, _)| *named == id);
        let stack_commands = position.map(|index| commands.remove(index).1);
        partial.push(PartialStack {
            id,
            markers: Some(markers),
            commands: stack_commands.unwrap_or_default(),
        });
    }
    partial.extend(commands.into_iter().map(|(id, commands)| PartialStack {
        id,
        markers: None,
        commands,
    }));
    Ok(partial)
}

/// Refuses an empty command, and a built-in default that [`is_safe`] refuses.
fn check_command(
    path: &Path,
    text: &str,
    command: &str,
    origin: Origin,
) -> Result<(), ConfigError> {
    if command.trim().is_empty() {
        return Err(ConfigError::at(
            path,
            text,
            "\"\"",
            "a command is empty; leave the kind out instead",
        ));
    }
    if origin == Origin::Repository {
        return Ok(());
    }
    is_safe(command).map_err(|reason| {
        ConfigError::at(
            path,
            text,
            command,
            format!("refusing default command `{command}`: it {reason}"),
        )
    })
}

fn parse_marker(path: &Path, text: &str, marker: &str) -> Result<Marker, ConfigError> {
    let invalid = |message: String| ConfigError::at(path, text, marker, message);
    let name = marker.strip_suffix('/').unwrap_or(marker);
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(invalid(format!(
            "marker `{marker}` must be one name in a directory, such as `package.json`, \
             `*.rockspec` or `lua/`"
        )));
    }
    if marker.ends_with('/') {
        return Ok(Marker::Dir(name.to_owned()));
    }
    if name.contains(['*', '?', '[', '{']) {
        let glob = Glob::new(name)
            .map_err(|error| invalid(format!("marker `{marker}` is not a valid glob: {error}")))?;
        return Ok(Marker::Glob(glob.compile_matcher()));
    }
    Ok(Marker::Name(name.to_owned()))
}

/// Builds the mapping from a file's stacks laid over `base` (empty for the built-in file).
fn resolve(
    path: &Path,
    text: &str,
    partial: Vec<PartialStack>,
    mut base: Vec<StackTools>,
    origin: Origin,
) -> Result<ToolsMapping, ConfigError> {
    let mut stacks = Vec::new();
    for stack in partial {
        let known = base.iter().position(|known| known.id == stack.id);
        let declared: BTreeSet<CommandKind> = match origin {
            Origin::Builtin => BTreeSet::new(),
            Origin::Repository => stack.commands.keys().copied().collect(),
        };
        match (stack.markers, known) {
            (Some(markers), known) => {
                let mut commands = known
                    .map(|index| base.remove(index).commands)
                    .unwrap_or_default();
                commands.extend(stack.commands);
                stacks.push(StackTools {
                    id: stack.id,
                    markers,
                    commands,
                    declared,
                });
            }
            (None, Some(index)) => {
                base[index].commands.extend(stack.commands);
                base[index].declared.extend(declared);
            }
            (None, None) => {
                return Err(ConfigError::at(
                    path,
                    text,
                    &format!("{}:", stack.id),
                    format!(
                        "stack `{}` has commands but no markers under `qa_tools.detection`, \
                         and is not a built-in stack",
                        stack.id
                    ),
                ));
            }
        }
    }
    stacks.extend(base);
    Ok(ToolsMapping { stacks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_mapping_parses_and_has_the_expected_stacks_in_order() {
        let mapping = ToolsMapping::builtin();
        let ids: Vec<&str> = mapping.stacks().iter().map(StackTools::id).collect();
        assert_eq!(
            ids,
            [
                "node_typescript",
                "python",
                "golang",
                "rust",
                "lua",
                "java_maven",
                "java_gradle",
                "ruby",
                "cmake",
                "meson"
            ]
        );
        let rust = mapping.stack("rust").expect("rust stack");
        assert_eq!(rust.command(CommandKind::Test), Some("cargo test"));
        assert_eq!(
            rust.command(CommandKind::FormatCheck),
            Some("cargo fmt --check")
        );
        assert_eq!(rust.command(CommandKind::Complexity), None);
    }

    #[test]
    fn every_builtin_stack_has_markers_and_a_test_command() {
        for stack in ToolsMapping::builtin().stacks() {
            assert!(!stack.markers().is_empty(), "{}", stack.id());
            assert!(stack.command(CommandKind::Test).is_some(), "{}", stack.id());
        }
    }

    #[test]
    fn markers_match_names_globs_and_directories() {
        let mapping = ToolsMapping::builtin();
        let lua = mapping.stack("lua").expect("lua stack");
        let matches = |name: &str, kind: EntryKind| {
            lua.markers()
                .iter()
                .any(|marker| marker.matches(name, kind))
        };
        assert!(matches("demo-1.0-1.rockspec", EntryKind::Other));
        assert!(matches(".busted", EntryKind::Other));
        assert!(matches("lua", EntryKind::Dir));
        assert!(!matches("lua", EntryKind::Other));
        assert!(!matches("rockspec", EntryKind::Other));
    }

    fn load_text(text: &str) -> Result<ToolsMapping, ConfigError> {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(FILE_NAME), text).expect("write mapping");
        ToolsMapping::load(dir.path()).map_err(|error| match error {
            ConfigError::Invalid {
                line,
                column,
                message,
                ..
            } => ConfigError::Invalid {
                path: FILE_NAME.into(),
                line,
                column,
                message,
            },
            other => other,
        })
    }

    #[test]
    fn load_without_a_file_is_the_builtin_mapping() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mapping = ToolsMapping::load(dir.path()).expect("load");
        assert_eq!(
            mapping.stacks().len(),
            ToolsMapping::builtin().stacks().len()
        );
    }

    #[test]
    fn the_repositorys_commands_are_its_own_and_run_as_written() {
        let mapping = load_text(
            "qa_tools:\n  stacks:\n    node_typescript:\n      lint: npx eslint . --fix\n",
        )
        .expect("the user's command");
        let node = mapping.stack("node_typescript").expect("node");
        assert_eq!(node.declared(CommandKind::Lint), Some("npx eslint . --fix"));
        let builtin = parse(
            Path::new(BUILTIN_NAME),
            "qa_tools:\n  stacks:\n    rust:\n      lint: cargo clippy --fix\n",
            Origin::Builtin,
        )
        .map(|_| ())
        .expect_err("a built-in guess must be safe");
        assert!(
            builtin
                .to_string()
                .contains("refusing default command `cargo clippy --fix`: it rewrites files"),
            "{builtin}"
        );
    }

    #[test]
    fn repo_file_merges_per_stack_and_its_detection_order_comes_first() {
        let mapping = load_text(
            "qa_tools:\n  detection:\n    deno:\n      markers: [deno.json]\n    python:\n      markers: [pyproject.toml]\n  stacks:\n    deno:\n      test: deno test\n    python:\n      test: pytest -q\n    rust:\n      lint: cargo clippy\n",
        )
        .expect("valid mapping");
        let ids: Vec<&str> = mapping.stacks().iter().map(StackTools::id).collect();
        assert_eq!(&ids[..3], ["deno", "python", "node_typescript"]);
        let python = mapping.stack("python").expect("python");
        assert_eq!(python.command(CommandKind::Test), Some("pytest -q"));
        assert_eq!(python.command(CommandKind::Lint), Some("ruff check ."));
        assert_eq!(python.markers().len(), 1);
        let rust = mapping.stack("rust").expect("rust");
        assert_eq!(rust.command(CommandKind::Lint), Some("cargo clippy"));
        assert_eq!(rust.command(CommandKind::Test), Some("cargo test"));
        assert_eq!(rust.declared(CommandKind::Lint), Some("cargo clippy"));
        assert_eq!(rust.declared(CommandKind::Test), None);
        assert_eq!(python.declared(CommandKind::Test), Some("pytest -q"));
        assert_eq!(python.declared(CommandKind::Lint), None);
        assert!(!rust.markers().is_empty());
    }

    #[test]
    fn config_errors_name_file_line_and_what_was_expected() {
        let cases = [
            (
                "qa_tools:\n  stacks:\n    rust:\n      tests: cargo test\n",
                "qa-tools-mapping.yml:4:7: qa_tools.stacks.rust: unknown field `tests`, expected one of `test`, `lint`, `typecheck`, `build`, `format_check`, `complexity`, `duplication`",
            ),
            (
                "qa_tools:\n  stacks:\n    zig:\n      test: zig build test\n",
                "qa-tools-mapping.yml:3:5: stack `zig` has commands but no markers under `qa_tools.detection`, and is not a built-in stack",
            ),
            (
                "qa_tools:\n  detection:\n    web:\n      markers: [\"src/index.html\"]\n",
                "qa-tools-mapping.yml:4:18: marker `src/index.html` must be one name in a directory, such as `package.json`, `*.rockspec` or `lua/`",
            ),
            (
                "qa_tools:\n  detection:\n    rust:\n      markers: [Cargo.toml]\n    rust:\n      markers: [x]\n",
                "",
            ),
        ];
        for (text, expected) in cases {
            let message = load_text(text).expect_err(text).to_string();
            if expected.is_empty() {
                assert!(message.contains("`rust` is given twice"), "{message}");
            } else {
                assert_eq!(message, expected);
            }
        }
    }
}
