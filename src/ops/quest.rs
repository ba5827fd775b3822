//! `memorix quest list|show|search`: find views by their intent.

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use crate::model::IdPrefix;
pub use crate::store::records::Quest;

pub fn list(ctx: &Context) -> Result<Vec<Quest>> {
    Ok(ctx.store()?.records().all_quests()?)
}

pub fn show(ctx: &Context, id: &str) -> Result<Quest> {
    let prefix = IdPrefix::parse(id).ok_or_else(|| Error::BadId(id.to_string()))?;
    let mut found: Vec<Quest> = list(ctx)?.into_iter().filter(|q| prefix.matches(&q.id)).collect();
    match found.len() {
        1 => Ok(found.pop().expect("one")),
        0 => Err(Error::UnknownQuest { prefix: prefix.to_string() }),
        _ => Err(Error::AmbiguousId {
            prefix: prefix.to_string(),
            candidates: found.iter().map(|q| q.id.to_string()).collect(),
        }),
    }
}

#[derive(Debug, Serialize)]
pub struct Hit {
    pub score: u32,
    #[serde(flatten)]
    pub quest: Quest,
}

/// Quests ranked by how well `text` matches their intents (weight 3) and selected paths
/// (weight 1), per query word, case-insensitively; ties by id. Fresh quests rank before
/// stale ones with the same score, as an agent should prefer them.
pub fn search(ctx: &Context, text: &str) -> Result<Vec<Hit>> {
    let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    let mut hits: Vec<Hit> = list(ctx)?
        .into_iter()
        .filter_map(|quest| {
            let intents = quest.intents.join(" ").to_lowercase();
            let paths = quest
                .selection
                .iter()
                .flat_map(|s| s.select.iter())
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            let score: u32 = words
                .iter()
                .map(|w| {
                    3 * intents.matches(w.as_str()).count() as u32 + paths.matches(w.as_str()).count() as u32
                })
                .sum();
            (score > 0).then_some(Hit { score, quest })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then(a.quest.is_stale().cmp(&b.quest.is_stale()))
            .then(a.quest.id.cmp(&b.quest.id))
    });
    Ok(hits)
}
