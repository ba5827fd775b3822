use clap::CommandFactory;

use crate::ops::error::Result;

/// Print a shell completion script
///
/// Example: `memorix completions bash > ~/.local/share/bash-completion/completions/memorix`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to complete for
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn run(args: Args) -> Result<u8> {
    clap_complete::generate(args.shell, &mut super::Cli::command(), "memorix", &mut std::io::stdout());
    Ok(0)
}
