//! `GET /api/v1/agent/signing-key`: the key id and public key (the other key's after an `other-key`
//! fault that rotates the key).

use serde::Serialize;

use super::json_response;
use crate::fault::FaultMode;
use crate::http::Response;
use crate::state::Shared;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SigningKeyAnswer<'a> {
    key_id: &'a str,
    algorithm: &'a str,
    public_key: &'a str,
}

impl Shared {
    pub(crate) fn signing_key(&self) -> Response {
        let rotated = {
            let st = self.lock();
            st.fault.mode == FaultMode::OtherKey && st.fault.rotate_key
        };
        let key = if rotated { &self.other_key } else { &self.key };
        json_response(
            200,
            &SigningKeyAnswer {
                key_id: key.key_id(),
                algorithm: "Ed25519",
                public_key: key.public_key_base64(),
            },
        )
    }
}
