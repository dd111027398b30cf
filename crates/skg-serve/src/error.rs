//! JSON errors: `{"code": …, "message": …}`, 4xx for the caller's mistakes, 5xx for ours. Every
//! code is an [`ErrorCode`] that carries its HTTP status; a 5xx body says what failed in words
//! a client can act on, never internal details (file paths, library messages), which go to the
//! log with the request instead.

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Every error code the gateway answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 400: the request is malformed.
    BadRequest,
    /// 400: the body is not JSON.
    BadJson,
    /// 400: the body could not be read.
    BadBody,
    /// 400: an MCP protocol version this server does not speak.
    UnsupportedProtocolVersion,
    /// 401: missing or wrong bearer token.
    Unauthorized,
    /// 403: reloading over HTTP is disabled.
    ReloadDisabled,
    /// 403: this `Origin` may not call `/mcp`.
    OriginNotAllowed,
    /// 403: the skill is withheld: the security scan found it unsafe.
    UnsafeSkill,
    /// 403: this key may not ask for that (e.g. quarantined skills).
    Forbidden,
    /// 404: no such route or skill.
    NotFound,
    /// 405: the route does not take that method.
    MethodNotAllowed,
    /// 408: the request took too long to arrive.
    Timeout,
    /// 413: the body is larger than the gateway accepts.
    PayloadTooLarge,
    /// 415: not `application/json`.
    UnsupportedMediaType,
    /// 422: well-formed JSON asking for something invalid.
    InvalidRequest,
    /// 429: this key's rate limit is reached (see `Retry-After`).
    RateLimited,
    /// 500: the gateway failed on this request.
    Internal,
    /// 503: the gateway cannot answer now (timeout, shutting down).
    Unavailable,
    /// 503: the index folder could not be reloaded; the previous one keeps serving.
    ReloadFailed,
    /// Any other status a layer produced.
    Error,
}

impl ErrorCode {
    /// The HTTP status of this code.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadRequest
            | ErrorCode::BadJson
            | ErrorCode::BadBody
            | ErrorCode::UnsupportedProtocolVersion => StatusCode::BAD_REQUEST,
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::ReloadDisabled
            | ErrorCode::OriginNotAllowed
            | ErrorCode::UnsafeSkill
            | ErrorCode::Forbidden => StatusCode::FORBIDDEN,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::Timeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::InvalidRequest => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::Internal | ErrorCode::Error => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Unavailable | ErrorCode::ReloadFailed => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::BadJson => "bad_json",
            ErrorCode::BadBody => "bad_body",
            ErrorCode::UnsupportedProtocolVersion => "unsupported_protocol_version",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::ReloadDisabled => "reload_disabled",
            ErrorCode::OriginNotAllowed => "origin_not_allowed",
            ErrorCode::UnsafeSkill => "unsafe_skill",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::Timeout => "timeout",
            ErrorCode::PayloadTooLarge => "payload_too_large",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Internal => "internal",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::ReloadFailed => "reload_failed",
            ErrorCode::Error => "error",
        }
    }
}

/// An error answer: its body is `{code, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ApiError {
    /// Stable machine-readable code (its HTTP status follows from it).
    pub code: ErrorCode,
    /// What went wrong, for a person.
    pub message: String,
    /// What the log gets besides the message (never sent).
    #[serde(skip)]
    #[schema(ignore)]
    pub detail: Option<String>,
    /// Seconds before a retry can succeed (sent as `Retry-After` with 429).
    #[serde(skip)]
    #[schema(ignore)]
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with `code`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
            detail: None,
            retry_after: None,
        }
    }

    /// Its HTTP status.
    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    /// 422: well-formed JSON that asks for something invalid.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::InvalidRequest, message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::NotFound, message)
    }

    /// 500: our fault. `message` says what failed for the client; `detail` (paths, library
    /// messages) goes to the log only.
    pub fn internal(message: impl Into<String>, detail: impl std::fmt::Display) -> ApiError {
        ApiError {
            code: ErrorCode::Internal,
            message: message.into(),
            detail: Some(detail.to_string()),
            retry_after: None,
        }
    }

    /// The default answer for a bare status (from a layer: body limit, timeout, 405, …).
    pub fn for_status(status: StatusCode) -> ApiError {
        let (code, message) = match status {
            StatusCode::NOT_FOUND => (ErrorCode::NotFound, "no such route"),
            StatusCode::METHOD_NOT_ALLOWED => (
                ErrorCode::MethodNotAllowed,
                "this route does not take that method",
            ),
            StatusCode::PAYLOAD_TOO_LARGE => (
                ErrorCode::PayloadTooLarge,
                "the request body is larger than the gateway accepts",
            ),
            StatusCode::REQUEST_TIMEOUT => (
                ErrorCode::Timeout,
                "the request took longer than the gateway's timeout",
            ),
            StatusCode::SERVICE_UNAVAILABLE => {
                (ErrorCode::Unavailable, "the gateway cannot answer now")
            }
            StatusCode::UNSUPPORTED_MEDIA_TYPE => (
                ErrorCode::UnsupportedMediaType,
                "send Content-Type: application/json",
            ),
            StatusCode::BAD_REQUEST => (ErrorCode::BadRequest, "the request is malformed"),
            s if s.is_server_error() => (ErrorCode::Internal, "the gateway failed on this request"),
            _ => (ErrorCode::Error, "the request failed"),
        };
        ApiError::new(code, message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status().as_u16(),
            self.code.as_str(),
            self.message
        )?;
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!("{self}");
        }
        let retry_after = self.retry_after;
        let unauthorized = self.code == ErrorCode::Unauthorized;
        // A status the code does not carry can't happen: the code is the only source.
        let mut resp = (status, Json(self)).into_response();
        if let Some(s) = retry_after {
            resp.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(s),
            );
        }
        if unauthorized {
            resp.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"skg\""),
            );
        }
        resp
    }
}

/// What failed, in words without paths: an index error as a client may see it.
pub(crate) fn public(e: &skg_index::Error) -> String {
    let file = |p: &std::path::Path| {
        p.file_name()
            .map_or_else(|| "a file".to_owned(), |n| n.to_string_lossy().into_owned())
    };
    match e {
        skg_index::Error::Io { path, .. } => format!("the index file {} could not be read", file(path)),
        skg_index::Error::Json { path, message } => {
            format!("the index file {} is damaged ({message})", file(path))
        }
        skg_index::Error::Unfinished(_) => {
            "the index folder is not finished (no _SUCCESS): it is being written, or its build failed".into()
        }
        skg_index::Error::Version { found, expected, .. } => {
            format!("the index folder has format {found}, this gateway reads {expected}")
        }
        skg_index::Error::Corrupt { message, .. } => format!("the index folder is damaged: {message}"),
        skg_index::Error::Tantivy(_) => "the BM25 index failed on this request".into(),
        skg_index::Error::Embed(_) => "the query could not be embedded".into(),
        skg_index::Error::Ann(_) => "the nearest-neighbour graph could not be built".into(),
    }
}

impl From<skg_index::Error> for ApiError {
    fn from(e: skg_index::Error) -> ApiError {
        ApiError::internal(public(&e), e)
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(r: axum::extract::rejection::JsonRejection) -> ApiError {
        use axum::extract::rejection::JsonRejection as J;
        // A body over the limit surfaces as a bytes rejection with 413.
        let code = match &r {
            _ if r.status() == StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
            J::JsonDataError(_) => ErrorCode::InvalidRequest,
            J::JsonSyntaxError(_) => ErrorCode::BadJson,
            J::MissingJsonContentType(_) => ErrorCode::UnsupportedMediaType,
            J::BytesRejection(_) => ErrorCode::BadBody,
            _ => ErrorCode::BadRequest,
        };
        ApiError::new(code, r.body_text())
    }
}
