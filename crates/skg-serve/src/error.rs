//! JSON errors: `{"code": …, "message": …}` with 4xx for the caller's mistakes, 5xx for ours.

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde::Serialize;

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiError {
    /// HTTP status.
    #[serde(skip)]
    pub status: StatusCode,
    /// Stable machine-readable code.
    pub code: &'static str,
    /// What went wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// Any status and code.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 422: well-formed JSON that asks for something invalid.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 500: our fault.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// The default answer for a bare status (from a layer: body limit, timeout, 405, …).
    pub fn for_status(status: StatusCode) -> ApiError {
        let (code, message) = match status {
            StatusCode::NOT_FOUND => ("not_found", "no such route"),
            StatusCode::METHOD_NOT_ALLOWED => {
                ("method_not_allowed", "this route does not take that method")
            }
            StatusCode::PAYLOAD_TOO_LARGE => (
                "payload_too_large",
                "the request body is larger than the gateway accepts",
            ),
            StatusCode::REQUEST_TIMEOUT => (
                "timeout",
                "the request took longer than the gateway's timeout",
            ),
            StatusCode::SERVICE_UNAVAILABLE => ("unavailable", "the gateway cannot answer now"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => (
                "unsupported_media_type",
                "send Content-Type: application/json",
            ),
            StatusCode::BAD_REQUEST => ("bad_request", "the request is malformed"),
            s if s.is_server_error() => ("internal", "the gateway failed on this request"),
            _ => ("error", "the request failed"),
        };
        ApiError::new(status, code, message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!("{self}");
        }
        (self.status, Json(self)).into_response()
    }
}

impl From<skg_index::Error> for ApiError {
    fn from(e: skg_index::Error) -> ApiError {
        ApiError::internal(e.to_string())
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(r: axum::extract::rejection::JsonRejection) -> ApiError {
        use axum::extract::rejection::JsonRejection as J;
        let code = match &r {
            J::JsonDataError(_) => "invalid_request",
            J::JsonSyntaxError(_) => "bad_json",
            J::MissingJsonContentType(_) => "unsupported_media_type",
            J::BytesRejection(_) => "bad_body",
            _ => "bad_request",
        };
        let status = r.status();
        // A body over the limit surfaces as a bytes rejection with 413.
        let code = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "payload_too_large"
        } else {
            code
        };
        ApiError::new(status, code, r.body_text())
    }
}
