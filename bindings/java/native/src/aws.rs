//! `AWS_MSK_IAM` for Java: AWS credentials and the key store of a verifying server as handles,
//! the registry's AWS clients and servers (`AWS_MSK_IAM` and MSK's OAUTHBEARER tokens), AWS
//! credentials installed in a refresher, and one MSK token on demand.
//!
//! A client's credential source arrives as two handles, an `AwsCredentials` and a `Refresher`,
//! of which `Native.java`'s callers pass exactly one (the other is 0).

use std::sync::Arc;

use jni::objects::{JObject, JObjectArray, JString};
use jni::sys::jlong;
use jni::JNIEnv;
use ksasl::aws::credentials::AwsCredentials;
use ksasl::mech::aws_msk_iam::{
    AwsCredentialSource, AwsKeyStore, MskIamClientConfig, MskIamServerConfig, MskTokenSource,
};
use ksasl::{Error, ErrorCode};

use crate::glue::{
    free, get, into_handle, natives, opt, opt_string, raw, string, strings, JResult, Rec,
};
use crate::oauth::{token, Refr};
use crate::objects::registry_mut;

pub(crate) type Keys = Arc<AwsKeyStore>;

/// The credential source of a client: the credentials handle or the refresher handle.
fn source(credentials: jlong, refresher: jlong) -> JResult<Arc<dyn AwsCredentialSource>> {
    match (credentials, refresher) {
        (c, 0) if c != 0 => Ok(Arc::new(get::<AwsCredentials>(c).clone())),
        (0, r) if r != 0 => Ok(get::<Refr>(r).clone()),
        _ => Err(Error::new(ErrorCode::Internal, "not exactly one AWS credential source").into()),
    }
}

/// A server configuration over a key store handle.
fn server_config(keys: jlong, region: String, hosts: Vec<String>) -> Arc<MskIamServerConfig> {
    Arc::new(MskIamServerConfig::new(
        get::<Keys>(keys).clone(),
        &region,
        hosts,
    ))
}

/// MSK's token source for `region`, reporting `user_agent` (null: the core's).
fn token_source(
    env: &mut JNIEnv<'_>,
    region: &JString<'_>,
    credentials: jlong,
    refresher: jlong,
    user_agent: &JString<'_>,
) -> JResult<MskTokenSource> {
    let region = string(env, region, "region")?;
    let ua = opt_string(env, user_agent)?;
    Ok(MskTokenSource::new(
        &region,
        ua.as_deref(),
        source(credentials, refresher)?,
    ))
}

natives! {
    // --- AwsCredentials
    fn awsCredentialsNew(
        env, id: JString<'l>, secret: JString<'l>, session_token: JString<'l>, expires: jlong,
    ) -> i64 {
        let id = string(env, &id, "accessKeyId")?;
        let secret = string(env, &secret, "secretAccessKey")?;
        let session_token = opt_string(env, &session_token)?;
        let c = AwsCredentials::from_parts(&id, &secret, session_token.as_deref(), opt(expires))?;
        Ok(into_handle(c))
    }
    awsCredentialsFree(_env, h: jlong) -> () = free::<AwsCredentials>(h);
    fn awsCredentialsInfo(env, h: jlong) -> JObject<'l> {
        let c = get::<AwsCredentials>(h);
        Rec::default()
            .str(c.access_key_id())
            .u8(c.session_token().is_some().into())
            .i64(raw(c.expires_at_ms()))
            .done(env)
    }

    // --- AwsKeyStore
    awsKeyStoreNew(_env) -> i64 = into_handle::<Keys>(Arc::default());
    awsKeyStoreFree(_env, h: jlong) -> () = free::<Keys>(h);
    awsKeyStoreAdd(env, h: jlong, credentials: jlong, principal: JString<'l>) -> ()
        = get::<Keys>(h).add(get(credentials), &string(env, &principal, "principal")?);
    awsKeyStoreRemove(env, h: jlong, id: JString<'l>) -> bool
        = get::<Keys>(h).remove(&string(env, &id, "accessKeyId")?);

    // --- registries
    fn registryAddAwsMskIamClient(
        env, h: jlong, host: JString<'l>, region: JString<'l>, credentials: jlong,
        refresher: jlong, user_agent: JString<'l>, key_order: JString<'l>,
    ) -> () {
        let host = string(env, &host, "host")?;
        let region = string(env, &region, "region")?;
        let (ua, order) = (opt_string(env, &user_agent)?, opt_string(env, &key_order)?);
        let config =
            MskIamClientConfig::with_options(&host, &region, ua.as_deref(), order.as_deref())?;
        let source = source(credentials, refresher)?;
        registry_mut(h).register_aws_msk_iam_client(Arc::new(config), source);
        Ok(())
    }
    fn registryAddAwsMskIamServer(
        env, h: jlong, keys: jlong, region: JString<'l>, hosts: JObjectArray<'l>,
    ) -> () {
        let region = string(env, &region, "region")?;
        let config = server_config(keys, region, strings(env, &hosts)?);
        registry_mut(h).register_aws_msk_iam_server(config);
        Ok(())
    }
    fn registryAddMskOAuthClient(
        env, h: jlong, region: JString<'l>, credentials: jlong, refresher: jlong,
        user_agent: JString<'l>,
    ) -> () {
        let region = string(env, &region, "region")?;
        let ua = opt_string(env, &user_agent)?;
        let source = source(credentials, refresher)?;
        registry_mut(h).register_msk_oauthbearer_client(&region, ua.as_deref(), source);
        Ok(())
    }
    fn registryAddMskOAuthServer(env, h: jlong, keys: jlong, region: JString<'l>) -> () {
        let region = string(env, &region, "region")?;
        registry_mut(h).register_msk_oauthbearer_server(get::<Keys>(keys).clone(), &region);
        Ok(())
    }

    // --- refreshers and tokens
    fn refresherSetAwsCredentials(
        env, h: jlong, credentials: jlong, principal: JString<'l>, now: jlong,
    ) -> i64 {
        let principal = string(env, &principal, "principal")?;
        let c = get::<AwsCredentials>(credentials).clone();
        Ok(get::<Refr>(h).set_aws_credentials(c, &principal, now)? as i64)
    }
    fn mskToken(
        env, region: JString<'l>, credentials: jlong, refresher: jlong, user_agent: JString<'l>,
        now: jlong,
    ) -> JObject<'l> {
        let t = token_source(env, &region, credentials, refresher, &user_agent)?.token_at(now)?;
        token(env, &t, &[], 0)
    }
}
