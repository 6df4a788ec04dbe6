//! The test-control extension under `/_test/` (this server only, no authentication): the fault, the
//! policies, and read-outs of what agents sent.

use std::collections::BTreeMap;

use serde_json::json;

use super::json_response;
use crate::fault::{Endpoint, Fault};
use crate::http::{Request, Response};
use crate::snapshot::PolicySet;
use crate::state::Shared;

impl Shared {
    pub(crate) fn route_test(&self, request: &Request) -> Response {
        let method = request.method.as_str();
        let allowed: &[&str] = match request.path.as_str() {
            "/_test/state" | "/_test/events" | "/_test/heartbeats" | "/_test/instances"
            | "/_test/requests" => &["GET"],
            "/_test/fault" => &["GET", "POST"],
            "/_test/policies" | "/_test/reset" => &["POST"],
            _ => {
                return self.problem(
                    request,
                    404,
                    Some(&format!("no test endpoint {}", request.path)),
                    None,
                )
            }
        };
        if !allowed.contains(&method) {
            let detail = format!("Method '{method}' is not supported.");
            return self
                .problem(request, 405, Some(&detail), None)
                .header("Allow", allowed.join(", "));
        }
        match (method, request.path.as_str()) {
            ("GET", "/_test/state") => {
                let st = self.lock();
                let mut requests: BTreeMap<String, u64> = Endpoint::ALL
                    .iter()
                    .map(|e| (e.name().to_string(), 0))
                    .collect();
                requests.extend(st.requests.iter().map(|(k, v)| (k.clone(), *v)));
                json_response(
                    200,
                    &json!({
                        "service": self.service_name(&st.set),
                        "policyVersion": st.version,
                        "policyVersionSince": st.version_since,
                        "etag": st.current.etag,
                        "keyId": self.key.key_id(),
                        "otherKeyId": self.other_key.key_id(),
                        "fault": st.fault,
                        "requests": requests,
                        "events": st.events.len(),
                        "duplicates": st.duplicates,
                        "heartbeats": st.heartbeats.len(),
                    }),
                )
            }
            ("GET", "/_test/events") => json_response(200, &self.lock().events),
            ("GET", "/_test/heartbeats") => {
                json_response(200, &self.lock().heartbeats.values().collect::<Vec<_>>())
            }
            ("GET", "/_test/instances") => json_response(200, &self.instances()),
            ("GET", "/_test/requests") => json_response(200, &self.lock().recent),
            ("GET", "/_test/fault") => json_response(200, &self.lock().fault),
            ("POST", "/_test/fault") => match Fault::from_json(&request.body) {
                Ok(fault) => {
                    self.log(&format!(
                        "fault set: {}",
                        serde_json::to_string(&fault).unwrap_or_default()
                    ));
                    self.lock().fault = fault.clone();
                    json_response(200, &fault)
                }
                Err(why) => self.problem(request, 400, Some(&why), None),
            },
            ("POST", "/_test/policies") => match PolicySet::parse(&request.body) {
                Ok(set) => {
                    let mut st = self.lock();
                    if request.query_flag("sameVersion") {
                        self.install_at_same_version(&mut st, set);
                    } else {
                        self.install(&mut st, set);
                    }
                    json_response(
                        200,
                        &json!({"policyVersion": st.version, "etag": st.current.etag}),
                    )
                }
                Err(why) => self.problem(request, 400, Some(&why), None),
            },
            ("POST", "/_test/reset") => {
                self.reset();
                json_response(200, &json!({"reset": true}))
            }
            _ => self.problem(request, 404, None, None),
        }
    }
}
