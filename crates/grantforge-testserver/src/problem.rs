//! Error answers: RFC 9457 problem JSON as GrantForge's `ProblemDetailsAdvice` renders it, with its
//! error codes, message keys and request ids.

use std::sync::atomic::Ordering;

use serde::Serialize;

use crate::http::{self, Request, Response};
use crate::state::Shared;
use crate::validate::FieldError;

/// The detail GrantForge gives for every 5xx.
const INTERNAL_DETAIL: &str =
    "An unexpected error occurred. Quote the request ID when reporting it.";

/// Whether an `Accept` header admits `application/problem+json`.
fn accepts_problem_json(accept: &str) -> bool {
    accept.split(',').any(|range| {
        let media = range
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        media == "*/*" || media == "application/*" || media == "application/problem+json"
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Problem<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    title: &'a str,
    status: u16,
    detail: &'a str,
    instance: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<&'a [FieldError]>,
    code: &'a str,
    message_key: &'a str,
    request_id: &'a str,
}

/// GrantForge's error code and message key for a status (`CommonErrorCode.forStatus`).
fn error_code(status: u16) -> (&'static str, &'static str) {
    match status {
        401 => ("GF-COMMON-401", "error.common.unauthenticated"),
        403 => ("GF-COMMON-403", "error.common.forbidden"),
        404 => ("GF-COMMON-404", "error.common.not-found"),
        405 => ("GF-COMMON-405", "error.common.method-not-allowed"),
        409 => ("GF-COMMON-409", "error.common.conflict"),
        415 => ("GF-COMMON-415", "error.common.unsupported-media-type"),
        // 400 and every other 4xx
        400..=499 => ("GF-COMMON-400", "error.common.bad-request"),
        _ => ("GF-COMMON-500", "error.common.internal"),
    }
}

impl Shared {
    fn next_request_id(&self) -> String {
        format!(
            "test-{:08x}",
            self.request_ids
                .fetch_add(1, Ordering::SeqCst)
                .wrapping_add(1)
        )
    }

    /// A problem answer for a request that could not even be parsed.
    pub(crate) fn bare_problem(&self, status: u16, detail: &str, instance: &str) -> Response {
        let (code, key) = error_code(status);
        let id = self.next_request_id();
        let body = Problem {
            kind: "about:blank",
            title: http::reason(status),
            status,
            detail,
            instance,
            errors: None,
            code,
            message_key: key,
            request_id: &id,
        };
        Response::new(status)
            .header("Content-Type", "application/problem+json")
            .body(serde_json::to_vec(&body).unwrap_or_default())
    }

    /// An RFC 9457 problem answer, rendered as GrantForge's `ProblemDetailsAdvice` renders it.
    pub(crate) fn problem(
        &self,
        request: &Request,
        status: u16,
        detail: Option<&str>,
        errors: Option<&[FieldError]>,
    ) -> Response {
        let (code, key) = error_code(status);
        let default_detail = match status {
            400 => "Invalid request content.",
            401 => "authentication required",
            404 => "not found",
            _ if status >= 500 => INTERNAL_DETAIL,
            _ => http::reason(status),
        };
        let detail = if status >= 500 {
            INTERNAL_DETAIL
        } else {
            detail.unwrap_or(default_detail)
        };
        self.problem_with_code(request, status, code, key, detail, errors)
    }

    pub(crate) fn problem_with_code(
        &self,
        request: &Request,
        status: u16,
        code: &str,
        key: &str,
        detail: &str,
        errors: Option<&[FieldError]>,
    ) -> Response {
        let id = self.next_request_id();
        let body = Problem {
            kind: "about:blank",
            title: http::reason(status),
            status,
            detail,
            instance: &request.path,
            errors,
            code,
            message_key: key,
            request_id: &id,
        };
        let content_type = match request.header("accept") {
            Some(accept) if !accepts_problem_json(accept) => "application/json",
            _ => "application/problem+json",
        };
        Response::new(status)
            .header("Content-Type", content_type)
            .header("X-Request-Id", id.clone())
            .body(serde_json::to_vec(&body).unwrap_or_default())
    }
}
