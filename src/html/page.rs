//! The pieces every page is made of (a chart with its table alternative, a
//! table) and the template environment.
use serde::Serialize;

/// A table: a header and rows of display strings (escaped by the template).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A chart: its title, the SVG (already escaped by `svg`), a sentence saying
/// how to read it, and the same numbers as a table beneath it.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub title: String,
    pub svg: String,
    pub caption: String,
    pub table: Table,
}

const TEMPLATES: [(&str, &str); 8] = [
    ("style.css", include_str!("../../templates/style.css")),
    ("script.js", include_str!("../../templates/script.js")),
    ("macros.html", include_str!("../../templates/macros.html")),
    (
        "run_section.html",
        include_str!("../../templates/run_section.html"),
    ),
    ("run.html", include_str!("../../templates/run.html")),
    ("project.html", include_str!("../../templates/project.html")),
    ("compare.html", include_str!("../../templates/compare.html")),
    ("slo.html", include_str!("../../templates/slo.html")),
];

/// Renders the template `name` with `ctx`. The templates are part of the
/// binary; an error here is a bug in them, reported with the template's words.
pub fn render(name: &str, ctx: impl Serialize) -> Result<String, String> {
    let mut env = minijinja::Environment::new();
    // HTML escaping for .html templates (minijinja's default), none for
    // the CSS and script, which hold no data.
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html") {
            minijinja::AutoEscape::Html
        } else {
            minijinja::AutoEscape::None
        }
    });
    for (n, src) in TEMPLATES {
        env.add_template(n, src)
            .map_err(|e| format!("template {n}: {e}"))?;
    }
    let t = env
        .get_template(name)
        .map_err(|e| format!("template {name}: {e}"))?;
    t.render(minijinja::Value::from_serialize(&ctx))
        .map_err(|e| format!("template {name}: {e}"))
}
