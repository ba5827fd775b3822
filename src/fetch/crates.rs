//! crates.io's sparse index protocol: `config.json` names `dl`, the download URL template; the
//! crate's index file lists each published version with its `cksum` (the `.crate`'s sha256).

use super::error::{Error, Known, Result, capped};
use super::hash::ArtifactHash;
use super::http::{Answer, Client, MAX_INDEX};
use super::{Candidate, Registry, Request};

const REG: Registry = Registry::CratesIo;

/// One line of a crate's index file: what memorix reads of it (the rest is skipped unparsed).
#[derive(serde::Deserialize)]
struct IndexLine {
    #[serde(default)]
    vers: String,
    #[serde(default)]
    cksum: String,
}

/// The `.crate` of `req`'s version, where `dl` says it is, with the index's checksum. The
/// index file is read line by line as it arrives, under the index cap, until the version.
pub fn locate(client: &Client, index: &str, dl: &str, req: &Request) -> Result<Candidate> {
    use std::io::BufRead;
    // The index keeps a crate under its name in lowercase, `_` and `-` as published.
    let name = req.package.to_ascii_lowercase();
    let url = format!("{index}{}", index_path(&name));
    let stream = match client.open(REG, &url, "application/json", MAX_INDEX)? {
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
    let mut lines = std::io::BufReader::new(stream);
    let (mut line, mut known) = (Vec::new(), Known::default());
    loop {
        line.clear();
        if lines.read_until(b'\n', &mut line).map_err(|e| bad(e.to_string()))? == 0 {
            break;
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        let entry: IndexLine = serde_json::from_slice(&line).map_err(|e| bad(e.to_string()))?;
        if entry.vers == req.version {
            let vers = &entry.vers;
            return Ok(Candidate {
                url: download_url(dl, &req.package, vers, &entry.cksum),
                file: format!("{}-{vers}.crate", req.package),
                published: ArtifactHash::parse(&format!("sha256:{}", entry.cksum)),
            });
        }
        known.push(&entry.vers);
    }
    Err(req.not_found(REG, &url, format!("no version {}", req.version), known.text()))
}

/// The index's configured download template (`dl` in `config.json`).
pub fn dl_template(client: &Client, index: &str) -> Result<String> {
    let url = format!("{index}config.json");
    let bad = |why: String| {
        Box::new(Error::BadAnswer { registry: REG.as_str(), url: url.clone(), why, env: REG.env() })
    };
    let body = match client.get_index(REG, &url, "application/json")? {
        Answer::Ok(b) => b.bytes,
        Answer::Status(s) => return Err(bad(format!("HTTP {s}"))),
        Answer::TooLarge(n) => return Err(bad(format!("an answer of {n} bytes"))),
    };
    let json: serde_json::Value = serde_json::from_slice(&body).map_err(|e| bad(e.to_string()))?;
    json["dl"].as_str().map(str::to_string).ok_or_else(|| bad("config.json has no `dl`".into()))
}

/// Where the index keeps a crate's file: `1/a`, `2/ab`, `3/a/abc`, `ab/cd/abcd...`. Counted
/// in characters, so a name that is not ASCII (refused before it gets here) cannot split one.
pub fn index_path(name: &str) -> String {
    let head = |n: usize| name.chars().take(n).collect::<String>();
    match name.chars().count() {
        1 => format!("1/{name}"),
        2 => format!("2/{name}"),
        3 => format!("3/{}/{name}", head(1)),
        _ => format!("{}/{}/{name}", head(2), name.chars().skip(2).take(2).collect::<String>()),
    }
}

/// Cargo's rule: `dl` with markers is a template; without, `/{crate}/{version}/download` is appended.
pub fn download_url(dl: &str, name: &str, version: &str, cksum: &str) -> String {
    const MARKERS: [&str; 5] = ["{crate}", "{version}", "{prefix}", "{lowerprefix}", "{sha256-checksum}"];
    if !MARKERS.iter().any(|m| dl.contains(m)) {
        return format!("{}/{name}/{version}/download", dl.trim_end_matches('/'));
    }
    let prefix = index_path(name);
    let prefix = prefix.rsplit_once('/').map_or("", |(p, _)| p).to_string();
    dl.replace("{crate}", name)
        .replace("{version}", version)
        .replace("{prefix}", &prefix)
        .replace("{lowerprefix}", &prefix.to_lowercase())
        .replace("{sha256-checksum}", cksum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_paths_and_download_templates_follow_cargo() {
        assert_eq!(index_path("matchit"), "ma/tc/matchit");
        assert_eq!(index_path("syn"), "3/s/syn");
        assert_eq!(index_path("form_urlencoded"), "fo/rm/form_urlencoded");
        assert_eq!(index_path("éa"), "2/éa");
        assert_eq!(
            download_url("https://static.crates.io/crates", "http", "1.5.0", "x"),
            "https://static.crates.io/crates/http/1.5.0/download"
        );
        assert_eq!(
            download_url("http://h/dl/{prefix}/{crate}/{crate}-{version}.crate", "http", "1.5.0", "x"),
            "http://h/dl/ht/tp/http/http-1.5.0.crate"
        );
    }
}
