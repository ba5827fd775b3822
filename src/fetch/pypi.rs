//! PyPI's Simple API: PEP 691 JSON (`files[].url`, `files[].hashes.sha256`), falling back to
//! PEP 503 HTML (`<a href="URL#sha256=HEX">FILE</a>`) when the index answers in HTML. Of the
//! pinned version's files: the sdist, else a `py3-none-any` wheel, else any wheel.

use super::error::{Error, Known, Result, capped};
use super::hash::ArtifactHash;
use super::http::{Answer, Client};
use super::{Candidate, Registry, Request};

const REG: Registry = Registry::Pypi;
const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, text/html;q=0.1";

/// One file the index lists for a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexFile {
    pub file: String,
    pub url: String,
    pub sha256: Option<String>,
}

/// The file of `req`'s version to fetch: the one memorix.lock names, else among the files the
/// pin file names (by name or hash), else among all of that version's, by preference.
pub fn locate(client: &Client, index: &str, req: &Request) -> Result<Candidate> {
    let name = crate::pins::normalize(crate::pins::Ecosystem::Python, &req.package);
    let url = format!("{index}{name}/");
    let body = match client.get_index(REG, &url, ACCEPT)? {
        Answer::Ok(b) => b,
        Answer::Status(s) => return Err(req.not_found(REG, &url, format!("HTTP {s}"), String::new())),
        Answer::TooLarge(n) => return Err(super::error::index_too_large(REG, &url, n)),
    };
    let files = if body.content_type.contains("json") {
        parse_json(&body.bytes).map_err(|why| Error::BadAnswer {
            registry: REG.as_str(),
            url: url.clone(),
            why: capped(&why),
            env: REG.env(),
        })?
    } else {
        parse_html(&String::from_utf8_lossy(&body.bytes), &url)
    };
    let ours: Vec<&IndexFile> = files.iter().filter(|f| of_version(&f.file, &name, &req.version)).collect();
    let Some(chosen) = choose(&ours, req) else {
        let mut known = Known::default();
        files.iter().filter_map(|f| version_of(&f.file, &name)).for_each(|v| known.push(&v));
        let answer = format!("no file of version {}", req.version);
        return Err(req.not_found(REG, &url, answer, known.text()));
    };
    Ok(Candidate {
        url: chosen.url.clone(),
        file: chosen.file.clone(),
        published: chosen.sha256.as_ref().and_then(|h| ArtifactHash::parse(&format!("sha256:{h}"))),
    })
}

fn choose<'a>(files: &[&'a IndexFile], req: &Request) -> Option<&'a IndexFile> {
    let accepted = req.accepted();
    let restricted: Vec<&IndexFile> = match &req.locked {
        Some(l) => files.iter().copied().filter(|f| f.file == l.artifact).collect(),
        None => files
            .iter()
            .copied()
            .filter(|f| {
                accepted.iter().any(|(file, hash)| {
                    file.as_deref() == Some(f.file.as_str())
                        || f.sha256.as_ref().is_some_and(|h| {
                            ArtifactHash::parse(&format!("sha256:{h}")).as_ref() == Some(hash)
                        })
                })
            })
            .collect(),
    };
    let pool = if restricted.is_empty() { files.to_vec() } else { restricted };
    let sdist = |f: &&&IndexFile| f.file.ends_with(".tar.gz") || f.file.ends_with(".zip");
    let pure = |f: &&&IndexFile| f.file.ends_with("-py3-none-any.whl");
    let wheel = |f: &&&IndexFile| f.file.ends_with(".whl");
    pool.iter().find(sdist).or_else(|| pool.iter().find(pure)).or_else(|| pool.iter().find(wheel)).copied()
}

/// PEP 691: `{"files": [{"filename", "url", "hashes": {"sha256"}}]}`.
pub fn parse_json(bytes: &[u8]) -> std::result::Result<Vec<IndexFile>, String> {
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let files = json["files"].as_array().ok_or("no `files` list")?;
    Ok(files
        .iter()
        .filter_map(|f| {
            Some(IndexFile {
                file: f["filename"].as_str()?.to_string(),
                url: f["url"].as_str()?.to_string(),
                sha256: f["hashes"]["sha256"].as_str().map(str::to_string),
            })
        })
        .collect())
}

/// PEP 503: each `<a href="URL#sha256=HEX">FILE</a>`; relative URLs resolve against `base`.
pub fn parse_html(text: &str, base: &str) -> Vec<IndexFile> {
    let mut out = Vec::new();
    for anchor in text.split("<a ").skip(1) {
        let Some(href) = anchor.split("href=\"").nth(1).and_then(|r| r.split('"').next()) else { continue };
        let Some(file) = anchor.split_once('>').and_then(|(_, r)| r.split("</a>").next()) else { continue };
        let href = href.replace("&amp;", "&");
        let (link, fragment) = href.split_once('#').unwrap_or((&href, ""));
        let url = match reqwest::Url::parse(base).and_then(|b| b.join(link)) {
            Ok(u) => u.to_string(),
            Err(_) => continue,
        };
        let sha256 = fragment.strip_prefix("sha256=").map(str::to_string);
        out.push(IndexFile { file: file.trim().to_string(), url, sha256 });
    }
    out
}

/// The version a file of project `name` is of (`click-8.3.2.tar.gz`, `click-8.3.2-py3-none-any.whl`).
fn version_of(file: &str, name: &str) -> Option<String> {
    let (dist, version) = match file.strip_suffix(".whl") {
        Some(wheel) => {
            let mut parts = wheel.splitn(3, '-');
            (parts.next()?, parts.next()?)
        }
        None => file.strip_suffix(".tar.gz").or_else(|| file.strip_suffix(".zip"))?.rsplit_once('-')?,
    };
    (crate::pins::normalize(crate::pins::Ecosystem::Python, dist) == name).then(|| version.to_string())
}

fn of_version(file: &str, name: &str, version: &str) -> bool {
    let same = |a: &str, b: &str| match (a.parse::<pep440_rs::Version>(), b.parse::<pep440_rs::Version>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    };
    version_of(file, name).is_some_and(|v| same(&v, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pep503_html_gives_files_with_hashes() {
        let html = r#"<html><body><a href="../../packages/ab/click-8.3.2.tar.gz#sha256=14162b">click-8.3.2.tar.gz</a>
<a href="https://x/click-8.3.2-py3-none-any.whl">click-8.3.2-py3-none-any.whl</a></body></html>"#;
        let files = parse_html(html, "https://pypi.org/simple/click/");
        assert_eq!(files[0].url, "https://pypi.org/packages/ab/click-8.3.2.tar.gz");
        assert_eq!(files[0].sha256.as_deref(), Some("14162b"));
        assert_eq!(files[1].sha256, None);
        assert_eq!(version_of("click-8.3.2-py3-none-any.whl", "click").as_deref(), Some("8.3.2"));
        assert_eq!(version_of("Click-7.0.tar.gz", "click").as_deref(), Some("7.0"));
        assert!(of_version("click-8.3.2.tar.gz", "click", "8.3.2"));
    }
}
