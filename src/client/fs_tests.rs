use std::os::unix::fs::{PermissionsExt as _, symlink};

use pretty_assertions::assert_eq;

use super::*;
use std::fs;

#[test]
fn a_file_larger_than_a_message_is_never_read_whole() {
    let t = tree();
    let big = t.proj.join("big.txt");
    let file = fs::File::create(&big).expect("create");
    file.set_len(MAX_TEXT + 1).expect("sparse file");
    let roots = Roots::new(&t.proj, &[]);
    let real = resolve(&roots, &big, false).expect("resolve");
    assert!(
        matches!(
            read_text(&roots, &real, None, Some(1)),
            Err(FsError::TooLarge { .. })
        ),
        "read whole"
    );
    assert_eq!(current_text(&roots, &real), None);
}

/// A temporary tree: `<tmp>/proj` (the cwd root) with `src/main.rs`,
/// `<tmp>/proj2` and `<tmp>/outside/secret.txt`.
struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    proj: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical tempdir");
    let proj = base.join("proj");
    fs::create_dir_all(proj.join("src")).expect("mkdir proj/src");
    fs::write(proj.join("src/main.rs"), "fn main() {}\n").expect("write main.rs");
    fs::create_dir_all(base.join("proj2")).expect("mkdir proj2");
    fs::create_dir_all(base.join("outside")).expect("mkdir outside");
    fs::write(base.join("outside/secret.txt"), "secret\n").expect("write secret");
    Tree {
        _dir: dir,
        base,
        proj,
    }
}

/// A scratch directory (canonical, removed when the guard drops) that
/// is also the only root.
fn scratch() -> (Scratch, Roots) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().canonicalize().expect("canonical");
    let roots = Roots::new(&path, &[]);
    (Scratch { _dir: dir, path }, roots)
}

struct Scratch {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

fn roots(t: &Tree) -> Roots {
    Roots::new(&t.proj, &[])
}

#[test]
fn existing_file_inside_resolves_to_itself() {
    let t = tree();
    let path = t.proj.join("src/main.rs");
    assert_eq!(resolve(&roots(&t), &path, false).expect("inside"), path);
    let dotted = t.proj.join("src/./../src/main.rs");
    assert_eq!(resolve(&roots(&t), &dotted, false).expect("inside"), path);
}

#[test]
fn dot_dot_escaping_the_root_is_refused() {
    let t = tree();
    let path = t.proj.join("../outside/secret.txt");
    let err = resolve(&roots(&t), &path, false).expect_err("outside");
    assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
    assert!(err.to_string().contains("outside the allowed roots"));
    let err = resolve(&roots(&t), &path, true).expect_err("outside");
    assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
}

#[test]
fn symlink_inside_pointing_outside_is_refused() {
    let t = tree();
    symlink(t.base.join("outside"), t.proj.join("link")).expect("symlink dir");
    symlink(
        t.base.join("outside/secret.txt"),
        t.proj.join("secret-link.txt"),
    )
    .expect("symlink file");
    for path in [
        t.proj.join("link/secret.txt"),
        t.proj.join("secret-link.txt"),
    ] {
        for for_write in [false, true] {
            let err = resolve(&roots(&t), &path, for_write).expect_err("outside");
            assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
        }
    }
    // A new file under the linked directory is outside too.
    let err = resolve(&roots(&t), &t.proj.join("link/new/file.txt"), true).expect_err("outside");
    assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
}

#[test]
fn symlink_inside_pointing_inside_resolves_to_the_target() {
    let t = tree();
    symlink(t.proj.join("src/main.rs"), t.proj.join("alias.rs")).expect("symlink");
    let resolved = resolve(&roots(&t), &t.proj.join("alias.rs"), true).expect("inside");
    assert_eq!(resolved, t.proj.join("src/main.rs"));
}

#[test]
fn dangling_symlink_is_refused_for_writes() {
    let t = tree();
    symlink(t.proj.join("nowhere.txt"), t.proj.join("dangling")).expect("symlink");
    let err = resolve(&roots(&t), &t.proj.join("dangling"), true).expect_err("dangling");
    assert!(matches!(err, FsError::BrokenSymlink { .. }), "{err:?}");
    let err = resolve(&roots(&t), &t.proj.join("dangling"), false).expect_err("dangling");
    assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
}

#[test]
fn lenient_resolution_follows_links_magic_links_and_dangling_links() {
    let t = tree();
    symlink(t.base.join("outside"), t.proj.join("link")).expect("symlink");
    symlink(t.base.join("outside/new.txt"), t.proj.join("dangling")).expect("symlink");
    let outside = t.base.join("outside");
    assert_eq!(
        resolve_lenient(&t.proj.join("link/secret.txt")),
        outside.join("secret.txt")
    );
    assert_eq!(
        resolve_lenient(&t.proj.join("link/missing/../x/y.txt")),
        outside.join("x/y.txt")
    );
    assert_eq!(
        resolve_lenient(&t.proj.join("dangling")),
        outside.join("new.txt")
    );
    let magic = PathBuf::from(format!(
        "/proc/self/root{}",
        t.proj.join("link/secret.txt").display()
    ));
    assert_eq!(resolve_lenient(&magic), outside.join("secret.txt"));
}

#[test]
fn relative_path_is_refused() {
    let t = tree();
    let err = resolve(&roots(&t), Path::new("src/main.rs"), false).expect_err("relative");
    assert!(matches!(err, FsError::NotAbsolute { .. }), "{err:?}");
    assert!(err.to_string().contains("not an absolute path"));
}

#[test]
fn new_file_in_existing_dir_is_ok_for_write_only() {
    let t = tree();
    let path = t.proj.join("src/new.rs");
    assert_eq!(resolve(&roots(&t), &path, true).expect("write"), path);
    let err = resolve(&roots(&t), &path, false).expect_err("read of missing");
    assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
}

#[test]
fn missing_parents_inside_the_root_are_ok_for_write() {
    let t = tree();
    let path = t.proj.join("a/b/../c/new.rs");
    assert_eq!(
        resolve(&roots(&t), &path, true).expect("write"),
        t.proj.join("a/c/new.rs")
    );
}

#[test]
fn directory_is_refused_for_write() {
    let t = tree();
    let err = resolve(&roots(&t), &t.proj.join("src"), true).expect_err("dir");
    assert!(matches!(err, FsError::IsDirectory { .. }), "{err:?}");
}

#[test]
fn sibling_with_a_common_string_prefix_is_outside() {
    let t = tree();
    for for_write in [false, true] {
        let err = resolve(&roots(&t), &t.base.join("proj2/file.txt"), for_write).expect_err("out");
        assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
    }
}

#[test]
fn extra_roots_are_honoured_and_missing_ones_skipped() {
    let t = tree();
    let roots = Roots::new(
        &t.proj,
        &[t.base.join("outside"), t.base.join("does-not-exist")],
    );
    assert_eq!(
        roots.as_slice(),
        &[t.proj.clone(), t.base.join("outside")][..]
    );
    let secret = t.base.join("outside/secret.txt");
    assert_eq!(resolve(&roots, &secret, false).expect("extra root"), secret);
    let err = resolve(&roots, &t.base.join("proj2/x"), true).expect_err("still outside");
    assert!(matches!(err, FsError::OutsideRoots { .. }), "{err:?}");
}

#[test]
fn read_honours_line_and_limit() {
    let (dir, r) = scratch();
    let path = dir.join("f.txt");
    fs::write(&path, "one\r\ntwo\nthree\nfour").expect("write");
    assert_eq!(
        read_text(&r, &path, None, None).expect("all"),
        "one\r\ntwo\nthree\nfour"
    );
    assert_eq!(
        read_text(&r, &path, Some(1), Some(2)).expect("first two"),
        "one\r\ntwo\n"
    );
    assert_eq!(
        read_text(&r, &path, Some(3), None).expect("from 3"),
        "three\nfour"
    );
    assert_eq!(
        read_text(&r, &path, Some(2), Some(1)).expect("line 2"),
        "two\n"
    );
    assert_eq!(
        read_text(&r, &path, None, Some(1)).expect("limit"),
        "one\r\n"
    );
    assert_eq!(read_text(&r, &path, Some(9), None).expect("past end"), "");
    assert_eq!(
        read_text(&r, &path, Some(0), Some(1)).expect("0 as 1"),
        "one\r\n"
    );
}

#[test]
fn read_errors() {
    let (dir, r) = scratch();
    let missing = dir.join("missing.txt");
    let err = read_text(&r, &missing, None, None).expect_err("missing");
    assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("does not exist"));

    let err = read_text(&r, &dir, None, None).expect_err("dir");
    assert!(matches!(err, FsError::IsDirectory { .. }), "{err:?}");

    let binary = dir.join("bin");
    fs::write(&binary, [0x66, 0x6f, 0xff, 0xfe, 0x00]).expect("write");
    let err = read_text(&r, &binary, None, None).expect_err("binary");
    assert!(matches!(err, FsError::NotUtf8 { .. }), "{err:?}");
    assert!(err.to_string().contains("not valid UTF-8"));
}

#[test]
fn write_replaces_atomically_and_keeps_the_mode() {
    let (dir, r) = scratch();
    let path = dir.join("f.txt");
    fs::write(&path, "old\n").expect("write");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");

    write_text(&r, &path, "new\n").expect("write_text");
    assert_eq!(fs::read_to_string(&path).expect("read"), "new\n");
    let mode = fs::metadata(&path).expect("metadata").permissions().mode() & 0o7777;
    assert_eq!(mode, 0o640);
    // No temporary file is left behind.
    let names: Vec<_> = fs::read_dir(&*dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("f.txt")]);
}

#[test]
fn write_creates_parent_directories() {
    let (dir, r) = scratch();
    let path = dir.join("a/b/c.txt");
    write_text(&r, &path, "hello").expect("write_text");
    assert_eq!(fs::read_to_string(&path).expect("read"), "hello");
    assert_eq!(current_text(&r, &path).as_deref(), Some("hello"));
    assert_eq!(current_text(&r, &dir.join("nope")), None);
}

#[test]
fn write_replaces_a_binary_file_and_refuses_a_directory() {
    let (dir, r) = scratch();
    let path = dir.join("bin");
    fs::write(&path, [0xff, 0xfe]).expect("write");
    write_text(&r, &path, "text").expect("write_text");
    assert_eq!(fs::read_to_string(&path).expect("read"), "text");
    let err = write_text(&r, &dir, "x").expect_err("dir");
    assert!(matches!(err, FsError::IsDirectory { .. }), "{err:?}");
}
