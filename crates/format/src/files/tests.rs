use super::*;

const ROW: &str = "{\"witness_id\":\"w1\",\"seed\":1}\n";

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// Reads the file at `path` to its end through `pinned`, as a pass does.
fn read_through(pinned: &mut Pinned, path: &Path) -> Result<Vec<u8>, FileError> {
    let (mut file, _) = pinned.open(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    pinned.read_whole(path, bytes.len() as u64)?;
    Ok(bytes)
}

/// A file appended to between two reads of one command stops the second read, with a
/// message that names the file; an unchanged file reads again as often as asked; a fresh
/// pin reads the file as it is now.
#[test]
fn a_file_changed_between_two_reads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.witness.jsonl");
    std::fs::write(&path, ROW.repeat(3)).unwrap();
    let mut pinned = Pinned::new("witness file", MAX_STREAMED_WITNESS_BYTES);
    for _ in 0..2 {
        assert_eq!(
            read_through(&mut pinned, &path).unwrap().len(),
            3 * ROW.len()
        );
    }
    append(&path, ROW);
    let message = read_through(&mut pinned, &path).unwrap_err().to_string();
    assert!(
        message.contains("changed while the gate read it"),
        "{message}"
    );
    assert!(message.contains("w.witness.jsonl"), "{message}");
    let mut fresh = Pinned::new("witness file", MAX_STREAMED_WITNESS_BYTES);
    assert_eq!(
        read_through(&mut fresh, &path).unwrap().len(),
        4 * ROW.len()
    );
}

/// A file that grows while it is read (a run still appending) is not read as if it had
/// been whole; nor is one that grows past the bound.
#[test]
fn a_file_growing_while_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.witness.jsonl");
    std::fs::write(&path, ROW.repeat(2)).unwrap();
    let mut pinned = Pinned::new("witness file", MAX_STREAMED_WITNESS_BYTES);
    let (mut file, len) = pinned.open(&path).unwrap();
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    append(&path, &ROW.repeat(100));
    let err = pinned.read_whole(&path, len).unwrap_err();
    assert!(matches!(err, FileError::Changed { .. }), "{err}");
    // Read past what it had when opened.
    let err = pinned
        .read_whole(&path, len + ROW.len() as u64)
        .unwrap_err();
    assert!(matches!(err, FileError::Changed { .. }), "{err}");

    let mut small = Pinned::new("witness file", 10);
    let err = small.open(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read witness file `{}`: {} bytes is more than the 10 bytes a witness file may have",
            path.display(),
            102 * ROW.len()
        )
    );
    let err = small.read_whole(&path, 11).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read witness file `{}`: it grew past the 10 bytes a witness file may have",
            path.display()
        )
    );
}

/// The rules of a bounded read, each named in its message: a link, not a regular file, a
/// missing file (its cause as the source).
#[test]
fn bounded_reads_refuse_links_and_other_files_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    std::fs::write(&path, "{}").unwrap();
    assert_eq!(read_bounded(&path, "receipt", 2).unwrap(), b"{}");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert_eq!(
        read_bounded(&link, "receipt", 100).unwrap_err().to_string(),
        format!(
            "cannot read receipt `{}`: it is a symbolic link; evidence is never read through links",
            link.display()
        )
    );
    assert_eq!(
        read_bounded(dir.path(), "receipt", 100)
            .unwrap_err()
            .to_string(),
        format!(
            "cannot read receipt `{}`: not a regular file",
            dir.path().display()
        )
    );
    let missing = dir.path().join("missing.json");
    let err = read_bounded(&missing, "receipt", 100).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot read receipt `{}`", missing.display())
    );
    let source = std::error::Error::source(&err).unwrap();
    assert_eq!(
        source.downcast_ref::<std::io::Error>().unwrap().kind(),
        std::io::ErrorKind::NotFound
    );
}

/// A receipt scanned from memory gives the scans a receipt streamed from its file gives,
/// for every kind of scan; once held, every scan sees the bytes first read.
#[test]
fn a_receipt_scanned_from_memory_scans_as_one_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.receipt.json");
    let seeds: Vec<String> = (1..=9000u64).map(|s| s.to_string()).collect();
    let seeds = seeds.join(", ");
    let verdicts: String = (1..=9000u64)
        .map(|s| if s % 7 == 0 { 'F' } else { '.' })
        .collect();
    std::fs::write(
        &path,
        format!(
            r#"{{"patch_id": "p", "planned_seeds": [{seeds}], "attempted_seeds": [{seeds}], "stopped_early": false, "shrink_stable": true, "oracle_source": "human_reviewed", "fixture_hash": "sha256:x", "failing_seed": 7, "verdicts": "{verdicts}"}}"#
        ),
    )
    .unwrap();
    let wanted = [
        Wanted::default(),
        Wanted {
            keep_verdicts: true,
            ..Wanted::default()
        },
        Wanted {
            block: Some(1),
            member: Some(7),
            ..Wanted::default()
        },
        Wanted {
            verdicts: Some(verdicts.clone()),
            prefix: Some(100),
            ..Wanted::default()
        },
    ];
    let mut held = ReceiptScanner::new(&path);
    let mut streamed = ReceiptScanner::new(&path);
    streamed.in_memory = 10;
    for w in &wanted {
        let a = held.scan(w.clone()).expect("scanned from memory");
        assert_eq!(Some(&a), streamed.scan(w.clone()).as_ref());
    }
    assert!(held.bytes.is_some() && streamed.bytes.is_none());
    // Held: the file changed since is not read again.
    let first = held.scan(Wanted::default()).unwrap();
    std::fs::write(&path, "not a receipt").unwrap();
    assert_eq!(held.scan(Wanted::default()), Some(first));
    assert_eq!(streamed.scan(Wanted::default()), None);
    assert_eq!(ReceiptScanner::new(&path).scan(Wanted::default()), None);
}

/// Reading a scratch file back (even in part) does not move where the next bytes go;
/// a truncated one goes on after what it kept.
#[test]
fn a_scratch_file_reads_back_what_was_appended_while_appending_goes_on() {
    let mut scratch = ScratchFile::new().unwrap();
    // More than one write buffer, so that the first read stops inside.
    let n = SCRATCH_BUFFER as u64 / 4;
    for k in 0..n {
        scratch.append(&(k as u32).to_le_bytes()).unwrap();
    }
    let mut first = [0u8; 4];
    scratch.read_back().unwrap().read_exact(&mut first).unwrap();
    assert_eq!(first, 0u32.to_le_bytes());
    for k in n..n + 2 {
        scratch.append(&(k as u32).to_le_bytes()).unwrap();
    }
    let read = |scratch: &mut ScratchFile| {
        let mut bytes = Vec::new();
        scratch
            .read_back()
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect::<Vec<u32>>()
    };
    assert_eq!(read(&mut scratch), (0..n as u32 + 2).collect::<Vec<_>>());
    scratch.truncate(8).unwrap();
    scratch.append(&7u32.to_le_bytes()).unwrap();
    assert_eq!(read(&mut scratch), vec![0, 1, 7]);
    assert_eq!(scratch.len(), 12);
}

/// `read_to_end_known` reads a file to its end whatever length its status gave: the length
/// (one read), a file that grew after its status was read, one whose status says 0 bytes (as
/// `/proc` files do), one that shrank — and stops one byte past `max`, whatever `max` is.
#[test]
fn a_file_is_read_to_its_end_whatever_length_its_status_gave() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let text = "x".repeat(10_000);
    std::fs::write(&path, &text).unwrap();
    for told in [10_000, 0, 1, 9_999, 20_000] {
        let mut file = File::open(&path).unwrap();
        let bytes = read_to_end_known(&mut file, told, u64::MAX - 1).unwrap();
        assert_eq!(bytes, text.as_bytes(), "told {told}");
    }
    let mut file = File::open(&path).unwrap();
    let bytes = read_to_end_known(&mut file, 10_000, 100).unwrap();
    assert_eq!(bytes.len(), 101);
    let mut file = File::open(&path).unwrap();
    assert!(read_to_end_known(&mut file, 0, 0).unwrap().len() == 1);
    let mut file = File::open(&path).unwrap();
    assert_eq!(
        read_to_end_known(&mut file, 5, u64::MAX).unwrap().len(),
        10_000
    );
    std::fs::write(&path, "").unwrap();
    let mut file = File::open(&path).unwrap();
    assert!(read_to_end_known(&mut file, 0, 100).unwrap().is_empty());
}
