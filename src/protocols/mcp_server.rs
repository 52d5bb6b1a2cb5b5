//! `prpd mcp`: prpd's protocols offered to agents as an MCP server over stdio, so Claude Code
//! or any MCP client can declare its success criteria up front (`qa_plan`) and have prpd judge
//! the evidence (`verify_plan`). stdout is the JSON-RPC channel: nothing else may be written
//! there, and logs go to stderr.
//!
//! [`tools`] holds the tools' names, descriptions and input schemas; this module answers the
//! protocol: the handshake, `tools/list`, and `tools/call`, which hands the arguments to the
//! plan store. A refused request is a tool-level error (`isError: true`) whose structured
//! content is `{"error": code, "message": …}`, so the agent sees why.

use std::sync::Mutex;
use std::time::SystemTime;

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::protocols::critical_points::{PlanStore, StoreSettings};

mod tools;

/// The server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP client did not complete the handshake: {0}")]
    Handshake(String),
    #[error("the MCP session ended with an error: {0}")]
    Session(String),
}

/// The server's state: the plans agents declared.
#[derive(Debug)]
pub struct PrpdServer {
    plans: Mutex<PlanStore>,
}

impl PrpdServer {
    pub fn new(settings: StoreSettings) -> PrpdServer {
        PrpdServer {
            plans: Mutex::new(PlanStore::new(settings)),
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
                "message": format!("prpd has no tool \"{other}\"; it offers {}", tools::NAMES.join(", ")),
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
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        tracing::info!(tool = %request.name, "tool call");
        let result = match self.answer(&request.name, &arguments) {
            Ok(value) => CallToolResult::structured(value),
            Err(error) => CallToolResult::structured_error(error),
        };
        Ok(result.into())
    }
}

/// Serves `server` over prpd's stdin and stdout until the client closes them.
pub async fn serve_stdio(server: PrpdServer) -> Result<(), ServeError> {
    let running = server
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .map_err(|error| ServeError::Handshake(error.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|error| ServeError::Session(error.to_string()))?;
    Ok(())
}
