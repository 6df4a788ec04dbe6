//! `POST /api/v1/agent/access-events`: validates a batch, counts expired and repeated events as
//! GrantForge's `AccessAudit.record` does, and appends the accepted ones to `events.jsonl` (fault
//! `fail-events-400`).

use std::collections::HashSet;
use std::io::Write;

use serde::Serialize;

use super::json_response;
use crate::fault::{Fault, FaultMode};
use crate::http::{Request, Response};
use crate::state::Shared;
use crate::validate::{self, FieldError};
use crate::{files, time};

#[derive(Serialize)]
struct IngestedAnswer {
    accepted: usize,
    duplicates: usize,
    expired: usize,
}

impl Shared {
    pub(crate) fn access_events(&self, request: &Request, fault: Option<&Fault>) -> Response {
        let refusing = fault.filter(|f| f.mode == FaultMode::FailEvents400);
        if refusing.is_some_and(|f| f.resource.is_none()) {
            let errors = [FieldError {
                field: "events".into(),
                message: "refused by the test server's fail-events-400 fault".into(),
            }];
            return self.problem(request, 400, None, Some(&errors));
        }
        let body = match self.read_json(request) {
            Ok(body) => body,
            Err(response) => return response,
        };
        let batch = match validate::batch(&body) {
            Ok(batch) => batch,
            Err(invalid) => return self.invalid(request, invalid),
        };
        if let Some(resource) = refusing.and_then(|f| f.resource.as_deref()) {
            if let Some(at) = batch
                .events
                .iter()
                .position(|e| e.raw["resource"] == resource)
            {
                let errors = [FieldError {
                    field: format!("events[{at}].resource"),
                    message: "refused by the test server's fail-events-400 fault".into(),
                }];
                return self.problem(request, 400, None, Some(&errors));
            }
        }
        // AccessAudit.record: expired first, then the first of each event id in the batch, then ids stored before.
        let oldest = time::now().0.saturating_sub(self.retention_secs);
        let total = batch.events.len();
        let mut expired = 0;
        let mut seen = HashSet::new();
        let mut fresh = Vec::new();
        for event in batch.events {
            if event.occurred_at.0 < oldest {
                expired += 1;
            } else if seen.insert(event.event_id.clone()) {
                fresh.push(event);
            }
        }
        let repeated = total - expired - fresh.len();
        let mut st = self.lock();
        let mut accepted = Vec::new();
        let mut known = 0;
        for event in fresh {
            if st.event_ids.contains(&event.event_id) {
                known += 1;
            } else {
                st.event_ids.insert(event.event_id);
                accepted.push(event.raw);
            }
        }
        if !accepted.is_empty() {
            let mut lines = Vec::new();
            for event in &accepted {
                lines.extend_from_slice(event.to_string().as_bytes());
                lines.push(b'\n');
            }
            let mut log = self.events_log.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(file) = log.as_mut() {
                if let Err(e) = file.write_all(&lines).and_then(|()| file.flush()) {
                    self.log(&format!("cannot append to {}: {e}", files::EVENTS));
                }
            }
        }
        let answer = IngestedAnswer {
            accepted: accepted.len(),
            duplicates: repeated + known,
            expired,
        };
        self.log(&format!(
            "access events from {}: {} accepted, {} duplicates, {} expired",
            batch.instance, answer.accepted, answer.duplicates, answer.expired
        ));
        st.events.extend(accepted);
        st.duplicates += answer.duplicates as u64;
        json_response(200, &answer)
    }
}
