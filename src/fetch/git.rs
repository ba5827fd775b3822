//! Git sources (book: design/fetching.md#git-sources), through the `git` CLI as Cargo's
//! `git-fetch-with-cli` does: the user's credentials, SSH config and proxies apply. Each
//! repository is mirrored in a bare clone under `$XDG_CACHE_HOME/memorix/git/`; a commit's tree
//! is exported with a private index file, so the cache has no work tree and no hooks run.
//!
//! The project is never git's repository: a cloned project's `.git/config` could name a
//! command (`core.sshCommand`, an `ext::` URL rewrite). Git runs in the cache, with the
//! variables that point it at another repository cleared and the command-running transports
//! refused, and is never handed a URL or ref that could read as an option.

use std::path::{Path, PathBuf};
use std::process::Command;

use miette::Diagnostic;
use sha2::{Digest, Sha256};

use crate::model::{self, GitRef};

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error("`git` could not be run: {message}")]
    #[diagnostic(
        code(memorix::fetch::git_missing),
        help("install git; memorix runs it for [sources] that name a repository")
    )]
    Missing { message: String },

    #[error("git {action} {url} failed: {stderr}")]
    #[diagnostic(
        code(memorix::fetch::git_failed),
        help("check the URL and your access to it (`git ls-remote {url}`)")
    )]
    Failed { action: &'static str, url: String, stderr: String },

    #[error("{url} has no {follows}")]
    #[diagnostic(code(memorix::fetch::git_no_ref), help("`git ls-remote {url}` lists its branches and tags"))]
    NoRef { url: String, follows: String },

    #[error("commit {commit} is no longer in {url} (was the branch force-pushed?)")]
    #[diagnostic(
        code(memorix::fetch::git_commit_gone),
        help(
            "memorix.lock pins that commit; `memorix update --source {place}` moves it to what {url} has now"
        )
    )]
    CommitGone { url: String, commit: String, place: String },

    #[error("--offline forbids fetching {url}")]
    #[diagnostic(code(memorix::fetch::git_offline), help("run without --offline to fetch the git source"))]
    Offline { url: String },

    #[error("{url:?} is not a repository URL memorix hands to git: it {why}")]
    #[diagnostic(
        code(memorix::fetch::git_bad_url),
        help(
            "name the repository by an https://, ssh:// or file:// URL (or user@host:path) in memorix.toml"
        )
    )]
    BadUrl { url: String, why: &'static str },

    #[error("{url} at {commit} has no `{path}`")]
    #[diagnostic(code(memorix::fetch::git_no_path), help("fix `path` of the source in memorix.toml"))]
    NoPath { url: String, commit: String, path: String },
}

pub type Result<T> = std::result::Result<T, Error>;

/// The bare clones of git sources.
pub struct GitCache {
    root: PathBuf,
}

impl GitCache {
    /// `$XDG_CACHE_HOME/memorix/git`, else `~/.cache/memorix/git`.
    pub fn default_location() -> GitCache {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(|| PathBuf::from(".cache"));
        GitCache { root: base.join("memorix").join("git") }
    }

    /// The bare clone of `url`, created empty when new.
    fn repo(&self, url: &str) -> Result<PathBuf> {
        if let Some(why) = model::git::url_problem(url) {
            return Err(Error::BadUrl { url: url.to_string(), why });
        }
        let name = hex::encode(&Sha256::digest(url.as_bytes())[..8]);
        let dir = self.root.join(name);
        if !dir.join("HEAD").exists() {
            std::fs::create_dir_all(&self.root).map_err(|e| Error::Missing { message: e.to_string() })?;
            output(git(&self.root).args(["init", "--bare", "--quiet", path_str(&dir)]), "init", url)?;
        }
        Ok(dir)
    }

    /// The commit `follows` names in `url` now.
    pub fn resolve(&self, url: &str, follows: &GitRef) -> Result<String> {
        let wanted = match follows {
            GitRef::Rev(r) => return Ok(r.clone()),
            GitRef::DefaultBranch => "HEAD".to_string(),
            GitRef::Branch(b) => format!("refs/heads/{b}"),
            GitRef::Tag(t) => format!("refs/tags/{t}"),
        };
        let repo = self.repo(url)?;
        let peeled = format!("{wanted}^{{}}");
        let listing = run(&repo, &["ls-remote", "--", url, &wanted, &peeled], "ls-remote", url)?;
        let mut found = None;
        for line in listing.lines() {
            let Some((commit, name)) = line.split_once('\t') else { continue };
            // An annotated tag peels to its commit (`^{}`), which wins.
            if name == format!("{wanted}^{{}}") || (name == wanted && found.is_none()) {
                found = Some(commit.to_string());
            }
        }
        found.ok_or_else(|| Error::NoRef { url: url.to_string(), follows: follows.to_string() })
    }

    /// Makes `commit` present in the clone of `url`, fetching branches and tags (and the commit
    /// itself, where the server allows) when it is not.
    pub fn ensure(&self, url: &str, commit: &str, place: &str) -> Result<PathBuf> {
        let repo = self.repo(url)?;
        let has = |repo: &Path| has_commit(repo, commit);
        if has(&repo) {
            return Ok(repo);
        }
        let refs = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"];
        run(&repo, &["fetch", "--quiet", "--prune", "--", url, refs[0], refs[1]], "fetch", url)?;
        if !has(&repo) && model::git::is_full_commit(commit) {
            let _ = run(&repo, &["fetch", "--quiet", "--", url, commit], "fetch", url);
        }
        if has(&repo) {
            Ok(repo)
        } else {
            Err(Error::CommitGone {
                url: url.to_string(),
                commit: commit.to_string(),
                place: place.to_string(),
            })
        }
    }

    /// Writes the tree of `commit` (its `path` subdirectory) into the new directory `dest`.
    pub fn export(&self, url: &str, commit: &str, path: Option<&str>, dest: &Path) -> Result<()> {
        let repo = self.repo(url)?;
        let treeish = match path {
            Some(p) => format!("{commit}:{}", p.trim_end_matches('/')),
            None => format!("{commit}^{{tree}}"),
        };
        let index = dest.with_extension("index");
        let mut read_tree = in_repo(&repo);
        read_tree.args(["read-tree", &treeish]).env("GIT_INDEX_FILE", &index);
        if output(&mut read_tree, "read-tree", url).is_err() {
            return Err(Error::NoPath {
                url: url.into(),
                commit: commit.into(),
                path: path.unwrap_or("").into(),
            });
        }
        std::fs::create_dir_all(dest).map_err(|e| Error::Missing { message: e.to_string() })?;
        let work_tree = format!("--work-tree={}", path_str(dest));
        let mut checkout = in_repo(&repo);
        checkout.args([&work_tree, "checkout-index", "--all", "--force"]).env("GIT_INDEX_FILE", &index);
        let done = output(&mut checkout, "checkout-index", url);
        let _ = std::fs::remove_file(&index);
        done.map(|_| ())
    }
}

fn has_commit(repo: &Path, commit: &str) -> bool {
    model::git::is_full_commit(commit)
        && run(repo, &["cat-file", "-e", &format!("{commit}^{{commit}}")], "cat-file", "").is_ok()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

/// The variables that would point git at another repository than the one it is given (set
/// when memorix runs inside a git hook, or by a hostile environment file).
const REPOSITORY_VARIABLES: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
];

/// `git`, run in `dir` (in the cache, never the project) with the repository variables
/// cleared and the transports that run a command refused; the user's global and system
/// configuration (credentials, proxies, SSH) still apply.
fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    for var in REPOSITORY_VARIABLES {
        cmd.env_remove(var);
    }
    cmd.current_dir(dir).env("GIT_CEILING_DIRECTORIES", dir).args([
        "-c",
        "protocol.ext.allow=never",
        "-c",
        "protocol.fd.allow=never",
    ]);
    cmd
}

/// [`git`] on the bare clone `repo`.
fn in_repo(repo: &Path) -> Command {
    let mut cmd = git(repo);
    cmd.arg(format!("--git-dir={}", path_str(repo)));
    cmd
}

fn run(repo: &Path, args: &[&str], action: &'static str, url: &str) -> Result<String> {
    output(in_repo(repo).args(args), action, url)
}

/// Runs git without a terminal prompt; its stdout, or its stderr as the error.
fn output(cmd: &mut Command, action: &'static str, url: &str) -> Result<String> {
    cmd.env("GIT_TERMINAL_PROMPT", "0").stdin(std::process::Stdio::null());
    let out = cmd.output().map_err(|e| Error::Missing { message: e.to_string() })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(Error::Failed { action, url: url.to_string(), stderr });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
