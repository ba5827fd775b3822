//! `memorix mcp`: the operation that serves the project's memory as a Model Context Protocol
//! server on stdin/stdout (the official Rust SDK, `rmcp`), scoped to the project's
//! environment: tools `search`, `read`, `libraries` and `explain`, each answering with the
//! version and provenance of what it returns, and each search and read appended to the run
//! ledger (book: mcp.md).
//!
//! Every call opens the project and the Store afresh (an operation's context), so the server
//! answers from what `.memory/` shows now, after a build in another terminal too. A request
//! the SDK cannot route or whose arguments do not fit a tool's schema gets a JSON-RPC error;
//! an operation that fails answers a tool error with memorix's message and help.

use std::path::PathBuf;

use miette::Diagnostic;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde::Deserialize;

use super::read::{ReadRequest, libraries, read, record_read, record_search};
use super::search::{SearchRequest, search};
use super::{Context, Network};
use crate::model::Kind;
use crate::progress::Silent;

mod transport;

/// A search answers at most this many bytes unless asked otherwise.
const SEARCH_BUDGET: usize = 8 << 10;
/// A read returns at most this many bytes of text unless asked otherwise.
const READ_BUDGET: usize = 16 << 10;

#[derive(Clone)]
pub struct Server {
    cwd: PathBuf,
    store: PathBuf,
    tool_router: ToolRouter<Server>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// What to look for: words or identifiers (`parse_url`, `HttpClient`).
    query: String,
    /// Only this library (or mount path).
    lib: Option<String>,
    /// Only mounts of this kind.
    kind: Option<KindParam>,
    /// At most this many answers (default 10).
    limit: Option<usize>,
    /// At most this many bytes of answers (default 8192).
    budget: Option<usize>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KindParam {
    Rules,
    Docs,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadParams {
    /// A path in the memory directory, as search answers it (`libs/httpx/docs/api.md`).
    path: String,
    /// First line, from 1 (default 1).
    from: Option<usize>,
    /// Last line, inclusive (default: the end).
    to: Option<usize>,
    /// At most this many bytes of text (default 16384).
    budget: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainParams {
    /// A path in the memory directory.
    path: String,
}

/// A tool's answer: the operation's typed result as structured JSON (and as text, for
/// clients that read only text), or its error as a tool error.
fn answer<T: serde::Serialize>(result: super::Result<T>) -> Result<CallToolResult, ErrorData> {
    match result {
        Ok(value) => {
            let value =
                serde_json::to_value(&value).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            Ok(CallToolResult::structured(value))
        }
        Err(e) => {
            let help = e.help().map(|h| format!("\nhelp: {h}")).unwrap_or_default();
            let code = e.code().map(|c| format!("{c}: ")).unwrap_or_default();
            Ok(CallToolResult::error(vec![ContentBlock::text(format!("{code}{e}{help}"))]))
        }
    }
}

#[tool_router]
impl Server {
    pub fn new(cwd: PathBuf, store: PathBuf) -> Server {
        Server { cwd, store, tool_router: Self::tool_router() }
    }

    fn ctx(&self) -> Context<'static> {
        Context::new(self.cwd.clone(), self.store.clone(), Network::new(true), &Silent)
    }

    #[tool(description = "Ranked full-text search over the project's delivered docs and rules, at the \
        versions its lockfiles pin. Each answer: path:line, library@version, snippet, blob id.")]
    fn search(&self, Parameters(p): Parameters<SearchParams>) -> Result<CallToolResult, ErrorData> {
        let ctx = self.ctx();
        let req = SearchRequest {
            query: p.query,
            env: None,
            lib: p.lib,
            kind: p.kind.map(|k| match k {
                KindParam::Rules => Kind::Rules,
                KindParam::Docs => Kind::Docs,
            }),
            limit: p.limit.unwrap_or(10),
            budget: Some(p.budget.unwrap_or(SEARCH_BUDGET)),
        };
        answer(search(&ctx, &req).and_then(|out| record_search(&ctx, &out).map(|()| out)))
    }

    #[tool(description = "Read lines of a delivered file (a path search answered), with its library, \
        version and provenance (Store file, blob id, locator, registry artifact and hash).")]
    fn read(&self, Parameters(p): Parameters<ReadParams>) -> Result<CallToolResult, ErrorData> {
        let ctx = self.ctx();
        let req =
            ReadRequest { path: p.path, from: p.from, to: p.to, budget: p.budget.unwrap_or(READ_BUDGET) };
        answer(read(&ctx, &req).and_then(|out| record_read(&ctx, &out).map(|()| out)))
    }

    #[tool(description = "The libraries (and other mounts) of the project's environment: name, exact \
        version, the pin file and line that chose it, each locator's origin, registry artifact and hash.")]
    fn libraries(&self) -> Result<CallToolResult, ErrorData> {
        answer(libraries(&self.ctx()))
    }

    #[tool(description = "Where a delivered file came from: Store file, blob, locator, mount, \
        derivation, environment, version, registry artifact and hash, and conflicts decided there.")]
    fn explain(&self, Parameters(p): Parameters<ExplainParams>) -> Result<CallToolResult, ErrorData> {
        answer(super::explain::explain(&self.ctx(), &p.path))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("memorix", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "The docs and rules of this project at the exact versions its lockfiles pin. \
                 Search first, then read the lines you need; cite path:line and library@version.",
            )
    }
}

/// Why the server stopped other than by its client closing stdin.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("the MCP server stopped: {reason}")]
#[diagnostic(
    code(memorix::mcp::transport),
    help("the client closed the connection or sent no MCP initialize request")
)]
pub struct Stopped {
    reason: String,
}

/// Serves MCP on stdin/stdout until the client closes stdin.
pub fn serve(cwd: PathBuf, store: PathBuf) -> Result<(), Stopped> {
    let stopped = |e: &dyn std::fmt::Display| Stopped { reason: e.to_string() };
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| stopped(&e))?;
    runtime.block_on(async {
        let running = match Server::new(cwd, store).serve(transport::stdio()).await {
            Ok(running) => running,
            // The client went before it began: nothing was asked, nothing failed.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(stopped(&e)),
        };
        running.waiting().await.map_err(|e| stopped(&e))?;
        Ok(())
    })
}
