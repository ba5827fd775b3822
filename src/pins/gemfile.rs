//! `Gemfile.lock` (Bundler; RubyGems ecosystem). Each source section (`GEM`, `GIT`, `PATH`)
//! lists its gems under `specs:` as `name (version)` or `name (version-platform)`; gems under
//! `PATH` are the project's own, like Cargo workspace members. `DEPENDENCIES` (and the PATH
//! gems' own dependencies) are what the roots depend on directly. `CHECKSUMS` (Bundler 2.6+)
//! gives each gem file's sha256.

use std::collections::{HashMap, HashSet};

use super::error::{Result, syntax};
use super::{Pin, PinFile, PinnedArtifact};

const HELP: &str = "Gemfile.lock is generated: run `bundle lock` to write it again";

/// The section being read and its source.
#[derive(Default)]
struct Section {
    name: String,
    remote: Option<String>,
    revision: Option<String>,
}

impl Section {
    fn source(&self) -> Option<String> {
        let remote = self.remote.as_deref()?;
        let kind = self.name.to_lowercase();
        Some(match &self.revision {
            Some(rev) => format!("{kind}+{remote}@{rev}"),
            None => format!("{kind}+{remote}"),
        })
    }
}

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let mut section = Section::default();
    let mut direct: HashSet<&str> = HashSet::new();
    let mut checksums: HashMap<(&str, &str), &str> = HashMap::new();
    let mut in_path_spec = false;
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let indent = line.len() - line.trim_start().len();
        let body = line.trim();
        if indent == 0 && !body.is_empty() {
            section = Section { name: body.to_string(), ..Section::default() };
            continue;
        }
        let bad =
            |what: &str| syntax(name, text, Some(start..start + line.len()), "Gemfile.lock", what, HELP);
        match (section.name.as_str(), indent) {
            ("GEM" | "GIT" | "PATH", 2) => match body.split_once(": ") {
                Some(("remote", r)) => section.remote = Some(r.to_string()),
                Some(("revision", r)) => section.revision = Some(r.to_string()),
                _ => {}
            },
            ("GEM" | "GIT" | "PATH", 4) => {
                let (gem, version, platform) = spec(body).ok_or_else(|| bad("a spec is `name (version)`"))?;
                in_path_spec = section.name == "PATH";
                let mut pin = Pin::new(gem, version, &file.path, i + 1);
                pin.direct = section.name == "PATH";
                pin.source = match (section.source(), platform) {
                    (Some(s), Some(p)) => Some(format!("{s} ({p})")),
                    (s, _) => s,
                };
                file.pins.push(pin);
            }
            // A PATH gem is a root: what its gemspec depends on is direct.
            ("PATH", 6) if in_path_spec => {
                direct.insert(body.split(' ').next().unwrap_or(body));
            }
            ("DEPENDENCIES", 2) => {
                direct.insert(body.split([' ', '!']).next().unwrap_or(body));
            }
            ("CHECKSUMS", 2) => {
                let (spec_text, hash) = body.rsplit_once(' ').unwrap_or((body, ""));
                if let (Some((gem, version, _)), Some(hex)) = (spec(spec_text), hash.strip_prefix("sha256="))
                {
                    checksums.insert((gem, version), hex);
                }
            }
            _ => {}
        }
    }
    for pin in &mut file.pins {
        pin.direct |= direct.contains(pin.name.as_str());
        if let Some(hex) = checksums.get(&(pin.name.as_str(), pin.version.as_str())) {
            let file = Some(format!("{}-{}.gem", pin.name, pin.version));
            pin.artifacts.push(PinnedArtifact { file, url: None, hash: Some(format!("sha256:{hex}")) });
        }
    }
    Ok(())
}

/// `nokogiri (1.15.4-x86_64-linux)` -> (`nokogiri`, `1.15.4`, `x86_64-linux`).
fn spec(body: &str) -> Option<(&str, &str, Option<&str>)> {
    let (gem, rest) = body.split_once(" (")?;
    let inside = rest.strip_suffix(')')?;
    let (version, platform) = match inside.split_once('-') {
        Some((v, p)) => (v, Some(p)),
        None => (inside, None),
    };
    let valid = !gem.is_empty() && version.starts_with(|c: char| c.is_ascii_digit());
    valid.then_some((gem, version, platform))
}
