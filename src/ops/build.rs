//! `memorix build [--locked]`: lock if needed, realise derivations and the environment in the
//! Store, bind the profile and activate the memory directory.

use std::path::Path;

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use super::git_sources::SourceMove;
use super::project::Project;
use crate::deliver::{self, ActivationRecord, Delivery, Look, Shown};
use crate::harness::{self, sync::Synced};
use crate::manifest::Manifest;
use crate::model::Id;

/// Whether git ignores a generated harness file, for build's "to commit" list.
pub use crate::harness::ignored_by_git;
use crate::model::harness::AgentsSpec;
use crate::profile::Profile;
use crate::remote::transfer::FetchReport;
use crate::resolve::{CheckReport, Refresh, Resolution};
use crate::store::maintenance::Maintenance;
use crate::store::records::{self, QuestKind, ResolveRecord, now_rfc3339};
use crate::store::{Store, Writer, fsutil};
pub use crate::view::artifacts::HookFailure;
use crate::view::artifacts::Hooks;
use crate::view::derivation_plan::DerivationPlan;
use crate::view::environment_plan::EnvironmentPlan;

pub struct BuildRequest {
    /// Materialise exactly the lock; refuse (exit 1) when it is stale.
    pub locked: bool,
    /// Mounts to resolve again to the Store's current state (`memorix update`).
    pub refresh: Refresh,
}

#[derive(Debug, Serialize)]
pub struct BuiltDerivation {
    pub mount: String,
    pub id: Id,
    /// False when the Store already had it.
    pub new: bool,
    pub quest: Id,
}

#[derive(Debug, Serialize)]
pub struct Activated {
    pub generation: u64,
    pub files: usize,
    /// Unchanged files taken over from the previous activation.
    pub reused: usize,
    pub memory: String,
    /// Files left out because `memorix purge` erased their content.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub purged: Vec<String>,
    /// What was wrong with `.memory/` before, and is put right now.
    #[serde(skip_serializing_if = "Repaired::is_empty")]
    pub repaired: Repaired,
}

/// What a build found changed in the memory directory since the last activation, and undid.
#[derive(Debug, Default, Serialize)]
pub struct Repaired {
    /// Files edited, deleted, added or purged, against what was delivered.
    pub drift: deliver::Drift,
    /// The profile had been rolled back to this generation; the lock's environment is active again.
    pub rolled_back_to: Option<u64>,
}

impl Repaired {
    pub fn is_empty(&self) -> bool {
        self.drift.is_clean() && self.rolled_back_to.is_none()
    }
}

/// Activates `delivery`, reusing the files of the environment the memory directory shows now,
/// and writes the agent harness files of `spec` in the same step: planned (and refused, if a
/// user's file is in the way) before the swap, written right after it.
/// `recorded` is the project's activation record; the new one is returned.
pub(crate) fn activate_with_reuse(
    ctx: &Context,
    delivery: &Delivery,
    shown: Shown,
    spec: Option<&AgentsSpec>,
) -> Result<(deliver::Placed, Synced, ActivationRecord)> {
    let (store, project) = (ctx.store()?, ctx.project()?);
    let m = &project.manifest;
    let plan = harness_plan(project, delivery, spec)?;
    let (placed, record) = deliver::activate(
        store,
        &project.state_dir,
        &m.memory_dir(),
        delivery,
        m.delivery,
        shown,
        ctx.progress,
    )?;
    if deliver::spare_missing(&project.state_dir) {
        super::handoff::fill_memory_later(&project.state_dir, &project.manifest.dir);
    }
    Ok((placed, apply_harness(project, plan, spec, delivery.environment)?, record))
}

/// What the harness files need to become `spec`'s for `delivery`; `None` when the project has
/// never had any and `[agents]` asks for none (its AGENTS.md is left alone).
fn harness_plan(
    project: &Project,
    delivery: &Delivery,
    spec: Option<&AgentsSpec>,
) -> Result<Option<harness::sync::Plan>> {
    match harness_outputs(project, delivery, spec) {
        Some(wanted) => Ok(Some(harness::sync::plan(&project.confined, &wanted)?)),
        None => Ok(None),
    }
}

/// The harness files `spec` generates for `delivery` (none without `[agents]`); `None` when
/// memorix does not manage this project's harness files at all.
pub(super) fn harness_outputs(
    project: &Project,
    delivery: &Delivery,
    spec: Option<&AgentsSpec>,
) -> Option<Vec<harness::Output>> {
    match spec {
        Some(spec) => {
            let mut index = harness::index(delivery, project.manifest.memory.as_str());
            index.moved = delivery
                .moved
                .iter()
                .map(|m| harness::Moved {
                    mount: m.mount.clone(),
                    library: m.library.clone(),
                    from: m.from.version.clone(),
                    to: m.to.version.clone(),
                })
                .collect();
            let user = |rel: &str| harness::sync::user_len(&project.confined, rel);
            Some(harness::outputs(spec, &index, harness::SKILL, &user))
        }
        None if harness::sync::Record::load(&project.state_dir).is_some() => Some(Vec::new()),
        None => None,
    }
}

fn apply_harness(
    project: &Project,
    plan: Option<harness::sync::Plan>,
    spec: Option<&AgentsSpec>,
    environment: Id,
) -> Result<Synced> {
    match plan {
        Some(plan) => {
            Ok(harness::sync::apply(&project.confined, &project.state_dir, plan, spec, environment)?)
        }
        None => Ok(Synced::default()),
    }
}

/// Whether the harness files are what the last activation of `environment` wrote (`record`)
/// for `spec`.
fn harness_fresh(
    project: &Project,
    record: Option<&harness::sync::Record>,
    spec: Option<&AgentsSpec>,
    environment: Id,
) -> bool {
    match record {
        Some(r) => r.fresh(project.confined.root(), spec, environment),
        None => spec.is_none(),
    }
}

#[derive(Debug, Serialize)]
pub struct BuildOutcome {
    pub lock_written: bool,
    pub resolved: Vec<String>,
    pub environment: Option<Id>,
    pub environment_new: bool,
    pub derivations: Vec<BuiltDerivation>,
    /// `None` when the memory directory already showed the environment.
    pub activated: Option<Activated>,
    pub generation: Option<u64>,
    /// `--locked` with a lock that does not match: why, and nothing was changed.
    pub refused: Option<CheckReport>,
    /// `[artifacts]` hooks that failed, or were not run in a project not trusted (they run
    /// again on the next build).
    pub artifact_failures: Vec<HookFailure>,
    /// `--locked`: what was fetched from the substituters.
    #[serde(skip_serializing_if = "FetchReport::is_empty")]
    pub substituted: FetchReport,
    /// Pinned docs fetched from their registries.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fetched: Vec<crate::fetch::Fetched>,
    /// `.ignore` lacked the line that lets rg and fd see the memory directory; it was added.
    pub ignore_updated: bool,
    /// Git sources whose locked commit moved (`memorix update`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources_moved: Vec<SourceMove>,
    /// Library versions the lock moved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<super::lock::VersionMove>,
    /// Agent harness files written or removed (`[agents]`).
    #[serde(skip_serializing_if = "Synced::is_empty")]
    pub harness: Synced,
    /// What this build wrote or removed that belongs in git: memorix.lock, `.ignore`, the
    /// harness files meant to be committed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commit: Vec<String>,
    /// What it generated that keeps itself out of git: the memory directory (on a project's
    /// first build), the skill folders written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub generated: Vec<String>,
    /// The Store a project's first build wrote into, when it was there already (a Store
    /// created now says where itself): the build says where its memory went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joined_store: Option<std::path::PathBuf>,
}

impl BuildOutcome {
    /// A build that changed nothing, or was refused, from the parts it got to.
    fn unchanged(environment: Option<Id>, generation: Option<u64>, refused: Option<CheckReport>) -> Self {
        BuildOutcome {
            lock_written: false,
            resolved: Vec::new(),
            environment,
            environment_new: false,
            derivations: Vec::new(),
            activated: None,
            generation,
            refused,
            artifact_failures: Vec::new(),
            substituted: FetchReport::default(),
            fetched: Vec::new(),
            ignore_updated: false,
            sources_moved: Vec::new(),
            moved: Vec::new(),
            harness: Synced::default(),
            commit: Vec::new(),
            generated: Vec::new(),
            joined_store: None,
        }
    }

    /// Sorts what the build wrote into what belongs in git and what keeps itself out of it.
    /// The memory directory is named on a project's first build, when that build also wrote
    /// files to commit or skill folders: the moment `git status` first shows what is new.
    fn sort_for_git(&mut self, memory: &str, first_build: bool) {
        if self.lock_written {
            self.commit.push(crate::lock::FILE.to_string());
        }
        if self.ignore_updated {
            self.commit.push(".ignore".into());
        }
        let h = &self.harness;
        let mut skills = Vec::new();
        for path in h.written.iter().chain(&h.removed) {
            match harness::ignored_by_git(path) {
                Some(dir) if h.written.contains(path) && !skills.contains(&dir) => skills.push(dir),
                Some(_) => {}
                // Restored to what memorix generates: as committed, nothing new.
                None if h.restored => {}
                None => self.commit.push(path.clone()),
            }
        }
        if first_build && !(self.commit.is_empty() && skills.is_empty()) {
            self.generated.push(format!("{memory}/"));
        }
        self.generated.extend(skills);
    }
}

/// Locks (or checks the lock), realises the derivations and the environment in the Store,
/// binds the profile and activates the memory directory.
pub fn build(ctx: &mut Context, req: &BuildRequest) -> Result<BuildOutcome> {
    check_refresh(&ctx.project()?.manifest, &req.refresh)?;
    super::fetch::refuse_unfetchable(ctx)?;
    let _project_lock = ctx.guard_project()?;
    let ctx = &*ctx;
    let project = ctx.project()?;
    let m = &project.manifest;
    let memory = m.memory_dir();
    // Like cargo's fingerprints: the same inputs as the last good build, and .memory/ as it
    // left it, mean nothing to do, without opening the Store.
    let stamp = inputs_stamp(ctx)?;
    if req.refresh == Refresh::Nothing
        && let Some((environment, generation)) = stamped(project, &stamp, &memory)
        && harness_fresh(
            project,
            harness::sync::Record::load(&project.state_dir).as_ref(),
            harness::spec(m).as_ref(),
            environment,
        )
    {
        let mut outcome = BuildOutcome {
            ignore_updated: super::init::ensure_search_whitelist(&project.confined, m.memory.as_str())?,
            ..BuildOutcome::unchanged(Some(environment), Some(generation), None)
        };
        outcome.sort_for_git(m.memory.as_str(), false);
        return Ok(outcome);
    }
    let store_existed = ctx.existing_store().is_ok_and(|s| s.is_some());
    let store = ctx.store_or_create()?;
    let writer = store.writer(ctx.progress)?;
    writer.maintenance().heal_latest()?;
    let (resolution, mut outcome) = match resolve(ctx, &writer, req)? {
        Ok(resolved) => resolved,
        Err(refused) => return Ok(refused),
    };
    let mut hooks =
        Hooks { trusted: m.artifacts.is_empty() || super::trust::is_trusted(project), ..Hooks::default() };
    outcome.derivations = realise_derivations(&writer, m, &resolution.derivations, &mut hooks)?;
    outcome.artifact_failures = std::mem::take(&mut hooks.failures);
    if !outcome.moved.is_empty() {
        super::changes::record_moves(ctx, &writer, &outcome.moved)?;
    }
    crate::fault::point("build.derivations");
    let (env_id, environment_new) = realise_environment(&writer, m, &resolution.environment)?;
    writer.records().record_project(&project.roots(&resolution.lock)?)?;
    writer.sync()?;
    crate::fault::point("build.synced");
    // memorix.lock as this build leaves it (the stamp hashes it): as read, or as written.
    let lock_text = match req.locked {
        true => project.lock_text()?.unwrap_or_default().to_string(),
        false => resolution.lock.to_text(),
    };
    // What activation places; the plans, whose files it copies, are let go before it.
    let mut delivery =
        Delivery::from_plan(store, env_id, &resolution.environment, &resolution.derivations, m, 0);
    delivery.pinned_by(&resolution.lock.pin_files());
    super::changes::place(store, project, &mut delivery);
    drop(resolution);
    let ignore_updated = super::init::ensure_search_whitelist(&project.confined, m.memory.as_str())?;
    let mut profile = Profile::load(&project.state_dir)?;
    let first_build = profile.current.is_none();
    let record;
    (outcome.activated, outcome.harness, record) =
        activate(ctx, &mut profile, delivery, (env_id, hooks.ran))?;
    if outcome.artifact_failures.is_empty() {
        write_stamp(project, &stamp_text(&stamp, lock_text.as_bytes()), env_id, record, profile.current)?;
    }
    outcome.environment = Some(env_id);
    outcome.ignore_updated = ignore_updated;
    outcome.environment_new = environment_new;
    outcome.generation = profile.current;
    outcome.joined_store = (first_build && store_existed).then(|| ctx.store_root().to_path_buf());
    outcome.sort_for_git(m.memory.as_str(), first_build);
    Ok(outcome)
}

/// `memorix update MOUNT...` names mounts the manifest has.
fn check_refresh(m: &Manifest, refresh: &Refresh) -> Result<()> {
    if let Refresh::Sources(keys) = refresh {
        let known: Vec<String> = m.git_sources.iter().map(|g| g.key()).collect();
        return match keys.iter().find(|k| !known.contains(k)) {
            Some(key) => Err(Error::UnknownGitSource { key: key.clone(), known }),
            None => Ok(()),
        };
    }
    let Refresh::Mounts(names) = refresh else { return Ok(()) };
    let known: Vec<String> = m.mounts.iter().map(|x| x.path.to_string()).collect();
    match names.iter().find(|name| !known.contains(name)) {
        Some(name) => Err(Error::UnknownMount { name: name.clone(), known, suggestion: None }),
        None => Ok(()),
    }
}

/// The lock this build realises: checked as it is (`--locked`, after substituting what the
/// Store lacks; a stale lock is a refusal, the `Err` side) or written afresh. Either way the
/// `[sources]` are in the Store afterwards.
fn resolve(
    ctx: &Context,
    writer: &Writer,
    req: &BuildRequest,
) -> Result<std::result::Result<(Resolution, BuildOutcome), BuildOutcome>> {
    let mut outcome = BuildOutcome::unchanged(None, None, None);
    if !req.locked {
        let (resolution, locked) = super::lock::lock_with(ctx, writer, &req.refresh)?;
        outcome.lock_written = locked.written;
        outcome.resolved = locked.resolved;
        outcome.sources_moved = locked.sources_moved;
        outcome.moved = locked.moved;
        outcome.fetched = locked.fetched;
        return Ok(Ok((resolution, outcome)));
    }
    let mut obtained = super::obtain::obtain(ctx, writer)?;
    let (report, resolution) = super::obtain::check_project(ctx, true)?;
    let report = obtained.judge(report, "build memorix.lock")?;
    outcome.fetched = std::mem::take(&mut obtained.fetched);
    outcome.substituted = obtained.substituted;
    let Some(resolution) = resolution.filter(|_| report.ok) else {
        outcome.refused = Some(report);
        return Ok(Err(outcome));
    };
    // The sources hash as the lock says; put their content in the Store.
    super::lock::ingest_sources(ctx, writer)?;
    Ok(Ok((resolution, outcome)))
}

/// Stores each mount's derivation with its artifacts and its quest (written in the same step
/// as the view).
fn realise_derivations(
    writer: &Writer,
    m: &Manifest,
    plans: &[DerivationPlan],
    hooks: &mut Hooks,
) -> Result<Vec<BuiltDerivation>> {
    let dir = records::project_key(&m.dir);
    let time = now_rfc3339();
    let mut built = Vec::new();
    let mut records = Vec::with_capacity(plans.len());
    for (mount, plan) in m.mounts.iter().zip(plans) {
        let record = plan.record();
        let (id, new) = writer.records().put_derivation(&record)?;
        crate::view::artifacts::ensure(writer, &id, plan, &m.artifacts, hooks)?;
        records.push((id, record));
        let q = writer.records().record_resolve(ResolveRecord {
            kind: QuestKind::Derivation,
            selection: vec![crate::view::selection(mount, false)],
            intent: mount.intent.as_deref(),
            dir: &dir,
            mount: mount.path.as_str(),
            current: id,
            time: &time,
        })?;
        writer.records().index_quest(&q, &mount.select)?;
        built.push(BuiltDerivation { mount: mount.path.to_string(), id, new, quest: q });
    }
    // The search indexes last, built side by side.
    crate::search::ensure_all(writer, &records)?;
    Ok(built)
}

/// Stores the environment and its quest; returns its id and whether it was new.
fn realise_environment(writer: &Writer, m: &Manifest, plan: &EnvironmentPlan) -> Result<(Id, bool)> {
    let (env_id, new) = writer.records().put_environment(&plan.record())?;
    crate::fault::point("build.environment");
    let env_quest = writer.records().record_resolve(ResolveRecord {
        kind: QuestKind::Environment,
        selection: m.mounts.iter().map(|x| crate::view::selection(x, true)).collect(),
        intent: m.intent.as_deref(),
        dir: &records::project_key(&m.dir),
        mount: "",
        current: env_id,
        time: &now_rfc3339(),
    })?;
    for mount in &m.mounts {
        writer.records().index_quest(&env_quest, &mount.select)?;
    }
    Ok((env_id, new))
}

/// Binds the environment in the profile (a new generation when it changed) and places it in
/// the memory directory, unless the directory shows exactly what the last activation placed;
/// the harness files are brought in line either way. Returns the activation record after.
fn activate(
    ctx: &Context,
    profile: &mut Profile,
    mut delivery: Delivery,
    (env_id, new_outputs): (Id, bool),
) -> Result<(Option<Activated>, Synced, Option<ActivationRecord>)> {
    let (store, project) = (ctx.store()?, ctx.project()?);
    let m = &project.manifest;
    let spec = harness::spec(m);
    let memory = m.memory_dir();
    let current = profile.current().cloned();
    let shown = deliver::shown_environment(&memory);
    // Exactly what the last activation placed, none of it purged since. A build binding another
    // environment activates: it reads the kept tree's record alongside.
    let state = &project.state_dir;
    let (recorded, kept) = if current.as_ref().is_none_or(|b| b.environment != env_id) {
        rayon::join(|| ActivationRecord::load(state), || Some(deliver::Kept::read(state)))
    } else {
        (ActivationRecord::load(state), None)
    };
    let look = recorded.as_ref().map_or(Look::Everything, |r| stamp_look(project, r));
    let intact = recorded.as_ref().is_some_and(|r| r.holds(store, &memory, look));
    // Files are taken as recorded only where the directories held.
    let look = if intact { look } else { Look::Everything };
    // New hook outputs change INDEX.md, which shows them, though not the environment.
    let same = current.as_ref().is_some_and(|b| b.environment == env_id)
        && shown == Some(env_id)
        && intact
        && !new_outputs;
    let agents = Some(spec.clone().unwrap_or_else(AgentsSpec::none));
    if same {
        // Only the harness files may have moved (edited, or `[agents]` changed).
        let record = harness::sync::Record::load(&project.state_dir);
        if harness_fresh(project, record.as_ref(), spec.as_ref(), env_id) {
            return Ok((None, Synced::default(), recorded));
        }
        let b = current.expect("the same environment is bound");
        let restored = record.is_some_and(|r| r.spec == spec);
        delivery.generation = b.generation;
        let plan = harness_plan(project, &delivery, spec.as_ref())?;
        let synced = Synced { restored, ..apply_harness(project, plan, spec.as_ref(), env_id)? };
        record_agents(profile, b.generation, agents, &delivery);
        profile.save(&project.state_dir)?;
        return Ok((None, synced, recorded));
    }
    let repaired = repairs(store, project, profile, (intact, recorded.as_ref()), env_id)?;
    let generation = match current {
        Some(b) if b.environment == env_id => b.generation,
        _ => profile.bind(env_id, "build", now_rfc3339()),
    };
    record_agents(profile, generation, agents, &delivery);
    delivery.generation = generation;
    let (placed, synced, record) = activate_with_reuse(
        ctx,
        &delivery,
        Shown { record: recorded.as_ref(), environment: shown, look, kept },
        spec.as_ref(),
    )?;
    profile.save(&project.state_dir)?;
    crate::fault::point("profile.saved");
    let activated = Activated {
        generation,
        files: placed.files,
        reused: placed.reused,
        memory: m.memory.to_string(),
        purged: placed.purged,
        repaired,
    };
    Ok((Some(activated), synced, Some(record)))
}

/// The profile binding `generation` remembers what generated its harness files, and the
/// `CHANGES.md` files it delivers (for a rollback to place again, and `gc` to keep).
fn record_agents(profile: &mut Profile, generation: u64, spec: Option<AgentsSpec>, delivery: &Delivery) {
    if let Some(b) = profile.bindings.iter_mut().find(|b| b.generation == generation) {
        b.agents = spec;
        b.moved = Some(delivery.moved.clone());
    }
}

/// What activating `env_id` puts right: the delivered files changed since the last activation
/// (only looked at when the cheap check says something changed), and a rolled-back profile.
fn repairs(
    store: &Store,
    project: &Project,
    profile: &Profile,
    (intact, record): (bool, Option<&ActivationRecord>),
    env_id: Id,
) -> Result<Repaired> {
    let mut repaired = Repaired::default();
    let Some(current) = profile.current() else { return Ok(repaired) };
    let m = &project.manifest;
    if !intact {
        // The environment record may be gone (gc after a rollback); then there is nothing to compare.
        if let Ok(mut delivered) =
            Delivery::from_store(store, current.environment, Some(m), current.generation)
        {
            delivered.pinned_by(&project.pin_files()?);
            repaired.drift = deliver::inspect(store, &m.memory_dir(), &delivered, m.delivery, record)?;
        }
    }
    if current.environment != env_id && profile.bindings.iter().any(|b| b.generation > current.generation) {
        repaired.rolled_back_to = Some(current.generation);
    }
    Ok(repaired)
}

/// The environment and generation the last good build left, when its stamp still holds.
fn stamped(project: &Project, stamp: &str, memory: &Path) -> Option<(Id, u64)> {
    let lock_text = project.lock_text().ok()?.unwrap_or_default().as_bytes();
    let saved = std::fs::read_to_string(project.state_dir.join(STAMP)).ok()?;
    fresh_stamp(&saved, &stamp_text(stamp, lock_text), memory)
}

/// Records this build's inputs with the lock as it left it (`inputs`: a hand-edited lock makes
/// the next build look) and the activation's own stamp: the stat of the memory directory and of
/// the activation record. That is a fixed number of system calls whatever the environment's
/// size (book: reliability.md#no-op-build): a file added, removed or edited deeper inside
/// `.memory/` is found by `status` and `verify --project`, which [forget](forget_stamp) the
/// stamp so the next build repairs it, and by the next build that changes anything, which
/// stats every delivered directory before it reuses a file.
fn write_stamp(
    project: &Project,
    inputs: &str,
    env_id: Id,
    record: Option<ActivationRecord>,
    generation: Option<u64>,
) -> Result<()> {
    let record = record.filter(|r| r.environment == Some(env_id));
    let (Some(record), Some(generation)) = (record, generation) else { return Ok(()) };
    let mut text = inputs.to_string();
    text.push_str(&format!("{env_id} {generation}\n"));
    if let Some((mtime, ino)) = record.dirs.get("") {
        text.push_str(&format!("{mtime} {ino} \n"));
    }
    let recorded = project.state_dir.join(deliver::RECORD);
    let Some((mtime, ino)) = stat_stamp(&recorded) else { return Ok(()) };
    text.push_str(&format!("{mtime} {ino} {}\n", recorded.display()));
    Ok(fsutil::write_atomic(&project.state_dir, &project.state_dir.join(STAMP), text.as_bytes())?)
}

pub(crate) const STAMP: &str = "build-stamp";

/// How much of `.memory/` must be stat'ed to trust `record`: its directories only while the
/// last good build's stamp names the recorded environment (`status` and `verify --project`
/// forget the stamp when they find a file edited in place), else every file.
fn stamp_look(project: &Project, record: &ActivationRecord) -> Look {
    use std::io::Read;
    // The environment is on the stamp's third line, after two hashes; its directories follow.
    let mut head = Vec::new();
    let file = std::fs::File::open(project.state_dir.join(STAMP));
    let _ = file.map(|f| f.take(512).read_to_end(&mut head));
    let named = String::from_utf8_lossy(&head).lines().nth(2).and_then(stamp_binding).map(|(env, _)| env);
    if named.is_some() && named == record.environment { Look::Directories } else { Look::Everything }
}

/// Makes the next build check `.memory/` whole (a read command found it changed).
pub(crate) fn forget_stamp(project: &Project) {
    let _ = std::fs::remove_file(project.state_dir.join(STAMP));
}

/// `saved` (`.memorix/build-stamp`) against this build's inputs, the memory directory and the
/// activation record: the environment and generation it shows when nothing changed.
fn fresh_stamp(saved: &str, inputs: &str, memory: &Path) -> Option<(Id, u64)> {
    let rest = saved.strip_prefix(inputs)?;
    let (head, entries) = rest.split_once('\n')?;
    let binding = stamp_binding(head)?;
    let holds = |line: &str| -> Option<()> {
        let mut parts = line.splitn(3, ' ');
        let (mtime, ino, path) = (
            parts.next()?.parse::<i64>().ok()?,
            parts.next()?.parse::<u64>().ok()?,
            parts.next().unwrap_or(""),
        );
        // An empty path is the memory directory; any other is absolute.
        let path = if path.is_empty() { memory } else { Path::new(path) };
        (stat_stamp(path)? == (mtime, ino)).then_some(())
    };
    let lines: Vec<&str> = entries.lines().collect();
    (lines.len() == 2 && lines.iter().all(|l| holds(l).is_some())).then_some(())?;
    Some(binding)
}

/// A file's (mtime in nanoseconds, inode), not following a symlink.
fn stat_stamp(path: &Path) -> Option<(i64, u64)> {
    let st = rustix::fs::lstat(path).ok()?;
    Some((st.st_mtime * 1_000_000_000 + st.st_mtime_nsec as i64, st.st_ino))
}

/// The stamp's `<environment> <generation>` line, the one line of its layout read in two places.
fn stamp_binding(line: &str) -> Option<(Id, u64)> {
    let (env, generation) = line.split_once(' ')?;
    Some((env.parse().ok()?, generation.parse().ok()?))
}

fn stamp_text(inputs: &str, lock: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{inputs}\n{}\n", hex::encode(Sha256::digest(lock)))
}

/// A hash of what a build reads besides the Store and its own outputs: memorix's version, the
/// Store's place, the manifest, the pin files' and source files' stats. Computed before the
/// build reads them, so a file edited during a build makes the next one look again.
fn inputs_stamp(ctx: &Context) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::MetadataExt;
    let project = ctx.project()?;
    let m = &project.manifest;
    let mut h = Sha256::new();
    let mut add = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    add(env!("CARGO_PKG_VERSION").as_bytes());
    add(ctx.store_root().as_os_str().as_encoded_bytes());
    // A purge since the last build: what it delivered may hold erased content.
    add(&Maintenance::purge_count(ctx.store_root()).to_le_bytes());
    add(project.manifest_text.as_bytes());
    let mut stat = |path: &Path| {
        let s = std::fs::metadata(path)
            .map(|m| (m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino()));
        add(path.as_os_str().as_encoded_bytes());
        add(format!("{s:?}").as_bytes());
    };
    for f in &m.pins.files {
        stat(&m.dir.join(f));
    }
    for s in &m.sources {
        match crate::store::objects::layout(&s.dest, &[m.dir.join(s.folder.as_str())])? {
            crate::store::objects::Layout::Tree { files, .. } => files.iter().for_each(|(_, abs)| stat(abs)),
            crate::store::objects::Layout::File(p) => stat(&p),
            crate::store::objects::Layout::Stdin => {}
        }
    }
    Ok(hex::encode(h.finalize()))
}
