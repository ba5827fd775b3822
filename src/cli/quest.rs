use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::quest;
use crate::ops::quest::Quest;

/// Find views by intent: quests record why each derivation and environment was built
///
/// Examples: `memorix quest search python web`, `memorix quest show 3f2a9c01`
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: QuestCommand,
}

#[derive(Debug, clap::Subcommand)]
enum QuestCommand {
    /// List every quest
    List,
    /// Show one quest by id prefix
    Show {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Rank quests by how well TEXT matches their intents and selected paths
    Search {
        #[arg(value_name = "TEXT", required = true)]
        text: Vec<String>,
    },
}

fn line(q: &Quest) -> String {
    let state = if q.is_stale() { "stale" } else { "fresh" };
    let what = q.selection.iter().flat_map(|s| s.select.iter()).cloned().collect::<Vec<_>>().join(" ");
    let intent = q.intents.first().map(String::as_str).unwrap_or("(no intent)");
    format!("{} {:<11} {state}  {intent}  [{what}]", q.id.short(), q.kind.as_str())
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let mut s = Text::default();
    match args.command {
        QuestCommand::List => {
            let quests = quest::list(&ctx.ops(false))?;
            if ctx.json {
                render::json(&quests)?;
                return Ok(0);
            }
            for q in &quests {
                s.line(format_args!("{}", line(q)));
            }
        }
        QuestCommand::Show { id } => {
            let q = quest::show(&ctx.ops(false), &id)?;
            if ctx.json {
                render::json(&q)?;
                return Ok(0);
            }
            s.push(toml::to_string(&q).expect("a quest serializes"));
        }
        QuestCommand::Search { text } => {
            let hits = quest::search(&ctx.ops(false), &text.join(" "))?;
            if ctx.json {
                render::json(&hits)?;
                return Ok(0);
            }
            for h in &hits {
                s.line(format_args!("{:>3} {}", h.score, line(&h.quest)));
            }
        }
    }
    render::text(&s)?;
    Ok(0)
}
