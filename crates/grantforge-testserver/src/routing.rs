//! From a connection to an answer: reading the request, the agent API's checks in the real server's
//! order (faults before authentication, token, endpoint, method, media type, faults after), the
//! handler, Spring Security's headers, and the request log.

use std::net::TcpStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread;
use std::time::{Duration, Instant as Clock};

use crate::fault::{Endpoint, Fault, FaultMode};
use crate::http::{self, Connection, Request, Response};
use crate::keys;
use crate::state::Shared;
use crate::tls;
use crate::MAX_REQUEST_BODY;

/// What to do with a connection after routing.
enum Outcome {
    Respond(Response),
    Truncate(Response),
    Close,
}

impl Shared {
    pub(crate) fn serve(&self, mut stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(120)));
        let _ = stream.set_nodelay(true);
        match &self.tls {
            None => self.answer(&mut stream),
            Some(config) => {
                if let Some(mut tls) = tls::accept(config, stream) {
                    self.answer(&mut tls);
                }
            }
        }
    }

    /// Reads the request, routes it and writes the answer.
    fn answer(&self, stream: &mut dyn Connection) {
        let request = match http::read_request(stream, MAX_REQUEST_BODY) {
            Ok(request) => request,
            Err(http::ReadError::Gone) => return,
            Err(http::ReadError::Bad(why)) => {
                let response = self.bare_problem(400, &why, "");
                let _ = http::write_response(stream, &response, false);
                self.log(&format!("malformed request: {why}"));
                return;
            }
            Err(http::ReadError::TooLarge) => {
                let response = self.bare_problem(413, "request body too large", "");
                let _ = http::write_response(stream, &response, false);
                self.log("request body too large");
                return;
            }
        };
        let started = Clock::now();
        let routed = catch_unwind(AssertUnwindSafe(|| self.route(&request)));
        let (outcome, endpoint, fault, authorized) = match routed {
            Ok(result) => result,
            Err(_) => (
                Outcome::Respond(self.problem(&request, 500, None, None)),
                None,
                None,
                false,
            ),
        };
        let answer = match &outcome {
            Outcome::Respond(r) => Some((r, false)),
            Outcome::Truncate(r) => Some((r, true)),
            Outcome::Close => None,
        };
        let status = answer.map(|(r, _)| r.status);
        // Recorded before the answer leaves: a client that has the answer always finds its request
        // in the log (a test that asks "was the fault served?" right after the agent acted on it).
        if !request.path.starts_with("/_test") {
            self.record_request(&request, endpoint, status, fault, authorized, answer);
        }
        let written = match &outcome {
            Outcome::Respond(r) => http::write_response(stream, r, false),
            Outcome::Truncate(r) => http::write_response(stream, r, true),
            Outcome::Close => {
                stream.finish();
                Ok(())
            }
        };
        self.log(&format!(
            "{} {} -> {}{}{} ({} ms)",
            request.method,
            request.path,
            status.map_or_else(|| "closed".to_string(), |s| s.to_string()),
            fault.map_or_else(String::new, |f| format!(
                " [fault {}]",
                serde_json::to_string(&f).unwrap_or_default()
            )),
            if written.is_err() {
                " [write failed]"
            } else {
                ""
            },
            started.elapsed().as_millis()
        ));
    }

    fn authorized(&self, request: &Request) -> bool {
        let Some(header) = request.header("authorization") else {
            return false;
        };
        let Some(rest) = header.strip_prefix("Bearer ") else {
            return false;
        };
        let secret = rest.trim_matches(java_whitespace);
        keys::token_shape_ok(secret) && constant_time_eq(secret.as_bytes(), self.token.as_bytes())
    }

    /// Takes the fault for this endpoint and phase, counting down `times`.
    fn take_fault(&self, endpoint: Endpoint, before_auth: bool) -> Option<Fault> {
        let mut st = self.lock();
        let fault = &mut st.fault;
        if !fault.applies(endpoint) || fault.before_auth() != before_auth {
            return None;
        }
        let taken = fault.clone();
        match fault.times {
            Some(n) if n <= 1 => *fault = Fault::none(),
            Some(n) => fault.times = Some(n - 1),
            None => {}
        }
        Some(taken)
    }

    #[allow(clippy::type_complexity)]
    fn route(&self, request: &Request) -> (Outcome, Option<Endpoint>, Option<FaultMode>, bool) {
        if request.path == "/_test" || request.path.starts_with("/_test/") {
            return (
                Outcome::Respond(self.route_test(request)),
                None,
                None,
                false,
            );
        }
        let relative = if self.base_path.is_empty() {
            Some(request.path.as_str())
        } else {
            request
                .path
                .strip_prefix(self.base_path.as_str())
                .filter(|rest| rest.starts_with('/'))
        };
        let Some(relative) =
            relative.filter(|p| *p == "/api/v1/agent" || p.starts_with("/api/v1/agent/"))
        else {
            let response = self.problem(
                request,
                404,
                Some(&format!("no endpoint {}", request.path)),
                None,
            );
            return (Outcome::Respond(response), None, None, false);
        };
        let endpoint = Endpoint::from_path(relative);
        {
            let mut st = self.lock();
            *st.requests
                .entry(endpoint.map_or("other", Endpoint::name).to_string())
                .or_insert(0) += 1;
        }
        let (outcome, fault, authorized) = self.route_agent(request, endpoint);
        let outcome = match outcome {
            Outcome::Respond(r) => Outcome::Respond(with_security_headers(r)),
            Outcome::Truncate(r) => Outcome::Truncate(with_security_headers(r)),
            Outcome::Close => Outcome::Close,
        };
        (outcome, endpoint, fault, authorized)
    }

    fn route_agent(
        &self,
        request: &Request,
        endpoint: Option<Endpoint>,
    ) -> (Outcome, Option<FaultMode>, bool) {
        let mut applied = None;
        if let Some(fault) = endpoint.and_then(|e| self.take_fault(e, true)) {
            applied = Some(fault.mode);
            match fault.mode {
                FaultMode::Down => return (Outcome::Close, applied, false),
                FaultMode::Slow => {
                    thread::sleep(Duration::from_millis(fault.delay_ms.unwrap_or(1000)))
                }
                FaultMode::Status => {
                    let status = fault.status.unwrap_or(500);
                    let response = if status == 409 {
                        self.problem_with_code(
                            request,
                            409,
                            "GF-SERVICE-002",
                            "error.service.type-unavailable",
                            "no active plugin provides the service type kafka",
                            None,
                        )
                    } else if status == 404 {
                        self.problem(request, 404, Some("no service 1"), None)
                    } else {
                        self.problem(request, status, None, None)
                    };
                    return (Outcome::Respond(response), applied, false);
                }
                _ => {}
            }
        }
        if !self.authorized(request) {
            return (
                Outcome::Respond(self.problem(request, 401, None, None)),
                applied,
                false,
            );
        }
        let Some(endpoint) = endpoint else {
            let response = self.problem(
                request,
                404,
                Some(&format!("no endpoint {}", request.path)),
                None,
            );
            return (Outcome::Respond(response), applied, true);
        };
        if request.method != endpoint.method() {
            let detail = format!("Method '{}' is not supported.", request.method);
            let response = self
                .problem(request, 405, Some(&detail), None)
                .header("Allow", endpoint.method());
            return (Outcome::Respond(response), applied, true);
        }
        if endpoint.method() == "POST" {
            let media = request.header("content-type").map(|ct| {
                ct.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            });
            let json = media.as_deref().is_some_and(|m| {
                m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
            });
            if !json {
                let detail = format!(
                    "Content-Type '{}' is not supported.",
                    media.as_deref().unwrap_or("application/octet-stream")
                );
                return (
                    Outcome::Respond(self.problem(request, 415, Some(&detail), None)),
                    applied,
                    true,
                );
            }
        }
        let fault = self.take_fault(endpoint, false);
        if let Some(f) = &fault {
            applied = Some(f.mode);
        }
        let response = match endpoint {
            Endpoint::Heartbeat => self.heartbeat(request, fault.as_ref()),
            Endpoint::Policies => self.policies(request, fault.as_ref()),
            Endpoint::SigningKey => self.signing_key(),
            Endpoint::AccessEvents => self.access_events(request, fault.as_ref()),
        };
        if fault
            .as_ref()
            .is_some_and(|f| f.mode == FaultMode::FailEvents400 && response.status != 400)
        {
            // A batch without the refused resource was taken as usual: the log says no fault.
            applied = None;
        }
        let truncate = fault
            .as_ref()
            .is_some_and(|f| f.mode == FaultMode::Truncated);
        (
            if truncate {
                Outcome::Truncate(response)
            } else {
                Outcome::Respond(response)
            },
            applied,
            true,
        )
    }
}

/// Java's `Character.isWhitespace`, which `String.strip()` uses.
fn java_whitespace(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\u{1C}'..='\u{1F}'
    ) || (u32::from(c) > 0xff && c.is_whitespace() && !matches!(c, '\u{2007}' | '\u{202F}'))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The headers Spring Security adds to every answer of the agent chain.
fn with_security_headers(response: Response) -> Response {
    let mut response = response
        .header("X-Content-Type-Options", "nosniff")
        .header("X-XSS-Protection", "0")
        .header("X-Frame-Options", "DENY");
    if response.status != 304 && response.header_value("Cache-Control").is_none() {
        response = response
            .header(
                "Cache-Control",
                "no-cache, no-store, max-age=0, must-revalidate",
            )
            .header("Pragma", "no-cache")
            .header("Expires", "0");
    }
    response
}
