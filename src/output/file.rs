//! Output files (`-o FILE`): written under a temporary name beside the
//! destination and renamed over it, so a reader never sees half a file and
//! a failed write leaves the previous one in place.
use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether missing parent folders of the destination are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parents {
    /// Create them (`--output`s whose help says so).
    Create,
    /// Leave them: a missing folder is the caller's error.
    Keep,
}

/// A write that failed: the path it concerned (the destination, or the
/// parent folder that could not be created) and the OS's reason.
#[derive(Debug)]
pub struct WriteFailed {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl std::fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteFailed {}

/// Writes `bytes` to `dest` whole: a temporary file in the same folder,
/// then a rename into place. A failure names `dest` (or the parent folder
/// that could not be created), never the temporary name.
pub fn write_atomic(dest: &Path, bytes: &[u8], parents: Parents) -> Result<(), WriteFailed> {
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteFailed { path, source }
    };
    let dir = dest.parent().filter(|p| !p.as_os_str().is_empty());
    if let (Some(parent), Parents::Create) = (dir, parents) {
        std::fs::create_dir_all(parent).map_err(failed(parent))?;
    }
    // Something other than a plain file in the way (a folder, a device
    // such as /dev/stdout, a pipe) is written as it is, or refused as a
    // plain write refuses it: a rename would replace it.
    if std::fs::metadata(dest).is_ok_and(|m| !m.is_file()) {
        return std::fs::write(dest, bytes).map_err(failed(dest));
    }
    let name = dest.file_name().map_or_else(
        || std::ffi::OsString::from("output"),
        std::ffi::OsStr::to_os_string,
    );
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(&name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = match dir {
        Some(d) => d.join(&temp_name),
        None => PathBuf::from(&temp_name),
    };
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, dest)
    })();
    written.map_err(|source| {
        let _ = std::fs::remove_file(&temp);
        WriteFailed {
            path: dest.to_path_buf(),
            source,
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.txt");
        std::fs::write(&dest, "old contents that are longer\n").unwrap();
        write_atomic(&dest, b"new\n", Parents::Keep).unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn parents_are_created_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a/b/out.txt");
        let e = write_atomic(&dest, b"x", Parents::Keep).unwrap_err();
        assert_eq!(e.path, dest);
        write_atomic(&dest, b"x", Parents::Create).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"x");
    }

    #[test]
    fn a_folder_in_the_way_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_atomic(dir.path(), b"x", Parents::Create).unwrap_err();
        assert_eq!(e.path, dir.path());
        assert_eq!(e.source.kind(), std::io::ErrorKind::IsADirectory);
    }
}
