//! The authority behind Kafka's delegation-token APIs (38-41): one call serves a request frame
//! of an authenticated connection, and one turns a CreateDelegationToken response into a
//! token a client can log in with.

use super::authority::TokenAuthority;
use super::info::{error_from_kafka, kafka_error_code, DelegationToken, TokenInfo};
use crate::error::{Error, ErrorCode, Result};
use crate::kafka::codec::RequestHeader;
use crate::kafka::delegation_tokens::{
    error_code, CreateTokenRequest, CreateTokenResponse, DescribeTokensRequest,
    DescribeTokensResponse, DescribedToken, ExpireTokenRequest, ExpireTokenResponse,
    ExpiryResponse, PrincipalName, RenewTokenRequest, TokenRequest,
};
use crate::mech::Principal;
use crate::secret::Secret;

fn name(p: &Principal) -> PrincipalName {
    PrincipalName::from(p)
}

/// A principal field that exists from version 3 (empty, Kafka's default, before).
fn since_v3(version: i16, p: &Principal) -> PrincipalName {
    if version >= 3 {
        name(p)
    } else {
        PrincipalName::default()
    }
}

fn principal(p: &PrincipalName) -> Principal {
    Principal::from(p)
}

impl TokenAuthority {
    /// Serves one delegation-token request (CreateDelegationToken, RenewDelegationToken,
    /// ExpireDelegationToken or DescribeDelegationToken; `frame` without its length prefix)
    /// of a connection authenticated as `caller` (the principal of the connection's session).
    /// Returns the response frame, length-prefixed, with Kafka's error codes: 64 for a
    /// connection that itself logged in with a token, 62/63/66/67 from the operation. A
    /// request that cannot be parsed is an error (Kafka closes such connections).
    ///
    /// Kafka's authorizer (who may create tokens for others, or describe whose tokens) is the
    /// host's business: without one, as here, every authenticated principal may.
    pub fn handle_request(&self, frame: &[u8], caller: &Principal, now_ms: i64) -> Result<Vec<u8>> {
        let (p, body) = RequestHeader::parse(frame)?;
        let request = TokenRequest::parse_body(p.api_key, p.api_version, body.r)?;
        let (v, corr) = (p.api_version, p.correlation_id);
        match request {
            TokenRequest::Create(r) => self.serve_create(&r, caller, v, corr, now_ms),
            TokenRequest::Renew(r) => self.serve_renew(&r, caller, v, corr, now_ms),
            TokenRequest::Expire(r) => self.serve_expire(&r, caller, v, corr, now_ms),
            TokenRequest::Describe(r) => self.serve_describe(&r, caller, v, corr),
        }
    }

    /// CreateDelegationToken: a token owned by the request's owner, or else by the caller.
    fn serve_create(
        &self,
        r: &CreateTokenRequest,
        caller: &Principal,
        v: i16,
        corr: i32,
        now_ms: i64,
    ) -> Result<Vec<u8>> {
        let result = TokenAuthority::check_request_allowed(caller).and_then(|()| {
            let owner = r
                .effective_owner()
                .map(principal)
                .unwrap_or_else(|| Principal {
                    token_authenticated: false,
                    ..caller.clone()
                });
            let renewers: Vec<Principal> = r.renewers.iter().map(principal).collect();
            self.create(&owner, Some(caller), &renewers, r.max_lifetime_ms, now_ms)
        });
        let resp = match result {
            Ok(t) => CreateTokenResponse {
                error_code: error_code::NONE,
                owner: name(&t.info.owner),
                requester: since_v3(v, &t.info.requester),
                issue_timestamp_ms: t.info.issue_ms,
                expiry_timestamp_ms: t.info.expiry_ms,
                max_timestamp_ms: t.info.max_ms,
                token_id: t.info.token_id.clone(),
                hmac: Secret::from_slice(t.hmac()),
                throttle_time_ms: 0,
            },
            Err(e) => CreateTokenResponse {
                error_code: kafka_error_code(&e),
                owner: since_v3(v, caller),
                requester: since_v3(v, caller),
                issue_timestamp_ms: -1,
                expiry_timestamp_ms: -1,
                max_timestamp_ms: -1,
                token_id: String::new(),
                hmac: Secret::new(Vec::new()),
                throttle_time_ms: 0,
            },
        };
        resp.encode_response(v, corr)
    }

    /// RenewDelegationToken: pushes the expiry of the token with the request's HMAC.
    fn serve_renew(
        &self,
        r: &RenewTokenRequest,
        caller: &Principal,
        v: i16,
        corr: i32,
        now_ms: i64,
    ) -> Result<Vec<u8>> {
        let result = TokenAuthority::check_request_allowed(caller)
            .and_then(|()| self.renew(r.hmac.expose(), caller, r.renew_period_ms, now_ms));
        expiry_response(result).encode_response(v, corr)
    }

    /// ExpireDelegationToken: moves the expiry of the token with the request's HMAC.
    fn serve_expire(
        &self,
        r: &ExpireTokenRequest,
        caller: &Principal,
        v: i16,
        corr: i32,
        now_ms: i64,
    ) -> Result<Vec<u8>> {
        let result = TokenAuthority::check_request_allowed(caller)
            .and_then(|()| self.expire(r.hmac.expose(), caller, r.expiry_time_period_ms, now_ms));
        // The expire response has the renew response's schema, under api key 40.
        let body = expiry_response(result);
        ExpireTokenResponse::encode_response(&body, v, corr)
    }

    /// DescribeDelegationToken: the tokens of the requested owners (every token for null).
    fn serve_describe(
        &self,
        r: &DescribeTokensRequest,
        caller: &Principal,
        v: i16,
        corr: i32,
    ) -> Result<Vec<u8>> {
        let result = TokenAuthority::check_request_allowed(caller).and_then(|()| {
            let owners: Option<Vec<Principal>> =
                r.owners.as_ref().map(|o| o.iter().map(principal).collect());
            self.describe(owners.as_deref())
        });
        let resp = match result {
            Ok(tokens) => DescribeTokensResponse {
                error_code: error_code::NONE,
                tokens: tokens
                    .iter()
                    .map(|t| DescribedToken {
                        owner: name(&t.info.owner),
                        requester: since_v3(v, &t.info.requester),
                        issue_timestamp_ms: t.info.issue_ms,
                        expiry_timestamp_ms: t.info.expiry_ms,
                        max_timestamp_ms: t.info.max_ms,
                        token_id: t.info.token_id.clone(),
                        hmac: Secret::from_slice(t.hmac()),
                        renewers: t.info.renewers.iter().map(name).collect(),
                    })
                    .collect(),
                throttle_time_ms: 0,
            },
            Err(e) => DescribeTokensResponse {
                error_code: kafka_error_code(&e),
                tokens: Vec::new(),
                throttle_time_ms: 0,
            },
        };
        resp.encode_response(v, corr)
    }
}

fn expiry_response(result: Result<i64>) -> ExpiryResponse {
    match result {
        Ok(expiry) => ExpiryResponse {
            error_code: error_code::NONE,
            expiry_timestamp_ms: expiry,
            throttle_time_ms: 0,
        },
        Err(e) => ExpiryResponse {
            error_code: kafka_error_code(&e),
            expiry_timestamp_ms: -1,
            throttle_time_ms: 0,
        },
    }
}

/// The token of a CreateDelegationToken response frame (`version` 0-3, without its length
/// prefix), as [`expiry_from_response`] and [`tokens_from_describe_response`] read theirs.
pub fn token_from_create_frame(version: i16, frame: &[u8]) -> Result<DelegationToken> {
    token_from_create_response(&CreateTokenResponse::parse_response(version, frame)?)
}

/// The token a CreateDelegationToken response hands out, ready for a client login
/// ([`DelegationToken::client_credential`], [`DelegationToken::install`]); a response with
/// an error code is that error.
pub fn token_from_create_response(r: &CreateTokenResponse) -> Result<DelegationToken> {
    if r.error_code != error_code::NONE {
        return Err(error_from_kafka(r.error_code, "CreateDelegationToken"));
    }
    if r.token_id.is_empty() || r.hmac.is_empty() {
        return Err(Error::new(
            ErrorCode::MalformedMessage,
            "the CreateDelegationToken response has no token id or HMAC",
        ));
    }
    let info = TokenInfo {
        token_id: r.token_id.clone(),
        owner: principal(&r.owner),
        requester: if r.requester.is_empty() {
            principal(&r.owner)
        } else {
            principal(&r.requester)
        },
        renewers: Vec::new(),
        issue_ms: r.issue_timestamp_ms,
        expiry_ms: r.expiry_timestamp_ms,
        max_ms: r.max_timestamp_ms,
    };
    Ok(DelegationToken::new(info, r.hmac.expose().to_vec()))
}

/// A token from a DescribeDelegationToken response.
pub fn token_from_described(t: &DescribedToken) -> DelegationToken {
    let info = TokenInfo {
        token_id: t.token_id.clone(),
        owner: principal(&t.owner),
        requester: if t.requester.is_empty() {
            principal(&t.owner)
        } else {
            principal(&t.requester)
        },
        renewers: t.renewers.iter().map(principal).collect(),
        issue_ms: t.issue_timestamp_ms,
        expiry_ms: t.expiry_timestamp_ms,
        max_ms: t.max_timestamp_ms,
    };
    DelegationToken::new(info, t.hmac.expose().to_vec())
}

/// The new expiry of a RenewDelegationToken or ExpireDelegationToken response frame (without
/// its length prefix); a response with an error code is that error.
pub fn expiry_from_response(version: i16, frame: &[u8]) -> Result<i64> {
    let r = ExpiryResponse::parse_response(version, frame)?;
    if r.error_code != error_code::NONE {
        return Err(error_from_kafka(r.error_code, "the token request"));
    }
    Ok(r.expiry_timestamp_ms)
}

/// The tokens of a DescribeDelegationToken response frame (without its length prefix); a
/// response with an error code is that error.
pub fn tokens_from_describe_response(version: i16, frame: &[u8]) -> Result<Vec<DelegationToken>> {
    let r = DescribeTokensResponse::parse_response(version, frame)?;
    if r.error_code != error_code::NONE {
        return Err(error_from_kafka(r.error_code, "DescribeDelegationToken"));
    }
    Ok(r.tokens.iter().map(token_from_described).collect())
}
