//! `collect-server`: the collector, given the database sink (`--db`) it
//! writes through, so `collector` itself never names the database.
use std::io::Write;

use crate::exit::Exit;

/// Samples the server until a stop reason, as `collector::run` does, storing
/// the polls in the project database when `--db` is given.
pub fn run(
    opts: &crate::collector::RawOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> super::Result<Exit> {
    crate::collector::run(opts, &crate::db::telemetry::open_live_sink, out, err)
        .map_err(|e| super::Error::new(e.exit(), e.to_string()))
}
