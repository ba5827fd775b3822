//! One function per user operation. Each takes typed inputs and returns a typed result that
//! the CLI renders (or a test inspects).

pub mod build;
pub mod cat;
pub mod edit;
pub mod explain;
pub mod gc;
pub mod graph;
pub mod history;
pub mod ingest;
pub mod init;
pub mod lock;
pub mod log;
pub mod ls;
pub mod profile;
pub mod project;
pub mod quest;
pub mod remote;
pub mod rm;
pub mod show;
pub mod status;
pub mod verify;
pub mod versions;

use serde::Serialize;

use crate::diagnostics::Result;
use crate::model::{Id, Kind};
use crate::store::Writer;
use crate::store::generation::{GenRef, Generation, GenerationMeta, VersionTag, now_rfc3339};

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

/// Writes the generation after `parent` with tree `root` (not yet durable, ref not moved).
pub(crate) fn stage_generation(
    writer: &Writer,
    kind: Kind,
    parent: Option<&GenRef>,
    root: Id,
    tags: Vec<VersionTag>,
    message: Option<String>,
) -> Result<GenRef> {
    let generation = Generation {
        kind,
        seq: parent.map_or(1, |p| p.generation.seq + 1),
        root,
        parent: parent.map(|p| p.id),
        tags,
        meta: GenerationMeta { message, time: now_rfc3339() },
    };
    let id = writer.put_generation(&generation)?;
    Ok(GenRef { id, generation })
}

/// Makes every staged object durable at once, then moves each ref and refreshes `latest/`.
/// The spare checkouts are filled while the sync runs: they are derived state, which readers
/// see only through the swap after the ref moved.
pub(crate) fn publish(writer: &Writer, staged: &[GenRef]) -> Result<()> {
    crate::fault::point("publish.staged");
    let (synced, swaps) = std::thread::scope(|s| {
        let sync = s.spawn(|| writer.sync());
        let swaps: Result<Vec<bool>> =
            staged.iter().map(|g| writer.stage_latest(g.generation.kind, &g.generation.root)).collect();
        (sync.join().expect("the sync thread does not panic"), swaps)
    });
    synced?;
    let swaps = swaps?;
    crate::fault::point("publish.synced");
    for g in staged {
        writer.set_ref(g.generation.kind, &g.id)?;
    }
    crate::fault::point("publish.ref");
    for (g, swap) in staged.iter().zip(swaps) {
        if swap {
            writer.swap_latest(g.generation.kind)?;
        }
        crate::fault::point("publish.latest");
        writer.update_version_index(g)?;
    }
    Ok(())
}

pub(crate) fn commit_generation(
    writer: &Writer,
    kind: Kind,
    parent: Option<&GenRef>,
    root: Id,
    tags: Vec<VersionTag>,
    message: Option<String>,
) -> Result<GenRef> {
    let staged = stage_generation(writer, kind, parent, root, tags, message)?;
    publish(writer, std::slice::from_ref(&staged))?;
    Ok(staged)
}

/// Brings every `latest/<kind>` up to its ref (after a crash between ref move and refresh);
/// a no-op when they agree.
pub(crate) fn heal_latest(writer: &Writer) -> Result<()> {
    for kind in Kind::ALL {
        if let Some(tip) = writer.store.latest(kind)? {
            writer.refresh_latest(kind, &tip.generation.root)?;
        }
    }
    Ok(())
}
