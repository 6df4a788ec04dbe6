//! `GET /api/v1/agent/policies`: the signed snapshot with its headers, or 304 on a matching
//! `If-None-Match`; gzip-compressed when the request accepts it (faults `wrong-signature`, `other-key`, `old-version`, `other-service`,
//! `other-type`, `huge`, `stale-not-modified`, `wrong-etag`, `replay`).

use std::sync::Arc;

use crate::fault::{Fault, FaultMode, DEFAULT_HUGE_BYTES};
use crate::http::{self, Body, Request, Response};
use crate::keys::etag_of;
use crate::snapshot::{self, PolicySet};
use crate::state::Shared;

impl Shared {
    pub(crate) fn policies(&self, request: &Request, fault: Option<&Fault>) -> Response {
        let (current, set) = {
            let st = self.lock();
            let replayed = st
                .replaced
                .last()
                .filter(|_| fault.is_some_and(|f| f.mode == FaultMode::Replay));
            let current = Arc::clone(replayed.unwrap_or(&st.current));
            let needs_set = fault.is_some_and(|f| {
                matches!(
                    f.mode,
                    FaultMode::OldVersion | FaultMode::OtherService | FaultMode::OtherType
                )
            });
            (
                current,
                if needs_set {
                    Some(st.set.clone())
                } else {
                    None
                },
            )
        };
        let service_of = |set: &PolicySet| self.service_name(set).to_string();
        let mode = fault.map_or(FaultMode::None, |f| f.mode);
        if mode == FaultMode::StaleNotModified && request.header("if-none-match").is_some() {
            return Response::new(304)
                .header("ETag", current.etag.clone())
                .header("X-GrantForge-Policy-Version", current.version.to_string());
        }
        let mut key_id = self.key.key_id().to_string();
        let (body, etag, version, signature): (Body, String, i64, String) = match (mode, fault, set)
        {
            (FaultMode::WrongSignature, _, _) => {
                let mut other = current.body.to_vec();
                other.push(b' ');
                (
                    Body::Shared(Arc::clone(&current.body)),
                    current.etag.clone(),
                    current.version,
                    self.key.sign_base64(&other),
                )
            }
            (FaultMode::OtherKey, _, _) => {
                key_id = self.other_key.key_id().to_string();
                let signature = self.other_key.sign_base64(&current.body);
                (
                    Body::Shared(Arc::clone(&current.body)),
                    current.etag.clone(),
                    current.version,
                    signature,
                )
            }
            (FaultMode::OldVersion, Some(f), Some(set)) => {
                let version = f.policy_version.unwrap_or(current.version - 1);
                let body =
                    snapshot::build(&set, &self.definition, &service_of(&set), "kafka", version);
                (Body::Owned(body), String::new(), version, String::new())
            }
            (FaultMode::OtherService, Some(f), Some(set)) => {
                let other = f
                    .other_service
                    .clone()
                    .unwrap_or_else(|| format!("{}-other", service_of(&set)));
                let body =
                    snapshot::build(&set, &self.definition, &other, "kafka", current.version);
                (
                    Body::Owned(body),
                    String::new(),
                    current.version,
                    String::new(),
                )
            }
            (FaultMode::OtherType, Some(f), Some(set)) => {
                let kind = f.service_type.clone().unwrap_or_else(|| "hive".into());
                let body = snapshot::build(
                    &set,
                    &self.definition,
                    &service_of(&set),
                    &kind,
                    current.version,
                );
                (
                    Body::Owned(body),
                    String::new(),
                    current.version,
                    String::new(),
                )
            }
            (FaultMode::Huge, Some(f), _) => {
                let wanted = usize::try_from(f.huge_bytes.unwrap_or(DEFAULT_HUGE_BYTES))
                    .unwrap_or(usize::MAX);
                let base = &current.body;
                let body = if wanted <= base.len() || base.first() != Some(&b'{') {
                    base.to_vec()
                } else {
                    let mut padded = Vec::with_capacity(wanted);
                    padded.push(b'{');
                    padded.resize(1 + wanted - base.len(), b' ');
                    padded.extend_from_slice(&base[1..]);
                    padded
                };
                (
                    Body::Owned(body),
                    String::new(),
                    current.version,
                    String::new(),
                )
            }
            _ => (
                Body::Shared(Arc::clone(&current.body)),
                current.etag.clone(),
                current.version,
                current.signature.clone(),
            ),
        };
        let etag = if etag.is_empty() {
            etag_of(&body)
        } else {
            etag
        };
        // `wrong-etag`: the header names other bytes; the server still compares with the body's ETag.
        let header_etag = if mode == FaultMode::WrongEtag {
            etag_of(&[&body[..], b" "].concat())
        } else {
            etag.clone()
        };
        if request.header("if-none-match") == Some(etag.as_str()) {
            return Response::new(304)
                .header("ETag", header_etag)
                .header("X-GrantForge-Policy-Version", version.to_string());
        }
        let signature = if signature.is_empty() {
            self.key.sign_base64(&body)
        } else {
            signature
        };
        let response = Response::new(200)
            .header("ETag", header_etag)
            .header("Content-Type", "application/json")
            .header("X-GrantForge-Policy-Version", version.to_string())
            .header("X-GrantForge-Signing-Key", key_id)
            .header("X-GrantForge-Signature", signature);
        if !(self.gzip && http::accepts_gzip(request)) {
            return response.shared_body(body);
        }
        // The signature and the ETag stay those of the uncompressed bytes: a content coding is
        // only how the bytes travel, and the agent verifies what it decompressed.
        let compressed = match &body {
            Body::Shared(shared) if Arc::ptr_eq(shared, &current.body) => current.gzipped(),
            other => Arc::new(http::gzip(other)),
        };
        response
            .header("Content-Encoding", "gzip")
            .shared_body(Body::Shared(compressed))
    }
}
