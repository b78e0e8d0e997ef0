//! `stormlog migrate`'s flags; the work is `ops::runs::migrate`.
use std::io::Write;

use clap::Args;

use super::DbArg;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub db: DbArg,
}

/// Runs `migrate`.
pub fn run(a: MigrateArgs, out: &mut dyn Write) -> crate::ops::Result<Exit> {
    crate::ops::runs::migrate(&a.db.db, out)
}
