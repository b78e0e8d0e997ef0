//! Output shared by every command: files written whole (a temporary name,
//! then a rename) and the CSV field form. Free of the commands themselves, so
//! `report`, `history`, `sqlcmd` and `ops` can all use it without importing
//! one another.
pub mod csv;
pub mod file;

pub use csv::csv_field;
pub use file::{write_atomic, Parents, WriteFailed};
