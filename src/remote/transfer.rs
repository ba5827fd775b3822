//! Moving closures: push uploads what a remote lacks (objects, then merged quests, then refs
//! that fast-forward); substitution fetches what the store lacks, checks each object on
//! arrival and writes it through the store's atomic write path, leaves before what names them.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use super::error::{Error, Result};
use super::objects::{Decoded, Object, lock_roots, quest_key};
use super::{Download, MAX_BLOB, MAX_RECORD, Remote, Upload};
use crate::diagnostics::FromIo;
use crate::lock::Lockfile;
use crate::model::{EntryKind, Id, Kind, RemoteUrl};
use crate::progress::Progress;
use crate::store::objects::Tree;
use crate::store::records::{DerivationRecord, EnvironmentRecord, Quest};
use crate::store::{Store, Writer};

#[derive(Debug, Default, Serialize)]
pub struct PushReport {
    pub remote: String,
    /// Objects in the closure pushed.
    pub objects: usize,
    /// Objects uploaded (the remote lacked them); the others were already there.
    pub uploaded: usize,
    pub quests: QuestsPushed,
    pub refs: Vec<RefPushed>,
}

#[derive(Debug, Default, Serialize)]
pub struct QuestsPushed {
    /// The remote had no record of these.
    pub uploaded: usize,
    /// The remote's record gained projects, resolves or intents from ours.
    pub merged: usize,
    pub unchanged: usize,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RefOutcome {
    Created,
    FastForward,
    UpToDate,
    /// The remote's ref is not in our history: it moved there too, so it is left alone.
    Diverged,
}

#[derive(Debug, Serialize)]
pub struct RefPushed {
    pub kind: Kind,
    pub local: Id,
    pub remote: Option<Id>,
    pub outcome: RefOutcome,
}

fn ref_key(kind: Kind) -> String {
    format!("refs/{kind}/latest")
}

/// Uploads `objects` (in upload order) and merges `quests` into the remote's; with `refs`,
/// moves each remote ref that is absent or an ancestor of ours, after everything it names.
pub fn push(
    store: &Store,
    remote: &Remote,
    objects: &[Object],
    quests: &[Id],
    refs: bool,
    progress: &dyn Progress,
) -> Result<PushReport> {
    let mut report =
        PushReport { remote: remote.url.to_string(), objects: objects.len(), ..Default::default() };
    // One variant at a time, so a reader of the remote never meets a name before its object.
    let mut start = 0;
    while start < objects.len() {
        let same = |o: &Object| std::mem::discriminant(o) == std::mem::discriminant(&objects[start]);
        let end = start + objects[start..].iter().take_while(|o| same(o)).count();
        let items: Vec<(String, Object)> = objects[start..end].iter().map(|o| (o.key(), *o)).collect();
        let bar = progress.start("pushing", items.len() as u64);
        report.uploaded += remote.put_missing(&items, &*bar, |obj| read_checked(store, obj))?;
        drop(bar);
        start = end;
    }
    for id in quests {
        let Some(ours) = store.records().read_quest(id)? else { continue };
        // Merged into what the remote holds at the moment of the write (two pushes at once
        // both land: the update is conditional, and retried when the record moved).
        let mut outcome = QuestOutcome::Unchanged;
        remote.update(&quest_key(id), |current| {
            let Some(bytes) = current else {
                outcome = QuestOutcome::Uploaded;
                return Ok(Some(ours.to_text().into_bytes()));
            };
            let mut theirs = parse_quest(remote, id, bytes)?;
            let merged = theirs.merge(&ours);
            outcome = if merged { QuestOutcome::Merged } else { QuestOutcome::Unchanged };
            Ok(merged.then(|| theirs.to_text().into_bytes()))
        })?;
        match outcome {
            QuestOutcome::Uploaded => report.quests.uploaded += 1,
            QuestOutcome::Merged => report.quests.merged += 1,
            QuestOutcome::Unchanged => report.quests.unchanged += 1,
        }
    }
    if refs {
        for kind in Kind::ALL {
            let Some(tip) = store.records().latest(kind)? else { continue };
            let history: Vec<Id> = store.records().history(kind)?.iter().map(|g| g.id).collect();
            let key = ref_key(kind);
            let mut pushed = None;
            remote.update(&key, |current| {
                let theirs = current.map(|bytes| parse_ref(remote, &key, bytes)).transpose()?;
                let outcome = match theirs {
                    None => RefOutcome::Created,
                    Some(t) if t == tip.id => RefOutcome::UpToDate,
                    Some(t) if history.contains(&t) => RefOutcome::FastForward,
                    Some(_) => RefOutcome::Diverged,
                };
                let moves = matches!(outcome, RefOutcome::Created | RefOutcome::FastForward);
                pushed = Some(RefPushed { kind, local: tip.id, remote: theirs, outcome });
                Ok(moves.then(|| format!("{}\n", tip.id).into_bytes()))
            })?;
            report.refs.extend(pushed);
        }
    }
    Ok(report)
}

enum QuestOutcome {
    Uploaded,
    Merged,
    Unchanged,
}

/// A local object checked as a fetch would check it, so a damaged store never spreads its
/// damage: a blob is hashed as it streams from its file (and uploaded from the file), a
/// record read and decoded.
fn read_checked(store: &Store, obj: &Object) -> Result<Upload> {
    let path = obj.local_path(store);
    let corrupt = |reason: String| crate::store::Error::corrupt(obj.what(), &path, reason);
    if let Object::Blob(id) = obj {
        // A blob an ingest packed and the fill has not unpacked yet (checked as it is read).
        if std::fs::symlink_metadata(&path).is_err()
            && let Some(bytes) = store.objects().incoming_blob(id)?
        {
            return Ok(Upload::Bytes(bytes));
        }
        let size = std::fs::metadata(&path).map_err(Error::io("stat", &path))?.len();
        if size > MAX_BLOB {
            return Err(Error::BlobTooLarge { blob: *id, size, max: MAX_BLOB });
        }
        let actual = crate::store::objects::hash_object(&path).map_err(Error::io("read", &path))?;
        if actual != *id {
            return Err(corrupt(format!("its content hashes to {actual}")).into());
        }
        return Ok(Upload::File(path));
    }
    let (bytes, path) = match obj {
        // A tree may be packed.
        Object::Tree(id) => store.objects().tree_bytes(id)?,
        _ => (crate::store::fsutil::read_object(&path).map_err(Error::io("read", &path))?, path),
    };
    obj.check(&bytes).map_err(|reason| crate::store::Error::corrupt(obj.what(), &path, reason))?;
    Ok(Upload::Bytes(bytes))
}

fn parse_quest(remote: &Remote, id: &Id, bytes: &[u8]) -> Result<Quest> {
    let corrupt = |reason: String| Error::Corrupt {
        remote: remote.url.to_string(),
        object: format!("quest {id}"),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| corrupt(e.to_string()))?;
    Quest::from_text(text, id).map_err(corrupt)
}

fn parse_ref(remote: &Remote, key: &str, bytes: &[u8]) -> Result<Id> {
    let text = String::from_utf8_lossy(bytes);
    text.trim_end().parse().map_err(|_| Error::Corrupt {
        remote: remote.url.to_string(),
        object: key.to_string(),
        reason: format!("{text:?} is not an id"),
    })
}

/// The remotes missing objects are fetched from, tried in order, each opened on first use.
pub struct Substituters<'p> {
    urls: Vec<RemoteUrl>,
    opened: Vec<Option<Remote>>,
    offline: bool,
    progress: &'p dyn Progress,
    /// Substituters that could not be reached, and why (the next one was tried).
    unreachable: Vec<String>,
    /// The first such failure, for when no substituter could give what was needed.
    first_failure: Option<Error>,
}

/// What a substitution fetched, and what it could not.
#[derive(Debug, Default, Serialize)]
pub struct FetchReport {
    /// Objects fetched, checked and stored.
    pub fetched: usize,
    pub bytes: u64,
    /// Objects the store still lacks: no substituter had them (or `--offline`).
    pub unavailable: Vec<String>,
    #[serde(skip)]
    why_unavailable: String,
}

impl FetchReport {
    pub fn is_empty(&self) -> bool {
        self.fetched == 0 && self.unavailable.is_empty()
    }

    /// Why the objects the store still lacks were not fetched.
    pub fn why(&self) -> &str {
        &self.why_unavailable
    }
}

impl<'p> Substituters<'p> {
    pub fn new(urls: Vec<RemoteUrl>, offline: bool, progress: &'p dyn Progress) -> Substituters<'p> {
        let opened = urls.iter().map(|_| None).collect();
        Substituters { urls, opened, offline, progress, unreachable: Vec::new(), first_failure: None }
    }

    fn remote(&mut self, i: usize) -> Result<&Remote> {
        if self.opened[i].is_none() {
            self.opened[i] = Some(Remote::open(&self.urls[i], false)?);
        }
        Ok(self.opened[i].as_ref().expect("opened above"))
    }

    fn why_unavailable(&self) -> String {
        if self.offline {
            "--offline forbids fetching them: run without it where a substituter is reachable".to_string()
        } else if self.urls.is_empty() {
            "no substituter is configured: list the one a teammate's `memorix push` filled under [store] substituters in memorix.toml (or `memorix remote add` it)"
                .to_string()
        } else {
            let urls: Vec<String> = self.urls.iter().map(|u| u.to_string()).collect();
            let mut why = format!("no substituter has them (tried {})", urls.join(", "));
            if !self.unreachable.is_empty() {
                why.push_str(&format!("; unreachable: {}", self.unreachable.join("; ")));
            }
            why.push_str(": `memorix push` them from a machine that built this lock");
            why
        }
    }

    /// Whether an error of substituter `i` means it cannot be reached (then the next one is
    /// tried and the reason kept); anything else (a damaged object, a full disk) stops.
    fn skip_unreachable<T>(&mut self, i: usize, result: Result<T>) -> Result<Option<T>> {
        match result {
            Ok(v) => Ok(Some(v)),
            Err(e @ Error::Failed { .. }) => {
                let Error::Failed { message, .. } = &e else { unreachable!("matched above") };
                self.unreachable.push(format!("{} ({message})", self.urls[i]));
                self.first_failure.get_or_insert(e);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The first substituter that could not be reached, when one was skipped: the error to
    /// report when the rest could not give everything either (a network failure, exit 2).
    pub fn take_failure(&mut self) -> Option<Error> {
        self.first_failure.take()
    }

    /// Fetches `wanted` (streamed through `tmp`), trying each substituter in turn for what the
    /// ones before lacked; an unreachable one is skipped. Each object is checked before
    /// `arrived` sees it; a damaged one stops the fetch with an error naming it. Returns the
    /// objects no substituter had.
    fn fetch(
        &mut self,
        wanted: Vec<Object>,
        tmp: &Path,
        mut arrived: impl FnMut(Object, Download, Decoded) -> Result<()>,
    ) -> Result<Vec<Object>> {
        if self.offline {
            return Ok(wanted);
        }
        let mut pending = wanted;
        let mut done: HashSet<Object> = HashSet::new();
        for i in 0..self.urls.len() {
            if pending.is_empty() {
                break;
            }
            let opened = self.remote(i).map(|_| ());
            if self.skip_unreachable(i, opened)?.is_none() {
                continue;
            }
            let bar = self.progress.start("fetching", pending.len() as u64);
            let remote = self.opened[i].as_ref().expect("opened above");
            // Blobs stream to disk, records too; either is refused past its cap.
            let keys: Vec<(String, u64)> = pending
                .iter()
                .map(|o| (o.key(), if matches!(o, Object::Blob(_)) { MAX_BLOB } else { MAX_RECORD }))
                .collect();
            let fetched = remote.get_many(&keys, tmp, &*bar, |j, download| {
                let obj = pending[j];
                let corrupt = |reason| Error::Corrupt {
                    remote: remote.url.to_string(),
                    object: obj.to_string(),
                    reason,
                };
                let decoded = match obj {
                    Object::Blob(id) if download.sha256 == id => Decoded::Blob,
                    Object::Blob(_) => {
                        return Err(corrupt(format!("its content hashes to {}", download.sha256)));
                    }
                    _ => obj
                        .check(&download.bytes().map_err(Error::io("read", &download.path))?)
                        .map_err(corrupt)?,
                };
                done.insert(obj);
                arrived(obj, download, decoded)
            });
            drop(bar);
            let absent = match self.skip_unreachable(i, fetched)? {
                Some(absent) => absent.into_iter().map(|j| pending[j]).collect(),
                // Unreachable mid-way: what did not arrive is asked of the next one.
                None => pending.iter().copied().filter(|o| !done.contains(o)).collect(),
            };
            pending = absent;
        }
        Ok(pending)
    }

    /// The first substituter's copy of a quest record, checked; `None` when none has it.
    pub fn quest(&mut self, id: &Id) -> Result<Option<Quest>> {
        if self.offline {
            return Ok(None);
        }
        for i in 0..self.urls.len() {
            let got = self.remote(i).and_then(|r| r.get(&quest_key(id)));
            if let Some(Some(bytes)) = self.skip_unreachable(i, got)? {
                let remote = self.opened[i].as_ref().expect("opened above");
                return parse_quest(remote, id, &bytes).map(Some);
            }
        }
        Ok(None)
    }
}

/// Whether the store lacks anything `lock` needs. Trees in the store always have their whole
/// closure (children are written first), so the lock's roots tell.
pub fn lacks(store: &Store, lock: &Lockfile) -> bool {
    lock_roots(lock).iter().any(|o| !o.is_local(store))
}

/// Fetches what the store lacks of `lock`'s closure: its environment and derivation records,
/// the generations it names, each locator's trees and blobs. Blobs and generations are
/// written as they arrive; trees, derivations and the environment once everything they name
/// is in the store, so an interrupted fetch leaves only whole objects whose closures are
/// complete. One [`Writer::sync`] makes them durable before anything uses them.
pub fn fetch_lock(writer: &Writer, subs: &mut Substituters, lock: &Lockfile) -> Result<FetchReport> {
    let mut report = FetchReport::default();
    let held = fetch_closure(writer, subs, lock, &mut report)?;
    let mut unavailable = held.write(writer)?;
    if report.fetched > 0 {
        writer.sync()?;
    }
    unavailable.sort();
    report.unavailable = unavailable.iter().map(Object::to_string).collect();
    report.why_unavailable = subs.why_unavailable();
    Ok(report)
}

/// Fetched objects held back until what they name is stored, and what no remote had.
#[derive(Default)]
struct Held {
    trees: HashMap<Id, Tree>,
    derivations: BTreeMap<Id, DerivationRecord>,
    environments: Vec<EnvironmentRecord>,
    unavailable: Vec<Object>,
}

/// Fetches the closure wave by wave (each wave asks for the children of the last), storing
/// blobs and generations at once and holding back the rest.
fn fetch_closure(
    writer: &Writer,
    subs: &mut Substituters,
    lock: &Lockfile,
    report: &mut FetchReport,
) -> Result<Held> {
    let store = writer.store;
    let mut held = Held::default();
    let mut queued: HashSet<Object> = HashSet::new();
    let mut wave: Vec<Object> =
        lock_roots(lock).into_iter().filter(|o| !o.is_local(store) && queued.insert(*o)).collect();
    while !wave.is_empty() {
        wave.sort();
        let mut next = Vec::new();
        let mut want = |obj: Object, next: &mut Vec<Object>| {
            if !obj.is_local(store) && queued.insert(obj) {
                next.push(obj);
            }
        };
        let absent = subs.fetch(std::mem::take(&mut wave), &store.tmp_dir(), |obj, download, decoded| {
            report.fetched += 1;
            report.bytes += download.len;
            match decoded {
                Decoded::Blob => writer.objects().adopt_blob(&download.path, &obj.id(), download.len)?,
                Decoded::Generation(g) => writer.records().put_substituted_generation(&obj.id(), &g)?,
                Decoded::Tree(tree) => {
                    for e in tree.entries() {
                        let child = match e.kind {
                            EntryKind::Blob => Object::Blob(e.id),
                            EntryKind::Tree => Object::Tree(e.id),
                        };
                        want(child, &mut next);
                    }
                    held.trees.insert(obj.id(), tree);
                }
                Decoded::Derivation(record) => {
                    for (_, blob) in record.files() {
                        want(Object::Blob(blob), &mut next);
                    }
                    held.derivations.insert(obj.id(), record);
                }
                Decoded::Environment(record) => {
                    for (_, drv) in &record.mounts {
                        want(Object::Derivation(*drv), &mut next);
                    }
                    held.environments.push(record);
                }
            }
            Ok(())
        })?;
        held.unavailable.extend(absent);
        wave = next;
    }
    Ok(held)
}

impl Held {
    /// Writes children before parents: trees pass by pass as their entries are stored, then
    /// derivations whose blobs are all there, then environments whose derivations are. What
    /// cannot be written (something it names is missing) is returned as unavailable.
    fn write(mut self, writer: &Writer) -> Result<Vec<Object>> {
        let store = writer.store;
        loop {
            let ready: Vec<Id> = self
                .trees
                .iter()
                .filter(|(_, t)| {
                    t.entries().iter().all(|e| match e.kind {
                        EntryKind::Blob => store.objects().has_blob(&e.id),
                        EntryKind::Tree => store.objects().has_tree(&e.id),
                    })
                })
                .map(|(id, _)| *id)
                .collect();
            if ready.is_empty() {
                break;
            }
            for id in ready {
                writer.objects().put_tree(&self.trees.remove(&id).expect("ready trees are pending"))?;
            }
        }
        self.unavailable.extend(self.trees.keys().map(|id| Object::Tree(*id)));
        for (id, record) in self.derivations {
            if record.files().iter().all(|(_, b)| store.objects().has_blob(b)) {
                writer.records().put_derivation(&record)?;
            } else {
                self.unavailable.push(Object::Derivation(id));
            }
        }
        for record in self.environments {
            if record.mounts.iter().all(|(_, d)| store.records().has_derivation(d)) {
                writer.records().put_environment(&record)?;
            } else {
                self.unavailable.push(Object::Environment(record.id()));
            }
        }
        Ok(self.unavailable)
    }
}
