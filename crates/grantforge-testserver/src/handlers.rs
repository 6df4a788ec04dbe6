//! The handlers: one per agent API endpoint, as the real server answers it (with the faults that
//! apply after authentication), and the test-control extension under `/_test/`.

mod access_events;
mod heartbeat;
mod policies;
mod signing_key;
mod test_control;

use serde::Serialize;
use serde_json::Value;

use crate::http::{Request, Response};
use crate::state::Shared;
use crate::validate::Invalid;

pub(super) fn json_response(status: u16, value: &impl Serialize) -> Response {
    Response::new(status)
        .header("Content-Type", "application/json")
        .body(serde_json::to_vec(value).unwrap_or_default())
}

impl Shared {
    pub(super) fn read_json(&self, request: &Request) -> Result<Value, Response> {
        serde_json::from_slice(&request.body).map_err(|e| {
            self.problem(
                request,
                400,
                Some(&format!("Failed to read request: {e}")),
                None,
            )
        })
    }

    pub(super) fn invalid(&self, request: &Request, invalid: Invalid) -> Response {
        match invalid {
            Invalid::Unreadable(why) => self.problem(
                request,
                400,
                Some(&format!("Failed to read request: {why}")),
                None,
            ),
            Invalid::Fields(errors) => self.problem(request, 400, None, Some(&errors)),
        }
    }
}
