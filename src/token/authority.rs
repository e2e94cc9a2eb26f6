//! The token authority: creates, renews, expires and describes delegation tokens as Kafka's
//! controller does, answers `tokenauth` logins, and persists its records.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::RwLock;

use crate::sync::ReadMostly;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::Value;

use super::info::{token_hmac, DelegationToken, TokenConfig, TokenInfo, TOKEN_SCRAM_ITERATIONS};
use crate::credential::scram::{ScramCredential, ScramMechanism};
use crate::credential::{
    CredentialAnswer, CredentialLookup, CredentialRequest, Lookup, ServerCredential,
};
use crate::error::{Error, ErrorCode, Result};
use crate::mech::Principal;
use crate::random::SharedRandom;
use crate::secret::{ct_eq, Secret};

struct Entry {
    info: TokenInfo,
    /// SCRAM-SHA-256 and SCRAM-SHA-512 credentials derived from the HMAC.
    scram: BTreeMap<ScramMechanism, ScramCredential>,
}

/// Creates, renews, expires, describes and sweeps delegation tokens, and serves their SCRAM
/// credentials to `tokenauth` logins (as a [`CredentialLookup`]). Safe to share between
/// threads.
pub struct TokenAuthority {
    config: TokenConfig,
    random: SharedRandom,
    tokens: ReadMostly<BTreeMap<String, Entry>>,
    last_sweep_ms: RwLock<Option<i64>>,
}

impl fmt::Debug for TokenAuthority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.tokens.read().map(|t| t.len()).unwrap_or(0);
        write!(
            f,
            "TokenAuthority {{ tokens: {n}, config: {:?} }}",
            self.config
        )
    }
}

fn poisoned() -> Error {
    Error::new(ErrorCode::Internal, "token authority lock poisoned")
}

fn must_be_user(p: &Principal, role: &str) -> Result<()> {
    if p.principal_type != "User" {
        return Err(Error::new(
            ErrorCode::InvalidPrincipalType,
            format!(
                "the {role} {p} is not a User principal: only User principals can own or renew delegation tokens"
            ),
        ));
    }
    Ok(())
}

impl TokenAuthority {
    /// An authority with `config`; fails when the secret key is empty or a setting is below 1.
    pub fn new(config: TokenConfig, random: SharedRandom) -> Result<Self> {
        config.validate()?;
        Ok(TokenAuthority {
            config,
            random,
            tokens: ReadMostly::new(BTreeMap::new()),
            last_sweep_ms: RwLock::new(None),
        })
    }

    /// The settings.
    pub fn config(&self) -> &TokenConfig {
        &self.config
    }

    /// The HMAC of a token id under this authority's secret key.
    pub fn hmac(&self, token_id: &str) -> Secret {
        token_hmac(self.config.secret_key.expose(), token_id)
    }

    fn new_token_id(&self) -> Result<String> {
        loop {
            let mut b = [0u8; 16];
            self.random.0.fill(&mut b)?;
            // Kafka's Uuid never uses the all-zero id (and its "one" reserved id).
            if b == [0u8; 16] || b == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] {
                continue;
            }
            let id = URL_SAFE_NO_PAD.encode(b);
            if !id.starts_with('-') {
                return Ok(id);
            }
        }
    }

    fn derive(&self, token_id: &str) -> Result<BTreeMap<ScramMechanism, ScramCredential>> {
        let password = STANDARD.encode(self.hmac(token_id).expose());
        let mut scram = BTreeMap::new();
        for m in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            scram.insert(
                m,
                ScramCredential::generate(
                    m,
                    password.as_bytes(),
                    TOKEN_SCRAM_ITERATIONS,
                    self.random.0.as_ref(),
                )?,
            );
        }
        Ok(scram)
    }

    /// Creates a token for `owner` on behalf of `requester` (`None`: the owner, who creates it
    /// for themself), renewable by `renewers`.
    /// `requested_max_lifetime_ms` > 0 shortens the maximum lifetime below
    /// `delegation.token.max.lifetime.ms`; 0 or less takes the default.
    pub fn create(
        &self,
        owner: &Principal,
        requester: Option<&Principal>,
        renewers: &[Principal],
        requested_max_lifetime_ms: i64,
        now_ms: i64,
    ) -> Result<DelegationToken> {
        must_be_user(owner, "owner")?;
        for r in renewers {
            must_be_user(r, "renewer")?;
        }
        let max_lifetime = if requested_max_lifetime_ms > 0 {
            requested_max_lifetime_ms.min(self.config.max_lifetime_ms)
        } else {
            self.config.max_lifetime_ms
        };
        let max_ms = now_ms.saturating_add(max_lifetime);
        let expiry_ms = max_ms.min(now_ms.saturating_add(self.config.expiry_time_ms));
        let token_id = self.new_token_id()?;
        let strip = |p: &Principal| Principal {
            token_authenticated: false,
            ..p.clone()
        };
        let info = TokenInfo {
            token_id: token_id.clone(),
            owner: strip(owner),
            requester: strip(requester.unwrap_or(owner)),
            renewers: renewers.iter().map(strip).collect(),
            issue_ms: now_ms,
            expiry_ms,
            max_ms,
        };
        let scram = self.derive(&token_id)?;
        let hmac = self.hmac(&token_id);
        self.tokens.write().map_err(|_| poisoned())?.insert(
            token_id,
            Entry {
                info: info.clone(),
                scram,
            },
        );
        Ok(DelegationToken { info, hmac })
    }

    /// The id of the token whose HMAC is `hmac` (compared in constant time per token).
    fn id_for_hmac(&self, tokens: &BTreeMap<String, Entry>, hmac: &[u8]) -> Result<String> {
        let mut found = None;
        for id in tokens.keys() {
            if ct_eq(self.hmac(id).expose(), hmac) {
                found = Some(id.clone());
            }
        }
        found.ok_or_else(|| {
            Error::new(
                ErrorCode::DelegationTokenNotFound,
                "no delegation token matches the given HMAC",
            )
        })
    }

    fn managed(
        &self,
        hmac: &[u8],
        caller: &Principal,
        now_ms: i64,
        // Changes the token; returns true to remove it.
        f: impl FnOnce(&mut TokenInfo) -> bool,
    ) -> Result<i64> {
        let mut tokens = self.tokens.write().map_err(|_| poisoned())?;
        let id = self.id_for_hmac(&tokens, hmac)?;
        let entry = tokens.get_mut(&id).ok_or_else(poisoned)?;
        if !entry.info.may_manage(caller) {
            return Err(Error::new(
                ErrorCode::DelegationTokenOwnerMismatch,
                format!("{caller} is neither the owner nor a renewer of the token"),
            ));
        }
        if entry.info.is_expired(now_ms) {
            return Err(Error::new(
                ErrorCode::DelegationTokenExpired,
                format!("the delegation token {} has expired", entry.info.token_id),
            ));
        }
        let remove = f(&mut entry.info);
        let expiry = entry.info.expiry_ms;
        if remove {
            tokens.remove(&id);
        }
        Ok(expiry)
    }

    /// Renews the token with HMAC `hmac` for `caller` (its owner or a renewer): the new
    /// expiry is `now + renew period` capped by the token's maximum, where the period is
    /// `delegation.token.expiry.time.ms` or the smaller `requested_period_ms` when positive.
    /// Returns the new expiry.
    pub fn renew(
        &self,
        hmac: &[u8],
        caller: &Principal,
        requested_period_ms: i64,
        now_ms: i64,
    ) -> Result<i64> {
        let period = if requested_period_ms > 0 {
            requested_period_ms.min(self.config.expiry_time_ms)
        } else {
            self.config.expiry_time_ms
        };
        self.managed(hmac, caller, now_ms, |info| {
            info.expiry_ms = info.max_ms.min(now_ms.saturating_add(period));
            false
        })
    }

    /// Expires the token with HMAC `hmac` for `caller`: a negative period removes it now
    /// (returning `now`); otherwise its expiry becomes `now + period` capped by its maximum.
    pub fn expire(
        &self,
        hmac: &[u8],
        caller: &Principal,
        period_ms: i64,
        now_ms: i64,
    ) -> Result<i64> {
        self.managed(hmac, caller, now_ms, |info| {
            if period_ms < 0 {
                info.expiry_ms = now_ms;
                return true;
            }
            info.expiry_ms = info.max_ms.min(now_ms.saturating_add(period_ms));
            false
        })
    }

    /// The tokens owned by one of `owners` (all tokens when `None`), with their HMACs, in
    /// token-id order. Authorization (who may see what) is the host's decision.
    pub fn describe(&self, owners: Option<&[Principal]>) -> Result<Vec<DelegationToken>> {
        let tokens = self.tokens.read().map_err(|_| poisoned())?;
        Ok(tokens
            .values()
            .filter(|e| owners.map_or(true, |o| o.contains(&e.info.owner)))
            .map(|e| DelegationToken {
                info: e.info.clone(),
                hmac: self.hmac(&e.info.token_id),
            })
            .collect())
    }

    /// The token with this id, if present.
    pub fn get(&self, token_id: &str) -> Result<Option<TokenInfo>> {
        Ok(self
            .tokens
            .read()
            .map_err(|_| poisoned())?
            .get(token_id)
            .map(|e| e.info.clone()))
    }

    /// Removes every expired token; returns their ids. Call at [`Self::next_sweep_ms`].
    pub fn sweep(&self, now_ms: i64) -> Result<Vec<String>> {
        let mut tokens = self.tokens.write().map_err(|_| poisoned())?;
        let expired: Vec<String> = tokens
            .values()
            .filter(|e| e.info.is_expired(now_ms))
            .map(|e| e.info.token_id.clone())
            .collect();
        for id in &expired {
            tokens.remove(id);
        }
        *self.last_sweep_ms.write().map_err(|_| poisoned())? = Some(now_ms);
        Ok(expired)
    }

    /// When the next sweep is due: one check interval after the last (at once if none ran).
    pub fn next_sweep_ms(&self) -> i64 {
        match self.last_sweep_ms.read().ok().and_then(|l| *l) {
            Some(t) => t.saturating_add(self.config.expiry_check_interval_ms),
            None => i64::MIN,
        }
    }

    /// Fails with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED for a connection whose principal itself
    /// logged in with a token (Kafka refuses token requests there, as on unauthenticated
    /// connections).
    pub fn check_request_allowed(principal: &Principal) -> Result<()> {
        if principal.token_authenticated {
            return Err(Error::new(
                ErrorCode::DelegationTokenRequestNotAllowed,
                "delegation token requests are not allowed on a connection authenticated with a delegation token",
            ));
        }
        Ok(())
    }

    /// Every token as JSON records (an array), for a host to persist. No secret is included:
    /// HMACs are recomputed from the secret key, and SCRAM credentials derived anew on load.
    pub fn export_records(&self) -> Result<String> {
        let tokens = self.tokens.read().map_err(|_| poisoned())?;
        let v: Vec<Value> = tokens.values().map(|e| e.info.to_record()).collect();
        Ok(Value::Array(v).to_string())
    }

    /// Loads tokens from [`Self::export_records`] output (replacing tokens with the same id);
    /// returns how many were loaded. Nothing is loaded if any record is malformed.
    pub fn import_records(&self, json_text: &str) -> Result<usize> {
        let v: Value = serde_json::from_str(json_text).map_err(|e| {
            Error::new(
                ErrorCode::InvalidCredentialFormat,
                format!("invalid delegation token records: not JSON ({e})"),
            )
        })?;
        let arr = v.as_array().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidCredentialFormat,
                "invalid delegation token records: not a JSON array",
            )
        })?;
        let mut loaded = Vec::with_capacity(arr.len());
        for r in arr {
            let info = TokenInfo::from_record(r)?;
            let scram = self.derive(&info.token_id)?;
            loaded.push(Entry { info, scram });
        }
        let n = loaded.len();
        let mut tokens = self.tokens.write().map_err(|_| poisoned())?;
        for e in loaded {
            tokens.insert(e.info.token_id.clone(), e);
        }
        Ok(n)
    }

    /// The answer to a credential request: for `tokenauth` SCRAM requests, the token's SCRAM
    /// credential with its owner and current expiry; `Unknown` for anything else.
    pub fn answer(&self, request: &CredentialRequest) -> CredentialAnswer {
        if !request.token_authenticated {
            return CredentialAnswer::Unknown;
        }
        let Some(m) = ScramMechanism::from_name(&request.mechanism) else {
            return CredentialAnswer::Unknown;
        };
        let Ok(tokens) = self.tokens.read() else {
            return CredentialAnswer::Unavailable("token authority lock poisoned".into());
        };
        match tokens.get(&request.username) {
            Some(e) => match e.scram.get(&m) {
                Some(c) => CredentialAnswer::Found(
                    ServerCredential::scram(c.clone())
                        .with_token_owner(e.info.owner.name.clone())
                        .with_expiry_ms(e.info.expiry_ms),
                ),
                None => CredentialAnswer::Unknown,
            },
            None => CredentialAnswer::Unknown,
        }
    }
}

impl CredentialLookup for TokenAuthority {
    fn lookup(&self, request: &CredentialRequest) -> Lookup {
        Lookup::Now(self.answer(request))
    }
}

#[cfg(test)]
mod tests {
    use super::super::info::{error_from_kafka, kafka_error_code, valid_token_id};
    use super::*;

    fn authority() -> TokenAuthority {
        let mut c = TokenConfig::new("secret");
        c.max_lifetime_ms = 1_000_000;
        c.expiry_time_ms = 100_000;
        TokenAuthority::new(c, SharedRandom::default()).unwrap()
    }

    #[test]
    fn reference_hmac_vector() {
        let id = URL_SAFE_NO_PAD.encode((0u8..16).collect::<Vec<_>>());
        assert_eq!(id, "AAECAwQFBgcICQoLDA0ODw");
        assert_eq!(
            STANDARD.encode(token_hmac(b"secret", &id).expose()),
            "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA=="
        );
    }

    #[test]
    fn a_token_without_a_requester_is_requested_by_its_owner() {
        let a = authority();
        let (alice, admin) = (Principal::user("alice"), Principal::user("admin"));
        let own = a.create(&alice, None, &[], 0, 0).unwrap();
        assert_eq!(own.info.requester, alice);
        let for_her = a.create(&alice, Some(&admin), &[], 0, 0).unwrap();
        assert_eq!((for_her.info.owner, for_her.info.requester), (alice, admin));
    }

    #[test]
    fn create_renew_expire_follow_kafkas_rules() {
        let a = authority();
        let alice = Principal::user("alice");
        let bob = Principal::user("bob");
        let t = a
            .create(&alice, Some(&alice), std::slice::from_ref(&bob), 0, 1000)
            .unwrap();
        assert!(valid_token_id(t.token_id()));
        assert_eq!(t.info.max_ms, 1000 + 1_000_000);
        assert_eq!(t.info.expiry_ms, 1000 + 100_000);
        assert_eq!(t.hmac(), a.hmac(t.token_id()).expose());
        // A shorter requested lifetime caps both timestamps.
        let short = a.create(&alice, Some(&alice), &[], 50_000, 1000).unwrap();
        assert_eq!((short.info.max_ms, short.info.expiry_ms), (51_000, 51_000));
        // Renew: the renewer may, capped by the expiry time and the max timestamp.
        assert_eq!(a.renew(t.hmac(), &bob, 0, 2000).unwrap(), 102_000);
        assert_eq!(a.renew(t.hmac(), &bob, 10_000, 3000).unwrap(), 13_000);
        assert_eq!(a.renew(t.hmac(), &alice, 500_000, 4000).unwrap(), 104_000);
        let carol = Principal::user("carol");
        assert_eq!(
            a.renew(t.hmac(), &carol, 0, 5000).unwrap_err().code(),
            ErrorCode::DelegationTokenOwnerMismatch
        );
        assert_eq!(
            a.renew(&[0u8; 64], &alice, 0, 5000).unwrap_err().code(),
            ErrorCode::DelegationTokenNotFound
        );
        // Renewing near the max timestamp is capped by it.
        let capped = a.create(&alice, Some(&alice), &[], 150_000, 0).unwrap();
        assert_eq!(capped.info.expiry_ms, 100_000);
        assert_eq!(a.renew(capped.hmac(), &alice, 0, 90_000).unwrap(), 150_000);
        // Expired: renew and expire fail.
        let e = a.renew(t.hmac(), &alice, 0, 2_000_000).unwrap_err();
        assert_eq!(e.code(), ErrorCode::DelegationTokenExpired);
        assert_eq!(kafka_error_code(&e), 66);
        assert_eq!(
            error_from_kafka(66, "renew").code(),
            ErrorCode::DelegationTokenExpired
        );
        // Expire now, then again.
        assert_eq!(a.expire(short.hmac(), &alice, -1, 2000).unwrap(), 2000);
        assert_eq!(
            a.expire(short.hmac(), &alice, -1, 2001).unwrap_err().code(),
            ErrorCode::DelegationTokenNotFound
        );
    }

    #[test]
    fn principal_types_and_token_connections() {
        let a = authority();
        let group = Principal {
            principal_type: "Group".into(),
            name: "ops".into(),
            token_authenticated: false,
        };
        let alice = Principal::user("alice");
        let e = a.create(&alice, Some(&alice), &[group], 0, 0).unwrap_err();
        assert_eq!(kafka_error_code(&e), 67);
        let mut via_token = alice.clone();
        via_token.token_authenticated = true;
        let e = TokenAuthority::check_request_allowed(&via_token).unwrap_err();
        assert_eq!(kafka_error_code(&e), 64);
        assert!(TokenAuthority::check_request_allowed(&alice).is_ok());
    }

    #[test]
    fn records_round_trip_without_secrets() {
        let a = authority();
        let alice = Principal::user("alice");
        let t = a
            .create(&alice, Some(&alice), &[Principal::user("bob")], 0, 7)
            .unwrap();
        let text = a.export_records().unwrap();
        assert!(!text.contains(&STANDARD.encode(t.hmac())));
        let b = authority();
        assert_eq!(b.import_records(&text).unwrap(), 1);
        assert_eq!(b.get(t.token_id()).unwrap().unwrap(), t.info);
        assert_eq!(b.describe(None).unwrap()[0].hmac(), t.hmac());
        for bad in [
            "nope",
            "{}",
            "[{}]",
            r#"[{"tokenId":"x","owner":"User:a","requester":"User:a","renewers":[],"issueTimestamp":1,"maxTimestamp":2,"expirationTimestamp":2}]"#,
            r#"[{"tokenId":"AAECAwQFBgcICQoLDA0ODw","owner":"alice","requester":"User:a","renewers":[],"issueTimestamp":1,"maxTimestamp":2,"expirationTimestamp":2}]"#,
            r#"[{"tokenId":"AAECAwQFBgcICQoLDA0ODw","owner":"User:a","requester":"User:a","renewers":[],"issueTimestamp":1,"maxTimestamp":2,"expirationTimestamp":3}]"#,
        ] {
            assert_eq!(
                b.import_records(bad).unwrap_err().code(),
                ErrorCode::InvalidCredentialFormat,
                "{bad}"
            );
        }
    }

    #[test]
    fn sweep_and_describe() {
        let a = authority();
        let alice = Principal::user("alice");
        let bob = Principal::user("bob");
        let t1 = a.create(&alice, Some(&alice), &[], 10, 0).unwrap();
        let t2 = a.create(&bob, Some(&bob), &[], 0, 0).unwrap();
        assert_eq!(a.next_sweep_ms(), i64::MIN);
        assert_eq!(
            a.describe(Some(std::slice::from_ref(&bob))).unwrap().len(),
            1
        );
        assert_eq!(a.describe(None).unwrap().len(), 2);
        // Expired but not swept: still answers, with its past expiry.
        let req = CredentialRequest {
            mechanism: "SCRAM-SHA-256".into(),
            username: t1.token_id().into(),
            token_authenticated: true,
        };
        match a.answer(&req) {
            CredentialAnswer::Found(c) => {
                assert_eq!(c.expiry_ms(), Some(10));
                assert_eq!(c.token_owner(), Some("alice"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(a.sweep(11).unwrap(), vec![t1.token_id().to_string()]);
        assert!(matches!(a.answer(&req), CredentialAnswer::Unknown));
        assert_eq!(a.next_sweep_ms(), 11 + 3_600_000);
        assert!(a.get(t2.token_id()).unwrap().is_some());
    }

    #[test]
    fn config_is_validated_and_redacted() {
        assert_eq!(
            TokenAuthority::new(TokenConfig::new(""), SharedRandom::default())
                .unwrap_err()
                .code(),
            ErrorCode::InvalidConfig
        );
        let mut c = TokenConfig::new("k");
        c.expiry_time_ms = 0;
        assert!(TokenAuthority::new(c.clone(), SharedRandom::default()).is_err());
        assert!(!format!("{c:?}").contains("\"k\""));
        let t = authority()
            .create(
                &Principal::user("a"),
                Some(&Principal::user("a")),
                &[],
                0,
                0,
            )
            .unwrap();
        let dbg = format!("{t:?}");
        assert!(dbg.contains("<redacted>"));
        assert!(!dbg.contains(&STANDARD.encode(t.hmac())));
    }
}
