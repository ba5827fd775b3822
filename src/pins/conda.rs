//! Conda environment files (`environment.yml`): `dependencies` lists `name=version` (or
//! `name==version`, `channel::name=version=build`), and a `pip:` list of requirement lines.
//! Every entry is something the environment asks for, so every pin is direct. Names are read
//! as Python distributions (PEP 503), which conda packages of Python libraries share.

use super::error::{Result, syntax_at_line};
use super::requirements::record;
use super::yaml::{self, Node};
use super::{Pin, PinFile};

const HELP: &str = "fix the YAML of the environment file (conda env export writes one)";

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let docs = yaml::load(text)
        .map_err(|e| syntax_at_line(name, text, e.line, "environment file", &e.message, HELP))?;
    let path = file.path.clone();
    for item in docs.iter().filter_map(|d| d.get("dependencies")).flat_map(Node::items) {
        if let Some(spec) = item.text() {
            conda_spec(file, spec, item.line);
            continue;
        }
        for line in item.get("pip").map(Node::items).unwrap_or_default() {
            if let Some(spec) = line.text() {
                record(file, spec, &path, line.line, Vec::new());
            }
        }
    }
    Ok(())
}

/// One conda match spec: `numpy=1.26.4`, `numpy==1.26.4`, `conda-forge::numpy=1.26.4=py311_0`.
/// A fuzzy or ranged version (`numpy=1.26.*`, `numpy>=1.26`) or none pins nothing.
fn conda_spec(file: &mut PinFile, spec: &str, line: usize) {
    let spec = spec.split_whitespace().next().unwrap_or(spec);
    let spec = spec.rsplit_once("::").map_or(spec, |(_, s)| s);
    let end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(spec.len());
    let (name, rest) = spec.split_at(end);
    if name.is_empty() {
        return;
    }
    let mut pin = Pin::new(name, "", &file.path, line);
    pin.direct = true;
    let exact = rest.strip_prefix("==").or_else(|| rest.strip_prefix('=')).filter(|v| !v.starts_with('='));
    match exact.map(|v| v.split('=').next().unwrap_or(v)) {
        Some(version)
            if version.starts_with(|c: char| c.is_ascii_digit())
                && !version.contains(['*', ',', '|', '<', '>']) =>
        {
            pin.version = version.to_string();
            file.pins.push(pin);
        }
        _ => {
            pin.version = rest.to_string();
            file.unpinned.push(pin);
        }
    }
}
