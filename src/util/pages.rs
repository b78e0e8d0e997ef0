//! Huge pages: the process-wide switch for transparent huge pages.

/// Transparent huge pages (Linux's 2 MiB pages) make first touching memory
/// several times cheaper: on the virtual machines we measure on, 100 MB took
/// 85 ms in 4 KiB pages and 14 ms in huge ones, and a report spends a third
/// of its time there. But any touched 2 MiB is then resident whole, which
/// for the many small allocations of an ingest or an analyze costs more
/// memory than it saves time (a 90,000-request analyze peaked at 88 MB with
/// them everywhere, 67 MB without). So they are off for the process
/// ([`small_pages`], first thing in `main`) and on only while a
/// [`HugePages`] lives, around the allocation of a run's requests, the one
/// large array. The switch is the process's (`PR_SET_THP_DISABLE`): memory
/// other threads first touch meanwhile may land on huge pages too. Where
/// the kernel has no such switch, nothing changes.
pub fn small_pages() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(true);
}

/// Huge pages allowed for as long as it lives (not to be nested: the first
/// to end turns them off).
pub struct HugePages(());

impl HugePages {
    pub fn allow() -> Self {
        #[cfg(target_os = "linux")]
        let _ = nix::sys::prctl::set_thp_disable(false);
        HugePages(())
    }
}

impl Drop for HugePages {
    fn drop(&mut self) {
        small_pages();
    }
}
