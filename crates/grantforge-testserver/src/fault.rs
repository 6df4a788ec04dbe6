//! Fault injection: how the test server misbehaves on purpose (`POST /_test/fault`).

use serde::{Deserialize, Serialize};

/// The agent API endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Endpoint {
    /// `POST /api/v1/agent/heartbeat`
    Heartbeat,
    /// `GET /api/v1/agent/policies`
    Policies,
    /// `GET /api/v1/agent/signing-key`
    SigningKey,
    /// `POST /api/v1/agent/access-events`
    AccessEvents,
}

impl Endpoint {
    /// All endpoints.
    pub const ALL: [Endpoint; 4] = [
        Endpoint::Heartbeat,
        Endpoint::Policies,
        Endpoint::SigningKey,
        Endpoint::AccessEvents,
    ];

    /// The name used in fault `endpoints` lists and request counters (`heartbeat`, `policies`, `signing-key`,
    /// `access-events`).
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Heartbeat => "heartbeat",
            Endpoint::Policies => "policies",
            Endpoint::SigningKey => "signing-key",
            Endpoint::AccessEvents => "access-events",
        }
    }

    /// The path below the server root (and below the base path, if one is configured).
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Heartbeat => "/api/v1/agent/heartbeat",
            Endpoint::Policies => "/api/v1/agent/policies",
            Endpoint::SigningKey => "/api/v1/agent/signing-key",
            Endpoint::AccessEvents => "/api/v1/agent/access-events",
        }
    }

    /// The HTTP method.
    pub fn method(self) -> &'static str {
        match self {
            Endpoint::Heartbeat | Endpoint::AccessEvents => "POST",
            Endpoint::Policies | Endpoint::SigningKey => "GET",
        }
    }

    pub(crate) fn from_path(path: &str) -> Option<Endpoint> {
        Endpoint::ALL.into_iter().find(|e| e.path() == path)
    }
}

/// What the server does wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultMode {
    /// Behave (the default).
    None,
    /// Every endpoint: read the request, then close the connection without answering.
    Down,
    /// Every endpoint: sleep `delayMs` (default 1000) before handling the request normally.
    Slow,
    /// Every endpoint: answer `status` with a problem JSON body (409 uses `GF-SERVICE-002`).
    Status,
    /// Policies: a valid Base64 Ed25519 signature by the right key, but over other bytes.
    WrongSignature,
    /// Policies: signed by a second key pair; the key id header names that key. With `rotateKey`, the
    /// signing-key endpoint serves the second key too (whatever `endpoints` says).
    OtherKey,
    /// Policies: the current content with policy version `policyVersion` (default current − 1), properly
    /// signed, while the heartbeat keeps reporting the current version (so agents download it). Only when
    /// `endpoints` names `heartbeat` explicitly does the heartbeat report the old version too.
    OldVersion,
    /// Policies: properly signed snapshot of another service (`otherService`, default `<service>-other`).
    OtherService,
    /// Policies: properly signed snapshot whose `serviceType` is `serviceType` (default `hive`).
    OtherType,
    /// Every endpoint: `Content-Length` of the whole body, but only the first half is sent, then the
    /// connection is closed. Answers without a body are sent whole.
    Truncated,
    /// Policies: a signed body of `hugeBytes` bytes (default 64 MiB + 1): the snapshot padded with spaces
    /// after its opening brace, so it is still valid JSON.
    Huge,
    /// Access events: answer 400 (problem JSON with a field error) and record nothing. With
    /// `resource`, only a batch holding an event on that resource is refused, and a batch without
    /// one is taken as usual: one event the server never takes, as an agent's batch split must find.
    #[serde(rename = "fail-events-400")]
    FailEvents400,
    /// Heartbeat: answer `refreshSeconds` = `refreshSeconds` (default `i64::MAX`), whatever the server is
    /// configured with: a server that asks agents never to come back.
    RefreshSeconds,
    /// Policies: a request carrying `If-None-Match` gets 304 whatever the ETag it names (a stale cache in front
    /// of the server); a request without it gets the current snapshot.
    StaleNotModified,
    /// Policies: the current snapshot, properly signed, under an `ETag` header that is not the body's.
    WrongEtag,
    /// Policies: the body the current version served before its last change at the same version
    /// (`POST /_test/policies?sameVersion=true`), with its own signature: a replayed body from
    /// before a membership was revoked. Without such a change, the current snapshot.
    Replay,
}

/// Default size of a `huge` body: one byte over GrantForge's 64 MiB snapshot limit.
pub const DEFAULT_HUGE_BYTES: u64 = 64 * 1024 * 1024 + 1;

/// Largest `hugeBytes` accepted (the body is held in memory once while it is sent).
pub const MAX_HUGE_BYTES: u64 = 512 * 1024 * 1024;

/// A fault: the mode and its parameters. JSON form (camelCase): `{"mode": "status", "status": 500,
/// "endpoints": ["policies"], "times": 2}`; unknown members are refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fault {
    /// The mode.
    pub mode: FaultMode,
    /// Restricts the fault to these endpoints (default: every endpoint the mode concerns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<Vec<Endpoint>>,
    /// `slow`: the delay in milliseconds (default 1000, at most 600000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// `status`: the HTTP status, 400–599 (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `other-key`: also serve the other key from the signing-key endpoint.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rotate_key: bool,
    /// `other-service`: the service name to put in the snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_service: Option<String>,
    /// `other-type`: the service type to put in the snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_type: Option<String>,
    /// `old-version`: the policy version to serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_version: Option<i64>,
    /// `huge`: the body size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_bytes: Option<u64>,
    /// `refresh-seconds`: the `refreshSeconds` of heartbeat answers (default `i64::MAX`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_seconds: Option<i64>,
    /// `fail-events-400`: refuse only batches holding an event on this resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The fault applies to this many more requests, then the mode goes back to `none` (default: until changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u64>,
}

impl Default for Fault {
    fn default() -> Self {
        Fault::new(FaultMode::None)
    }
}

impl Fault {
    /// A fault of this mode with default parameters.
    pub fn new(mode: FaultMode) -> Self {
        Fault {
            mode,
            endpoints: None,
            delay_ms: None,
            status: None,
            rotate_key: false,
            other_service: None,
            service_type: None,
            policy_version: None,
            huge_bytes: None,
            refresh_seconds: None,
            resource: None,
            times: None,
        }
    }

    /// No fault.
    pub fn none() -> Self {
        Fault::new(FaultMode::None)
    }

    /// `status` mode with this status.
    pub fn status(status: u16) -> Self {
        Fault {
            status: Some(status),
            ..Fault::new(FaultMode::Status)
        }
    }

    /// `slow` mode with this delay.
    pub fn slow(delay_ms: u64) -> Self {
        Fault {
            delay_ms: Some(delay_ms),
            ..Fault::new(FaultMode::Slow)
        }
    }

    /// Restricts the fault to these endpoints.
    pub fn on(mut self, endpoints: &[Endpoint]) -> Self {
        self.endpoints = Some(endpoints.to_vec());
        self
    }

    /// Limits the fault to the next `n` requests it applies to.
    pub fn times(mut self, n: u64) -> Self {
        self.times = Some(n);
        self
    }

    /// Parses the JSON form and validates it.
    pub fn from_json(json: &[u8]) -> Result<Self, String> {
        let fault: Fault =
            serde_json::from_slice(json).map_err(|e| format!("invalid fault: {e}"))?;
        fault.validate()?;
        Ok(fault)
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if self.mode == FaultMode::Status {
            match self.status {
                Some(s) if (400..=599).contains(&s) => {}
                Some(s) => return Err(format!("status {s} is not between 400 and 599")),
                None => return Err("mode status needs a status".into()),
            }
        }
        if self.delay_ms.is_some_and(|d| d > 600_000) {
            return Err("delayMs is at most 600000".into());
        }
        if self.huge_bytes.is_some_and(|b| b > MAX_HUGE_BYTES) {
            return Err(format!("hugeBytes is at most {MAX_HUGE_BYTES}"));
        }
        if self.other_service.as_deref().is_some_and(str::is_empty)
            || self.service_type.as_deref().is_some_and(str::is_empty)
        {
            return Err("otherService and serviceType must not be empty".into());
        }
        if self.resource.is_some() && self.mode != FaultMode::FailEvents400 {
            return Err("resource is a parameter of fail-events-400 only".into());
        }
        if self.times == Some(0) {
            return Err("times must be at least 1".into());
        }
        Ok(())
    }

    /// Whether the mode is taken before authentication (the server is "broken", whoever asks).
    pub(crate) fn before_auth(&self) -> bool {
        matches!(
            self.mode,
            FaultMode::Down | FaultMode::Slow | FaultMode::Status
        )
    }

    /// Whether this fault concerns `endpoint`.
    pub(crate) fn applies(&self, endpoint: Endpoint) -> bool {
        let natural = match self.mode {
            FaultMode::None => false,
            FaultMode::Down | FaultMode::Slow | FaultMode::Status | FaultMode::Truncated => true,
            FaultMode::WrongSignature
            | FaultMode::OtherKey
            | FaultMode::OtherService
            | FaultMode::OtherType
            | FaultMode::Huge
            | FaultMode::StaleNotModified
            | FaultMode::WrongEtag
            | FaultMode::Replay => endpoint == Endpoint::Policies,
            FaultMode::RefreshSeconds => endpoint == Endpoint::Heartbeat,
            FaultMode::OldVersion => {
                endpoint == Endpoint::Policies
                    || (endpoint == Endpoint::Heartbeat
                        && self
                            .endpoints
                            .as_ref()
                            .is_some_and(|l| l.contains(&endpoint)))
            }
            FaultMode::FailEvents400 => endpoint == Endpoint::AccessEvents,
        };
        natural
            && self
                .endpoints
                .as_ref()
                .is_none_or(|list| list.contains(&endpoint))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_form() {
        let f = Fault::from_json(br#"{"mode":"fail-events-400","endpoints":["access-events"]}"#)
            .unwrap();
        assert_eq!(f.mode, FaultMode::FailEvents400);
        assert!(f.applies(Endpoint::AccessEvents) && !f.applies(Endpoint::Policies));
        let f = Fault::from_json(br#"{"mode":"fail-events-400","resource":"orders"}"#).unwrap();
        assert_eq!(f.resource.as_deref(), Some("orders"));
        let f = Fault::from_json(br#"{"mode":"other-key","rotateKey":true,"times":1}"#).unwrap();
        assert!(f.rotate_key);
        assert_eq!(
            serde_json::to_string(&Fault::status(409)).unwrap(),
            r#"{"mode":"status","status":409}"#
        );
        for bad in [
            &br#"{"mode":"status"}"#[..],
            br#"{"mode":"status","status":200}"#,
            br#"{"mode":"nope"}"#,
            br#"{"mode":"down","typo":1}"#,
            br#"{"mode":"slow","delayMs":-1}"#,
            br#"{"mode":"down","times":0}"#,
            br#"{"mode":"down","resource":"orders"}"#,
        ] {
            assert!(
                Fault::from_json(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(Fault::status(500)
            .on(&[Endpoint::Policies])
            .applies(Endpoint::Policies));
        assert!(!Fault::status(500)
            .on(&[Endpoint::Policies])
            .applies(Endpoint::Heartbeat));
        let f =
            Fault::from_json(br#"{"mode":"refresh-seconds","refreshSeconds":9223372036854775807}"#)
                .unwrap();
        assert_eq!(f.refresh_seconds, Some(i64::MAX));
        assert!(f.applies(Endpoint::Heartbeat) && !f.applies(Endpoint::Policies));
        for mode in [
            &br#"{"mode":"stale-not-modified"}"#[..],
            br#"{"mode":"wrong-etag"}"#,
            br#"{"mode":"replay"}"#,
        ] {
            let f = Fault::from_json(mode).unwrap();
            assert!(f.applies(Endpoint::Policies) && !f.applies(Endpoint::Heartbeat));
        }
    }
}
