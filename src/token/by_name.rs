//! Delegation tokens addressed by principal names, the form every binding receives them in
//! (`TYPE:NAME`, or a bare name meaning `User:<name>`): the authority's operations, a token
//! made from its parts, and the client requests of Kafka's token APIs. Each binding calls
//! these instead of parsing principals and filling request structures itself; a failed
//! parse names the argument (`owner: "x:" is not a TYPE:NAME principal`).

use super::authority::TokenAuthority;
use super::info::{principal_from_str, DelegationToken, TokenInfo};
use crate::error::{Error, Result};
use crate::kafka::delegation_tokens::{
    CreateTokenRequest, DescribeTokensRequest, ExpireTokenRequest, PrincipalName, RenewTokenRequest,
};
use crate::mech::Principal;
use crate::secret::Secret;

/// One principal argument by name; an error says which argument (`what`).
pub fn principal_arg(name: &str, what: &str) -> Result<Principal> {
    principal_from_str(name).map_err(|e| Error::new(e.code(), format!("{what}: {}", e.message())))
}

/// A list of principal arguments by name.
pub fn principal_args<S: AsRef<str>>(names: &[S], what: &str) -> Result<Vec<Principal>> {
    names
        .iter()
        .map(|n| principal_arg(n.as_ref(), what))
        .collect()
}

fn wire_names<S: AsRef<str>>(names: &[S], what: &str) -> Result<Vec<PrincipalName>> {
    Ok(principal_args(names, what)?
        .iter()
        .map(PrincipalName::from)
        .collect())
}

impl TokenAuthority {
    /// [`TokenAuthority::create`] with principals by name (`requester` `None`: the owner).
    pub fn create_by_name<S: AsRef<str>>(
        &self,
        owner: &str,
        requester: Option<&str>,
        renewers: &[S],
        requested_max_lifetime_ms: i64,
        now_ms: i64,
    ) -> Result<DelegationToken> {
        let owner = principal_arg(owner, "owner")?;
        let requester = requester
            .map(|r| principal_arg(r, "requester"))
            .transpose()?;
        let renewers = principal_args(renewers, "renewer")?;
        let max = requested_max_lifetime_ms;
        self.create(&owner, requester.as_ref(), &renewers, max, now_ms)
    }

    /// [`TokenAuthority::renew`] (`expire` false) or [`TokenAuthority::expire`] (true) for a
    /// caller by name; returns the new expiry.
    pub fn change_by_name(
        &self,
        expire: bool,
        hmac: &[u8],
        caller: &str,
        period_ms: i64,
        now_ms: i64,
    ) -> Result<i64> {
        let caller = principal_arg(caller, "caller")?;
        match expire {
            true => self.expire(hmac, &caller, period_ms, now_ms),
            false => self.renew(hmac, &caller, period_ms, now_ms),
        }
    }

    /// [`TokenAuthority::describe`] with owners by name (`None`: every token).
    pub fn describe_by_name<S: AsRef<str>>(
        &self,
        owners: Option<&[S]>,
    ) -> Result<Vec<DelegationToken>> {
        let owners = owners.map(|o| principal_args(o, "owner")).transpose()?;
        self.describe(owners.as_deref())
    }

    /// [`TokenAuthority::handle_request`] for a connection authenticated as `principal` (by
    /// name), with a delegation token or not.
    pub fn handle_request_by_name(
        &self,
        frame: &[u8],
        principal: &str,
        token_authenticated: bool,
        now_ms: i64,
    ) -> Result<Vec<u8>> {
        let mut p = principal_arg(principal, "principal")?;
        p.token_authenticated = token_authenticated;
        self.handle_request(frame, &p, now_ms)
    }
}

impl DelegationToken {
    /// A token from its parts (for example one a client persisted): `requester` `None` means
    /// the owner; `[issue, expiry, max]` timestamps in ms.
    pub fn from_parts<S: AsRef<str>>(
        token_id: &str,
        hmac: Vec<u8>,
        (owner, requester, renewers): (&str, Option<&str>, &[S]),
        [issue_ms, expiry_ms, max_ms]: [i64; 3],
    ) -> Result<DelegationToken> {
        let owner = principal_arg(owner, "owner")?;
        let requester = match requester {
            Some(r) => principal_arg(r, "requester")?,
            None => owner.clone(),
        };
        let info = TokenInfo {
            token_id: token_id.to_string(),
            renewers: principal_args(renewers, "renewer")?,
            owner,
            requester,
            issue_ms,
            expiry_ms,
            max_ms,
        };
        Ok(DelegationToken::new(info, hmac))
    }
}

/// The version, correlation id and client id of a request frame.
pub type RequestHeader<'a> = (i16, i32, Option<&'a str>);

/// A CreateDelegationToken request frame: `owner` (v3+; `None`: the requester), `renewers`
/// by name, `max_lifetime_ms` (-1: the broker's default).
pub fn create_token_request<S: AsRef<str>>(
    (version, correlation_id, client_id): RequestHeader<'_>,
    owner: Option<&str>,
    renewers: &[S],
    max_lifetime_ms: i64,
) -> Result<Vec<u8>> {
    let owner = owner.map(|o| principal_arg(o, "owner")).transpose()?;
    let r = CreateTokenRequest {
        owner: owner.as_ref().map(PrincipalName::from),
        renewers: wire_names(renewers, "renewer")?,
        max_lifetime_ms,
    };
    r.encode_request(version, correlation_id, client_id)
}

/// A RenewDelegationToken (`expire` false) or ExpireDelegationToken request frame for the
/// token with this HMAC.
pub fn change_token_request(
    (version, correlation_id, client_id): RequestHeader<'_>,
    expire: bool,
    hmac: &[u8],
    period_ms: i64,
) -> Result<Vec<u8>> {
    let hmac = Secret::from_slice(hmac);
    match expire {
        true => ExpireTokenRequest {
            hmac,
            expiry_time_period_ms: period_ms,
        }
        .encode_request(version, correlation_id, client_id),
        false => RenewTokenRequest {
            hmac,
            renew_period_ms: period_ms,
        }
        .encode_request(version, correlation_id, client_id),
    }
}

/// A DescribeDelegationToken request frame for the tokens of `owners` by name (`None`: every
/// token the caller may see).
pub fn describe_tokens_request<S: AsRef<str>>(
    (version, correlation_id, client_id): RequestHeader<'_>,
    owners: Option<&[S]>,
) -> Result<Vec<u8>> {
    let owners = owners.map(|o| wire_names(o, "owner")).transpose()?;
    DescribeTokensRequest { owners }.encode_request(version, correlation_id, client_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SharedRandom;
    use crate::token::info::TokenConfig;

    fn authority() -> TokenAuthority {
        TokenAuthority::new(TokenConfig::new("key"), SharedRandom::default()).unwrap()
    }

    #[test]
    fn by_name_is_the_typed_operation() {
        let a = authority();
        let t = a
            .create_by_name("alice", None, &["User:bob"], -1, 1_000)
            .unwrap();
        assert_eq!(t.info.owner, Principal::user("alice"));
        assert_eq!(t.info.requester, t.info.owner);
        assert_eq!(t.info.renewers, vec![Principal::user("bob")]);
        let hmac = t.hmac().to_vec();
        assert_eq!(
            a.change_by_name(false, &hmac, "bob", 10, 2_000).unwrap(),
            2_010
        );
        assert_eq!(a.describe_by_name(Some(&["User:alice"])).unwrap().len(), 1);
        assert!(a.describe_by_name(Some(&["carol"])).unwrap().is_empty());
        assert_eq!(
            a.change_by_name(true, &hmac, "alice", -1, 2_005).unwrap(),
            2_005
        );
        assert!(a.describe_by_name::<&str>(None).unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_argument() {
        let a = authority();
        let e = a
            .create_by_name("alice", None, &["User:"], -1, 0)
            .unwrap_err();
        assert_eq!(e.code(), crate::error::ErrorCode::InvalidArgument);
        assert!(e.message().starts_with("renewer: "), "{}", e.message());
        let e = a.change_by_name(false, b"x", "", 0, 0).unwrap_err();
        assert!(e.message().starts_with("caller: "), "{}", e.message());
        let e = create_token_request((3, 1, None), Some(":x"), &[] as &[&str], -1).unwrap_err();
        assert!(e.message().starts_with("owner: "), "{}", e.message());
    }

    #[test]
    fn from_parts_and_requests() {
        let t = DelegationToken::from_parts("id", vec![1, 2], ("alice", None, &["bob"]), [1, 2, 3])
            .unwrap();
        assert_eq!(
            (t.info.requester.name.as_str(), t.info.max_ms),
            ("alice", 3)
        );
        assert_eq!(t.info.renewers, vec![Principal::user("bob")]);
        // The frames equal those of the request structures (tests/kafka_tokens.rs checks those
        // against Kafka's bytes).
        let typed = CreateTokenRequest {
            owner: Some(PrincipalName::from(&Principal::user("carol"))),
            renewers: vec![PrincipalName::from(&Principal::user("bob"))],
            max_lifetime_ms: 5,
        };
        let framed = create_token_request((3, 7, Some("c")), Some("carol"), &["bob"], 5).unwrap();
        assert_eq!(framed, typed.encode_request(3, 7, Some("c")).unwrap());
        let renew = RenewTokenRequest {
            hmac: Secret::from_slice(b"h"),
            renew_period_ms: 9,
        };
        let framed = change_token_request((2, 7, None), false, b"h", 9).unwrap();
        assert_eq!(framed, renew.encode_request(2, 7, None).unwrap());
        let expire = ExpireTokenRequest {
            hmac: Secret::from_slice(b"h"),
            expiry_time_period_ms: -1,
        };
        let framed = change_token_request((2, 7, None), true, b"h", -1).unwrap();
        assert_eq!(framed, expire.encode_request(2, 7, None).unwrap());
        let all = DescribeTokensRequest { owners: None }
            .encode_request(3, 7, None)
            .unwrap();
        assert_eq!(
            describe_tokens_request((3, 7, None), None::<&[&str]>).unwrap(),
            all
        );
    }
}
