//! The npm registry: the package's packument (abbreviated metadata) gives each version's
//! `dist.tarball` and `dist.integrity` (SRI, usually sha512).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::error::{Error, Known, Result, capped};
use super::hash::ArtifactHash;
use super::http::{Answer, Client, MAX_INDEX};
use super::{Candidate, Registry, Request};

const REG: Registry = Registry::Npm;

/// What memorix reads of a packument, parsed as it streams in (the rest is skipped).
#[derive(Deserialize)]
struct Packument {
    #[serde(default)]
    versions: BTreeMap<String, Version>,
}

#[derive(Deserialize)]
struct Version {
    #[serde(default)]
    dist: Dist,
}

#[derive(Deserialize, Default)]
struct Dist {
    tarball: Option<String>,
    integrity: Option<String>,
}

/// The tarball of `req`'s version, as the packument names it.
pub fn locate(client: &Client, registry: &str, req: &Request) -> Result<Candidate> {
    // A scoped name keeps its `@` and escapes its `/`.
    let url = format!("{registry}{}", crate::model::package::url_segment(&req.package));
    let accept = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8";
    let stream = match client.open(REG, &url, accept, MAX_INDEX)? {
        Answer::Ok(s) => s,
        Answer::Status(s) => return Err(req.not_found(REG, &url, format!("HTTP {s}"), String::new())),
        Answer::TooLarge(n) => return Err(super::error::index_too_large(REG, &url, n)),
    };
    let bad = |why: String| Error::BadAnswer {
        registry: REG.as_str(),
        url: url.clone(),
        why: capped(&why),
        env: REG.env(),
    };
    let packument: Packument =
        serde_json::from_reader(std::io::BufReader::new(stream)).map_err(|e| bad(e.to_string()))?;
    let Some(dist) = packument.versions.get(&req.version).map(|v| &v.dist) else {
        let mut known = Known::default();
        packument.versions.keys().for_each(|v| known.push(v));
        return Err(req.not_found(REG, &url, format!("no version {}", req.version), known.text()));
    };
    let tarball =
        dist.tarball.as_deref().ok_or_else(|| bad(format!("{} has no dist.tarball", req.version)))?;
    let file = crate::pins::url_file_name(tarball).unwrap_or_else(|| format!("{}.tgz", req.version));
    Ok(Candidate {
        url: tarball.to_string(),
        file,
        published: dist.integrity.as_deref().and_then(ArtifactHash::parse),
    })
}
