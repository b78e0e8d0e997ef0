//! Small helpers shared by the commands, one concept per file: dates,
//! hashing, the progress bar, terminal tables, the small-pages switch, timings,
//! human units and LEB128 varints. The items are re-exported here so `crate::util::name`
//! keeps working.

pub mod dates;
pub mod hashing;
pub mod human;
pub mod pages;
pub mod progress;
pub mod table;
pub mod timings;
pub mod varint;

pub use dates::{iso8601_utc, iso8601_utc_signed};
pub use hashing::{sha256_bytes, sha256_file};
pub use human::{human_bytes, human_seconds};
pub use pages::{exit_now, small_pages};
pub use progress::progress_bar;
pub use table::{pad, printable, table};
pub use timings::Phases;
