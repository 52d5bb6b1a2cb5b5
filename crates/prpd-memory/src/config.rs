//! `[memory]` of `prpd.toml`: which memory backend prpd asks before QA and tells after each
//! run — the embedded store (the default), an MCP memory server started as a child process, or
//! none — and how long one question may take. Parsed from a raw table (unknown keys refused)
//! into one validated [`MemoryConfig`]; every refusal names the file, the line and what was
//! expected.
//!
//! The capabilities a tool override names (`bugs`, `patterns`, `decisions`, `file`, `record`)
//! are the keys of `[memory.mcp.tools]`; the memory subsystem maps them onto its own
//! vocabulary, so this file needs none of it.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use prpd_base::config_file::{self, ConfigError, ConfigFile};

/// The default of `[memory] timeout`: one question to the memory, embedded or MCP.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// `[memory]`, validated, with every default filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Where memory lives.
    pub backend: MemoryBackend,
    /// How long one question (or one record) may take before it is given up with a warning.
    pub timeout: Duration,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            backend: MemoryBackend::Embedded,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// `[memory] backend`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryBackend {
    /// `"embedded"`: SQLite with full-text search in `.prp-session/memory.db`.
    Embedded,
    /// `"mcp"`: an MCP memory server that prpd starts and talks to over its stdio.
    Mcp(McpServer),
    /// `"off"`: no memory; QA says so in its report.
    Off,
}

impl MemoryBackend {
    /// The value of `backend` that chose this.
    pub fn name(&self) -> &'static str {
        match self {
            MemoryBackend::Embedded => "embedded",
            MemoryBackend::Mcp(_) => "mcp",
            MemoryBackend::Off => "off",
        }
    }
}

/// `[memory.mcp]`: the server and, where its tools have other names than claude-self-reflect's,
/// which tool answers which capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// The server's argv (no shell), started in the repository's root.
    pub command: Vec<String>,
    /// `[memory.mcp.tools]`: a tool's name per capability, over the built-in choice.
    pub tools: McpToolNames,
}

/// `[memory.mcp.tools]`: the tool that answers each capability; `None` keeps prpd's choice
/// among the tools the server lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpToolNames {
    /// Past bugs and failures (default `csr_reflect_on_past`).
    pub bugs: Option<String>,
    /// Stack patterns (default `csr_search_by_concept`).
    pub patterns: Option<String>,
    /// Architecture decisions (default `csr_why`, else `csr_search_insights`).
    pub decisions: Option<String>,
    /// A file's history (default `csr_search_by_file`).
    pub file: Option<String>,
    /// Where prpd records what it learned (default `store_reflection`).
    pub record: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    backend: Option<String>,
    timeout: Option<String>,
    mcp: Option<RawMcp>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMcp {
    command: Option<Vec<String>>,
    tools: Option<RawTools>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTools {
    bugs: Option<String>,
    patterns: Option<String>,
    decisions: Option<String>,
    file: Option<String>,
    record: Option<String>,
}

/// Validates `[memory]` of the file at `path` (whose text is `text`).
fn memory(path: &Path, text: &str, raw: RawMemory) -> Result<MemoryConfig, ConfigError> {
    let timeout = match config_file::duration(path, text, "timeout", raw.timeout)? {
        Some(timeout) if timeout.is_zero() => {
            return Err(ConfigError::at_key(
                path,
                text,
                "[memory]",
                "timeout",
                "`memory.timeout` is zero; expected a duration such as \"2s\"".to_owned(),
            ));
        }
        Some(timeout) => timeout,
        None => DEFAULT_TIMEOUT,
    };
    let backend = match raw.backend.as_deref().map(str::trim) {
        None | Some("embedded") => MemoryBackend::Embedded,
        Some("off") => MemoryBackend::Off,
        Some("mcp") => match raw.mcp {
            Some(mcp) => MemoryBackend::Mcp(mcp_server(path, text, mcp)?),
            None => {
                return Err(ConfigError::at_key(
                    path,
                    text,
                    "[memory]",
                    "backend",
                    NO_COMMAND.to_owned(),
                ));
            }
        },
        Some(other) => {
            return Err(ConfigError::at_key(
                path,
                text,
                "[memory]",
                "backend",
                format!(
                    "`memory.backend` = {other:?} is not a memory backend; expected \"embedded\", \"mcp\" or \"off\""
                ),
            ));
        }
    };
    Ok(MemoryConfig { backend, timeout })
}

/// Why `backend = "mcp"` without a command is refused.
const NO_COMMAND: &str = "`memory.backend = \"mcp\"` needs the server's command: `[memory.mcp] command = [\"program\", \"arg\", …]`, e.g. [\"uvx\", \"claude-self-reflect\"]";

/// `[memory.mcp]` when `backend = "mcp"`: the command is required.
fn mcp_server(path: &Path, text: &str, raw: RawMcp) -> Result<McpServer, ConfigError> {
    let command = raw.command.unwrap_or_default();
    if command
        .first()
        .is_none_or(|program| program.trim().is_empty())
    {
        return Err(ConfigError::at_key(
            path,
            text,
            "[memory.mcp]",
            "command",
            NO_COMMAND.to_owned(),
        ));
    }
    let raw_tools = raw.tools.unwrap_or_default();
    let tool = |key: &str, value: Option<String>| match value.as_deref().map(str::trim) {
        None => Ok(None),
        Some("") => Err(ConfigError::at_key(
            path,
            text,
            "[memory.mcp.tools]",
            key,
            format!(
                "`memory.mcp.tools.{key}` is empty; expected the name of one of the server's tools, or leave the key out for prpd's choice"
            ),
        )),
        Some(name) => Ok(Some(name.to_owned())),
    };
    Ok(McpServer {
        command,
        tools: McpToolNames {
            bugs: tool("bugs", raw_tools.bugs)?,
            patterns: tool("patterns", raw_tools.patterns)?,
            decisions: tool("decisions", raw_tools.decisions)?,
            file: tool("file", raw_tools.file)?,
            record: tool("record", raw_tools.record)?,
        },
    })
}

/// The tables of `prpd.toml` this crate reads; the others are their crates' to read.
#[derive(Debug, Default, Deserialize)]
struct Tables {
    memory: Option<RawMemory>,
}

impl MemoryConfig {
    /// `[memory]` of `file`, validated, with every default filled in.
    pub fn from_file(file: &ConfigFile) -> Result<MemoryConfig, ConfigError> {
        let tables: Tables = file.tables()?;
        memory(file.path(), file.text(), tables.memory.unwrap_or_default())
    }
}

/// Whether every key of this crate's tables in `file` is one it knows, with a value of the right
/// type (nothing more is judged): the binary asks every crate before any command starts, so a
/// typo in any table stops every command, naming its line.
pub fn check_keys(file: &ConfigFile) -> Result<(), ConfigError> {
    file.tables::<Tables>().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct File {
        memory: RawMemory,
    }

    /// `text` as a whole prpd.toml that holds a `[memory]` table.
    fn parse(text: &str) -> Result<MemoryConfig, String> {
        let path = Path::new("prpd.toml");
        let file: File = config_file::parse_toml(path, text).map_err(|error| error.to_string())?;
        memory(path, text, file.memory).map_err(|error| error.to_string())
    }

    #[test]
    fn an_empty_table_gives_the_embedded_store_with_a_two_second_timeout() {
        assert_eq!(parse("[memory]\n"), Ok(MemoryConfig::default()));
        assert_eq!(MemoryConfig::default().timeout, Duration::from_secs(2));
        assert_eq!(MemoryConfig::default().backend.name(), "embedded");
    }

    #[test]
    fn every_key_is_read() {
        let config = parse(
            "[memory]\nbackend = \"mcp\"\ntimeout = \"500ms\"\n\n[memory.mcp]\n\
             command = [\"uvx\", \"claude-self-reflect\"]\n\n[memory.mcp.tools]\n\
             bugs = \"search_bugs\"\npatterns = \"by_concept\"\ndecisions = \"csr_search_insights\"\n\
             file = \"by_file\"\nrecord = \"remember\"\n",
        )
        .expect("valid");
        assert_eq!(
            config,
            MemoryConfig {
                backend: MemoryBackend::Mcp(McpServer {
                    command: vec!["uvx".to_owned(), "claude-self-reflect".to_owned()],
                    tools: McpToolNames {
                        bugs: Some("search_bugs".to_owned()),
                        patterns: Some("by_concept".to_owned()),
                        decisions: Some("csr_search_insights".to_owned()),
                        file: Some("by_file".to_owned()),
                        record: Some("remember".to_owned()),
                    },
                }),
                timeout: Duration::from_millis(500),
            }
        );
        assert_eq!(
            parse("[memory]\nbackend = \"off\"\n").map(|config| config.backend),
            Ok(MemoryBackend::Off)
        );
    }

    #[test]
    fn bad_values_are_refused_at_their_line_with_what_was_expected() {
        for (text, line, expected) in [
            (
                "# x\n[memory]\nbackend = \"redis\"\n",
                3,
                "expected \"embedded\", \"mcp\" or \"off\"",
            ),
            ("[memory]\n\ntimeout = \"soon\"\n", 3, "not a duration"),
            ("[memory]\ntimeout = \"0s\"\n", 2, "is zero"),
            (
                "[memory]\nbackend = \"mcp\"\n",
                2,
                "needs the server's command",
            ),
            (
                "[memory]\nbackend = \"mcp\"\n[memory.mcp]\ncommand = []\n",
                4,
                "needs the server's command",
            ),
            (
                "[memory]\nbackend = \"mcp\"\n[memory.mcp]\ncommand = [\"srv\"]\n[memory.mcp.tools]\nbugs = \" \"\n",
                6,
                "`memory.mcp.tools.bugs` is empty",
            ),
            ("[memory]\nbakend = \"mcp\"\n", 2, "unknown field `bakend`"),
            (
                "[memory]\nbackend = \"mcp\"\n[memory.mcp]\ncommand = [\"srv\"]\n[memory.mcp.tools]\nwhy = \"csr_why\"\n",
                6,
                "unknown field `why`",
            ),
        ] {
            let error = parse(text).expect_err(text);
            assert!(
                error.starts_with(&format!("prpd.toml:{line}:")),
                "{text}: {error}"
            );
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
