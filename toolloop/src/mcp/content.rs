//! MCP tool results to and from what toolloop's loop shows a model.
//!
//! A tool result reaches a model as text (see [`ToolResult`]), so MCP
//! content blocks are rendered: text as itself, an embedded text resource
//! under a line naming its URI, and binary content (images, audio, blobs)
//! as a one-line placeholder that names its type and size, never as
//! base64 the model would read as noise.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use crate::message::ToolResult;
use crate::tool::{ToolError, ToolOutput};

/// A server's `tools/call` result as the outcome of a local tool call:
/// `isError` becomes [`ToolError::Failed`] with the rendered content.
///
/// Structured content, when the server sent it and the other content is
/// only text (by the spec, the same data serialised), is the output value,
/// so hooks and terminal checks see it as JSON; otherwise the output is the
/// rendered text.
pub(crate) fn tool_outcome(result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let text = render(&result.content);
    if result.is_error == Some(true) {
        let message = match (text.is_empty(), &result.structured_content) {
            (false, _) => text,
            (true, Some(structured)) => structured.to_string(),
            (true, None) => "the tool failed without saying why".to_owned(),
        };
        return Err(ToolError::Failed(message));
    }
    let only_text = result.content.iter().all(|block| matches!(block, ContentBlock::Text(_)));
    Ok(match result.structured_content {
        Some(structured) if only_text => ToolOutput::new(structured),
        Some(structured) if text.is_empty() => ToolOutput::new(structured),
        Some(structured) => ToolOutput::from(format!("{text}\n{structured}")),
        None => ToolOutput::from(text),
    })
}

/// Content blocks as the text a model reads, one block per line.
pub(crate) fn render(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::with_capacity(blocks.len());
    for block in blocks {
        parts.push(match block {
            ContentBlock::Text(text) => text.text.clone(),
            ContentBlock::Image(image) => binary("image", &image.mime_type, &image.data),
            ContentBlock::Audio(audio) => binary("audio", &audio.mime_type, &audio.data),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => format!("[resource {uri}]\n{text}"),
                ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
                    let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                    format!("[resource {uri}: {mime}, {} bytes]", decoded_len(blob))
                }
                _ => "[resource of a kind this client cannot show]".to_owned(),
            },
            ContentBlock::ResourceLink(link) => {
                let mut rendered = format!("[resource link {}: {}]", link.uri, link.name);
                if let Some(description) = &link.description {
                    rendered.push(' ');
                    rendered.push_str(description);
                }
                rendered
            }
            // A content type newer than this client: say so rather than drop it.
            _ => "[content of a type this client cannot show]".to_owned(),
        });
    }
    parts.join("\n")
}

fn binary(kind: &str, mime_type: &str, base64: &str) -> String {
    format!("[{kind}: {mime_type}, {} bytes]", decoded_len(base64))
}

/// The size of base64 data once decoded, without decoding it.
fn decoded_len(base64: &str) -> usize {
    let trimmed = base64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

/// A local tool call's result as a `tools/call` result: the text the loop
/// would show a model, `isError` when it failed, and the output value as
/// structured content when it is a JSON object (MCP's structured content is
/// an object).
pub(crate) fn call_tool_result(result: &ToolResult, output: Option<&ToolOutput>) -> CallToolResult {
    let content = vec![ContentBlock::text(result.content.clone())];
    if result.is_error() {
        return CallToolResult::error(content);
    }
    let mut success = CallToolResult::success(content);
    if let Some(value @ Value::Object(_)) = output.map(ToolOutput::value) {
        success.structured_content = Some(value.clone());
    }
    success
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock, Resource, ResourceContents};
    use serde_json::json;

    use super::{call_tool_result, tool_outcome};
    use crate::message::{FailureKind, ToolResult};
    use crate::tool::{ToolError, ToolOutput};

    #[test]
    fn every_content_type_becomes_readable_text() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("the chart:"),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ContentBlock::audio("AAAA", "audio/wav"),
            ContentBlock::embedded_text("file:///notes.txt", "buy milk"),
            ContentBlock::resource(ResourceContents::blob("AAAAAAAA", "file:///x.bin")),
            ContentBlock::resource_link(Resource::new("file:///big.csv", "big.csv").with_description("all the rows")),
        ]);
        let output = tool_outcome(result).unwrap();
        assert_eq!(
            output.text(),
            "the chart:\n[image: image/png, 8 bytes]\n[audio: audio/wav, 3 bytes]\n\
             [resource file:///notes.txt]\nbuy milk\n[resource file:///x.bin: application/octet-stream, 6 bytes]\n\
             [resource link file:///big.csv: big.csv] all the rows"
        );
    }

    #[test]
    fn structured_content_is_the_output_value_and_errors_are_failures() {
        let structured = CallToolResult::structured(json!({"celsius": 21}));
        assert_eq!(tool_outcome(structured).unwrap().value(), &json!({"celsius": 21}));

        let failed = CallToolResult::error(vec![ContentBlock::text("no such city")]);
        assert_eq!(tool_outcome(failed), Err(ToolError::Failed("no such city".to_owned())));
        let silent = CallToolResult::error(vec![]);
        assert_eq!(tool_outcome(silent), Err(ToolError::Failed("the tool failed without saying why".to_owned())));
    }

    #[test]
    fn local_results_keep_the_text_the_model_would_see() {
        let failure = ToolResult::failure("c1", FailureKind::TimedOut, "tool `slow` did not finish within 1s");
        let served = call_tool_result(&failure, None);
        assert_eq!(served.is_error, Some(true));
        assert_eq!(served.content[0].as_text().unwrap().text, "tool `slow` did not finish within 1s");

        let output = ToolOutput::new(json!({"sum": 3}));
        let success = ToolResult::success("c2", output.text());
        let served = call_tool_result(&success, Some(&output));
        assert_eq!(served.is_error, Some(false));
        assert_eq!(served.content[0].as_text().unwrap().text, r#"{"sum":3}"#);
        assert_eq!(served.structured_content, Some(json!({"sum": 3})));

        let text = ToolOutput::from("plain");
        let served = call_tool_result(&ToolResult::success("c3", text.text()), Some(&text));
        assert_eq!(served.structured_content, None);
    }
}
