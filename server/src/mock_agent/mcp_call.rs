//! One real MCP tool call over streamable HTTP (rmcp client).

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;

/// Calls `tool` with `args`; `Ok` holds the text result, `Err` the tool's or
/// the transport's error text.
pub async fn call(url: &str, tool: &str, args: Value) -> Result<String, String> {
    call_as(url, None, tool, args).await
}

/// [`call`] with a bearer token (for `/mcp`, which needs one).
pub async fn call_as(url: &str, bearer: Option<&str>, tool: &str, args: Value) -> Result<String, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = bearer {
        config = config.auth_header(token.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = ClientConfig::default()
        .serve(transport)
        .await
        .map_err(|e| e.to_string())?;
    let arguments = match args {
        Value::Object(m) => m,
        _ => Default::default(),
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await
        .map_err(|e| e.to_string());
    let _ = client.cancel().await;
    let result = result?;
    let text: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    let text = text.join("\n");
    if result.is_error == Some(true) {
        Err(text)
    } else {
        Ok(text)
    }
}
