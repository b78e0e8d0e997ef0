//! The Python built-ins the vLLM record parsers use; they live in `crate::py`.

pub use crate::py::builtins::*;
pub use crate::py::int::parse_int;
pub use crate::py::text::{is_py_space, splitlines};
