//! PEP 508 markers, evaluated only against the target a project declares in `[pins] markers`,
//! never against the machine memorix runs on, so that every machine resolves the same pins.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::str::FromStr;

use pep440_rs::Version;
use pep508_rs::{
    ExtraName, MarkerEnvironment, MarkerEnvironmentBuilder, MarkerExpression, MarkerOperator, MarkerTree,
    MarkerTreeKind, MarkerValue, MarkerValueVersion,
};

use super::error::PinError;
use super::error::Result;
use super::{Ecosystem, Pin, Site};

/// The PEP 508 environment marker variables, by their current names.
const VARIABLES: [&str; 12] = [
    "extra",
    "implementation_name",
    "implementation_version",
    "os_name",
    "platform_machine",
    "platform_python_implementation",
    "platform_release",
    "platform_system",
    "platform_version",
    "python_full_version",
    "python_version",
    "sys_platform",
];

/// The declared target environment (`[pins] markers`); empty when none is declared.
#[derive(Debug)]
pub(crate) struct Target {
    /// Declared variables by current name (`sys.platform` is stored as `sys_platform`), plus
    /// `python_version` when only `python_full_version` is declared (its major.minor).
    declared: BTreeMap<String, String>,
    env: MarkerEnvironment,
    extras: Vec<ExtraName>,
    /// `[X.Y, X.(Y+1))` when `python_version = "X.Y"` is declared without
    /// `python_full_version`: a marker on the full version settles when it is the same for
    /// every X.Y.* release.
    python_range: Option<(Version, Version)>,
}

/// Why a marker could not be evaluated against the target.
enum Unsettled {
    Invalid(String),
    Undeclared(String),
}

impl Target {
    pub fn new(markers: &BTreeMap<String, String>) -> Result<Target> {
        let mut declared = BTreeMap::new();
        for (key, value) in markers {
            let name = match MarkerValue::from_str(key) {
                Ok(MarkerValue::MarkerEnvString(k)) => k.to_string(),
                Ok(MarkerValue::MarkerEnvVersion(k)) => k.to_string(),
                Ok(MarkerValue::Extra) => "extra".to_string(),
                _ => {
                    let closest = VARIABLES.iter().min_by_key(|v| strsim::levenshtein(key, v));
                    let help = match closest.filter(|v| strsim::levenshtein(key, v) <= 3) {
                        Some(v) => format!("did you mean `{v}`? the variables are: {}", VARIABLES.join(", ")),
                        None => format!("the variables are: {}", VARIABLES.join(", ")),
                    };
                    return Err(PinError::BadTarget {
                        message: format!("`{key}` is not a PEP 508 marker variable"),
                        help,
                    }
                    .into());
                }
            };
            declared.insert(name, value.clone());
        }
        let version = |key: &str| -> Result<Option<Version>> {
            declared
                .get(key)
                .map(|v| {
                    v.parse::<Version>().map_err(|e| {
                        PinError::BadTarget {
                            message: format!("{key} = {v:?} is not a PEP 440 version: {e}"),
                            help: format!("give a version, e.g. {key} = \"3.11\""),
                        }
                        .into()
                    })
                })
                .transpose()
        };
        version("implementation_version")?;
        let python = version("python_version")?;
        let full = version("python_full_version")?;
        let python_range = match (&python, &full) {
            (Some(v), None) => {
                let (major, minor) = (v.release()[0], v.release().get(1).copied().unwrap_or(0));
                Some((Version::new([major, minor]), Version::new([major, minor + 1])))
            }
            _ => None,
        };
        if let (None, Some(f)) = (&python, &full) {
            let minor = f.release().get(1).copied().unwrap_or(0);
            declared.insert("python_version".into(), format!("{}.{minor}", f.release()[0]));
        }
        // Variables nothing declares are never read: `check` refuses markers that need them.
        let get = |k: &str, default: &'static str| declared.get(k).map_or(default, String::as_str);
        let env = MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
            implementation_name: get("implementation_name", ""),
            implementation_version: get("implementation_version", "0"),
            os_name: get("os_name", ""),
            platform_machine: get("platform_machine", ""),
            platform_python_implementation: get("platform_python_implementation", ""),
            platform_release: get("platform_release", ""),
            platform_system: get("platform_system", ""),
            platform_version: get("platform_version", ""),
            python_full_version: get("python_full_version", "0"),
            python_version: get("python_version", "0"),
            sys_platform: get("sys_platform", ""),
        })
        .map_err(|e| PinError::BadTarget {
            message: e.to_string(),
            help: "give versions as PEP 440 versions, e.g. python_version = \"3.11\"".into(),
        })?;
        let extras = match declared.get("extra") {
            None => Vec::new(),
            Some(e) => vec![ExtraName::from_str(e).map_err(|err| PinError::BadTarget {
                message: format!("extra = {e:?}: {err}"),
                help: "name one extra, e.g. extra = \"docs\"".into(),
            })?],
        };
        Ok(Target { declared, env, extras, python_range })
    }

    pub fn is_empty(&self) -> bool {
        self.declared.is_empty()
    }

    /// Whether `pin` applies to the target: always when no target is declared or the pin has
    /// no marker; an error when its marker needs a variable the target does not declare.
    pub fn admits(&self, pin: &Pin, site: &Site, library: &str) -> Result<bool> {
        let Some(text) = pin.markers.as_deref().filter(|_| !self.is_empty()) else { return Ok(true) };
        self.check(text).map_err(|why| {
            let (src, span) = site.source();
            let (at, marker) = (site.at(), text.to_string());
            match why {
                Unsettled::Invalid(message) => PinError::BadMarker { at, marker, message, src, span },
                Unsettled::Undeclared(variable) => {
                    let help = undeclared_help(&variable);
                    PinError::UndeclaredMarker {
                        at,
                        library: library.to_string(),
                        marker,
                        variable,
                        help,
                        src,
                        span,
                    }
                }
            }
            .into()
        })
    }

    /// Evaluates the marker `text` against the target.
    fn check(&self, text: &str) -> std::result::Result<bool, Unsettled> {
        let mut tree = MarkerTree::from_str(text).map_err(|e| Unsettled::Invalid(e.message.to_string()))?;
        if let Some((lo, hi)) = &self.python_range {
            tree = tree.simplify_python_versions(Bound::Included(lo), Bound::Excluded(hi));
        }
        // An undeclared `extra` means no extras: the default install, which is what a lock's
        // conflict markers (`extra == 'group-x-dev'`) leave out.
        match needed(&tree, text).into_iter().find(|v| v != "extra" && !self.declared.contains_key(v)) {
            Some(missing) => Err(Unsettled::Undeclared(missing)),
            None => Ok(tree.evaluate(&self.env, &self.extras)),
        }
    }
}

/// How to declare `variable`, with an example value of the right kind.
fn undeclared_help(variable: &str) -> String {
    if variable == "python_full_version" {
        return "add it to the target in memorix.toml, e.g.  [pins] markers = { python_full_version = \"3.12.4\" }  (python_version = \"3.12\" is enough for a marker that tests no patch release)".into();
    }
    let example = example_value(variable);
    format!("add it to the target in memorix.toml, e.g.  [pins] markers = {{ {variable} = \"{example}\" }}")
}

/// A typical value of the marker variable `variable`.
fn example_value(variable: &str) -> String {
    match variable {
        "python_full_version" => "3.12.4",
        "python_version" => "3.12",
        "implementation_version" => "3.12.4",
        "sys_platform" => "linux",
        "platform_system" => "Linux",
        "platform_machine" => "x86_64",
        "os_name" => "posix",
        "implementation_name" | "platform_python_implementation" => "cpython",
        _ => "...",
    }
    .to_string()
}

/// The variables `tree` reads. The marker algebra turns `python_version` into
/// `python_full_version`, so the text tells which of the two the file wrote.
fn needed(tree: &MarkerTree, text: &str) -> BTreeSet<String> {
    fn walk(tree: &MarkerTree, out: &mut BTreeSet<String>) {
        let children: Vec<MarkerTree> = match tree.kind() {
            MarkerTreeKind::True | MarkerTreeKind::False => return,
            MarkerTreeKind::Version(m) => {
                out.insert(m.key().to_string());
                m.edges().map(|(_, t)| t).collect()
            }
            MarkerTreeKind::String(m) => {
                out.insert(m.key().to_string());
                m.children().map(|(_, t)| t).collect()
            }
            MarkerTreeKind::In(m) => {
                out.insert(m.key().to_string());
                m.children().map(|(_, t)| t).collect()
            }
            MarkerTreeKind::Contains(m) => {
                out.insert(m.key().to_string());
                m.children().map(|(_, t)| t).collect()
            }
            MarkerTreeKind::Extra(m) => {
                out.insert("extra".to_string());
                m.children().map(|(_, t)| t).collect()
            }
        };
        for child in &children {
            walk(child, out);
        }
    }
    let mut out = BTreeSet::new();
    walk(tree, &mut out);
    if out.contains("python_full_version") && !text.contains("python_full_version") {
        out.remove("python_full_version");
        out.insert("python_version".to_string());
    }
    out
}

/// Whether the pins carry different markers (so that a target would choose among them).
pub(crate) fn differ(pins: &[&Pin]) -> bool {
    pins.iter().any(|p| p.markers != pins[0].markers)
}

/// A target for `[pins] markers` that leaves one release of `pins`, from their own markers:
/// the variable that settles it (`sys_platform = "win32"`), then every other variable the
/// markers of `all` (every pin of the library) read, with an example value, so that the
/// declared target evaluates every marker it will meet.
pub(crate) fn settling_assignment(eco: Ecosystem, pins: &[&Pin], all: &[&Pin]) -> String {
    // Equalities first: `sys_platform == "linux"` names a value that makes a marker true.
    let mut pairs: Vec<(bool, String, String)> = Vec::new();
    let mut read: BTreeSet<String> = BTreeSet::new();
    let trees = |of: &[&Pin]| -> Vec<(String, MarkerTree)> {
        let parsed = of
            .iter()
            .filter_map(|p| p.markers.as_deref())
            .filter_map(|m| Some((m.to_string(), MarkerTree::from_str(m).ok()?)));
        parsed.collect()
    };
    for (text, tree) in trees(all) {
        read.extend(needed(&tree, &text));
    }
    for (_, tree) in trees(pins) {
        for expr in tree.to_dnf().into_iter().flatten() {
            match expr {
                MarkerExpression::String { key, operator, value } => {
                    pairs.push((operator == MarkerOperator::Equal, key.to_string(), value))
                }
                MarkerExpression::Version { key, specifier } => {
                    pairs.extend(version_pairs(&key, specifier.version()))
                }
                MarkerExpression::VersionIn { key, versions, .. } => {
                    pairs.extend(versions.iter().flat_map(|v| version_pairs(&key, v)))
                }
                MarkerExpression::Extra { name, .. } => pairs.push((false, "extra".into(), name.to_string())),
            }
        }
    }
    pairs.sort_by_key(|(equal, _, _)| !equal);
    let settles = |var: &str, value: &str| {
        let Ok(target) = Target::new(&BTreeMap::from([(var.to_string(), value.to_string())])) else {
            return false;
        };
        let mut admitted = Vec::new();
        for pin in pins {
            match pin.markers.as_deref().map_or(Ok(true), |m| target.check(m)) {
                Ok(true) => admitted.push(*pin),
                Ok(false) => {}
                Err(_) => return false,
            }
        }
        super::releases(eco, &admitted).len() == 1
    };
    let settling = pairs.iter().find(|(_, var, value)| settles(var, value)).or(pairs.first());
    let (var, value) = settling
        .map(|(_, var, value)| (var.clone(), value.clone()))
        .unwrap_or_else(|| ("sys_platform".into(), "linux".into()));
    let mut out = vec![format!("{var} = \"{value}\"")];
    // `python_version` settles what the file wrote as `python_full_version` at a minor boundary.
    let covered = |v: &str| v == var || (var == "python_version" && v == "python_full_version");
    for other in read.iter().filter(|v| !covered(v)) {
        let example = pairs
            .iter()
            .find(|(_, v, _)| v == other)
            .map_or_else(|| example_value(other), |(_, _, x)| x.clone());
        out.push(format!("{other} = \"{example}\""));
    }
    out.join(", ")
}

/// Assignments to try for a version bound: a Python version as `python_version = "X.Y"`
/// first (what projects usually declare), then the exact bound.
fn version_pairs(key: &MarkerValueVersion, bound: &Version) -> Vec<(bool, String, String)> {
    let mut out = Vec::new();
    if matches!(key, MarkerValueVersion::PythonFullVersion | MarkerValueVersion::PythonVersion) {
        let release = bound.release();
        let minor = release.get(1).copied().unwrap_or(0);
        out.push((false, "python_version".to_string(), format!("{}.{minor}", release[0])));
    }
    out.push((false, key.to_string(), bound.to_string()));
    out
}
