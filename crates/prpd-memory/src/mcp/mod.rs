//! The MCP memory backend: an MCP server (claude-self-reflect, or any server with tools of the
//! same shape) that prpd starts as a child process and asks over its stdio.
//!
//! Theory of operation. The server is a [`Service`] of `base::process` (its own process group,
//! its stderr in `.prp-session/memory-server.log`, the group killed when prpd stops it or drops
//! it), and rmcp's client speaks MCP over the child's stdout and stdin as newline-delimited
//! JSON-RPC 2.0: `initialize`, `notifications/initialized`, `tools/list` (every page), then
//! `tools/call` per question. The tools are listed once and mapped onto the capabilities
//! ([`tools::ToolMap`]); every call is time-boxed by `[memory] timeout`; a missing tool, a
//! timeout, an error answer or a server that died is an [`Unanswered`] — a warning for the
//! caller, never an error that stops QA. Starting is the one step that fails outright (no
//! server, no MCP): the caller decides whether that is a warning (QA) or an error (the CLI).

pub mod reply;
pub mod tools;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};

use crate::config::McpServer;
use crate::entry::Entry;
use crate::finding::{Finding, Unanswered, with_sources};
use crate::query::{Capability, Question};
use prpd_base::process::{EnvPolicy, ProcessError, Service, ServiceSpec, Termination};

use tools::{ListedTool, Purpose, ToolMap};

/// How long the server may take to start and list its tools (a Python server that loads an
/// embedding model takes seconds); each question then has `[memory] timeout`.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a stopped server gets between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// The server's stderr log keeps at most this much.
const MAX_STDERR_LOG_BYTES: u64 = 1024 * 1024;

/// The MCP server could not be started or did not speak MCP.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The command could not be started.
    #[error("failed to start the memory server ([memory.mcp] command)")]
    Start(#[source] ProcessError),
    /// It did not complete the MCP handshake or list its tools in time.
    #[error(
        "the memory server `{command}` did not {step} within {}{}",
        humantime::format_duration(STARTUP_TIMEOUT),
        stderr_hint(stderr)
    )]
    StartupTimeout {
        command: String,
        step: &'static str,
        stderr: String,
    },
    /// It answered, but not as an MCP server.
    #[error(
        "the memory server `{command}` failed to {step}: {message}{}",
        stderr_hint(stderr)
    )]
    Protocol {
        command: String,
        step: &'static str,
        message: String,
        stderr: String,
    },
}

/// `; its last stderr lines: …` when the server wrote any.
fn stderr_hint(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("; its last stderr lines:\n{}", stderr.trim_end())
    }
}

/// A running MCP memory server and the tools it answers with.
pub struct McpMemory {
    client: RunningService<RoleClient, ()>,
    server: Mutex<Service>,
    command_line: String,
    listed: Vec<ListedTool>,
    map: ToolMap,
    timeout: Duration,
}

impl std::fmt::Debug for McpMemory {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("McpMemory")
            .field("command", &self.command_line)
            .field("tools", &self.listed)
            .finish_non_exhaustive()
    }
}

impl McpMemory {
    /// Starts `server` in `repo` (its stderr to `stderr_log`), completes the handshake and
    /// lists its tools; each later call may take `timeout`.
    pub async fn start(
        repo: &Path,
        server: &McpServer,
        timeout: Duration,
        stderr_log: PathBuf,
    ) -> Result<McpMemory, McpError> {
        let mut child = Service::spawn(ServiceSpec {
            argv: server.command.clone(),
            cwd: repo.to_path_buf(),
            env_policy: EnvPolicy::WithoutSecrets,
            stderr_log,
            max_log_bytes: MAX_STDERR_LOG_BYTES,
        })
        .map_err(McpError::Start)?;
        let command_line = child.command_line().to_owned();
        let failed = |child: &Service, step: &'static str, message: String| McpError::Protocol {
            command: command_line.clone(),
            step,
            message,
            stderr: child.stderr_tail(),
        };
        let timed_out = |child: &Service, step: &'static str| McpError::StartupTimeout {
            command: command_line.clone(),
            step,
            stderr: child.stderr_tail(),
        };
        let Some(stdio) = child.take_stdio() else {
            return Err(failed(&child, "start", "its stdio is not piped".to_owned()));
        };
        let client = match tokio::time::timeout(STARTUP_TIMEOUT, ().serve(stdio)).await {
            Ok(Ok(client)) => client,
            Ok(Err(error)) => {
                return Err(failed(
                    &child,
                    "complete the MCP handshake",
                    with_sources(&error),
                ));
            }
            Err(_) => return Err(timed_out(&child, "complete the MCP handshake")),
        };
        let tools = match tokio::time::timeout(STARTUP_TIMEOUT, client.peer().list_all_tools())
            .await
        {
            Ok(Ok(tools)) => tools,
            Ok(Err(error)) => return Err(failed(&child, "list its tools", with_sources(&error))),
            Err(_) => return Err(timed_out(&child, "list its tools")),
        };
        let listed: Vec<ListedTool> = tools
            .iter()
            .map(|tool| ListedTool::new(&tool.name, &tool.input_schema))
            .collect();
        let map = ToolMap::new(&listed, &server.tools);
        tracing::debug!(command = %command_line, tools = listed.len(), "memory server started");
        Ok(McpMemory {
            client,
            server: Mutex::new(child),
            command_line,
            listed,
            map,
            timeout,
        })
    }

    /// The server's command line.
    pub fn command_line(&self) -> &str {
        &self.command_line
    }

    /// The names of the tools the server listed.
    pub fn tool_names(&self) -> Vec<String> {
        self.listed.iter().map(|tool| tool.name.clone()).collect()
    }

    /// The tool chosen for `purpose`, or why there is none.
    pub fn tool_for(&self, purpose: Purpose) -> Result<&str, &str> {
        self.map.tool(purpose).map(|tool| tool.name.as_str())
    }

    /// Up to `limit` findings for `question`, from the tool mapped to its capability.
    pub async fn ask(&self, question: &Question, limit: usize) -> Result<Vec<Finding>, Unanswered> {
        self.answer(
            Purpose::Answer(question.capability()),
            &question.phrased(),
            limit,
        )
        .await
    }

    async fn answer(
        &self,
        purpose: Purpose,
        text: &str,
        limit: usize,
    ) -> Result<Vec<Finding>, Unanswered> {
        let tool = self
            .map
            .tool(purpose)
            .map_err(|why| Unanswered::NoTool(why.to_owned()))?;
        let arguments = tools::arguments(tool, purpose, text, Some(limit), &[]);
        let result = self.call(&tool.name, arguments).await?;
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
            .collect();
        let mut found = reply::findings(&tool.name, result.structured_content.as_ref(), &texts);
        found.truncate(limit);
        Ok(found)
    }

    /// Up to `limit` findings for `text` as it is, from the tool that answers bugs (the
    /// server's general search: claude-self-reflect's `csr_reflect_on_past`).
    pub async fn search(&self, text: &str, limit: usize) -> Result<Vec<Finding>, Unanswered> {
        self.answer(Purpose::Answer(Capability::Bugs), text, limit)
            .await
    }

    /// Records `entry` through the server's reflection tool (`store_reflection`): its title,
    /// body, files and run as the content, its kind, run and stacks as tags.
    pub async fn record(&self, entry: &Entry) -> Result<(), Unanswered> {
        let tool = self
            .map
            .tool(Purpose::Record)
            .map_err(|why| Unanswered::NoTool(why.to_owned()))?;
        let mut content = format!("{}\n\n{}", entry.title, entry.body);
        if !entry.files.is_empty() {
            let _ = write!(content, "\n\nFiles: {}", entry.files.join(", "));
        }
        let _ = write!(content, "\n\nprpd {} from {}", entry.kind, entry.run_id);
        let mut tags = vec!["prpd".to_owned(), entry.kind.as_str().to_owned()];
        tags.extend(entry.stacks.iter().cloned());
        let arguments = tools::arguments(tool, Purpose::Record, content.trim(), None, &tags);
        self.call(&tool.name, arguments).await.map(|_| ())
    }

    async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<rmcp::model::CallToolResult, Unanswered> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let answer = tokio::time::timeout(self.timeout, self.client.call_tool(params)).await;
        let result = match answer {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => return Err(Unanswered::Failed(self.gone_or(tool, &error).await)),
            Err(_) => {
                return Err(Unanswered::TimedOut(format!(
                    "the memory server `{}` did not answer `{tool}` within {} ([memory] timeout)",
                    self.command_line,
                    humantime::format_duration(self.timeout)
                )));
            }
        };
        if result.is_error == Some(true) {
            let text: Vec<&str> = result
                .content
                .iter()
                .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
                .collect();
            return Err(Unanswered::Failed(format!(
                "the memory server's tool `{tool}` answered with an error: {}",
                text.join(" ").trim()
            )));
        }
        Ok(result)
    }

    /// Why a call failed: the server exited (with how, and its last stderr lines), or the
    /// error. A closed connection usually means the server died; its exit is waited for
    /// briefly, since the pipe can close a moment before the process is reaped.
    async fn gone_or(&self, tool: &str, error: &rmcp::ServiceError) -> String {
        let polls = if matches!(error, rmcp::ServiceError::TransportClosed) {
            25
        } else {
            1
        };
        for poll in 0..polls {
            if poll > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let mut server = self.server.lock().unwrap_or_else(PoisonError::into_inner);
            let how = match server.exited() {
                Some(Termination::Exited(code)) => format!("exited with code {code}"),
                Some(Termination::Signaled(signal)) => format!("was killed by signal {signal}"),
                Some(Termination::TimedOut) => "timed out".to_owned(),
                Some(Termination::Stopped) => "was stopped by prpd".to_owned(),
                None => continue,
            };
            return format!(
                "the memory server `{}` {how}{}",
                self.command_line,
                stderr_hint(&server.stderr_tail())
            );
        }
        format!(
            "the memory server `{}` failed to answer `{tool}`: {}",
            self.command_line,
            with_sources(error)
        )
    }

    /// Closes the connection and stops the server's process group.
    pub async fn stop(mut self) {
        let _ = self.client.close_with_timeout(STOP_GRACE).await;
        let server = self
            .server
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        server.stop(STOP_GRACE).await;
    }
}

#[cfg(test)]
mod tests;
