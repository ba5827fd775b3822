//! `memorix show ID`: any object by a unique id prefix.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diagnostics::{Error, Result};
use crate::model::{EntryKind, Id, IdPrefix, Kind};
use crate::store::Store;
use crate::store::derivation::DerivationRecord;
use crate::store::environment::EnvironmentRecord;
use crate::store::generation::Generation;

#[derive(Debug, Serialize)]
pub struct ShownEntry {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    pub id: Id,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Shown {
    Blob {
        id: Id,
        size: u64,
        #[serde(skip)]
        path: PathBuf,
    },
    Tree {
        id: Id,
        entries: Vec<ShownEntry>,
    },
    Generation {
        id: Id,
        #[serde(flatten)]
        generation: Generation,
    },
    Derivation {
        id: Id,
        #[serde(flatten)]
        record: DerivationRecord,
    },
    Environment {
        id: Id,
        #[serde(flatten)]
        record: EnvironmentRecord,
    },
}

enum Candidate {
    Blob(Id),
    Tree(Id),
    Generation(Kind, Id),
    Derivation(Id),
    Environment(Id),
}

impl Candidate {
    fn id(&self) -> Id {
        match self {
            Candidate::Blob(id)
            | Candidate::Tree(id)
            | Candidate::Generation(_, id)
            | Candidate::Derivation(id)
            | Candidate::Environment(id) => *id,
        }
    }
}

pub fn show(store_root: &Path, id_text: &str) -> Result<Shown> {
    let prefix = IdPrefix::parse(id_text).ok_or_else(|| Error::BadId(id_text.to_string()))?;
    let store = Store::open(store_root)?;
    let mut found = Vec::new();
    let fan = &prefix.as_hex()[..2];
    for id in ids_in(&store.root().join("blobs").join(fan), &prefix, "")? {
        found.push(Candidate::Blob(id));
    }
    for id in ids_in(&store.root().join("trees").join(fan), &prefix, ".json")? {
        found.push(Candidate::Tree(id));
    }
    for id in ids_in(&store.root().join("derivations").join(fan), &prefix, "")? {
        found.push(Candidate::Derivation(id));
    }
    for id in ids_in(&store.root().join("environments").join(fan), &prefix, "")? {
        found.push(Candidate::Environment(id));
    }
    for kind in Kind::ALL {
        for id in store.generations_matching(kind, &prefix)? {
            found.push(Candidate::Generation(kind, id));
        }
    }
    let one = match found.len() {
        0 => return Err(Error::UnknownId { prefix: prefix.to_string() }),
        1 => found.pop().expect("one"),
        _ => {
            let mut candidates: Vec<String> = found.iter().map(|c| c.id().to_string()).collect();
            candidates.sort();
            return Err(Error::AmbiguousId { prefix: prefix.to_string(), candidates });
        }
    };
    Ok(match one {
        Candidate::Blob(id) => {
            let path = store.blob_path(&id);
            let size = fs::metadata(&path).map_err(Error::io("stat", &path))?.len();
            Shown::Blob { id, size, path }
        }
        Candidate::Tree(id) => {
            let entries = store
                .read_tree(&id)?
                .entries()
                .iter()
                .map(|e| ShownEntry { name: e.name.to_string(), kind: e.kind, id: e.id })
                .collect();
            Shown::Tree { id, entries }
        }
        Candidate::Generation(kind, id) => {
            Shown::Generation { id, generation: store.read_generation(kind, &id)? }
        }
        Candidate::Derivation(id) => Shown::Derivation { id, record: store.read_derivation(&id)? },
        Candidate::Environment(id) => Shown::Environment { id, record: store.read_environment(&id)? },
    })
}

fn ids_in(dir: &Path, prefix: &IdPrefix, suffix: &str) -> Result<Vec<Id>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", dir)(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(Error::io("read", dir))?;
        let name = entry.file_name();
        let Some(hex) = name.to_str().and_then(|n| n.strip_suffix(suffix)) else { continue };
        if hex.starts_with(prefix.as_hex())
            && let Some(id) = Id::from_hex(hex)
        {
            out.push(id);
        }
    }
    Ok(out)
}
