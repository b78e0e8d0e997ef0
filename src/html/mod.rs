//! Self-contained HTML pages (`--format html`): a run's report, the whole
//! project, a comparison. Charts are inline SVG drawn by [`svg`]; the page
//! layout lives in minijinja templates under `templates/` (compiled into the
//! binary); every string from the data is escaped for its place
//! ([`escape`]). Pages carry no URL to another host, no timestamp of their
//! making, and draw from quantiles and binned series, never one element per
//! request, so a page stays small for any run size.
pub mod compare;
pub mod escape;
pub mod page;
pub mod project;
pub mod run;
pub mod slo;
pub mod svg;

pub use page::{Chart, Table};
