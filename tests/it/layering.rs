//! The layering rules of docs/architecture.md, checked by reading src/ as
//! text: which module may name clap, rusqlite and sysinfo, who may import
//! `cli`, and that the top-level modules import each other without a cycle.
//!
//! The rules hold with no exception. Test code (`#[cfg(test)]` items and
//! test-only module files) may build its fixtures with any module, so it is
//! left out of the import graph; the file rules apply to it too.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A rule a file breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    /// Names a clap type outside src/cli.
    Clap,
    /// Imports `crate::cli` outside src/cli and src/main.rs.
    CliImport,
    /// src/model or src/analysis names rusqlite, clap or sysinfo.
    PureCore,
    /// Names rusqlite outside src/db.
    Rusqlite,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every .rs file under src/, as (path relative to src/ with `/`, text).
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).unwrap();
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push((rel.join("/"), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&src(), &src(), &mut out);
    assert!(out.len() > 50, "src/ read: only {} files", out.len());
    out
}

/// The text of a file without its comments: line comments (`//`, `///`,
/// `//!`) and block comments. A `//` inside a string literal is kept.
fn code_of(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut in_str) = (0, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' && i + 1 < b.len() {
                out.push_str(&text[i..i + 2]);
                i += 2;
                continue;
            }
            in_str = c != b'"';
        } else if c == b'"' {
            in_str = true;
        } else if text[i..].starts_with("//") {
            i += text[i..].find('\n').unwrap_or(text.len() - i);
            continue;
        } else if text[i..].starts_with("/*") {
            i += text[i..].find("*/").map_or(text.len() - i, |e| e + 2);
            continue;
        } else if c == b'\'' && i + 3 < b.len() && b[i + 1] == b'\\' && b[i + 3] == b'\'' {
            // An escaped char literal such as '\"'.
            out.push_str(&text[i..i + 4]);
            i += 4;
            continue;
        } else if c == b'\'' && i + 2 < b.len() && b[i + 2] == b'\'' {
            // A one-byte char literal such as '"'.
            out.push_str(&text[i..i + 3]);
            i += 3;
            continue;
        }
        let n = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + n]);
        i += n;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifiers of `code`, in order.
fn idents(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty())
}

/// The modules named right after `crate::` in `code`, grouped imports
/// (`crate::{a, b::c}`) included.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(is_ident) {
            continue; // e.g. `foo_crate::`
        }
        let rest_trim = rest.trim_start();
        if let Some(group) = rest_trim.strip_prefix('{') {
            // The first identifier of each element at depth 1.
            let (mut depth, mut expect) = (1usize, true);
            let mut word = String::new();
            for c in group.chars() {
                if depth == 0 {
                    break;
                }
                if is_ident(c) {
                    if expect {
                        word.push(c);
                    }
                    continue;
                }
                if !word.is_empty() {
                    out.insert(std::mem::take(&mut word));
                    expect = false;
                }
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => expect = true,
                    _ => {}
                }
            }
        } else {
            let name: String = rest_trim.chars().take_while(|c| is_ident(*c)).collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The top-level module a file under src/ belongs to (`lib` and `main` for
/// the crate roots).
fn top(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap_or(rel);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The rules `rel` breaks.
fn violations(rel: &str, code: &str) -> BTreeSet<Rule> {
    let module = top(rel);
    let words: BTreeSet<&str> = idents(code).collect();
    let mut out = BTreeSet::new();
    let derives_clap = code.match_indices("#[derive(").any(|(at, _)| {
        let inner = &code[at..];
        let inner = &inner[..inner.find(")]").unwrap_or(inner.len())];
        idents(inner).any(|w| matches!(w, "Parser" | "Args" | "Subcommand" | "ValueEnum"))
    });
    let names_clap = words.contains("clap")
        || derives_clap
        || ["#[arg(", "#[arg]", "#[command(", "#[command]"]
            .iter()
            .any(|a| code.contains(a));
    if module != "cli" && names_clap {
        out.insert(Rule::Clap);
    }
    if !matches!(module, "cli" | "main") && crate_paths(code).contains("cli") {
        out.insert(Rule::CliImport);
    }
    if matches!(module, "model" | "analysis")
        && ["rusqlite", "clap", "sysinfo"]
            .iter()
            .any(|w| words.contains(w))
    {
        out.insert(Rule::PureCore);
    }
    if module != "db" && words.contains("rusqlite") {
        out.insert(Rule::Rusqlite);
    }
    out
}

/// Import edges between top-level modules (from `crate::X` paths), each with
/// the first file that makes it.
fn module_graph(files: &[(String, String)]) -> BTreeMap<(String, String), String> {
    let modules: BTreeSet<&str> = files
        .iter()
        .map(|(rel, _)| top(rel))
        .filter(|m| !matches!(*m, "lib" | "main"))
        .collect();
    let test_files = test_only_files(files);
    let mut edges = BTreeMap::new();
    for (rel, text) in files {
        let from = top(rel);
        if !modules.contains(from) || test_files.contains(rel) {
            continue;
        }
        for to in crate_paths(&without_tests(&code_of(text))) {
            if to != from && modules.contains(to.as_str()) {
                edges
                    .entry((from.to_owned(), to))
                    .or_insert_with(|| rel.clone());
            }
        }
    }
    edges
}

/// `code` without its `#[cfg(test)]` items (a test module's block, or its
/// `mod name;` line): tests may build their fixtures with any module, so the
/// import graph is the one of the code that ships.
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        // Further attributes of the same item.
        loop {
            let t = rest.trim_start();
            if t.starts_with("#[") {
                rest = &t[t.find(']').map_or(t.len(), |e| e + 1)..];
            } else {
                rest = t;
                break;
            }
        }
        let semi = rest.find(';').unwrap_or(rest.len());
        let open = rest.find('{').unwrap_or(rest.len());
        if semi < open {
            rest = &rest[(semi + 1).min(rest.len())..];
            continue;
        }
        // The block, braces in string literals skipped.
        let b = rest.as_bytes();
        let (mut depth, mut i, mut in_str) = (0usize, open, false);
        while i < b.len() {
            match (in_str, b[i]) {
                (true, b'\\') => i += 1,
                (true, b'"') => in_str = false,
                (false, b'"') => in_str = true,
                (false, b'{') => depth += 1,
                (false, b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        rest = &rest[(i + 1).min(rest.len())..];
    }
    out.push_str(rest);
    out
}

/// The files under src/ that are test modules (declared `#[cfg(test)] mod name;`).
fn test_only_files(files: &[(String, String)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (rel, text) in files {
        let code = code_of(text);
        let dir = match rel.rsplit_once('/') {
            Some((d, "mod.rs")) => format!("{d}/"),
            Some((d, f)) => format!("{d}/{}/", f.trim_end_matches(".rs")),
            None if rel == "lib.rs" || rel == "main.rs" => String::new(),
            None => format!("{}/", rel.trim_end_matches(".rs")),
        };
        let mut rest = code.as_str();
        while let Some(at) = rest.find("#[cfg(test)]") {
            rest = &rest[at + "#[cfg(test)]".len()..];
            let mut words = idents(rest.trim_start());
            if let (Some("mod"), Some(name)) = (words.next(), words.next()) {
                let after = rest.trim_start();
                let semi = after.find(';').unwrap_or(after.len());
                if semi < after.find('{').unwrap_or(after.len()) {
                    out.insert(format!("{dir}{name}.rs"));
                    out.insert(format!("{dir}{name}/mod.rs"));
                }
            }
        }
    }
    out
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    struct State<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(v: &'a str, s: &mut State<'a>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.next[v].clone() {
            if !s.index.contains_key(w) {
                visit(w, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.insert(w.to_owned());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                s.out.push(scc);
            }
        }
    }
    let nodes: Vec<&str> = next.keys().copied().collect();
    let mut s = State {
        next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(v, &mut s);
        }
    }
    s.out
}

#[test]
fn file_rules_hold() {
    let mut found = Vec::new();
    for (rel, text) in sources() {
        for rule in violations(&rel, &code_of(&text)) {
            found.push(format!("src/{rel}: {rule:?}"));
        }
    }
    assert!(
        found.is_empty(),
        "layering rules broken (docs/architecture.md says who may use what):\n{}",
        found.join("\n")
    );
}

#[test]
fn top_level_modules_import_without_a_cycle() {
    let graph = module_graph(&sources());
    let edges: BTreeSet<(String, String)> = graph.keys().cloned().collect();
    let mut report = Vec::new();
    for scc in cycles(&edges) {
        report.push(format!(
            "cycle among {}:",
            scc.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
        for ((a, b), file) in &graph {
            if scc.contains(a) && scc.contains(b) {
                report.push(format!("  {a} -> {b} (first in src/{file})"));
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn test_code_is_left_out_of_the_import_graph() {
    let code = "use crate::a::x;\n#[cfg(test)]\n#[allow(x)]\nmod tests {\n    use crate::b; let s = \"}\"; fn f() { crate::c::g(); }\n}\nfn h() { crate::d::k(); }\n#[cfg(test)]\nmod more;\n";
    let kept = crate_paths(&without_tests(code));
    assert_eq!(kept, ["a", "d"].iter().map(|s| s.to_string()).collect());
    let files = vec![
        ("ingest/mod.rs".to_owned(), code.to_owned()),
        ("db/x.rs".to_owned(), "#[cfg(test)] mod t;".to_owned()),
    ];
    let tests = test_only_files(&files);
    assert!(tests.contains("ingest/more.rs") && tests.contains("db/x/t.rs"));
    assert!(!tests.contains("ingest/tests.rs"));
}

#[test]
fn the_scanner_sees_grouped_imports_and_skips_comments() {
    let code = code_of(
        "use crate::{cli::Db, db::{self, x}, model};\n// use crate::ops;\n\
         let s = \"// crate::report\"; /* crate::html */ crate::py::f();\n\
         let c = '\"'; crate::slo::g(); let e = '\\\"'; crate::vllm::h();",
    );
    let got: Vec<String> = crate_paths(&code).into_iter().collect();
    assert_eq!(got, ["cli", "db", "model", "py", "report", "slo", "vllm"]);
    assert_eq!(
        violations("ops/x.rs", "#[derive(Debug, clap::Args)] struct A;"),
        BTreeSet::from([Rule::Clap])
    );
    assert_eq!(
        violations("analysis/x.rs", "use rusqlite::Connection;"),
        BTreeSet::from([Rule::PureCore, Rule::Rusqlite])
    );
    assert!(violations("db/x.rs", "use rusqlite::Connection;").is_empty());
    assert!(violations("cli/x.rs", "#[derive(Parser)] #[arg(long)]").is_empty());
}

#[test]
fn the_cycle_finder_finds_cycles_and_only_them() {
    let edges: BTreeSet<(String, String)> = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    let found = cycles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].iter().cloned().collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
}
