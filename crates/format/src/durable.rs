//! Durable writing: whole files are replaced atomically (temp file in the same directory,
//! fsync, rename, fsync of the directory); journals are appended one line per `write`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Replaces `path` with `bytes` atomically: a reader sees the old file or the new one,
/// never a mix, and a crash leaves one of the two. Creates missing parent directories.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".seedledger-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

/// An append-only JSON Lines file: each line goes to the file in one `write` call, so
/// concurrent appenders never interleave within a line and a crash loses at most the line
/// being written.
#[derive(Debug)]
pub struct JsonLinesWriter {
    file: File,
    buf: Vec<u8>,
}

impl JsonLinesWriter {
    /// Opens `path` for appending, creating it (and its parent directories) if needed.
    pub fn open(path: &Path) -> io::Result<JsonLinesWriter> {
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(JsonLinesWriter {
            file,
            buf: Vec::new(),
        })
    }

    /// Appends one line. `line` must not contain a newline.
    pub fn append(&mut self, line: &str) -> io::Result<()> {
        debug_assert!(!line.contains('\n'));
        self.buf.clear();
        self.buf.extend_from_slice(line.as_bytes());
        self.buf.push(b'\n');
        self.file.write_all(&self.buf)
    }

    /// Appends several pre-formatted lines (each ending in `\n`) in one `write`.
    pub fn append_raw(&mut self, lines: &[u8]) -> io::Result<()> {
        debug_assert!(lines.is_empty() || lines.ends_with(b"\n"));
        self.file.write_all(lines)
    }

    /// Flushes the file to stable storage.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

fn sync_dir(dir: &Path) {
    // Best effort: directory fsync is not supported everywhere.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/receipt.json");
        write_atomic(&path, b"{\"a\":1}").unwrap();
        write_atomic(&path, b"{\"a\":2}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":2}");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("receipt.json")]);
    }

    #[test]
    fn json_lines_append_across_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        JsonLinesWriter::open(&path)
            .unwrap()
            .append("{\"n\":1}")
            .unwrap();
        let mut w = JsonLinesWriter::open(&path).unwrap();
        w.append("{\"n\":2}").unwrap();
        w.append_raw(b"{\"n\":3}\n").unwrap();
        w.sync().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"
        );
    }
}
