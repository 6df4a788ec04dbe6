//! `POST /api/v1/agent/heartbeat`: records the instance's heartbeat (and when it first reported each
//! applied version) and answers the policy version
//! and `refreshSeconds` (faults `old-version`, `refresh-seconds`).

use serde::Serialize;

use super::json_response;
use crate::fault::{Fault, FaultMode};
use crate::http::{Request, Response};
use crate::state::{HeartbeatRecord, Shared};
use crate::{time, validate};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeartbeatAnswer {
    policy_version: i64,
    refresh_seconds: i64,
}

impl Shared {
    pub(crate) fn heartbeat(&self, request: &Request, fault: Option<&Fault>) -> Response {
        let body = match self.read_json(request) {
            Ok(body) => body,
            Err(response) => return response,
        };
        let heartbeat = match validate::heartbeat(&body) {
            Ok(h) => h,
            Err(invalid) => return self.invalid(request, invalid),
        };
        let mut st = self.lock();
        let now = time::now_iso();
        let applied = st.applied.entry(heartbeat.instance.clone()).or_default();
        applied.last = heartbeat.applied_policy_version;
        if let Some(version) = heartbeat.applied_policy_version {
            applied
                .first_reported
                .entry(version)
                .or_insert_with(|| now.clone());
        }
        let count = st
            .heartbeats
            .get(&heartbeat.instance)
            .map_or(0, |r| r.count)
            + 1;
        st.heartbeats.insert(
            heartbeat.instance.clone(),
            HeartbeatRecord {
                instance: heartbeat.instance,
                count,
                received_at: now,
                remote_addr: request.peer.map(|p| p.ip().to_string()),
                body,
            },
        );
        let version = match fault {
            Some(f) if f.mode == FaultMode::OldVersion => {
                f.policy_version.unwrap_or(st.version - 1)
            }
            _ => st.version,
        };
        let refresh_seconds = match fault {
            Some(f) if f.mode == FaultMode::RefreshSeconds => f.refresh_seconds.unwrap_or(i64::MAX),
            _ => self.refresh_seconds,
        };
        json_response(
            200,
            &HeartbeatAnswer {
                policy_version: version,
                refresh_seconds,
            },
        )
    }
}
