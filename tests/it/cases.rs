//! The fixture harness: every walk over the conformance corpus reads its
//! cases through [`Case`], so the folder layout is known in one place and a
//! missing folder or case fails the test instead of passing unchecked.
//!
//! A case is a folder holding its input (`artifact.jsonl`, or the arms'
//! files a compare case names in its flags), `command` (absent: `analyze`),
//! `args` (the reference's flags, written with `shlex.join`; no case needs
//! quoting), and what the reference gave: `expected.json` and
//! `expected.txt`, or for a refusal `expected.rc` and `expected.prefix`
//! (the start of its error message).
use std::path::{Path, PathBuf};

/// The corpus folders.
pub const CONFORMANCE: &str = "tests/fixtures/conformance/cases";
pub const BAD: &str = "tests/fixtures/conformance/bad";
pub const SEGMENT: &str = "tests/fixtures/segment";

#[derive(Debug, Clone)]
pub struct Case {
    /// The folder's name, which every failure message starts with.
    pub name: String,
    pub dir: PathBuf,
    /// `analyze` or `compare`.
    pub command: String,
    pub args: Vec<String>,
}

impl Case {
    fn load(dir: PathBuf) -> Case {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| panic!("{}: not a case folder", dir.display()));
        assert!(dir.is_dir(), "case {name}: no folder {}", dir.display());
        let command = std::fs::read_to_string(dir.join("command"))
            .map(|c| c.trim().to_owned())
            .unwrap_or_else(|_| "analyze".to_owned());
        let args = std::fs::read_to_string(dir.join("args"))
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        Case {
            name,
            dir,
            command,
            args,
        }
    }

    /// A file of the case; fails, naming the case, when it is not there.
    pub fn file(&self, name: &str) -> PathBuf {
        let p = self.dir.join(name);
        assert!(p.exists(), "case {}: no {name}", self.name);
        p
    }

    /// A file of the case, read; fails, naming the case, when it is not there.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name))
            .unwrap_or_else(|e| panic!("case {}: {name}: {e}", self.name))
    }

    pub fn has(&self, name: &str) -> bool {
        self.dir.join(name).exists()
    }

    pub fn is_compare(&self) -> bool {
        self.command == "compare"
    }

    /// A refusal: the reference exited with a status and a message.
    pub fn is_refusal(&self) -> bool {
        self.has("expected.rc")
    }

    /// The reference's exit status of a refusal.
    pub fn expected_rc(&self) -> i32 {
        let rc = self.read("expected.rc");
        rc.trim()
            .parse()
            .unwrap_or_else(|e| panic!("case {}: expected.rc {rc:?}: {e}", self.name))
    }

    /// The start of the reference's error message of a refusal.
    pub fn expected_prefix(&self) -> String {
        self.read("expected.prefix")
            .trim_end_matches('\n')
            .to_owned()
    }

    /// `infer analyze artifact.jsonl ARGS` or `infer compare ARGS`, run in
    /// the case's folder.
    pub fn infer_argv(&self) -> Vec<String> {
        let mut argv: Vec<String> = if self.is_compare() {
            vec!["infer".into(), "compare".into()]
        } else {
            vec!["infer".into(), "analyze".into(), "artifact.jsonl".into()]
        };
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// The flags as one line, for looking for a flag.
    pub fn args_line(&self) -> String {
        self.args.join(" ")
    }
}

fn root(folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(folder)
}

/// Every case of a corpus folder, sorted by name; fails when the folder is
/// missing or holds none.
pub fn all(folder: &str) -> Vec<Case> {
    let dir = root(folder);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus folder {folder}: {e}"))
        .map(|e| e.unwrap_or_else(|e| panic!("{folder}: {e}")).path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "corpus folder {folder} holds no case");
    dirs.into_iter().map(Case::load).collect()
}

/// One named case of a corpus folder; fails when it is missing.
pub fn named(folder: &str, name: &str) -> Case {
    let dir = root(folder).join(name);
    assert!(dir.is_dir(), "case {name} not found in {folder}");
    Case::load(dir)
}

/// A conformance case by name (see [`named`]).
pub fn conformance(name: &str) -> Case {
    named(CONFORMANCE, name)
}

#[test]
fn a_missing_case_or_folder_fails() {
    assert!(std::panic::catch_unwind(|| named(CONFORMANCE, "no_such_case")).is_err());
    assert!(std::panic::catch_unwind(|| all("tests/fixtures/no_such_folder")).is_err());
    let c = conformance("burst");
    assert_eq!(c.command, "analyze");
    assert!(c.has("expected.json") && !c.is_refusal());
}
