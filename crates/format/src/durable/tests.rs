use super::*;

#[test]
fn lines_appended_at_a_path_follow_a_file_replaced_while_they_waited_for_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jsonl");
    std::fs::write(&path, "{\"old\":1}\n").unwrap();
    // A rewrite holds the old file's lock, puts a new file in its place, then lets go.
    let old = File::open(&path).unwrap();
    old.lock().unwrap();
    let appender = {
        let path = path.clone();
        std::thread::spawn(move || append_lines_at(&path, b"{\"late\":2}\n"))
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    write_atomic(&path, b"{\"new\":1}\n").unwrap();
    old.unlock().unwrap();
    appender.join().unwrap().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"new\":1}\n{\"late\":2}\n"
    );
    // A writer opened before the replacement writes nothing through the old file.
    let mut stale = JsonLinesWriter::open(&path).unwrap();
    write_atomic(&path, b"{\"newer\":1}\n").unwrap();
    assert!(!stale.append_raw_if_at(&path, b"{\"lost\":3}\n").unwrap());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"newer\":1}\n");
}

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

/// A file replaced by an exchange (a receipt's final text over its open one): the new
/// text at the path, the old file gone from the directory but intact for whoever still
/// holds it open (as after a rename), no temporary file left; where nothing is at the
/// path yet, the file is put there; and `before_rename` failing leaves the path as it was.
#[test]
fn a_file_replaced_by_an_exchange_is_whole_and_leaves_nothing_behind() {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("receipt.json");
    let write = |text: &'static [u8], before: io::Result<()>| {
        write_atomic_with_before_rename(&path, |w| w.write_all(text), || before, Fsync::Skip)
    };
    write(b"{\"open\":true}", Ok(())).unwrap();
    let mut old = File::open(&path).unwrap();
    let old_inode = old.metadata().unwrap().ino();
    write(b"{\"open\":false}", Ok(())).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"open\":false}");
    let mut held = String::new();
    old.read_to_string(&mut held).unwrap();
    assert_eq!(held, "{\"open\":true}");
    assert_eq!(
        old.metadata().unwrap().nlink(),
        0,
        "the old file has no name left"
    );
    let new_inode = std::fs::metadata(&path).unwrap().ino();
    assert_ne!(new_inode, old_inode);
    let refused = write(b"{\"x\":1}", Err(io::Error::other("rows not written")));
    assert!(refused.is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"open\":false}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("receipt.json")]);
    // A directory at the path is refused, as a rename refuses it, and left where it is.
    let taken = dir.path().join("taken");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("inside"), "x").unwrap();
    let refused =
        write_atomic_with_before_rename(&taken, |w| w.write_all(b"{}"), || Ok(()), Fsync::Skip);
    assert!(refused.is_err());
    assert_eq!(std::fs::read_to_string(taken.join("inside")).unwrap(), "x");
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// `path` replaced with `text`, the file it held kept as `spare`.
fn replace_keeping_as_spare(path: &Path, text: &[u8], spare: &Path) {
    write_atomic_with_before_rename_keeping(
        path,
        |w| w.write_all(text),
        || Ok(()),
        Fsync::Skip,
        spare,
    )
    .unwrap();
}

/// A file replaced with a spare named is kept under that name (on Linux, where it is
/// exchanged out), and the next file written from the spare is that very file, rewritten
/// whole (a longer old text cut to the new one), given the file mode, put at its path;
/// nothing else is left behind and no file is freed.
#[cfg(target_os = "linux")]
#[test]
fn a_replaced_file_is_kept_as_the_spare_and_rewritten_as_the_next_file() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.receipt.json");
    let spare = dir.path().join(".seedledger-p.spare.tmp");
    let long = "{\"open\":true}".repeat(400);
    write_atomic(&path, long.as_bytes()).unwrap();
    let old_inode = std::fs::metadata(&path).unwrap().ino();
    replace_keeping_as_spare(&path, b"{\"final\":1}", &spare);
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"final\":1}");
    assert_eq!(std::fs::read_to_string(&spare).unwrap(), long);
    assert_eq!(std::fs::metadata(&spare).unwrap().ino(), old_inode);
    // The next file at another path (a run's open receipt after the archiving).
    std::fs::rename(&path, dir.path().join("p.archived.json")).unwrap();
    std::fs::set_permissions(&spare, Permissions::from_mode(0o600)).unwrap();
    let file =
        write_atomic_file_from_spare(&path, &spare, |w| w.write_all(b"{\"open\":2}"), Fsync::Skip)
            .unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.ino(), old_inode, "the spare itself, not a new file");
    assert_eq!(file.metadata().unwrap().ino(), old_inode);
    assert_eq!(meta.mode() & 0o7777, FILE_MODE);
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"open\":2}");
    assert_eq!(
        names_in(dir.path()),
        ["p.archived.json", "p.receipt.json"],
        "the spare was used up"
    );
    // No spare: a new temporary file, as before.
    std::fs::remove_file(&path).unwrap();
    write_atomic_file_from_spare(&path, &spare, |w| w.write_all(b"{}"), Fsync::Wait).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"{}");
    assert_eq!(names_in(dir.path()), ["p.archived.json", "p.receipt.json"]);
}

/// A spare that is not a file of its own (another name's file, a symbolic link, a
/// directory) is never written: the file is made new, and what the spare name points at
/// stays as it was.
#[cfg(target_os = "linux")]
#[test]
fn a_spare_that_is_not_a_file_of_its_own_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.json");
    let spare = dir.path().join(".seedledger-p.spare.tmp");
    let path = dir.path().join("p.receipt.json");
    let make: [(&str, &dyn Fn()); 3] = [
        ("a hard link", &|| {
            std::fs::hard_link(&other, &spare).unwrap()
        }),
        ("a symbolic link", &|| {
            std::os::unix::fs::symlink(&other, &spare).unwrap()
        }),
        ("a directory", &|| std::fs::create_dir(&spare).unwrap()),
    ];
    for (what, make) in make {
        std::fs::write(&other, "keep me").unwrap();
        make();
        write_atomic_file_from_spare(&path, &spare, |w| w.write_all(b"{}"), Fsync::Skip).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}", "{what}");
        assert_eq!(
            std::fs::read_to_string(&other).unwrap(),
            "keep me",
            "{what}"
        );
        assert!(
            std::fs::symlink_metadata(&spare).is_ok(),
            "{what}: left as it was"
        );
        let _ = std::fs::remove_file(&spare).or_else(|_| std::fs::remove_dir(&spare));
        std::fs::remove_file(&path).unwrap();
    }
    // A directory at the spare's name does not take the replaced file: it is removed.
    std::fs::write(&path, "old").unwrap();
    std::fs::create_dir(&spare).unwrap();
    replace_keeping_as_spare(&path, b"new", &spare);
    assert_eq!(std::fs::read(&path).unwrap(), b"new");
    assert!(std::fs::metadata(&spare).unwrap().is_dir());
    assert_eq!(
        names_in(dir.path()),
        [".seedledger-p.spare.tmp", "other.json", "p.receipt.json"]
    );
}

/// `rename_no_replace` moves a file, and refuses (`AlreadyExists`) where the new name is
/// taken, leaving both files as they were.
#[test]
fn a_rename_without_replacing_refuses_a_taken_name() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, "a").unwrap();
    rename_no_replace(&a, &b).unwrap();
    assert_eq!(names_in(dir.path()), ["b"]);
    std::fs::write(&a, "a2").unwrap();
    let refused = rename_no_replace(&a, &b).unwrap_err();
    assert_eq!(refused.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "a2");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "a");
}

/// A file written in pieces past several writeback starts (every 4 MiB) holds exactly
/// the bytes written, in order.
#[test]
fn a_large_atomic_write_started_back_as_it_went_holds_every_byte() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.json");
    let pieces: Vec<Vec<u8>> = (0..700u32)
        .map(|i| {
            let len = 1 + (i as usize * 7919) % 40_000;
            (0..len).map(|j| (i as usize * 31 + j) as u8).collect()
        })
        .collect();
    write_atomic_with(&p, |w| {
        for piece in &pieces {
            w.write_all(piece)?;
        }
        Ok(())
    })
    .unwrap();
    let all: Vec<u8> = pieces.concat();
    assert!(all.len() as u64 > 3 * WRITEBACK_EVERY, "{}", all.len());
    assert_eq!(std::fs::read(&p).unwrap(), all);
}

/// Under a umask that masks every bit (a property under test may set one), the files and
/// directories created here still get their modes; a file that existed keeps its own.
#[test]
fn created_files_and_directories_get_their_modes_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let kept = dir.path().join("kept.jsonl");
    std::fs::write(&kept, b"{}\n").unwrap();
    std::fs::set_permissions(&kept, Permissions::from_mode(0o600)).unwrap();
    // SAFETY: umask(2) touches no memory; the umask is set back below.
    let before = unsafe { libc::umask(0o777) };
    let made = (|| {
        JsonLinesWriter::open(&dir.path().join("a/b/rows.jsonl"))?.append("{}")?;
        JsonLinesWriter::open(&kept)?.append("{}")?;
        write_atomic(&dir.path().join("c/receipt.json"), b"{}")
    })();
    // SAFETY: as above.
    unsafe { libc::umask(before) };
    made.unwrap();
    assert_eq!(mode(&dir.path().join("a")), DIR_MODE);
    assert_eq!(mode(&dir.path().join("a/b")), DIR_MODE);
    assert_eq!(mode(&dir.path().join("a/b/rows.jsonl")), FILE_MODE);
    assert_eq!(mode(&dir.path().join("c")), DIR_MODE);
    assert_eq!(mode(&dir.path().join("c/receipt.json")), FILE_MODE);
    assert_eq!(mode(&kept), 0o600);
    assert_eq!(std::fs::read(&kept).unwrap(), b"{}\n{}\n");
}

#[test]
fn atomic_files_are_world_readable_and_new_ones_never_clobber() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    write_atomic_new(&path, b"first").unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o644
    );
    let err = write_atomic_new(&path, b"second").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&path).unwrap(), b"first");
    let mut f = write_atomic_file(&path, b"third").unwrap();
    let mut text = String::new();
    f.read_to_string(&mut text).unwrap();
    assert_eq!(text, "third");
}

#[test]
fn a_torn_last_line_is_cut_before_appending() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jsonl");
    std::fs::write(&path, "{\"n\":1}\n{\"n\":2, \"tor").unwrap();
    let mut w = JsonLinesWriter::open(&path).unwrap();
    assert_eq!(w.torn_bytes_removed(), 12);
    w.append("{\"n\":3}").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"n\":1}\n{\"n\":3}\n"
    );
    std::fs::write(&path, "no newline at all").unwrap();
    let w = JsonLinesWriter::open(&path).unwrap();
    assert_eq!(w.torn_bytes_removed(), 17);
    assert_eq!(std::fs::read(&path).unwrap(), b"");
    // A whole last row that only lacks its newline is kept.
    std::fs::write(&path, "{\"n\":1}\n{\"n\":2}").unwrap();
    let mut w = JsonLinesWriter::open(&path).unwrap();
    assert_eq!(w.torn_bytes_removed(), 0);
    w.append("{\"n\":3}").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"
    );
    // A fragment left behind by another writer after this one opened is cut too.
    let mut w = JsonLinesWriter::open(&path).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"n\":4, \"to")
        .unwrap();
    w.append("{\"n\":5}").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":5}\n"
    );
    let big = format!("{}\n{}", "x".repeat(9000), "y".repeat(5000));
    std::fs::write(&path, &big).unwrap();
    assert_eq!(
        JsonLinesWriter::open(&path).unwrap().torn_bytes_removed(),
        5000
    );
    assert_eq!(std::fs::read(&path).unwrap().len(), 9001);
}

/// A writer opened for appends leaves the file as it is until its first append, which cuts a
/// torn last line first, whichever append it is (one that trusts the tail afterwards too),
/// and creates the missing directories of a new file.
#[test]
fn a_writer_opened_for_appends_repairs_at_its_first_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jsonl");
    let torn = "{\"n\":1}\n{\"n\":2, \"tor";
    type Append = fn(&mut JsonLinesWriter, &[u8]) -> io::Result<()>;
    let appends: [Append; 3] = [
        |w, rows| w.append_raw_trusting_tail(rows),
        |w, rows| w.append_raw(rows),
        |w, rows| w.append_raw_noting(rows, |_| {}),
    ];
    for append in appends {
        std::fs::write(&path, torn).unwrap();
        let mut w = JsonLinesWriter::open_for_appends(&path).unwrap();
        assert_eq!(w.torn_bytes_removed(), 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), torn);
        append(&mut w, b"{\"n\":3}\n").unwrap();
        w.append_raw_trusting_tail(b"{\"n\":4}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":3}\n{\"n\":4}\n"
        );
    }
    // A first call that writes nothing (the lines it completes are all there) leaves the end
    // unchecked: the next append still cuts the fragment after them.
    std::fs::write(&path, torn).unwrap();
    let mut w = JsonLinesWriter::open_for_appends(&path).unwrap();
    assert_eq!(w.complete_append(Some(0), b"{\"n\":1}\n").unwrap(), 0);
    w.append_raw_trusting_tail(b"{\"n\":3}\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"n\":1}\n{\"n\":3}\n"
    );
    let new = dir.path().join("a/b/w.jsonl");
    let mut w = JsonLinesWriter::open_for_appends(&new).unwrap();
    w.append_raw_trusting_tail(b"{}\n").unwrap();
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "{}\n");
}

/// A process dies after any number of bytes of its append: completing the append leaves
/// every one of its lines in the file exactly once, in order — whether the file still
/// ends with its fragment, or another appender cut the fragment and wrote after it.
#[test]
fn a_dead_append_is_completed_wherever_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jsonl");
    let base = "{\"n\":0}\n";
    let lines = b"{\"n\":1,\"s\":\"a\"}\n{\"n\":2}\n{\"n\":3,\"s\":\"bb\"}\n";
    let at = base.len() as u64;
    for cut in 0..=lines.len() {
        // The file as the dead process left it.
        let mut left = base.as_bytes().to_vec();
        left.extend_from_slice(&lines[..cut]);
        std::fs::write(&path, &left).unwrap();
        let mut w = JsonLinesWriter::open(&path).unwrap();
        // `open` repaired the tail: cut a fragment, or completed a whole last row.
        let kept = std::fs::metadata(&path).unwrap().len() as usize;
        let written = w.complete_append(Some(at), lines).unwrap();
        let mut want = base.as_bytes().to_vec();
        want.extend_from_slice(lines);
        assert_eq!(std::fs::read(&path).unwrap(), want, "cut at {cut}");
        // What `open` cut (a torn fragment) is written again, and nothing else.
        assert_eq!(written as usize, want.len() - kept, "cut at {cut}");

        // Another appender came first: it cut the fragment and appended its own line.
        std::fs::write(&path, &left).unwrap();
        JsonLinesWriter::open(&path)
            .unwrap()
            .append("{\"other\":true}")
            .unwrap();
        JsonLinesWriter::open(&path)
            .unwrap()
            .complete_append(Some(at), lines)
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let got: Vec<&str> = text.lines().collect();
        let ours = [
            "{\"n\":1,\"s\":\"a\"}",
            "{\"n\":2}",
            "{\"n\":3,\"s\":\"bb\"}",
        ];
        // A row whose bytes all landed but its newline counts as whole (the other
        // appender's repair gave it the newline).
        let whole_before = lines[..(cut + 1).min(lines.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        let mut expected = vec!["{\"n\":0}"];
        expected.extend_from_slice(&ours[..whole_before]);
        expected.push("{\"other\":true}");
        expected.extend_from_slice(&ours[whole_before..]);
        if cut == lines.len() {
            // The whole append had landed: nothing is written again.
            expected = vec!["{\"n\":0}", ours[0], ours[1], ours[2], "{\"other\":true}"];
        }
        assert_eq!(got, expected, "cut at {cut}, another appender after");
    }
    // No append under way: the lines are appended (after repairing a foreign torn tail).
    std::fs::write(&path, "{\"n\":0}\n{\"x\":").unwrap();
    let mut w = JsonLinesWriter::open(&path).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"y\":")
        .unwrap();
    w.complete_append(None, b"{\"n\":1}\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"n\":0}\n{\"n\":1}\n"
    );
    // An offset past the file's end (it was cut by hand): everything is appended.
    w.complete_append(Some(1 << 20), b"{\"n\":2}\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n"
    );
    // `append_raw_noting` tells the offset its lines start at.
    let mut noted = None;
    w.append_raw_noting(b"{\"n\":3}\n", |at| noted = Some(at))
        .unwrap();
    assert_eq!(noted, Some(24));
    assert_eq!(w.complete_append(noted, b"{\"n\":3}\n").unwrap(), 0);
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

/// A reader still holding the file that became the spare (an open receipt a slow reader
/// opened during its run) keeps it whole: the spare is not rewritten while anything else has
/// it open, a new file is made instead; once let go, the spare is the next file.
#[cfg(target_os = "linux")]
#[test]
fn a_spare_a_reader_still_holds_is_not_rewritten() {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.receipt.json");
    let spare = dir.path().join(".seedledger-p.spare.tmp");
    let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
    write_atomic(&path, b"{\"run\":\"N\",\"open\":true}").unwrap();
    let mut reader = File::open(&path).unwrap();
    let held = reader.metadata().unwrap().ino();
    replace_keeping_as_spare(&path, b"{\"run\":\"N\"}", &spare);
    assert_eq!(ino(&spare), held);
    std::fs::rename(&path, dir.path().join("p.N.receipt.json")).unwrap();
    let open_m = |w: &mut dyn Write| w.write_all(b"{\"run\":\"M\",\"open\":true}");
    write_atomic_file_from_spare(&path, &spare, open_m, Fsync::Skip).unwrap();
    assert_ne!(ino(&path), held, "a new file, not the one held");
    assert_eq!(ino(&spare), held, "the spare left as it was");
    let mut text = String::new();
    reader.read_to_string(&mut text).unwrap();
    assert_eq!(text, "{\"run\":\"N\",\"open\":true}");
    drop(reader);
    std::fs::rename(&path, dir.path().join("p.M.receipt.json")).unwrap();
    write_atomic_file_from_spare(&path, &spare, |w| w.write_all(b"{}"), Fsync::Skip).unwrap();
    assert_eq!(ino(&path), held, "let go, the spare is used");
    assert_eq!(std::fs::read(&path).unwrap(), b"{}");
}
