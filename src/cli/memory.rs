//! `prpd memory`: search what prpd remembers, record a lesson by hand, and show the store's
//! figures, on the backend `[memory]` of `prpd.toml` chooses (the embedded store by default, or
//! the MCP memory server). A question the backend cannot answer is an error here, not the
//! warning it is for QA: the user asked for it.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use super::{RepoArgs, UsageError, repo_dir};
use prpd_base::exit::ExitCode;
use prpd_base::paths::new_run_id;
use prpd_memory::backend::{Memory, Recorded};
use prpd_memory::config::MemoryConfig;
use prpd_memory::entry::{EntryKind, HumanNote};
use prpd_memory::finding::{Finding, Unanswered};
use prpd_memory::mcp::tools::Purpose;
use prpd_memory::query::{Capability, Question};

#[derive(Debug, Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    pub command: MemoryCommand,
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Search memory: past REJECTs, breaker trips and escalations, approved work, decisions,
    /// lessons, and the history of a file.
    ///
    /// Without `--kind` every kind of entry is searched. Example:
    /// `prpd memory search "rate limiter" --kind bugs` or
    /// `prpd memory search src/limiter.rs --kind file`
    Search(SearchArgs),
    /// Record a lesson (or an architecture decision) by hand; QA recalls it like prpd's own
    /// entries.
    ///
    /// Example: `prpd memory add --title "Clamp the refill" --file src/limiter.rs "A zero
    /// rate overflowed the bucket; clamp the refill."`
    Add(AddArgs),
    /// Show the embedded store's entries per kind, size on disk, schema version and path (or
    /// the MCP server's tools and which one answers what).
    Stats(StatsArgs),
}

/// Where memory is: the repository, and the prpd.toml whose `[memory]` applies.
#[derive(Debug, Args)]
pub struct Location {
    #[command(flatten)]
    pub repo: RepoArgs,
    /// The prpd.toml to use (default: `<repo>/prpd.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for: words (quoted as they are, never query syntax), or with `--kind
    /// file` a path relative to the repository.
    pub query: String,
    /// Ask one capability: past bugs and failures, stack patterns, architecture decisions, or
    /// one file's history.
    #[arg(long, value_enum)]
    pub kind: Option<SearchKind>,
    /// Print one JSON object instead of the list.
    #[arg(long)]
    pub json: bool,
    /// At most this many findings.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub limit: u16,
    #[command(flatten)]
    pub location: Location,
}

/// `--kind` of `prpd memory search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SearchKind {
    Bugs,
    Patterns,
    Decisions,
    File,
}

impl SearchKind {
    fn capability(self) -> Capability {
        match self {
            SearchKind::Bugs => Capability::Bugs,
            SearchKind::Patterns => Capability::Patterns,
            SearchKind::Decisions => Capability::Decisions,
            SearchKind::File => Capability::File,
        }
    }
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// What it is: a lesson (recalled with bugs, patterns and decisions alike) or an
    /// architecture decision.
    #[arg(long, value_enum, default_value = "lesson")]
    pub kind: NoteKind,
    /// One line that says what was learned.
    #[arg(long)]
    pub title: String,
    /// A file it is about, relative to the repository (repeat for more); its history shows it.
    #[arg(long = "file", value_name = "FILE")]
    pub files: Vec<String>,
    /// A stack it is about, as `prpd detect` names them (repeat for more).
    #[arg(long = "stack", value_name = "STACK")]
    pub stacks: Vec<String>,
    /// The lesson itself.
    pub body: String,
    #[command(flatten)]
    pub location: Location,
}

/// `--kind` of `prpd memory add`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NoteKind {
    Lesson,
    Decision,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub location: Location,
}

/// Runs `prpd memory …`.
pub fn run(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    runtime.block_on(async {
        match args.command {
            MemoryCommand::Search(search_args) => search(&search_args).await,
            MemoryCommand::Add(add_args) => add(add_args).await,
            MemoryCommand::Stats(stats_args) => stats(&stats_args).await,
        }
    })
}

/// The repository and the memory its `[memory]` chooses; memory that is off, or a store or
/// server the user must fix, is a usage error (exit 2).
async fn open(location: &Location) -> anyhow::Result<(PathBuf, Memory)> {
    let repo = repo_dir(&location.repo)?;
    let config = match super::config::read(&repo, location.config.as_deref())? {
        Some(file) => MemoryConfig::from_file(&file)?,
        None => MemoryConfig::default(),
    };
    let memory = match Memory::open(&repo, &config).await {
        Ok(Memory::Off) => {
            return Err(UsageError(
                "memory is off: prpd.toml says [memory] backend = \"off\"; set it to \"embedded\" or \"mcp\" to use `prpd memory`".to_owned(),
            )
            .into());
        }
        Ok(memory) => memory,
        Err(error) if error.is_users_to_fix() => {
            return Err(UsageError(prpd_memory::finding::with_sources(&error)).into());
        }
        Err(error) => return Err(error.into()),
    };
    Ok((repo, memory))
}

/// A question memory could not answer, as the command's error: no tool is the
/// configuration's to fix (exit 2), anything else prpd's failure (exit 4).
fn unanswered(unanswered: Unanswered) -> anyhow::Error {
    match unanswered {
        Unanswered::NoTool(message) => UsageError(message).into(),
        Unanswered::TimedOut(message) | Unanswered::Failed(message) => anyhow::anyhow!(message),
    }
}

async fn search(args: &SearchArgs) -> anyhow::Result<ExitCode> {
    let (repo, memory) = open(&args.location).await?;
    let limit = usize::from(args.limit);
    let answer = match args.kind {
        None => memory.search(&args.query, limit).await,
        Some(kind) => {
            let subject = match kind {
                SearchKind::File => relative_path(&repo, &args.query),
                SearchKind::Bugs | SearchKind::Patterns | SearchKind::Decisions => {
                    args.query.clone()
                }
            };
            memory
                .try_ask(&Question::new(kind.capability(), subject), limit)
                .await
        }
    };
    let described = memory.describe();
    memory.close().await;
    let findings = answer.map_err(unanswered)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let report = json!({
            "memory": described,
            "query": args.query,
            "kind": args.kind.map(|kind| kind.capability().as_str()),
            "findings": findings,
        });
        serde_json::to_writer_pretty(&mut stdout, &report)?;
        writeln!(stdout)?;
    } else {
        write!(
            stdout,
            "{}",
            render_findings(&args.query, &described, &findings)
        )?;
    }
    Ok(ExitCode::Success)
}

/// `path` as git names it inside `repo`: an absolute path inside the repository is made
/// relative; anything else is kept as given.
fn relative_path(repo: &Path, path: &str) -> String {
    let given = Path::new(path);
    if given.is_absolute()
        && let Ok(relative) = given.strip_prefix(repo)
    {
        return relative.display().to_string();
    }
    path.to_owned()
}

/// The findings as a numbered list, each with its kind, run, time and score.
fn render_findings(query: &str, described: &str, findings: &[Finding]) -> String {
    if findings.is_empty() {
        return format!("No findings for {query:?} in {described}.\n");
    }
    let mut text = format!(
        "{} finding{} for {query:?} in {described}:\n",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" }
    );
    for (index, finding) in findings.iter().enumerate() {
        let mut facts = vec![finding.kind.clone()];
        if let Some(run) = &finding.run_id {
            facts.push(run.clone());
        }
        if let Some(seconds) = finding.created_at {
            facts.push(
                humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(seconds))
                    .to_string(),
            );
        }
        facts.push(format!("score {:.2}", finding.score));
        let _ = write!(
            text,
            "\n{}. {}\n   {}\n",
            index + 1,
            finding.title,
            facts.join(" · ")
        );
        if !finding.excerpt.is_empty() && finding.excerpt != finding.title {
            let _ = writeln!(text, "   {}", finding.excerpt);
        }
        if !finding.files.is_empty() {
            let _ = writeln!(text, "   files: {}", finding.files.join(", "));
        }
    }
    text
}

async fn add(args: AddArgs) -> anyhow::Result<ExitCode> {
    if args.title.trim().is_empty() {
        return Err(
            UsageError("--title is empty; say in one line what was learned".to_owned()).into(),
        );
    }
    if args.body.trim().is_empty() {
        return Err(UsageError(
            "the lesson's text is empty; pass it as the last argument".to_owned(),
        )
        .into());
    }
    let (repo, memory) = open(&args.location).await?;
    let kind = match args.kind {
        NoteKind::Lesson => EntryKind::Lesson,
        NoteKind::Decision => EntryKind::Decision,
    };
    let files = args
        .files
        .iter()
        .map(|file| relative_path(&repo, file))
        .collect();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let entry = HumanNote {
        kind,
        title: args.title,
        body: args.body,
        files,
        stacks: args.stacks,
    }
    .into_entry(new_run_id(kind.as_str()), now);
    let recorded = memory.try_record(&entry).await;
    let described = memory.describe();
    memory.close().await;
    match recorded.map_err(unanswered)? {
        Recorded::Stored(id) => {
            println!("Recorded {kind} #{id} ({}) in {described}.", entry.run_id);
        }
        Recorded::Sent | Recorded::Dropped => {
            println!("Recorded {kind} ({}) in {described}.", entry.run_id);
        }
    }
    Ok(ExitCode::Success)
}

async fn stats(args: &StatsArgs) -> anyhow::Result<ExitCode> {
    let (_, memory) = open(&args.location).await?;
    let report = match &memory {
        Memory::Embedded(embedded) => {
            let stats = embedded.stats().await.map_err(unanswered)?;
            let mut report = serde_json::to_value(&stats)?;
            report["backend"] = json!("embedded");
            report
        }
        Memory::Mcp(server) => {
            let mapping: serde_json::Map<String, serde_json::Value> = Purpose::ALL
                .into_iter()
                .map(|purpose| {
                    let tool = server.tool_for(purpose).ok().map(str::to_owned);
                    (purpose.as_str().to_owned(), json!(tool))
                })
                .collect();
            json!({
                "backend": "mcp",
                "command": server.command_line(),
                "tools": server.tool_names(),
                "mapping": mapping,
            })
        }
        Memory::Off | Memory::Unavailable(_) => json!({"backend": memory.describe()}),
    };
    memory.close().await;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &report)?;
        writeln!(stdout)?;
    } else {
        write!(stdout, "{}", render_stats(&report))?;
    }
    Ok(ExitCode::Success)
}

/// The stats as lines of text.
fn render_stats(report: &serde_json::Value) -> String {
    let text = |key: &str| report[key].as_str().unwrap_or_default().to_owned();
    if report["backend"] == "mcp" {
        let mut lines = vec![
            "Memory: the MCP memory server".to_owned(),
            format!("Command: {}", text("command")),
            format!(
                "Tools: {}",
                report["tools"]
                    .as_array()
                    .map(|tools| tools
                        .iter()
                        .filter_map(serde_json::Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            ),
        ];
        for purpose in Purpose::ALL {
            let tool = report["mapping"][purpose.as_str()]
                .as_str()
                .unwrap_or("(no tool: a warning when asked)");
            lines.push(format!("  {:<10} {tool}", purpose.as_str()));
        }
        return lines.join("\n") + "\n";
    }
    let number = |key: &str| report[key].as_u64().unwrap_or_default();
    let mut lines = vec![
        "Memory: the embedded store".to_owned(),
        format!("Path: {}", text("path")),
        format!("Schema version: {}", number("schema_version")),
        format!("Size on disk: {}", size(number("size_bytes"))),
        format!("Entries: {}", number("entries")),
    ];
    for kind in EntryKind::ALL {
        let count = report["per_kind"][kind.as_str()]
            .as_u64()
            .unwrap_or_default();
        lines.push(format!("  {:<13} {count}", kind.as_str()));
    }
    lines.join("\n") + "\n"
}

/// Bytes in B, KiB or MiB, one decimal.
fn size(bytes: u64) -> String {
    #[expect(
        clippy::cast_precision_loss,
        reason = "a size shown with one decimal does not need 53 bits"
    )]
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", value / 1024.0)
    } else {
        format!("{:.1} MiB", value / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_shows_its_kind_run_time_score_excerpt_and_files() {
        let finding = Finding {
            score: 2.5,
            created_at: Some(1_700_000_000),
            run_id: Some("run-1".to_owned()),
            kind: "reject".to_owned(),
            title: "QA REJECT (attempt 1) of Stats".to_owned(),
            excerpt: "F2: AC-2 has no test".to_owned(),
            files: vec!["src/stats.js".to_owned()],
        };
        assert_eq!(
            render_findings("stats", "the embedded store m.db", &[finding]),
            "1 finding for \"stats\" in the embedded store m.db:\n\n\
             1. QA REJECT (attempt 1) of Stats\n   \
             reject · run-1 · 2023-11-14T22:13:20Z · score 2.50\n   \
             F2: AC-2 has no test\n   files: src/stats.js\n"
        );
        assert_eq!(
            render_findings("x", "m", &[]),
            "No findings for \"x\" in m.\n"
        );
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(2048), "2.0 KiB");
        assert_eq!(size(3 * 1024 * 1024 + 512 * 1024), "3.5 MiB");
    }

    #[test]
    fn an_absolute_path_inside_the_repository_is_made_relative() {
        let repo = Path::new("/work/repo");
        assert_eq!(relative_path(repo, "/work/repo/src/a.rs"), "src/a.rs");
        assert_eq!(relative_path(repo, "src/a.rs"), "src/a.rs");
        assert_eq!(relative_path(repo, "/elsewhere/a.rs"), "/elsewhere/a.rs");
    }
}
