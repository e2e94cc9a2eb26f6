//! KIP-554 on a [`CredentialStore`]: the store answers DescribeUserScramCredentials (API 50)
//! and AlterUserScramCredentials (API 51) with the rules, error codes and texts of Kafka's
//! KRaft controller (`ScramControlManager`) and metadata image (`ScramImage`), so a broker or
//! proxy built on ksasl serves `kafka-configs --alter --add-config 'SCRAM-SHA-256=[...]'`,
//! `--delete-config` and `--describe` and Kafka's Admin client.
//!
//! A credential changed here is what the next login or re-authentication of that user is
//! checked against; live sessions keep running until they re-authenticate or expire, as in
//! Kafka (connections that re-authenticate with the old password are refused then).
//!
//! Result order: Kafka builds its results by iterating Java `HashMap`s keyed by user name, so
//! its order is a function of the names' `String.hashCode`. `java_map::JavaOrder` reproduces it, so
//! the bytes equal a Kafka broker's. Within one user, credentials are listed SCRAM-SHA-256
//! first (Kafka's order there depends on identity hash codes and is not stable).

use crate::credential::scram::{ScramCredential, ScramMechanism, MIN_ITERATIONS};
use crate::credential::store::CredentialStore;
use crate::error::Result;
use crate::java_map::JavaOrder;
use crate::kafka::scram_credentials::{
    error_code, mechanism_from_wire, parse_request, AlterScramRequest, AlterScramResponse,
    AlterScramResult, CredentialInfo, DescribeScramRequest, DescribeScramResponse,
    DescribeScramResult, ScramCredentialsRequest, ScramUpsertion, MAX_ITERATIONS,
};

const ALTERED_TWICE: &str = "A user credential cannot be altered twice in the same request";
const DESCRIBED_TWICE: &str =
    "Cannot describe SCRAM credentials for the same user twice in a single request: ";
const DESCRIBE_MISSING: &str = "Attempt to describe a user credential that does not exist: ";
const DELETE_MISSING: &str = "Attempt to delete a user credential that does not exist";

/// Kafka's `validateScramUsernameAndMechanism`.
fn check_name_and_mechanism(
    name: &str,
    mechanism: i8,
) -> std::result::Result<ScramMechanism, (i16, &'static str)> {
    if name.is_empty() {
        return Err((
            error_code::UNACCEPTABLE_CREDENTIAL,
            "Username must not be empty",
        ));
    }
    mechanism_from_wire(mechanism).ok_or((
        error_code::UNSUPPORTED_SASL_MECHANISM,
        "Unknown SCRAM mechanism",
    ))
}

/// Kafka's `validateUpsertion`, plus what ksasl's credentials need (a non-empty salt).
fn check_upsertion(u: &ScramUpsertion) -> std::result::Result<ScramMechanism, (i16, &'static str)> {
    let mechanism = check_name_and_mechanism(&u.name, u.mechanism)?;
    if u.iterations < MIN_ITERATIONS as i32 {
        return Err((error_code::UNACCEPTABLE_CREDENTIAL, "Too few iterations"));
    }
    if u.iterations > MAX_ITERATIONS as i32 {
        return Err((error_code::UNACCEPTABLE_CREDENTIAL, "Too many iterations"));
    }
    if u.salt.is_empty() {
        // Kafka takes an empty salt; a ksasl store refuses it (no client sends one).
        return Err((
            error_code::UNACCEPTABLE_CREDENTIAL,
            "Salt must not be empty",
        ));
    }
    Ok(mechanism)
}

/// The stored credential of an upsertion: StoredKey = H(HMAC(salted, "Client Key")),
/// ServerKey = HMAC(salted, "Server Key").
fn credential_of(u: &ScramUpsertion, mechanism: ScramMechanism) -> Result<ScramCredential> {
    let salted = u.salted_password.expose();
    let client_key = mechanism.hmac(salted, &[b"Client Key"]);
    let stored_key = mechanism.hash(&client_key);
    let server_key = mechanism.hmac(salted, &[b"Server Key"]);
    ScramCredential::new(
        mechanism,
        u.salt.clone(),
        stored_key.to_vec(),
        server_key.to_vec(),
        u.iterations as u32,
    )
}

enum Change<'a> {
    Delete(ScramMechanism),
    Upsert(&'a ScramUpsertion, ScramMechanism),
}

impl CredentialStore {
    /// AlterUserScramCredentials with Kafka's rules: one change per user per request (a
    /// second one, deletion or upsertion, makes that user DUPLICATE_RESOURCE and drops both);
    /// an empty name or iterations outside 4096-16384 are UNACCEPTABLE_CREDENTIAL; a mechanism
    /// other than SCRAM-SHA-256/512 is UNSUPPORTED_SASL_MECHANISM; deleting a credential that
    /// does not exist is RESOURCE_NOT_FOUND. The valid changes are applied together, under one
    /// lock; one result per user, in Kafka's order (deletions, upsertions, then errors).
    pub fn alter_scram_credentials(
        &self,
        request: &AlterScramRequest,
    ) -> Result<AlterScramResponse> {
        let mut users = self.users_for_admin()?;
        let mut deletions: JavaOrder<ScramMechanism> = JavaOrder::new();
        let mut upserts: JavaOrder<(&ScramUpsertion, ScramMechanism)> = JavaOrder::new();
        let mut errors: JavaOrder<(i16, &'static str)> = JavaOrder::new();
        for d in &request.deletions {
            if errors.contains_key(&d.name) {
                continue;
            }
            if deletions.remove(&d.name).is_some() {
                errors.put(&d.name, (error_code::DUPLICATE_RESOURCE, ALTERED_TWICE));
                continue;
            }
            match check_name_and_mechanism(&d.name, d.mechanism) {
                Err(e) => errors.put(&d.name, e),
                Ok(m) if !users.has_scram(&d.name, m) => {
                    errors.put(&d.name, (error_code::RESOURCE_NOT_FOUND, DELETE_MISSING))
                }
                Ok(m) => deletions.put(&d.name, m),
            }
        }
        for u in &request.upsertions {
            if errors.contains_key(&u.name) {
                continue;
            }
            if deletions.remove(&u.name).is_some() || upserts.remove(&u.name).is_some() {
                errors.put(&u.name, (error_code::DUPLICATE_RESOURCE, ALTERED_TWICE));
                continue;
            }
            match check_upsertion(u) {
                Err(e) => errors.put(&u.name, e),
                Ok(m) => upserts.put(&u.name, (u, m)),
            }
        }
        let mut results = Vec::new();
        let mut changes: Vec<(String, Change<'_>)> = Vec::new();
        for (name, m) in deletions.into_ordered() {
            results.push(AlterScramResult {
                user: name.clone(),
                error_code: error_code::NONE,
                error_message: None,
            });
            changes.push((name, Change::Delete(m)));
        }
        for (name, (u, m)) in upserts.into_ordered() {
            results.push(AlterScramResult {
                user: name.clone(),
                error_code: error_code::NONE,
                error_message: None,
            });
            changes.push((name, Change::Upsert(u, m)));
        }
        // Derive every credential before changing anything: all or nothing.
        let mut apply = Vec::with_capacity(changes.len());
        for (name, change) in changes {
            match change {
                Change::Delete(m) => apply.push((name, m, None)),
                Change::Upsert(u, m) => apply.push((name, m, Some(credential_of(u, m)?))),
            }
        }
        for (name, m, credential) in apply {
            match credential {
                Some(c) => users.put_scram(&name, c),
                None => users.delete_scram(&name, m),
            }
        }
        for (name, (code, message)) in errors.into_ordered() {
            results.push(AlterScramResult {
                user: name,
                error_code: code,
                error_message: Some(message.to_string()),
            });
        }
        Ok(AlterScramResponse {
            throttle_time_ms: 0,
            results,
        })
    }

    /// DescribeUserScramCredentials with Kafka's rules: no users (null or empty) lists every
    /// user with a SCRAM credential; a user named twice is DUPLICATE_RESOURCE, a user without
    /// SCRAM credentials RESOURCE_NOT_FOUND; iterations are shown, never keys or salts.
    pub fn describe_scram_credentials(
        &self,
        request: &DescribeScramRequest,
    ) -> Result<DescribeScramResponse> {
        let users = self.users_for_admin()?;
        let mut unique: JavaOrder<bool> = JavaOrder::new();
        match request.users.as_deref() {
            None | Some([]) => {
                for name in users.scram_users() {
                    unique.put(&name, false);
                }
            }
            Some(names) => {
                for name in names {
                    let twice = unique.contains_key(name);
                    unique.put(name, twice);
                }
            }
        }
        let results = unique
            .into_ordered()
            .into_iter()
            .map(|(user, twice)| {
                if twice {
                    let message = format!("{DESCRIBED_TWICE}{user}");
                    return DescribeScramResult {
                        user,
                        error_code: error_code::DUPLICATE_RESOURCE,
                        error_message: Some(message),
                        credential_infos: Vec::new(),
                    };
                }
                let infos: Vec<CredentialInfo> = [ScramMechanism::Sha256, ScramMechanism::Sha512]
                    .into_iter()
                    .filter_map(|m| {
                        users
                            .scram_iterations(&user, m)
                            .map(|iterations| CredentialInfo {
                                mechanism: m.kafka_type_id(),
                                iterations: iterations as i32,
                            })
                    })
                    .collect();
                if infos.is_empty() {
                    let message = format!("{DESCRIBE_MISSING}{user}");
                    DescribeScramResult {
                        user,
                        error_code: error_code::RESOURCE_NOT_FOUND,
                        error_message: Some(message),
                        credential_infos: infos,
                    }
                } else {
                    // Kafka leaves the message at its schema default: empty, not null.
                    DescribeScramResult {
                        user,
                        error_code: error_code::NONE,
                        error_message: Some(String::new()),
                        credential_infos: infos,
                    }
                }
            })
            .collect();
        Ok(DescribeScramResponse {
            throttle_time_ms: 0,
            error_code: error_code::NONE,
            error_message: Some(String::new()),
            results,
        })
    }

    /// Serves one DescribeUserScramCredentials or AlterUserScramCredentials request frame
    /// (without its length prefix) of an authenticated connection and returns the response
    /// frame, length-prefixed. Kafka's authorizer (DESCRIBE / ALTER on the cluster) is the
    /// host's business: check it before calling, or answer with
    /// [`error_code::CLUSTER_AUTHORIZATION_FAILED`] yourself. A request that does not parse
    /// is an error (`ErrorCode::InvalidRequest`, or `ErrorCode::UnsupportedVersion` for a
    /// version other than 0); Kafka closes such connections.
    pub fn handle_scram_request(&self, frame: &[u8]) -> Result<Vec<u8>> {
        let (header, request) = parse_request(frame)?;
        match request {
            ScramCredentialsRequest::Describe(r) => self
                .describe_scram_credentials(&r)?
                .encode_response(header.correlation_id),
            ScramCredentialsRequest::Alter(r) => self
                .alter_scram_credentials(&r)?
                .encode_response(header.correlation_id),
        }
    }
}
