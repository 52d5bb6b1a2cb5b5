//! `prpd mcp`: prpd's protocols offered to agents as an MCP server over stdio, so Claude Code
//! or any MCP client can declare its success criteria up front (`qa_plan`) and have prpd judge
//! the evidence (`verify_plan`), and explore a running web app with prpd's browser to plan its
//! tests (the planner tools of `web_plan::PlannerSession`). stdout is the JSON-RPC channel:
//! nothing else may be written there, and logs go to stderr.
//!
//! [`tools`] and [`planner_tools`] hold the tools' names, descriptions and input schemas; this
//! module answers the protocol: the handshake, `tools/list`, and `tools/call`, which hands the
//! arguments to the plan store or the planning session. The session's browser is closed when
//! the client goes, and on SIGTERM or Ctrl-C. A refused request is a tool-level error (`isError: true`) whose structured
//! content is `{"error": code, "message": …}`, so the agent sees why.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use prpd_base::shutdown;
use prpd_protocols::critical_points::{PlanStore, StoreSettings};
use prpd_web::{GuardrailHit, PlannerSession};

mod planner_tools;
mod tools;

/// The server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP client did not complete the handshake: {0}")]
    Handshake(String),
    #[error("the MCP session ended with an error: {0}")]
    Session(String),
}

/// The server's state: the plans agents declared, and the web planning session.
#[derive(Debug)]
pub struct PrpdServer {
    plans: Mutex<PlanStore>,
    planner: Arc<tokio::sync::Mutex<PlannerSession>>,
}

/// How a session ended.
#[derive(Debug, Clone, Default)]
pub struct Served {
    /// The guardrail that stopped the planning session, if one did.
    pub planner_stopped_by: Option<GuardrailHit>,
}

impl PrpdServer {
    pub fn new(settings: StoreSettings, planner: PlannerSession) -> PrpdServer {
        PrpdServer {
            plans: Mutex::new(PlanStore::new(settings)),
            planner: Arc::new(tokio::sync::Mutex::new(planner)),
        }
    }

    /// Answers one tool call with the tool's JSON result, or its error shape.
    fn answer(&self, name: &str, arguments: &Value) -> Result<Value, Value> {
        let mut plans = self
            .plans
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = SystemTime::now();
        match name {
            tools::QA_PLAN => plans
                .create(arguments, now)
                .map(|plan| serde_json::to_value(plan).unwrap_or(Value::Null))
                .map_err(|error| error.to_json()),
            tools::VERIFY_PLAN => {
                let plan_id = arguments
                    .get("plan_id")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                plans
                    .verify(plan_id, arguments.get("evidence"), now)
                    .map(|verdict| serde_json::to_value(verdict).unwrap_or(Value::Null))
                    .map_err(|error| error.to_json())
            }
            other => Err(serde_json::json!({
                "error": "unknown_tool",
                "message": format!(
                    "prpd has no tool \"{other}\"; it offers {}, {}",
                    tools::NAMES.join(", "),
                    planner_tools::NAMES.join(", ")
                ),
            })),
        }
    }
}

impl rmcp::ServerHandler for PrpdServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(tools::INSTRUCTIONS);
        info.server_info = Implementation::new("prpd", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut all = tools::all();
        all.extend(planner_tools::all());
        Ok(ListToolsResult::with_all_items(all))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        tracing::info!(tool = %request.name, "tool call");
        let answer = if planner_tools::NAMES.contains(&&*request.name) {
            let mut planner = self.planner.lock().await;
            if request.name == planner_tools::FINALIZE_TEST_PLAN {
                planner.finalize(&arguments)
            } else {
                planner.call(&request.name, &arguments).await
            }
        } else {
            self.answer(&request.name, &Value::Object(arguments))
        };
        let result = match answer {
            Ok(value) => CallToolResult::structured(value),
            Err(error) => CallToolResult::structured_error(error),
        };
        Ok(result.into())
    }
}

/// Serves `server` over prpd's stdin and stdout until the client closes them (or SIGTERM or
/// Ctrl-C comes), then closes the planning session's browser.
pub async fn serve_stdio(server: PrpdServer) -> Result<Served, ServeError> {
    let planner = Arc::clone(&server.planner);
    let session = async {
        let running = server
            .serve(rmcp::transport::io::stdio_pipes())
            .await
            .map_err(|error| ServeError::Handshake(error.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|error| ServeError::Session(error.to_string()))
            .map(drop)
    };
    let ended = tokio::select! {
        ended = session => ended,
        () = shutdown::requested() => Ok(()),
    };
    let mut planner = planner.lock().await;
    planner.close().await;
    ended.map(|()| Served {
        planner_stopped_by: planner.stopped_by().cloned(),
    })
}
