//! `memorix skill [--install]`: the agent skill document that teaches an agent the CLI.

use std::path::{Component, Path, PathBuf};

use super::context::Context;
use super::error::Result;
use crate::confine::Confined;
use crate::store::fsutil;

pub use crate::harness::SKILL;

/// Writes `DIR/memorix/SKILL.md`; returns its path as `dir` names it. A relative `DIR` (the default,
/// `.claude/skills`) is a place in the project in `cwd`, so like every harness file the skill
/// is never written through a link there (a cloned project may link `.claude/skills` out);
/// an absolute one, or one that climbs with `..`, is where the user asked for it.
pub fn install(ctx: &Context, dir: &Path) -> Result<PathBuf> {
    let cwd = ctx.cwd();
    let target = cwd.join(dir).join("memorix");
    let file = target.join("SKILL.md");
    if dir.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        Confined::new(cwd)?.check_unlinked(&file)?;
    }
    fsutil::create_dir(&target)?;
    fsutil::write_atomic(&target, &file, SKILL.as_bytes())?;
    Ok(dir.join("memorix").join("SKILL.md"))
}
