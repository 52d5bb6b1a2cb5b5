//! Which of an MCP server's tools answers which capability, and with which arguments. prpd
//! lists the server's tools once, at start, and maps each capability to the first tool that
//! exists among its candidates — claude-self-reflect's names first (`csr_reflect_on_past`,
//! `csr_search_by_concept`, `csr_why` else `csr_search_insights`, `csr_search_by_file`,
//! `store_reflection`), then the names its older releases used — unless
//! `[memory.mcp.tools]` names one, which is then the only choice. A capability with no tool
//! stays unmapped, and asking it is a warning that says what was looked for.
//!
//! The arguments follow each tool's input schema: the text goes to the first property of
//! `query`, `concept`, `question`, `topic`, `text` (a file's path to `file_path`, `path`,
//! `file`), `limit` is sent only when the schema has it, and so are a record's `tags`.

use serde_json::{Map, Value, json};

use crate::config::McpToolNames;
use crate::query::Capability;

/// What prpd asks a server to do: answer a capability, or record an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Answer(Capability),
    Record,
}

impl Purpose {
    /// Every purpose, in the order `prpd memory stats` lists them.
    pub const ALL: [Purpose; 5] = [
        Purpose::Answer(Capability::Bugs),
        Purpose::Answer(Capability::Patterns),
        Purpose::Answer(Capability::Decisions),
        Purpose::Answer(Capability::File),
        Purpose::Record,
    ];

    /// The key of `[memory.mcp.tools]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Answer(capability) => capability.as_str(),
            Purpose::Record => "record",
        }
    }

    /// The tools tried, in order, when the configuration names none.
    fn candidates(self) -> &'static [&'static str] {
        match self {
            Purpose::Answer(Capability::Bugs) => &["csr_reflect_on_past", "reflect_on_past"],
            Purpose::Answer(Capability::Patterns) => {
                &["csr_search_by_concept", "search_by_concept"]
            }
            Purpose::Answer(Capability::Decisions) => &["csr_why", "csr_search_insights"],
            Purpose::Answer(Capability::File) => &["csr_search_by_file", "search_by_file"],
            Purpose::Record => &["store_reflection", "csr_store_insight"],
        }
    }

    /// The input properties the main text may go to, in order of preference.
    fn text_properties(self) -> &'static [&'static str] {
        match self {
            Purpose::Answer(Capability::File) => &["file_path", "path", "file", "query"],
            Purpose::Answer(Capability::Bugs | Capability::Patterns | Capability::Decisions) => {
                &["query", "concept", "question", "topic", "text"]
            }
            Purpose::Record => &["content", "text", "reflection", "insight"],
        }
    }

    fn configured(self, names: &McpToolNames) -> Option<&str> {
        match self {
            Purpose::Answer(Capability::Bugs) => names.bugs.as_deref(),
            Purpose::Answer(Capability::Patterns) => names.patterns.as_deref(),
            Purpose::Answer(Capability::Decisions) => names.decisions.as_deref(),
            Purpose::Answer(Capability::File) => names.file.as_deref(),
            Purpose::Record => names.record.as_deref(),
        }
    }
}

/// One tool the server listed: its name and the properties of its input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedTool {
    pub name: String,
    /// The input schema's `properties`, by name.
    pub properties: Vec<String>,
}

impl ListedTool {
    /// The tool as the server described it: `name` and its JSON Schema `input_schema`.
    pub fn new(name: &str, input_schema: &Map<String, Value>) -> ListedTool {
        let properties = input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        ListedTool {
            name: name.to_owned(),
            properties,
        }
    }

    fn has(&self, property: &str) -> bool {
        self.properties.iter().any(|name| name == property)
    }
}

/// The tool chosen for each purpose, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolMap {
    choices: Vec<(Purpose, Result<ListedTool, String>)>,
}

impl ToolMap {
    /// Maps every purpose onto `listed`, `configured` first.
    pub fn new(listed: &[ListedTool], configured: &McpToolNames) -> ToolMap {
        let find = |name: &str| listed.iter().find(|tool| tool.name == name).cloned();
        let choices = Purpose::ALL
            .into_iter()
            .map(|purpose| {
                let choice = if let Some(name) = purpose.configured(configured) {
                    find(name).ok_or_else(|| {
                        format!(
                            "the memory server has no tool `{name}` ([memory.mcp.tools] {} = \"{name}\")",
                            purpose.as_str()
                        )
                    })
                } else {
                    purpose
                        .candidates()
                        .iter()
                        .find_map(|name| find(name))
                        .ok_or_else(|| {
                            format!(
                                "the memory server has no tool for {} (looked for {}; name one in [memory.mcp.tools] {})",
                                purpose.as_str(),
                                purpose
                                    .candidates()
                                    .iter()
                                    .map(|name| format!("`{name}`"))
                                    .collect::<Vec<_>>()
                                    .join(", "),
                                purpose.as_str()
                            )
                        })
                };
                (purpose, choice)
            })
            .collect();
        ToolMap { choices }
    }

    /// The tool for `purpose`, or the sentence that says why there is none.
    pub fn tool(&self, purpose: Purpose) -> Result<&ListedTool, &str> {
        self.choices
            .iter()
            .find(|(chosen_for, _)| *chosen_for == purpose)
            .map_or(Err("no tool"), |(_, choice)| match choice {
                Ok(tool) => Ok(tool),
                Err(why) => Err(why.as_str()),
            })
    }
}

/// The arguments of a call of `tool` for `purpose` with `text` (and, where the schema has
/// them, `limit` and `tags`).
pub fn arguments(
    tool: &ListedTool,
    purpose: Purpose,
    text: &str,
    limit: Option<usize>,
    tags: &[String],
) -> Map<String, Value> {
    let property = purpose
        .text_properties()
        .iter()
        .find(|name| tool.has(name))
        .or_else(|| purpose.text_properties().first())
        .copied()
        .unwrap_or("query");
    let mut arguments = Map::new();
    arguments.insert(property.to_owned(), Value::String(text.to_owned()));
    if let Some(limit) = limit
        && tool.has("limit")
    {
        arguments.insert("limit".to_owned(), json!(limit));
    }
    if !tags.is_empty() && tool.has("tags") {
        arguments.insert("tags".to_owned(), json!(tags));
    }
    arguments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, properties: &[&str]) -> ListedTool {
        let schema = json!({
            "type": "object",
            "properties": properties
                .iter()
                .map(|property| ((*property).to_owned(), json!({"type": "string"})))
                .collect::<Map<String, Value>>(),
        });
        ListedTool::new(name, schema.as_object().expect("object"))
    }

    fn claude_self_reflect() -> Vec<ListedTool> {
        vec![
            tool("csr_reflect_on_past", &["query", "limit", "min_score"]),
            tool("csr_search_by_concept", &["concept", "limit"]),
            tool("csr_search_insights", &["query", "project"]),
            tool("csr_why", &["query"]),
            tool("csr_search_by_file", &["file_path", "limit"]),
            tool("store_reflection", &["content", "tags"]),
            tool("csr_store_insight", &["content", "tags"]),
        ]
    }

    fn chosen(map: &ToolMap, purpose: Purpose) -> Result<String, String> {
        map.tool(purpose)
            .map(|tool| tool.name.clone())
            .map_err(str::to_owned)
    }

    #[test]
    fn claude_self_reflects_tools_answer_every_capability() {
        let map = ToolMap::new(&claude_self_reflect(), &McpToolNames::default());
        for (purpose, name) in [
            (Purpose::Answer(Capability::Bugs), "csr_reflect_on_past"),
            (
                Purpose::Answer(Capability::Patterns),
                "csr_search_by_concept",
            ),
            (Purpose::Answer(Capability::Decisions), "csr_why"),
            (Purpose::Answer(Capability::File), "csr_search_by_file"),
            (Purpose::Record, "store_reflection"),
        ] {
            assert_eq!(chosen(&map, purpose), Ok(name.to_owned()));
        }
    }

    #[test]
    fn decisions_fall_back_to_insights_and_a_missing_tool_says_what_was_looked_for() {
        let listed: Vec<ListedTool> = claude_self_reflect()
            .into_iter()
            .filter(|tool| !matches!(tool.name.as_str(), "csr_why" | "csr_reflect_on_past"))
            .collect();
        let map = ToolMap::new(&listed, &McpToolNames::default());
        assert_eq!(
            chosen(&map, Purpose::Answer(Capability::Decisions)),
            Ok("csr_search_insights".to_owned())
        );
        let why = chosen(&map, Purpose::Answer(Capability::Bugs)).expect_err("missing");
        assert!(why.contains("no tool for bugs"), "{why}");
        assert!(
            why.contains("`csr_reflect_on_past`, `reflect_on_past`"),
            "{why}"
        );
    }

    #[test]
    fn a_configured_name_is_the_only_choice() {
        let names = McpToolNames {
            bugs: Some("csr_search_insights".to_owned()),
            record: Some("remember".to_owned()),
            ..McpToolNames::default()
        };
        let map = ToolMap::new(&claude_self_reflect(), &names);
        assert_eq!(
            chosen(&map, Purpose::Answer(Capability::Bugs)),
            Ok("csr_search_insights".to_owned())
        );
        let why = chosen(&map, Purpose::Record).expect_err("not listed");
        assert!(why.contains("no tool `remember`"), "{why}");
    }

    #[test]
    fn arguments_follow_the_input_schema() {
        let tools = claude_self_reflect();
        assert_eq!(
            Value::Object(arguments(
                &tools[1],
                Purpose::Answer(Capability::Patterns),
                "node",
                Some(5),
                &[]
            )),
            json!({"concept": "node", "limit": 5})
        );
        assert_eq!(
            Value::Object(arguments(
                &tools[3],
                Purpose::Answer(Capability::Decisions),
                "why",
                Some(3),
                &[]
            )),
            json!({"query": "why"})
        );
        assert_eq!(
            Value::Object(arguments(
                &tools[4],
                Purpose::Answer(Capability::File),
                "src/a.rs",
                Some(3),
                &[]
            )),
            json!({"file_path": "src/a.rs", "limit": 3})
        );
        assert_eq!(
            Value::Object(arguments(
                &tools[5],
                Purpose::Record,
                "lesson",
                None,
                &["prpd".to_owned()]
            )),
            json!({"content": "lesson", "tags": ["prpd"]})
        );
        let bare = ListedTool::new("x", &Map::new());
        assert_eq!(
            Value::Object(arguments(
                &bare,
                Purpose::Answer(Capability::Bugs),
                "q",
                Some(5),
                &[]
            )),
            json!({"query": "q"})
        );
    }
}
