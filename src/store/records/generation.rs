//! Generations: one state of one typed tree, linked to its parent, plus the refs and the
//! per-store seq index.

use std::fs;
use std::io;

use serde::{Deserialize, Serialize};

use crate::diagnostics::FromIo;
use crate::model::{Id, IdPrefix, Kind, Selector, StorePath, canonical};
use crate::store::error::{Error, Result};
use crate::store::{Store, Writer, fsutil};

/// A version label on a subtree (`--version`), kept in the generation's hashed part.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionTag {
    pub library: String,
    pub version: String,
    pub path: StorePath,
    pub tree: Id,
}

/// Unhashed facts about how a generation was made.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenerationMeta {
    pub message: Option<String>,
    /// RFC 3339, UTC.
    pub time: String,
}

#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Generation {
    pub kind: Kind,
    pub seq: u64,
    pub root: Id,
    pub parent: Option<Id>,
    pub tags: Vec<VersionTag>,
    pub meta: GenerationMeta,
}

/// The part of a generation its id covers: no message, no time.
#[derive(Serialize)]
struct Hashed<'a> {
    kind: Kind,
    seq: u64,
    root: &'a Id,
    parent: &'a Option<Id>,
    tags: &'a [VersionTag],
}

impl Generation {
    pub fn id(&self) -> Id {
        let hashed = Hashed {
            kind: self.kind,
            seq: self.seq,
            root: &self.root,
            parent: &self.parent,
            tags: &self.tags,
        };
        canonical::object_id("generation", &canonical::encode(&hashed))
    }

    /// Decodes a stored generation and checks it is canonical and is the object `id` names.
    pub fn decode(bytes: &[u8], id: &Id) -> std::result::Result<Generation, String> {
        let generation: Generation =
            serde_json::from_slice(bytes).map_err(|e| format!("not a generation object: {e}"))?;
        if canonical::encode(&generation) != bytes {
            return Err("not in canonical form".into());
        }
        if generation.id() != *id {
            return Err(format!("content hashes to {}, not to its name", generation.id()));
        }
        if generation.seq == 0 {
            return Err("seq 0 (generations are numbered from 1)".into());
        }
        Ok(generation)
    }
}

/// A generation with its id.
#[derive(Clone, Debug)]
pub struct GenRef {
    pub id: Id,
    pub generation: Generation,
}

impl Store {
    pub(super) fn read_generation(&self, kind: Kind, id: &Id) -> Result<Generation> {
        let path = self.generation_path(kind, id);
        let bytes =
            fsutil::read_object(&path).map_err(|e| fsutil::object_error("generation", id, &path, e))?;
        let generation =
            Generation::decode(&bytes, id).map_err(|r| Error::corrupt("generation", &path, r))?;
        if generation.kind != kind {
            return Err(Error::corrupt(
                "generation",
                &path,
                format!("kind {} stored under {kind}", generation.kind),
            ));
        }
        Ok(generation)
    }

    /// The generation `refs/<kind>/latest` names, if the kind has any.
    pub(in crate::store) fn latest(&self, kind: Kind) -> Result<Option<GenRef>> {
        self.read_pointer(kind, &self.ref_path(kind), "ref")
    }

    /// Generation number `seq` of `kind` in this store: only a generation a ref has reached
    /// (the tip, or one of its ancestors). An index entry names it once the ref moved past it;
    /// where a crash left the entry missing or stale, the chain is walked instead.
    pub(super) fn generation_by_seq(&self, kind: Kind, seq: u64) -> Result<Option<GenRef>> {
        let Some(tip) = self.latest(kind)? else { return Ok(None) };
        if seq >= tip.generation.seq {
            return Ok((seq == tip.generation.seq).then_some(tip));
        }
        if let Some(entry) =
            self.read_pointer(kind, &self.index_path(kind, seq), "index entry").ok().flatten()
            && entry.generation.seq == seq
        {
            return Ok(Some(entry));
        }
        let found = self.walk_history(kind)?.find(|g| !g.as_ref().is_ok_and(|g| g.generation.seq != seq));
        found.transpose()
    }

    /// Opens the generation a one-line file (a ref, an index entry) names.
    fn read_pointer(&self, kind: Kind, path: &std::path::Path, what: &'static str) -> Result<Option<GenRef>> {
        let text = match fsutil::read_text(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", path)(e)),
        };
        let id = parse_id_line(&text)
            .ok_or_else(|| Error::corrupt(what, path, format!("{text:?} is not an id")))?;
        let generation = self.read_generation(kind, &id)?;
        Ok(Some(GenRef { id, generation }))
    }

    /// Every generation id of `kind` whose hex starts with `prefix`.
    pub(super) fn generations_matching(&self, kind: Kind, prefix: &IdPrefix) -> Result<Vec<Id>> {
        let dir = self.generations_dir(kind);
        let mut out = Vec::new();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(Error::io("read", &dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(Error::io("read", &dir))?;
            let name = entry.file_name();
            let Some(hex) = name.to_str().and_then(|n| n.strip_suffix(".json")) else { continue };
            if hex.starts_with(prefix.as_hex())
                && let Some(id) = Id::from_hex(hex)
            {
                out.push(id);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Opens the generation a selector names (`@latest`, `@gN`, a hash prefix).
    pub(super) fn select_generation(&self, kind: Kind, selector: Option<&Selector>) -> Result<GenRef> {
        match selector {
            None | Some(Selector::Latest) => self.latest(kind)?.ok_or(Error::EmptyKind { kind }),
            Some(Selector::Generation(n)) => self
                .generation_by_seq(kind, *n)?
                .ok_or_else(|| Error::NoSuchGeneration { kind, selector: format!("g{n}") }),
            Some(Selector::Hash(prefix)) => {
                let ids = self.generations_matching(kind, prefix)?;
                match ids.as_slice() {
                    [] => Err(Error::NoSuchGeneration { kind, selector: prefix.to_string() }),
                    [id] => Ok(GenRef { id: *id, generation: self.read_generation(kind, id)? }),
                    many => Err(Error::AmbiguousId {
                        prefix: prefix.to_string(),
                        candidates: many.iter().map(|i| i.to_string()).collect(),
                    }),
                }
            }
            Some(sel @ (Selector::Version(_) | Selector::Pin)) => {
                Err(Error::NotAGeneration { selector: sel.to_string() })
            }
        }
    }

    /// The generation chain of `kind`, newest first.
    pub(in crate::store) fn history(&self, kind: Kind) -> Result<Vec<GenRef>> {
        self.walk_history(kind)?.collect()
    }

    /// The generation chain of `kind`, newest first, each generation read only when the walk
    /// reaches it: a command that shows the newest few reads no more.
    pub(super) fn walk_history(&self, kind: Kind) -> Result<History<'_>> {
        Ok(History { store: self, kind, next: self.latest(kind)?.map(Ok) })
    }
}

/// A walk down a kind's generation chain ([`Store::walk_history`]).
pub struct History<'s> {
    store: &'s Store,
    kind: Kind,
    /// The next generation: read already (the tip), or only named by its child.
    next: Option<std::result::Result<GenRef, Id>>,
}

impl Iterator for History<'_> {
    type Item = Result<GenRef>;

    fn next(&mut self) -> Option<Result<GenRef>> {
        let g = match self.next.take()? {
            Ok(g) => g,
            Err(id) => match self.store.read_generation(self.kind, &id) {
                Ok(generation) => GenRef { id, generation },
                Err(e) => return Some(Err(e)),
            },
        };
        self.next = g.generation.parent.map(Err);
        Some(Ok(g))
    }
}

impl Writer<'_> {
    /// Writes a generation object (not yet durable, ref not moved).
    pub(super) fn put_generation(&self, generation: &Generation) -> Result<Id> {
        let id = generation.id();
        let store = self.store;
        let tmp = store.tmp_dir();
        let path = store.generation_path(generation.kind, &id);
        fsutil::write_atomic_mode(&tmp, &path, &canonical::encode(generation), 0o444)?;
        self.mark_written(&path);
        Ok(id)
    }

    /// Names a committed generation by its seq (`@gN`): written only after the ref moved, so
    /// `@gN` never names content a failed or interrupted command staged.
    fn index_generation(&self, g: &GenRef) -> Result<()> {
        let index = self.store.index_path(g.generation.kind, g.generation.seq);
        Ok(fsutil::write_atomic(&self.store.tmp_dir(), &index, format!("{}\n", g.id).as_bytes())?)
    }

    /// Writes a generation fetched from another store, without a seq index entry: its seq
    /// numbers that store's history, not this one's (so `@gN` here never names it).
    pub(super) fn put_substituted_generation(&self, id: &Id, generation: &Generation) -> Result<()> {
        let path = self.store.generation_path(generation.kind, id);
        fsutil::create_dir(path.parent().expect("generations live in a directory"))?;
        Ok(fsutil::write_atomic_mode(&self.store.tmp_dir(), &path, &canonical::encode(generation), 0o444)?)
    }

    /// Moves `refs/<kind>/latest` to `id`: call after [`Writer::sync`] so the ref never names
    /// an object that is not durable.
    pub(super) fn set_ref(&self, kind: Kind, id: &Id) -> Result<()> {
        let path = self.store.ref_path(kind);
        let dir = path.parent().expect("refs live in a directory");
        fsutil::create_dir(dir)?;
        fsutil::write_atomic(&self.store.tmp_dir(), &path, format!("{id}\n").as_bytes())?;
        Ok(fsutil::sync_dir(dir)?)
    }
}

/// A generation as commands report it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GenSummary {
    pub kind: Kind,
    pub seq: u64,
    pub id: Id,
    pub root: Id,
    pub parent: Option<Id>,
    pub time: String,
    pub message: Option<String>,
    /// Version labels this generation added.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<VersionTag>,
}

impl GenSummary {
    pub fn new(id: &Id, g: &Generation) -> GenSummary {
        GenSummary {
            kind: g.kind,
            seq: g.seq,
            id: *id,
            root: g.root,
            parent: g.parent,
            time: g.meta.time.clone(),
            message: g.meta.message.clone(),
            tags: g.tags.clone(),
        }
    }
}

/// The generation to record after `parent` (none for a kind's first).
pub struct NextGeneration<'a> {
    pub kind: Kind,
    pub parent: Option<&'a GenRef>,
    pub root: Id,
    pub tags: Vec<VersionTag>,
    pub message: Option<String>,
}

impl Writer<'_> {
    /// Writes the next generation (not yet durable, ref not moved).
    pub(super) fn stage_generation(&self, next: NextGeneration) -> Result<GenRef> {
        let NextGeneration { kind, parent, root, tags, message } = next;
        let generation = Generation {
            kind,
            seq: parent.map_or(1, |p| p.generation.seq + 1),
            root,
            parent: parent.map(|p| p.id),
            tags,
            meta: GenerationMeta { message, time: now_rfc3339() },
        };
        let id = self.put_generation(&generation)?;
        Ok(GenRef { id, generation })
    }

    /// Makes every staged object durable at once, then moves each ref and refreshes `latest/`.
    /// The spare checkouts are filled while the sync runs: they are derived state, which readers
    /// see only through the swap after the ref moved. A write that packed its blobs leaves
    /// `latest/` showing the previous tip: the detached fill unpacks them and brings it up
    /// (book: design/store.md#latest).
    pub(super) fn publish(&self, staged: &[GenRef]) -> Result<()> {
        crate::fault::point("publish.staged");
        let deferred = self.packed_blobs.load(std::sync::atomic::Ordering::Relaxed);
        if deferred {
            self.spare_behind.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let (synced, swaps) = std::thread::scope(|s| {
            let sync = s.spawn(|| self.sync());
            let swaps: Result<Vec<bool>> = staged
                .iter()
                .map(|g| match deferred {
                    true => Ok(false),
                    false => self.stage_latest(g.generation.kind, &g.generation.root),
                })
                .collect();
            (sync.join().expect("the sync thread does not panic"), swaps)
        });
        synced?;
        let swaps = swaps?;
        crate::fault::point("publish.synced");
        for g in staged {
            self.set_ref(g.generation.kind, &g.id)?;
        }
        crate::fault::point("publish.ref");
        for g in staged {
            self.index_generation(g)?;
        }
        for (g, swap) in staged.iter().zip(swaps) {
            if swap {
                self.swap_latest(g.generation.kind)?;
            }
            crate::fault::point("publish.latest");
            self.update_version_index(g)?;
        }
        Ok(())
    }

    /// Stages the next generation and publishes it at once.
    pub(super) fn commit_generation(&self, next: NextGeneration) -> Result<GenRef> {
        let staged = self.stage_generation(next)?;
        self.publish(std::slice::from_ref(&staged))?;
        Ok(staged)
    }

    /// Brings every `latest/<kind>` and the seq index up to its ref (after a crash between the
    /// ref's move and their refresh); a no-op when they agree.
    pub(in crate::store) fn heal_latest(&self) -> Result<()> {
        for kind in Kind::ALL {
            if let Some(tip) = self.store.latest(kind)? {
                self.refresh_latest(kind, &tip.generation.root)?;
                self.heal_index(&tip)?;
            }
        }
        Ok(())
    }

    /// Writes the index entries the chain below `tip` lacks, newest first, down to the first
    /// that is right (every older one was written before it).
    fn heal_index(&self, tip: &GenRef) -> Result<()> {
        let mut next = Some(tip.clone());
        while let Some(g) = next {
            let path = self.store.index_path(g.generation.kind, g.generation.seq);
            if fsutil::read_text(&path).ok().and_then(|t| parse_id_line(&t)) == Some(g.id) {
                break;
            }
            self.index_generation(&g)?;
            next = match g.generation.parent {
                Some(p) => {
                    Some(GenRef { id: p, generation: self.store.read_generation(g.generation.kind, &p)? })
                }
                None => None,
            };
        }
        Ok(())
    }
}

fn parse_id_line(text: &str) -> Option<Id> {
    text.strip_suffix('\n').unwrap_or(text).parse().ok()
}

/// Now as RFC 3339 UTC; `SOURCE_DATE_EPOCH` fixes it for reproducible output.
pub fn now_rfc3339() -> String {
    let now = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(|secs| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .unwrap_or_else(std::time::SystemTime::now);
    humantime::format_rfc3339_seconds(now).to_string()
}
