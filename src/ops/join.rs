//! How the server's telemetry is joined to the client's requests, as the
//! commands that build a report (`analyze`, `report`) are told it.

/// The server-join settings of a report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JoinConfig {
    /// The client reached the observed server directly (no proxy).
    pub direct_server: bool,
    /// Server clock minus client clock, in ns, for a server on another host.
    pub clock_offset_ns: Option<i64>,
    /// Uncertainty of `clock_offset_ns`, in ns.
    pub clock_uncertainty_ns: Option<i64>,
}
