//! `memorix pins`: every library the project's mounts ask for through `@pin` locators, the pin
//! it resolves to, the file and line that pin it, and why that pin
//! (book: design/versions.md#which-pin-a-mount-follows).

use serde::Serialize;

use super::context::Context;
use super::error::Result;
use crate::model::Selector;
use crate::pins::ResolvedPin;
use crate::resolve::PinSource;

/// One `@pin` locator of one mount, resolved.
#[derive(Debug, Serialize)]
pub struct MountPin {
    /// The mount's path, e.g. `libs/httpx`.
    pub mount: String,
    /// The locator as written, e.g. `docs/httpx/@pin`.
    pub locator: String,
    #[serde(flatten)]
    pub pin: ResolvedPin,
}

/// Resolves every `@pin` locator of the project, in manifest order. The Store is not read:
/// this is what the pin files say, before any docs are looked up.
pub fn pins(ctx: &Context) -> Result<Vec<MountPin>> {
    let project = ctx.project()?;
    let manifest = &project.manifest;
    let source = PinSource::new(manifest);
    let mut out = Vec::new();
    for mount in &manifest.mounts {
        for loc in mount.select.iter().filter(|l| l.selector == Some(Selector::Pin)) {
            let pin = source.pin(mount, loc)?;
            out.push(MountPin { mount: mount.path.to_string(), locator: loc.to_string(), pin });
        }
    }
    Ok(out)
}
