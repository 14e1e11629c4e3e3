//! Attachments: files uploaded for a prompt or re-prompt. The editor uploads
//! with the graph's edit token; the graph document references the file by
//! id; runs read the bytes from here.

use std::future::Future;
use std::pin::Pin;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::header::{
    CONTENT_DISPOSITION, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use engine::prompt::{AttachmentContent, AttachmentSource};
use graph::{AttachmentKind, attachment_kind};
use wire::graphs::AttachmentStored;

use crate::capability::{is_attachment_id, new_attachment_id, require_edit_token};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{NewAttachment, Store};

/// The largest file that can be attached.
pub const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
}

/// Percent-decodes the `X-Filename` header (the browser encodes it).
fn decode_name(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(byte) = encoded
                .get(index + 1..index + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            decoded.push(byte);
            index += 3;
            continue;
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    let name = String::from_utf8_lossy(&decoded);
    // A name, not a path: keep the last segment, no control characters.
    let name: String = name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|character| !character.is_control())
        .take(200)
        .collect();
    if name.trim().is_empty() {
        "file".to_owned()
    } else {
        name
    }
}

/// `POST /api/graphs/{id}/attachments`: the body is the file; `Content-Type`
/// its type, `X-Filename` its name (URL-encoded).
pub async fn upload(
    State(state): State<AppState>,
    Path(graph_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &graph_id, &headers, "uploading a file").await?;
    if body.len() > MAX_ATTACHMENT_BYTES {
        return Err(ApiError::TooLarge {
            max_bytes: MAX_ATTACHMENT_BYTES,
        });
    }
    let media_type = header(&headers, "content-type")
        .map(|value| {
            value
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|value| value.contains('/') && value.len() < 128)
        .unwrap_or_else(|| "application/octet-stream".to_owned());
    let name = decode_name(header(&headers, "x-filename").unwrap_or("file"));
    // Refused now, not when a run fails on it: only what a model can be sent.
    let text = std::str::from_utf8(&body).is_ok();
    let media_type = match attachment_kind(&media_type) {
        Some(AttachmentKind::Image) => media_type,
        Some(AttachmentKind::Text) if text => media_type,
        // A text file the browser could not name the type of.
        None if text && media_type == "application/octet-stream" => "text/plain".to_owned(),
        _ => {
            return Err(ApiError::AttachmentUnsupported { name, media_type });
        }
    };
    let id = new_attachment_id();
    state
        .store
        .insert_attachment(NewAttachment {
            id: &id,
            graph_id: &graph_id,
            name: &name,
            media_type: &media_type,
            content: &body,
        })
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(AttachmentStored {
            id,
            name,
            media_type,
            size_bytes: body.len(),
        }),
    )
        .into_response())
}

/// `GET /api/attachments/{id}`: the file. Served so that it cannot run in
/// the page's origin: sandboxed, never sniffed, and downloaded unless it is
/// an image or plain text.
pub async fn download(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    if !is_attachment_id(&id) {
        return Err(ApiError::AttachmentNotFound);
    }
    let attachment = state
        .store
        .attachment(&id)
        .await?
        .ok_or(ApiError::AttachmentNotFound)?;
    let inline =
        attachment.media_type.starts_with("image/") && attachment.media_type != "image/svg+xml";
    let (content_type, disposition) = if inline {
        (attachment.media_type.clone(), "inline")
    } else if attachment.media_type.starts_with("text/") {
        ("text/plain; charset=utf-8".to_owned(), "inline")
    } else {
        (attachment.media_type.clone(), "attachment")
    };
    let filename: String = attachment
        .name
        .chars()
        .filter(|character| character.is_ascii_alphanumeric() || "._- ".contains(*character))
        .collect();
    Ok((
        [
            (CONTENT_TYPE, content_type),
            (
                CONTENT_DISPOSITION,
                format!("{disposition}; filename=\"{filename}\""),
            ),
            (X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            (
                CONTENT_SECURITY_POLICY,
                "sandbox; default-src 'none'".to_owned(),
            ),
        ],
        attachment.content,
    )
        .into_response())
}

/// Runs read attachments from the store.
pub struct StoreAttachments(pub Store);

impl AttachmentSource for StoreAttachments {
    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> Pin<Box<dyn Future<Output = Option<AttachmentContent>> + Send + 'a>> {
        Box::pin(async move {
            let attachment = self.0.attachment(id).await.ok().flatten()?;
            Some(AttachmentContent {
                name: attachment.name,
                media_type: attachment.media_type,
                bytes: attachment.content,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::decode_name;

    #[test]
    fn file_names_are_decoded_and_kept_to_a_name() {
        assert_eq!(decode_name("spec%20v2.md"), "spec v2.md");
        assert_eq!(decode_name("..%2F..%2Fetc%2Fpasswd"), "passwd");
        assert_eq!(decode_name("%E2%9C%93.txt"), "✓.txt");
        assert_eq!(decode_name(""), "file");
    }
}
