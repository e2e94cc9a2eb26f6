//! `Config.check`: the core's reading of `.properties` text, as records.

use jni::objects::{JObject, JString};
use ksasl::config::check;

use crate::glue::{natives, opt_string, string, Rec};

natives! {
    fn configCheck(env, text: JString<'l>, listener: JString<'l>) -> JObject<'l> {
        let text = string(env, &text, "text")?;
        let reports = check(&text, opt_string(env, &listener)?.as_deref())?;
        let r = Rec::default().i32(reports.len() as i32);
        let r = reports.iter().fold(r, |r, c| {
            let r = r.str(&c.scope).strs(c.effective.iter().flat_map(|(k, v)| [k, v]));
            r.strs(&c.unknown).strs(&c.warnings)
        });
        r.done(env)
    }
}
