//! The command line: clap definitions, dispatch, and rendering. No logic lives here.

mod build;
mod cat;
mod changes;
mod completions;
mod doctor;
mod edit;
mod explain;
mod fetch;
mod gc;
mod graph;
mod history;
mod ingest;
mod init;
mod lock;
mod log;
mod ls;
mod manpages;
mod mcp;
mod pins;
mod profile;
mod quest;
mod remote;
mod render;
mod rm;
mod search;
mod show;
mod skill;
mod status;
mod trust;
mod update;
mod verify;
mod versions;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::diagnostics::FromIo;
use crate::ops::error::{Error, Result};

/// Project memory for AI coding agents, built like packages.
///
/// memorix keeps rules, library docs and chat traces in a content-addressed, versioned Store.
/// Every ingest records a generation of one typed tree (rules/, docs/ or chat/); old content
/// stays addressable by locator, e.g. `rules/python/style.md@g1`.
#[derive(Debug, Parser)]
#[command(name = "memorix", version, max_term_width = 100)]
pub struct Cli {
    /// The Store directory [default: $XDG_DATA_HOME/memorix/store]
    #[arg(long, global = true, env = "MEMORIX_STORE", hide_env_values = true, value_name = "DIR")]
    store: Option<PathBuf>,

    /// Run as if memorix was started in DIR
    #[arg(short = 'C', global = true, value_name = "DIR")]
    directory: Option<PathBuf>,

    /// Print one JSON document instead of text (read commands)
    #[arg(long, global = true)]
    json: bool,

    /// When to use colours
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,

    /// Print only errors and what was asked for (no progress or success messages)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,

    /// Print more: every changed file, every derivation
    #[arg(short, long, global = true)]
    verbose: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
enum Command {
    Init(init::Args),
    Build(build::Args),
    Lock(lock::Args),
    Fetch(fetch::Args),
    Add(edit::AddArgs),
    Remove(edit::RemoveArgs),
    Status(status::Args),
    Update(update::Args),
    Quest(quest::Args),
    Profile(profile::ProfileArgs),
    Rollback(profile::RollbackArgs),
    Activate(profile::ActivateArgs),
    Diff(history::DiffArgs),
    Run(history::RunArgs),
    Runs(history::RunsArgs),
    Checkout(history::CheckoutArgs),
    Graph(graph::Args),
    Explain(explain::Args),
    Search(search::Args),
    Mcp(mcp::Args),
    Ingest(ingest::Args),
    Rm(rm::Args),
    Ls(ls::Args),
    Cat(cat::Args),
    Log(log::Args),
    Show(show::Args),
    Verify(verify::Args),
    Gc(gc::GcArgs),
    Purge(gc::PurgeArgs),
    Versions(versions::Args),
    Changes(changes::Args),
    Pins(pins::Args),
    Doctor(doctor::Args),
    Remote(remote::Args),
    Push(remote::PushArgs),
    Pull(remote::PullArgs),
    Trust(trust::Args),
    Skill(skill::Args),
    Completions(completions::Args),
    Manpages(manpages::Args),
    /// Internal: fills `latest/`'s spare checkouts, run detached by a command that left them
    /// behind (holding the store lock it inherits as standard input).
    #[command(name = crate::ops::handoff::FILL_SPARES, hide = true)]
    FillSpares,
    /// Internal: fills the kept memory tree of the project in the working directory, run
    /// detached by a first activation (holding the project lock it inherits as standard input).
    #[command(name = crate::ops::handoff::FILL_MEMORY, hide = true)]
    FillMemory,
}

/// What every command gets besides its own arguments.
pub struct Context {
    /// The working directory (after `-C`): where the project is looked for.
    pub cwd: PathBuf,
    pub store: PathBuf,
    /// `--store` or `MEMORIX_STORE` named the Store, so the user knows where it is; else it
    /// is the default, which a project's first build names.
    pub store_chosen: bool,
    pub json: bool,
    pub progress: render::Terminal,
    pub quiet: bool,
    pub verbose: bool,
}

impl Context {
    /// What the operation of this command works with ([`crate::ops::Context`]): the project
    /// and the Store, opened when first asked for, and whether it may reach the network.
    pub fn ops(&self, offline: bool) -> crate::ops::Context<'_> {
        let net = crate::ops::Network::new(offline);
        crate::ops::Context::new(self.cwd.clone(), self.store.clone(), net, &self.progress)
    }
}

/// `--offline`, for the commands that may fetch what the Store lacks of memorix.lock.
#[derive(Debug, clap::Args)]
pub struct Offline {
    /// Never reach the network (substituters, registries, git); what is missing is reported
    #[arg(long, env = "MEMORIX_OFFLINE", value_parser = offline_value)]
    pub offline: bool,
}

/// `MEMORIX_OFFLINE`: empty is unset (as a shell's `MEMORIX_OFFLINE=` means), else a boolish
/// word; anything else names the variable and what it takes.
fn offline_value(text: &str) -> std::result::Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "no" | "n" | "f" | "off" => Ok(false),
        "1" | "true" | "yes" | "y" | "t" | "on" => Ok(true),
        _ => Err(format!(
            "MEMORIX_OFFLINE (--offline) takes 1/true/yes/on or 0/false/no/off (empty is unset), not {text:?}"
        )),
    }
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    miette::set_hook(Box::new(move |_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .color(color)
                .unicode(color)
                .terminal_links(false)
                .wrap_lines(false)
                .build(),
        )
    }))
    .expect("the report hook is set once");
    let json = cli.json;
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            let code = err.exit_code();
            render::error(err, json);
            code
        }
    };
    crate::ops::handoff::spawn_pending();
    if crate::ops::trace::Trace::wanted() {
        render::trace(crate::ops::trace::Trace::now());
    }
    ExitCode::from(code)
}

fn dispatch(cli: Cli) -> Result<u8> {
    // `-C DIR` works as if memorix was started there: relative arguments (and a relative
    // --store) are taken from it, as in git and cargo. The working directory is read once.
    if let Some(dir) = &cli.directory {
        std::env::set_current_dir(dir).map_err(Error::io("change directory to", dir))?;
    }
    let cwd = std::env::current_dir().map_err(Error::io("read the working directory", Path::new(".")))?;
    let ctx = Context {
        cwd,
        store: cli.store.clone().unwrap_or_else(crate::ops::Context::default_store_root),
        store_chosen: cli.store.is_some(),
        json: cli.json,
        progress: render::Terminal { bars: std::io::stderr().is_terminal() && !cli.quiet },
        quiet: cli.quiet,
        verbose: cli.verbose,
    };
    match cli.command {
        Command::Init(a) => init::run(&ctx, a),
        Command::Build(a) => build::run(&ctx, a),
        Command::Lock(a) => lock::run(&ctx, a),
        Command::Fetch(a) => fetch::run(&ctx, a),
        Command::Add(a) => edit::add_cmd(&ctx, a),
        Command::Remove(a) => edit::remove_cmd(&ctx, a),
        Command::Status(a) => status::run(&ctx, a),
        Command::Update(a) => update::run(&ctx, a),
        Command::Quest(a) => quest::run(&ctx, a),
        Command::Profile(a) => profile::profile(&ctx, a),
        Command::Rollback(a) => profile::rollback(&ctx, a),
        Command::Activate(a) => profile::activate(&ctx, a),
        Command::Diff(a) => history::diff(&ctx, a),
        Command::Run(a) => history::run(&ctx, a),
        Command::Runs(a) => history::runs(&ctx, a),
        Command::Checkout(a) => history::checkout(&ctx, a),
        Command::Graph(a) => graph::run(&ctx, a),
        Command::Explain(a) => explain::run(&ctx, a),
        Command::Search(a) => search::run(&ctx, a),
        Command::Mcp(a) => mcp::run(&ctx, a),
        Command::Ingest(a) => ingest::run(&ctx, a),
        Command::Rm(a) => rm::run(&ctx, a),
        Command::Ls(a) => ls::run(&ctx, a),
        Command::Cat(a) => cat::run(&ctx, a),
        Command::Log(a) => log::run(&ctx, a),
        Command::Show(a) => show::run(&ctx, a),
        Command::Verify(a) => verify::run(&ctx, a),
        Command::Gc(a) => gc::run_gc(&ctx, a),
        Command::Purge(a) => gc::run_purge(&ctx, a),
        Command::Versions(a) => versions::run(&ctx, a),
        Command::Changes(a) => changes::run(&ctx, a),
        Command::Pins(a) => pins::run(&ctx, a),
        Command::Remote(a) => remote::run(&ctx, a),
        Command::Push(a) => remote::push(&ctx, a),
        Command::Pull(a) => remote::pull(&ctx, a),
        Command::Trust(a) => trust::run(&ctx, a),
        Command::Skill(a) => skill::run(&ctx, a),
        Command::Doctor(a) => doctor::run(&ctx, a),
        Command::Completions(a) => completions::run(a),
        Command::Manpages(a) => manpages::run(&ctx, a),
        Command::FillSpares => Ok(crate::ops::background::fill_spares(&ctx.ops(false)).map(|()| 0)?),
        Command::FillMemory => Ok(crate::ops::background::fill_memory(&ctx.ops(false)).map(|()| 0)?),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// The command lines a document shows: `$ memorix ...` lines and `memorix ...` code spans.
    pub(crate) fn commands_in(doc: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in doc.lines() {
            if let Some(cmd) = line.trim_start().strip_prefix("$ memorix ") {
                out.push(cmd.split(" #").next().unwrap_or(cmd).trim().to_string());
                continue;
            }
            for (i, span) in line.split('`').enumerate() {
                if i % 2 == 1
                    && let Some(cmd) = span.strip_prefix("memorix ")
                {
                    out.push(cmd.to_string());
                }
            }
        }
        out
    }

    /// Checks that `cmd` (without the leading `memorix`) names real subcommands and flags.
    pub(crate) fn check_command(cli: &clap::Command, cmd: &str) {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let mut sub = cli;
        let mut i = 0;
        while let Some(next) = words.get(i).and_then(|w| sub.find_subcommand(w)) {
            sub = next;
            i += 1;
        }
        assert!(
            i > 0 || words.first().is_none_or(|w| w.starts_with('-')),
            "`memorix {cmd}`: no such command"
        );
        for w in &words[i..] {
            if let Some(long) = w.strip_prefix("--").map(|f| f.split('=').next().unwrap_or(f)) {
                let known =
                    sub.get_arguments().chain(cli.get_arguments()).any(|a| a.get_long() == Some(long));
                assert!(known || long.is_empty(), "`memorix {cmd}`: no flag --{long}");
            }
        }
    }

    /// Every command and flag the skill mentions must exist, so the skill cannot drift.
    #[test]
    fn every_command_and_flag_in_the_skill_exists() {
        let cli = super::Cli::command();
        let commands = commands_in(crate::ops::skill::SKILL);
        assert!(commands.len() >= 20, "the skill shows the CLI ({} commands)", commands.len());
        for cmd in commands {
            check_command(&cli, &cmd);
        }
    }

    /// Every subcommand's help shows an example and fits a screen.
    #[test]
    fn every_help_has_an_example_and_fits_a_screen() {
        let mut cli = super::Cli::command();
        cli.build();
        for sub in cli.get_subcommands().filter(|s| s.get_name() != "help" && !s.is_hide_set()) {
            let help = sub.clone().render_long_help().to_string();
            assert!(help.contains("Example"), "`memorix {} --help` shows no example", sub.get_name());
            assert!(
                help.lines().count() <= 60,
                "`memorix {} --help` is {} lines",
                sub.get_name(),
                help.lines().count()
            );
        }
    }

    #[test]
    fn the_skill_has_front_matter() {
        let skill = crate::ops::skill::SKILL;
        assert!(skill.starts_with("---\nname: memorix\ndescription: "));
        assert!(skill[4..].contains("\n---\n"));
    }
}
