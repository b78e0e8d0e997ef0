//! Every Python-compatible behaviour the reports inherit from the reference, each once.
//!
//! The reference implementation is Python, and the reports must agree with
//! it byte for byte, including where Python's rules are unlike Rust's. Each
//! rule lives here once and is tested against what CPython 3.11 does; the
//! rest of the program calls it:
//!
//! - [`json`]: `json.loads`/`json.dumps` over `serde_json::Value`, with the
//!   sentinels standing for NaN, ±∞ and integers past 64 bits;
//! - [`float`]: `repr(float)` and the `format()` specs `g`, `.Nf`, `.N%`,
//!   and `float(str)`;
//! - [`int`]: integers of any size and `int()`;
//! - [`value`]: truthiness, `str()`/`repr()`, `==`, type names;
//! - [`text`]: `repr(str)`, `isspace`, `strip`, `splitlines`, universal
//!   newlines, and the digit/space normalisation `int()`/`float()` share;
//! - [`builtins`]: `dict()`, iteration, unpacking and subscripting of
//!   decoded JSON with Python's error texts.
//!
//! Nothing here imports another top-level module of the crate.

pub mod builtins;
pub mod float;
pub mod int;
pub mod json;
pub mod printable;
pub mod text;
pub mod value;

pub use int::{int_call, Int, IntSum};
