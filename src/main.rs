//! The `stormlog` binary: parse arguments, run, map the outcome to an exit code.
fn main() -> std::process::ExitCode {
    stormlog::cli::main()
}
