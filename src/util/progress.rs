//! The progress bar: a byte-count bar on stderr for long ingests.
use std::path::Path;

/// A byte-count progress bar on stderr, only when asked for and stderr is a terminal.
pub fn progress_bar(enabled: bool, total: u64, path: &Path) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !enabled || !std::io::stderr().is_terminal() || total < (8 << 20) {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    let style = indicatif::ProgressStyle::with_template(
        // `wide_msg` shortens the file name so the line fits the terminal;
        // the sizes are binary units, as the final line's MiB.
        "{wide_msg} [{bar:20}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
    )
    .map(|s| s.progress_chars("=> "));
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar.set_message(path.display().to_string());
    Some(bar)
}
