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
