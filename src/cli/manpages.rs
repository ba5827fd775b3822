use std::path::PathBuf;

use clap::CommandFactory;

use super::{Context, render};
use crate::diagnostics::FromIo;
use crate::ops::error::{Error, Result};

/// Write man pages (memorix.1 and one per subcommand) into DIR
///
/// Example: `memorix manpages /usr/local/share/man/man1`
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    std::fs::create_dir_all(&args.dir).map_err(Error::io("create directory", &args.dir))?;
    let cmd = super::Cli::command();
    let mut pages = vec![("memorix".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("memorix-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    for (name, page) in &pages {
        let mut out = Vec::new();
        clap_mangen::Man::new(page.clone())
            .render(&mut out)
            .map_err(Error::io("render the man page", &args.dir))?;
        let file = args.dir.join(format!("{name}.1"));
        std::fs::write(&file, out).map_err(Error::io("write", &file))?;
    }
    render::note(ctx, &format!("Wrote {} man pages to {}\n", pages.len(), args.dir.display()))?;
    Ok(0)
}
