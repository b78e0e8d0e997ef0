//! The `stormlog` binary: parse arguments, run, map the outcome to an exit code.

// Ingest and report allocate many small, short-lived values across threads;
// mimalloc serves them markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let exit = stormlog::cli::main();
    stormlog::util::exit_now(exit.code())
}
