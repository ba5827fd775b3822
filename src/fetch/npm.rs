//! The npm registry: the package's packument (abbreviated metadata) gives each version's
//! `dist.tarball` and `dist.integrity` (SRI, usually sha512).

use super::error::{Error, Result};
use super::hash::ArtifactHash;
use super::http::{Answer, Client};
use super::{Candidate, Registry, Request};

const REG: Registry = Registry::Npm;

/// The tarball of `req`'s version, as the packument names it.
pub fn locate(client: &Client, registry: &str, req: &Request) -> Result<Candidate> {
    // A scoped name keeps its `@` and escapes its `/`.
    let url = format!("{registry}{}", crate::pins::name::url_segment(&req.package));
    let accept = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8";
    let body = match client.get(REG, &url, accept)? {
        Answer::Ok(b) => b.bytes,
        Answer::Status(s) => return Err(req.not_found(REG, &url, format!("HTTP {s}"), String::new())),
    };
    let bad =
        |why: String| Error::BadAnswer { registry: REG.as_str(), url: url.clone(), why, env: REG.env() };
    let json: serde_json::Value = serde_json::from_slice(&body).map_err(|e| bad(e.to_string()))?;
    let Some(dist) = json["versions"].get(&req.version).map(|v| &v["dist"]) else {
        let known = json["versions"].as_object().map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "));
        return Err(req.not_found(
            REG,
            &url,
            format!("no version {}", req.version),
            known.unwrap_or_default(),
        ));
    };
    let tarball =
        dist["tarball"].as_str().ok_or_else(|| bad(format!("{} has no dist.tarball", req.version)))?;
    let file = crate::pins::url_file_name(tarball).unwrap_or_else(|| format!("{}.tgz", req.version));
    Ok(Candidate {
        url: tarball.to_string(),
        file,
        published: dist["integrity"].as_str().and_then(ArtifactHash::parse),
    })
}
