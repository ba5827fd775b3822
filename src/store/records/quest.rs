//! Quests: the grep-able record of why a view exists (book: design/quests.md#quest-records).
//! One per selection IR, so projects declaring the same selection share one quest; each project
//! keeps its own current resolve and freshness there. A reverse index from Store path prefixes
//! to quests lets an ingest mark exactly the affected quests stale, reading only those.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostics::FromIo;
use crate::model::{Id, Kind, Locator, Selector, StorePath, canonical};
use crate::store::error::{Error, Result};
use crate::store::objects::diff::Change;
use crate::store::{Store, Writer, fsutil};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuestKind {
    Derivation,
    Environment,
}

/// A mount's selection IR: the unresolved locators and the keys that shape them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mount: String,
    pub select: Vec<String>,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// One project's use of a quest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectUse {
    /// The project directory.
    pub dir: String,
    /// The mount (derivation quests) it serves.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mount: String,
    /// The view id of its current resolve.
    pub current: Id,
    pub resolves: u64,
    pub reads: u64,
    pub stale: bool,
    /// Which Store paths changed since the current resolve, old -> new blob.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_reasons: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resolve {
    pub id: Id,
    pub project: String,
    pub time: String,
}

/// `quests/<hex>.toml`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quest {
    pub id: Id,
    pub kind: QuestKind,
    /// Intent texts of the mounts (or projects) that declared this selection.
    pub intents: Vec<String>,
    /// A derivation quest's selection; an environment quest's mounts.
    pub selection: Vec<Selection>,
    #[serde(default)]
    pub projects: Vec<ProjectUse>,
    /// Every resolve, appended, never rewritten.
    #[serde(default)]
    pub history: Vec<Resolve>,
}

/// A quest's id: the hash of its canonical selection IR.
pub fn quest_id(kind: QuestKind, selection: &[Selection]) -> Id {
    #[derive(Serialize)]
    struct Hashed<'a> {
        kind: QuestKind,
        selection: &'a [Selection],
    }
    canonical::object_id("quest", &canonical::encode(&Hashed { kind, selection }))
}

impl Quest {
    pub fn project(&self, dir: &str, mount: &str) -> Option<&ProjectUse> {
        self.projects.iter().find(|p| p.dir == dir && p.mount == mount)
    }

    pub fn is_stale(&self) -> bool {
        self.projects.iter().any(|p| p.stale)
    }

    /// The quest file's text: a comment line, then TOML.
    pub fn to_text(&self) -> String {
        let text = toml::to_string(self).expect("a quest serializes");
        let kind = self.kind.as_str();
        format!("# memorix quest ({kind}): why this view exists and whether it is fresh.\n{text}")
    }

    /// Parses a quest file's text and checks it is the quest `id` names: its id field, and
    /// the hash of its selection (so a quest from a remote cannot pose as another).
    pub fn from_text(text: &str, id: &Id) -> std::result::Result<Quest, String> {
        let quest: Quest = toml::from_str(text).map_err(|e| e.message().to_string())?;
        if quest.id != *id {
            return Err("its id does not match its file name".into());
        }
        if quest_id(quest.kind, &quest.selection) != *id {
            return Err("its selection does not hash to its id".into());
        }
        Ok(quest)
    }

    /// Unites another store's record of this quest with this one, so sharing a quest never
    /// loses a project's use or a resolve: intents and project uses of both (a use both record
    /// keeps the side with more resolves, this one on a tie), and the history of both in time
    /// order without duplicates. True when this record changed.
    pub fn merge(&mut self, other: &Quest) -> bool {
        let before = self.clone();
        for intent in &other.intents {
            if !self.intents.contains(intent) {
                self.intents.push(intent.clone());
            }
        }
        for theirs in &other.projects {
            match self.projects.iter_mut().find(|p| p.dir == theirs.dir && p.mount == theirs.mount) {
                Some(ours) if ours.resolves < theirs.resolves => *ours = theirs.clone(),
                Some(_) => {}
                None => self.projects.push(theirs.clone()),
            }
        }
        for r in &other.history {
            if !self.history.contains(r) {
                self.history.push(r.clone());
            }
        }
        // Stable: resolves recorded at the same second keep their order.
        self.history.sort_by(|a, b| a.time.cmp(&b.time));
        *self != before
    }
}

/// One resolve to record on a quest.
pub struct ResolveRecord<'a> {
    pub kind: QuestKind,
    pub selection: Vec<Selection>,
    pub intent: Option<&'a str>,
    /// The project directory (see [`project_key`]).
    pub dir: &'a str,
    /// The mount, for derivation quests; empty for environment quests.
    pub mount: &'a str,
    /// The view id resolved.
    pub current: Id,
    pub time: &'a str,
}

/// How many quest files an operation read and wrote (bounded by the affected quests).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct QuestIo {
    pub read: usize,
    pub written: usize,
    pub marked_stale: usize,
}

impl Store {
    pub(super) fn quests_dir(&self) -> PathBuf {
        self.root().join("quests")
    }

    pub(crate) fn quest_path(&self, id: &Id) -> PathBuf {
        self.quests_dir().join(format!("{}.toml", id.hex()))
    }

    pub(super) fn read_quest(&self, id: &Id) -> Result<Option<Quest>> {
        let path = self.quest_path(id);
        let text = match fsutil::read_text(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", &path)(e)),
        };
        let quest: Quest =
            toml::from_str(&text).map_err(|e| Error::corrupt("quest", &path, e.message().to_string()))?;
        if quest.id != *id {
            return Err(Error::corrupt("quest", &path, "its id does not match its file name"));
        }
        Ok(Some(quest))
    }

    /// Every quest in the store, sorted by id.
    pub(super) fn all_quests(&self) -> Result<Vec<Quest>> {
        let dir = self.quests_dir();
        let mut ids: Vec<Id> = match fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".toml").and_then(Id::from_hex))
                .collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io("read", &dir)(e)),
        };
        ids.sort();
        ids.iter().filter_map(|id| self.read_quest(id).transpose()).collect()
    }

    /// `index/reverse/<kind>/<hash of prefix>`: the quests that depend on a Store path prefix.
    fn reverse_path(&self, kind: Kind, prefix: &StorePath) -> PathBuf {
        let digest = hex::encode(Sha256::digest(prefix.as_str().as_bytes()));
        self.root().join("index/reverse").join(kind.as_str()).join(&digest[..32])
    }

    fn reverse_entries(&self, kind: Kind, prefix: &StorePath) -> BTreeSet<Id> {
        fsutil::read_text(&self.reverse_path(kind, prefix))
            .map(|t| t.lines().filter_map(|l| l.parse().ok()).collect())
            .unwrap_or_default()
    }
}

impl Writer<'_> {
    pub(crate) fn write_quest(&self, quest: &Quest) -> Result<()> {
        let text = quest.to_text();
        fsutil::create_dir(&self.store.quests_dir())?;
        Ok(fsutil::write_atomic(&self.store.tmp_dir(), &self.store.quest_path(&quest.id), text.as_bytes())?)
    }

    /// Records a resolve of a selection for one project use as its current view: appended to
    /// the quest's history when it differs, freshness reset. Returns the quest id.
    pub(super) fn record_resolve(&self, r: ResolveRecord) -> Result<Id> {
        let ResolveRecord { kind, selection, intent, dir, mount, current, time } = r;
        let id = quest_id(kind, &selection);
        let mut quest = self.store.read_quest(&id)?.unwrap_or_else(|| Quest {
            id,
            kind,
            intents: Vec::new(),
            selection: selection.clone(),
            projects: Vec::new(),
            history: Vec::new(),
        });
        if let Some(intent) = intent.filter(|i| !quest.intents.iter().any(|x| x == i)) {
            quest.intents.push(intent.to_string());
        }
        let before = quest.clone();
        match quest.projects.iter_mut().find(|p| p.dir == dir && p.mount == mount) {
            Some(p) if p.current == current && !p.stale => {}
            Some(p) => {
                p.current = current;
                p.resolves += 1;
                p.stale = false;
                p.stale_reasons.clear();
            }
            None => quest.projects.push(ProjectUse {
                dir: dir.to_string(),
                mount: mount.to_string(),
                current,
                resolves: 1,
                reads: 0,
                stale: false,
                stale_reasons: Vec::new(),
            }),
        }
        if quest.history.last().is_none_or(|h| h.id != current || h.project != dir) {
            quest.history.push(Resolve { id: current, project: dir.to_string(), time: time.to_string() });
        }
        if quest != before {
            self.write_quest(&quest)?;
        }
        Ok(id)
    }

    /// Counts a read on a quest's use by (`dir`, `mount`) when its current resolve is `current`.
    pub(super) fn count_read(&self, id: &Id, dir: &str, mount: &str, current: &Id) -> Result<()> {
        let Some(mut quest) = self.store.read_quest(id)? else { return Ok(()) };
        let Some(p) =
            quest.projects.iter_mut().find(|p| p.dir == dir && p.mount == mount && p.current == *current)
        else {
            return Ok(());
        };
        p.reads += 1;
        self.write_quest(&quest)
    }

    /// Registers a quest under each Store path its moving locators read.
    pub(super) fn index_quest(&self, quest: &Id, select: &[Locator]) -> Result<()> {
        for loc in select.iter().filter(|l| moves(l)) {
            let path = self.store.reverse_path(loc.kind, &loc.path);
            let mut entries = self.store.reverse_entries(loc.kind, &loc.path);
            if entries.insert(*quest) {
                fsutil::create_dir(path.parent().expect("index/reverse/<kind>"))?;
                let text: String = entries.iter().map(|i| format!("{i}\n")).collect();
                fsutil::write_atomic(&self.store.tmp_dir(), &path, text.as_bytes())?;
            }
        }
        Ok(())
    }

    /// Marks stale the quests whose current resolve reads one of `changes` (paths in `kind`,
    /// plus version-tagged `tagged` paths). Reads only the quests the reverse index names for
    /// the changed paths' prefixes.
    pub(super) fn mark_stale(&self, kind: Kind, changes: &[Change], tagged: &[StorePath]) -> Result<QuestIo> {
        let mut io = QuestIo::default();
        if !self.store.reverse_path(kind, &StorePath::root()).parent().is_some_and(Path::is_dir) {
            return Ok(io); // no quest reads this kind
        }
        let changed = changes
            .iter()
            .map(|c| (c.path.clone(), describe(kind, c)))
            .chain(tagged.iter().map(|p| (p.clone(), format!("{kind}/{p}: new version"))));
        // Many changed paths share prefixes: each prefix's index file is read once.
        let mut by_prefix: BTreeMap<StorePath, Vec<usize>> = BTreeMap::new();
        let changed: Vec<(StorePath, String)> = changed.collect();
        for (i, (path, _)) in changed.iter().enumerate() {
            for prefix in prefixes(path) {
                by_prefix.entry(prefix).or_default().push(i);
            }
        }
        let mut hit: BTreeMap<Id, BTreeSet<usize>> = BTreeMap::new();
        for (prefix, paths) in by_prefix {
            for quest in self.store.reverse_entries(kind, &prefix) {
                hit.entry(quest).or_default().extend(paths.iter().copied());
            }
        }
        let reasons: BTreeMap<Id, Vec<(StorePath, String)>> = hit
            .into_iter()
            .map(|(quest, paths)| (quest, paths.into_iter().map(|i| changed[i].clone()).collect()))
            .collect();
        for (id, hits) in reasons {
            let Some(mut quest) = self.store.read_quest(&id)? else { continue };
            io.read += 1;
            let affected: Vec<String> = hits
                .iter()
                .filter(|(path, _)| quest.selection.iter().any(|s| depends_on(s, kind, path)))
                .map(|(_, r)| r.clone())
                .collect();
            if affected.is_empty() {
                continue;
            }
            for p in &mut quest.projects {
                if !p.stale {
                    io.marked_stale += 1;
                }
                p.stale = true;
                for r in &affected {
                    if !p.stale_reasons.contains(r) {
                        p.stale_reasons.push(r.clone());
                    }
                }
            }
            self.write_quest(&quest)?;
            io.written += 1;
        }
        Ok(io)
    }
}

/// Locators that follow the Store: `@latest` (or none) and `@pin`. `@gN`, hashes and `@v`
/// never go stale.
fn moves(loc: &Locator) -> bool {
    matches!(loc.selector, None | Some(Selector::Latest) | Some(Selector::Pin))
}

/// Whether a selection's resolve reads Store path `path` of `kind` (include/exclude applied).
fn depends_on(s: &Selection, kind: Kind, path: &StorePath) -> bool {
    s.select.iter().filter_map(|l| Locator::parse(l).ok()).filter(|l| l.kind == kind && moves(l)).any(|l| {
        if !path.starts_with(&l.path) {
            return false;
        }
        if l.subtree || path != &l.path {
            let rel = &path.as_str()[l.path.as_str().len()..].trim_start_matches('/');
            let keep = |globs: &[String]| globs.iter().any(|g| glob_match(g, rel));
            (s.include.is_empty() || keep(&s.include) || rel.is_empty()) && !keep(&s.exclude)
        } else {
            true
        }
    })
}

fn glob_match(glob: &str, path: &str) -> bool {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(path))
}

/// `a/b/c` -> `""`, `a`, `a/b`, `a/b/c`
fn prefixes(path: &StorePath) -> Vec<StorePath> {
    let mut out = vec![StorePath::root()];
    let mut acc = StorePath::root();
    for name in path.names() {
        acc = acc.join(&name);
        out.push(acc.clone());
    }
    out
}

fn describe(kind: Kind, c: &Change) -> String {
    let short = |i: &Option<Id>| i.map(|i| i.short()).unwrap_or_else(|| "-".into());
    format!("{kind}/{}: {} -> {}", c.path, short(&c.old), short(&c.new))
}

impl QuestKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QuestKind::Derivation => "derivation",
            QuestKind::Environment => "environment",
        }
    }
}

/// A project's directory as quests name it.
pub fn project_key(dir: &Path) -> String {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quest(projects: &[(&str, u64)], history: &[(&str, &str)]) -> Quest {
        let selection = vec![Selection {
            mount: String::new(),
            select: vec!["rules/python/".into()],
            include: vec![],
            exclude: vec![],
            match_policy: None,
            library: None,
            version: None,
        }];
        Quest {
            id: quest_id(QuestKind::Derivation, &selection),
            kind: QuestKind::Derivation,
            intents: vec![format!("from {}", projects[0].0)],
            selection,
            projects: projects
                .iter()
                .map(|(dir, resolves)| ProjectUse {
                    dir: dir.to_string(),
                    mount: "python".into(),
                    current: Id::of_bytes(dir.as_bytes()),
                    resolves: *resolves,
                    reads: 0,
                    stale: false,
                    stale_reasons: vec![],
                })
                .collect(),
            history: history
                .iter()
                .map(|(p, t)| Resolve {
                    id: Id::of_bytes(p.as_bytes()),
                    project: p.to_string(),
                    time: t.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn merging_two_stores_records_keeps_everything_once() {
        let mut ours =
            quest(&[("/a", 1), ("/shared", 1)], &[("/a", "2026-01-02"), ("/shared", "2026-01-01")]);
        let theirs = quest(&[("/b", 2), ("/shared", 3)], &[("/b", "2026-01-03"), ("/shared", "2026-01-01")]);
        assert!(ours.merge(&theirs));
        let dirs: Vec<(&str, u64)> = ours.projects.iter().map(|p| (p.dir.as_str(), p.resolves)).collect();
        assert_eq!(dirs, [("/a", 1), ("/shared", 3), ("/b", 2)]);
        let times: Vec<&str> = ours.history.iter().map(|r| r.time.as_str()).collect();
        assert_eq!(times, ["2026-01-01", "2026-01-02", "2026-01-03"]);
        assert_eq!(ours.intents, ["from /a", "from /b"]);
        assert!(!ours.clone().merge(&theirs), "merging again changes nothing");
        assert_eq!(Quest::from_text(&ours.to_text(), &ours.id).unwrap(), ours);
        let mut forged = ours.clone();
        forged.selection[0].select.push("rules/other/".into());
        assert!(Quest::from_text(&forged.to_text(), &ours.id).unwrap_err().contains("selection"));
    }
}
