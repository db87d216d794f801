//! An attacker's paths the resolve tests do not cover: loops mixed with
//! `..`, a file used as a directory, very long paths, names that are not
//! UTF-8, `//` and trailing `/.`, hard links to warden's own files.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;

use super::*;

use super::resolve_tests::{Home, home};

/// Wherever `resolve` allows `path`, it names a file inside the project.
fn inside_or_refused(home: &Home, path: &Path) {
    for for_write in [false, true] {
        if let Ok(real) = resolve(&home.proj_roots(), path, for_write) {
            assert!(
                real.starts_with(&home.proj),
                "{} resolved outside to {}",
                path.display(),
                real.display()
            );
        }
    }
}

#[test]
fn a_loop_mixed_with_dotdot_is_refused_or_stays_inside() {
    let home = home();
    symlink("loop", home.proj.join("loop")).expect("symlink");
    symlink("b", home.proj.join("a")).expect("symlink");
    symlink("a", home.proj.join("b")).expect("symlink");
    for rel in [
        "loop/../src/main.rs",
        "loop/../../cfg/config.toml",
        "a/../cfg/../src/main.rs",
        "a/b/../../../cfg/config.toml",
    ] {
        let path = home.proj.join(rel);
        inside_or_refused(&home, &path);
        for reading in lenient_readings(&path) {
            assert_ne!(reading, home.base.join("proj/../cfg/config.toml"));
        }
    }
}

#[test]
fn a_file_used_as_a_directory_does_not_reach_outside() {
    let home = home();
    for rel in [
        "src/main.rs/..",
        "src/main.rs/../../../cfg/config.toml",
        "src/main.rs/.",
        "src//main.rs/.",
    ] {
        inside_or_refused(&home, &home.proj.join(rel));
    }
}

#[test]
fn double_slashes_and_trailing_dots_resolve_as_the_plain_path() {
    let home = home();
    let plain = resolve(&home.proj_roots(), &home.proj.join("src/main.rs"), false).expect("plain");
    for written in ["src//main.rs", "./src/./main.rs", "src/../src//./main.rs"] {
        let path = PathBuf::from(format!("{}//{written}", home.proj.display()));
        assert_eq!(
            resolve(&home.proj_roots(), &path, false).expect("resolves"),
            plain
        );
    }
    let outside = PathBuf::from(format!("{}//..//cfg/./config.toml", home.proj.display()));
    assert!(resolve(&home.proj_roots(), &outside, false).is_err());
    assert!(resolve(&home.proj_roots(), &outside, true).is_err());
}

#[test]
fn a_very_long_path_ends_without_escaping() {
    let home = home();
    let mut path = home.proj.clone();
    for _ in 0..50_000 {
        path.push("src");
        path.push("..");
    }
    path.push("src/main.rs");
    inside_or_refused(&home, &path);
    let mut up = home.proj.clone();
    for _ in 0..50_000 {
        up.push("..");
    }
    up.push("cfg/config.toml");
    assert!(resolve(&home.proj_roots(), &up, false).is_err());
    assert!(resolve(&home.proj_roots(), &up, true).is_err());
    // Many readings are not built from many `..`s.
    assert!(
        lenient_readings(&path).len() <= 4,
        "{}",
        lenient_readings(&path).len()
    );
}

#[test]
fn names_that_are_not_utf8_resolve_inside() {
    let home = home();
    let name = OsStr::from_bytes(b"caf\xe9\xff.rs");
    let path = home.proj.join("src").join(name);
    fs::write(&path, "x").expect("write");
    let real = resolve(&home.proj_roots(), &path, false).expect("resolves");
    assert_eq!(real, path);
    let up = home
        .proj
        .join(OsStr::from_bytes(b"\xff"))
        .join("../../cfg/config.toml");
    assert!(resolve(&home.proj_roots(), &up, true).is_err());
}

#[test]
fn a_hard_link_to_the_settings_is_protected_by_identity() {
    let home = home();
    let link = home.proj.join("innocent.toml");
    if fs::hard_link(home.base.join("cfg/config.toml"), &link).is_err() {
        return; // hard links not allowed here (protected_hardlinks)
    }
    let real = resolve(&home.proj_roots(), &link, true).expect("inside the project");
    assert!(
        matches!(
            home.protected.check_path(&real, Access::Write),
            Err(FsError::Protected { .. })
        ),
        "a hard link to the settings can be written"
    );
}

#[test]
fn a_directory_named_like_a_protected_file_is_not_the_file() {
    let home = home();
    fs::create_dir_all(home.proj.join("cfg/config.toml")).expect("mkdir");
    let path = home.proj.join("cfg/config.toml/notes.md");
    let real = resolve(&home.proj_roots(), &path, true).expect("inside the project");
    assert!(home.protected.check_path(&real, Access::Write).is_ok());
}
