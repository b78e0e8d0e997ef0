//! Pure analysis passes over validated records; no I/O.
pub mod case;
pub mod execution;
pub mod observers;
pub mod schedule;
pub mod segment;
pub mod stats;
pub mod sufficiency;
