//! Small pages: the process-wide switch off of transparent huge pages.

/// Transparent huge pages (Linux's 2 MiB pages) stay off for the process,
/// first thing in `main`: any touched 2 MiB is resident whole, which for the
/// many small allocations of an ingest or an analyze costs more memory than
/// it saves time (a 90,000-request analyze peaked at 88 MB with them
/// everywhere, 67 MB without). They were once allowed around a run's one
/// large array, the request slots, but on the virtual machines we measure
/// on a free 2 MiB block is soon handed back to the host, so first touching
/// a huge page was fast only in back-to-back runs; the slots' pages are now
/// mapped ahead instead (`db::store::pack_read::map_pages`, and
/// docs/performance.md). Where the kernel has no such switch, nothing
/// changes.
pub fn small_pages() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(true);
}

/// Ends the process with `code` once the command is done, its output
/// flushed: without the allocator's clean-up at exit, which hands every
/// page of the heap back one `madvise` at a time (about 100 calls after a
/// 90,000-request report, for memory the kernel reclaims whole as the
/// process ends). Everything the command opened (databases, files, temporary
/// directories) was closed as it returned; only the atexit handlers and
/// Rust's flush of stdout are skipped, and stdout is flushed here first.
pub fn exit_now(code: u8) -> ! {
    use std::io::Write;
    let flushed = std::io::stdout().flush().is_ok();
    let code = if flushed { code } else { 1 };
    #[cfg(unix)]
    {
        let _ = std::io::stderr().flush();
        quick_exit(i32::from(code))
    }
    #[cfg(not(unix))]
    std::process::exit(i32::from(code))
}

/// `_exit(code)`.
#[cfg(unix)]
#[allow(unsafe_code)]
fn quick_exit(code: i32) -> ! {
    // SAFETY: `_exit` ends the process without running atexit handlers or
    // destructors; it takes any status and touches no memory of ours. The
    // caller flushed what Rust buffers (stdout), and nothing else holds
    // data that is lost by not running the handlers.
    unsafe { libc::_exit(code) }
}
