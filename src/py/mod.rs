//! The home for Python-compatible behaviour.
//!
//! The reference implementation is Python, and the reports must agree with
//! it number for number, including where Python's rules are unlike Rust's.
//! Each such rule lives here once and is tested once against what CPython
//! does; the rest of the program imports it. For now this module holds
//! Python's integers ([`Int`]: no size limit, so sums and differences of
//! values past 64 bits stay exact) and the `int()` conversion the reference
//! applies to a record's values ([`int_call`]). The JSON rules still live in
//! `crate::pyjson`; the architecture work moves them here.

pub mod int;

pub use int::{int_call, Int};
