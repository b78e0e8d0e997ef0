//! Command-line parsing and dispatch (clap types only; work happens in the library).
use std::process::ExitCode;

pub fn main() -> ExitCode {
    ExitCode::SUCCESS
}
