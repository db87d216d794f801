//! An attacker's paths against both resolvers: dangling links, chains and
//! loops, links to warden's own files under other names, `..` after a
//! symlink, `/proc` magic links, relative link targets. The oracle is the
//! kernel itself: a write through the path as sent lands where
//! [`resolve_lenient`] says, and wherever [`resolve`] allows a path it is the
//! file the kernel would open.

use std::os::unix::fs::symlink;

use pretty_assertions::assert_eq;

use super::*;
use std::fs;

/// `<tmp>/proj` (the chat's root) with `src/main.rs`; `<tmp>/outside` with
/// `secret.txt` and `sub/`; warden's settings in `<tmp>/cfg/config.toml`
/// (with `cfg/sub/`), its decision log `<tmp>/data/decisions.jsonl` and
/// chat records under `<tmp>/data/chats`.
pub(super) struct Home {
    _dir: tempfile::TempDir,
    pub(super) base: PathBuf,
    pub(super) proj: PathBuf,
    pub(super) protected: Protected,
}

pub(super) fn home() -> Home {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical tempdir");
    let proj = base.join("proj");
    for sub in ["proj/src", "outside/sub", "cfg/sub", "data/chats"] {
        fs::create_dir_all(base.join(sub)).expect("mkdir");
    }
    fs::write(proj.join("src/main.rs"), "fn main() {}\n").expect("write");
    fs::write(base.join("outside/secret.txt"), "secret\n").expect("write");
    fs::write(base.join("cfg/config.toml"), "settings\n").expect("write");
    fs::write(base.join("data/decisions.jsonl"), "{}\n").expect("write");
    let protected = Protected::new()
        .settings(&base.join("cfg/config.toml"))
        .file(&base.join("data/decisions.jsonl"), "warden's decision log")
        .tree(&base.join("data/chats"), "warden's chat records");
    Home {
        _dir: dir,
        base,
        proj,
        protected,
    }
}

impl Home {
    /// Only the project is a root.
    pub(super) fn proj_roots(&self) -> Roots {
        Roots::new(&self.proj, &[]).protecting(self.protected.clone())
    }

    /// The whole home is a root: warden's own files are inside it.
    fn home_roots(&self) -> Roots {
        Roots::new(&self.base, &[]).protecting(self.protected.clone())
    }

    fn link(&self, at: &str, target: impl AsRef<Path>) {
        symlink(target, self.base.join(at)).expect("symlink");
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }
}

fn outside(result: Result<PathBuf, FsError>) -> bool {
    matches!(result, Err(FsError::OutsideRoots { .. }))
}

/// Write a marker through `path` as sent, the way the agent's own tool
/// would (the kernel follows every link), and check that it landed in the
/// file [`resolve_lenient`] named before the write. `false` when the kernel
/// refused the write (a loop, a missing directory): nothing landed.
fn kernel_writes_where_lenient_says(path: &Path) -> bool {
    let named = resolve_lenient(path);
    let marker = format!("marker for {}\n", path.display());
    if fs::write(path, &marker).is_err() {
        return false;
    }
    assert_eq!(
        fs::read_to_string(&named).ok().as_deref(),
        Some(marker.as_str()),
        "{} landed elsewhere than {}",
        path.display(),
        named.display()
    );
    true
}

/// What [`resolve`] allows is what the kernel opens: the path as sent and
/// the path resolved name the same file (checked by identity once a write
/// through the path as sent created it).
fn resolve_agrees_with_the_kernel(roots: &Roots, path: &Path) {
    for for_write in [false, true] {
        let Ok(real) = resolve(roots, path, for_write) else {
            continue;
        };
        if fs::write(path, "probe\n").is_err() {
            continue;
        }
        assert_eq!(
            FileId::of_path(path),
            FileId::of_path(&real),
            "{} resolved to {}, which the kernel does not open",
            path.display(),
            real.display()
        );
    }
}

#[test]
fn a_dangling_link_pointing_outside_is_outside_for_reads_and_writes() {
    let h = home();
    h.link("proj/gone", h.path("outside/missing.txt"));
    h.link("proj/there", h.path("outside/secret.txt"));
    let roots = h.proj_roots();
    for for_write in [false, true] {
        // Whether the target exists or not, the answer is the same: a read
        // reveals nothing about the files outside the roots.
        assert!(outside(resolve(&roots, &h.path("proj/there"), for_write)));
        assert!(
            outside(resolve(&roots, &h.path("proj/gone"), for_write)),
            "for_write {for_write}: {:?}",
            resolve(&roots, &h.path("proj/gone"), for_write)
        );
    }
    assert_eq!(
        resolve_lenient(&h.path("proj/gone")),
        h.path("outside/missing.txt")
    );
    assert!(kernel_writes_where_lenient_says(&h.path("proj/gone")));
}

#[test]
fn a_dangling_link_inside_is_broken_for_writes_and_missing_for_reads() {
    let h = home();
    h.link("proj/gone", h.path("proj/missing.txt"));
    let roots = h.proj_roots();
    let err = resolve(&roots, &h.path("proj/gone"), true).expect_err("dangling");
    assert!(matches!(err, FsError::BrokenSymlink { .. }), "{err:?}");
    let err = resolve(&roots, &h.path("proj/gone"), false).expect_err("dangling");
    assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
    assert_eq!(
        resolve_lenient(&h.path("proj/gone")),
        h.path("proj/missing.txt")
    );
}

#[test]
fn a_dangling_chain_is_followed_to_its_end() {
    let h = home();
    h.link("proj/a", h.path("proj/b"));
    h.link("proj/b", "c");
    h.link("proj/c", h.path("outside/missing.txt"));
    h.link("proj/x", h.path("proj/y"));
    h.link("proj/y", h.path("proj/missing.txt"));
    let roots = h.proj_roots();
    for for_write in [false, true] {
        assert!(outside(resolve(&roots, &h.path("proj/a"), for_write)));
    }
    let err = resolve(&roots, &h.path("proj/x"), true).expect_err("dangling");
    assert!(matches!(err, FsError::BrokenSymlink { .. }), "{err:?}");
    let err = resolve(&roots, &h.path("proj/x"), false).expect_err("dangling");
    assert!(matches!(err, FsError::NotFound { .. }), "{err:?}");
    assert_eq!(
        resolve_lenient(&h.path("proj/a")),
        h.path("outside/missing.txt")
    );
    assert!(kernel_writes_where_lenient_says(&h.path("proj/a")));
    assert!(kernel_writes_where_lenient_says(&h.path("proj/x")));
}

#[test]
fn a_symlink_loop_is_refused_and_never_hangs() {
    let h = home();
    h.link("proj/a", h.path("proj/b"));
    h.link("proj/b", h.path("proj/a"));
    let roots = h.proj_roots();
    for path in [h.path("proj/a"), h.path("proj/a/x.txt")] {
        for for_write in [false, true] {
            let result = resolve(&roots, &path, for_write);
            assert!(result.is_err(), "{}: {result:?}", path.display());
        }
        // Nothing lands anywhere: the kernel refuses the loop too.
        assert!(!kernel_writes_where_lenient_says(&path));
        assert!(resolve_lenient(&path).starts_with(&h.proj));
    }
}

#[test]
fn a_chain_as_long_as_the_kernel_follows_is_followed() {
    let h = home();
    // `l{i}` is i + 1 links from the settings; the kernel follows 40.
    h.link("proj/l0", h.path("cfg/config.toml"));
    for i in 1..=40 {
        h.link(&format!("proj/l{i}"), format!("l{}", i - 1));
    }
    let longest = h.path("proj/l39");
    assert_eq!(resolve_lenient(&longest), h.path("cfg/config.toml"));
    assert!(
        fs::read_to_string(&longest).is_ok(),
        "the kernel follows it"
    );
    let err = resolve(&h.home_roots(), &longest, true).expect_err("protected");
    assert!(matches!(err, FsError::Protected { .. }), "{err:?}");
    let too_long = h.path("proj/l40");
    assert!(fs::read_to_string(&too_long).is_err(), "the kernel stops");
    for for_write in [false, true] {
        let err = resolve(&h.home_roots(), &too_long, for_write).expect_err("a loop");
        assert!(matches!(err, FsError::Io { .. }), "{err:?}");
    }
}

#[test]
fn links_to_warden_files_under_other_names_are_refused() {
    let h = home();
    h.link("proj/alias.toml", h.path("cfg/config.toml"));
    h.link("proj/lock", h.path("cfg/config.toml.lock"));
    h.link("proj/log", "../data/decisions.jsonl");
    h.link("proj/record", h.path("data/chats/new.json"));
    h.link("proj/records", h.path("data/chats"));
    let roots = h.home_roots();
    for name in ["alias.toml", "lock", "log", "record", "records/new.json"] {
        let path = h.path(&format!("proj/{name}"));
        assert!(
            resolve(&roots, &path, true).is_err(),
            "write {name}: {:?}",
            resolve(&roots, &path, true)
        );
        let lenient = resolve_lenient(&path);
        let err = h.protected.check_path(&lenient, Access::Write);
        assert!(
            matches!(err, Err(FsError::Protected { .. })),
            "{name} -> {}: {err:?}",
            lenient.display()
        );
    }
    for name in ["alias.toml", "lock"] {
        let path = h.path(&format!("proj/{name}"));
        let lenient = resolve_lenient(&path);
        let err = h.protected.check_path(&lenient, Access::Read);
        assert!(matches!(err, Err(FsError::Protected { .. })), "{err:?}");
    }
    let err = resolve(&roots, &h.path("proj/alias.toml"), false).expect_err("read");
    assert!(matches!(err, FsError::Protected { .. }), "{err:?}");
    assert!(!h.path("cfg/config.toml.lock").exists());
    assert!(!h.path("data/chats/new.json").exists());
}

#[test]
fn dot_dot_after_a_symlink_is_where_the_kernel_goes() {
    let h = home();
    // `proj/up/..` is `cfg` for the kernel, `proj` when read lexically.
    h.link("proj/up", h.path("cfg/sub"));
    for name in ["config.toml", "config.toml.lock", ".config.toml.1.2.tmp"] {
        let path = h.path(&format!("proj/up/../{name}"));
        assert_eq!(resolve_lenient(&path), h.path(&format!("cfg/{name}")));
        let err = h
            .protected
            .check_path(&resolve_lenient(&path), Access::Write);
        assert!(matches!(err, Err(FsError::Protected { .. })), "{err:?}");
    }
    assert!(kernel_writes_where_lenient_says(
        &h.path("proj/up/../config.toml.lock")
    ));
}

#[test]
fn dot_dot_after_a_symlink_never_resolves_to_another_file_than_the_kernel_opens() {
    let h = home();
    h.link("proj/out", h.path("outside/sub"));
    h.link("proj/up", h.path("cfg/sub"));
    fs::write(h.path("proj/secret.txt"), "decoy\n").expect("write");
    // With only the project as root, `out/..` is outside for the kernel.
    let roots = h.proj_roots();
    for name in ["secret.txt", "new.txt"] {
        let path = h.path(&format!("proj/out/../{name}"));
        for for_write in [false, true] {
            let result = resolve(&roots, &path, for_write);
            assert!(result.is_err(), "{name} {for_write}: {result:?}");
        }
        resolve_agrees_with_the_kernel(&roots, &path);
    }
    // With the home as root, `up/../config.toml` is the settings.
    let roots = h.home_roots();
    for name in ["config.toml", "config.toml.lock", "notes.txt"] {
        let path = h.path(&format!("proj/up/../{name}"));
        resolve_agrees_with_the_kernel(&roots, &path);
    }
    // Both readings inside the roots but different files: which one the
    // agent means cannot be told.
    let path = h.path("proj/up/../notes.txt");
    for for_write in [false, true] {
        let err = resolve(&roots, &path, for_write).expect_err("ambiguous");
        assert!(matches!(err, FsError::Ambiguous { .. }), "{err:?}");
        assert!(
            err.to_string().contains("has `..` after a symlink"),
            "{err}"
        );
    }
    assert!(!h.path("cfg/notes.txt").exists());
    assert!(!h.path("proj/notes.txt").exists());
    assert!(!h.path("cfg/config.toml.lock").exists());
    assert_eq!(
        fs::read_to_string(h.path("cfg/config.toml")).expect("read"),
        "settings\n"
    );
}

#[test]
fn dot_dot_over_a_missing_directory_is_lexical_and_then_follows_links() {
    let h = home();
    h.link("proj/alias.toml", h.path("cfg/config.toml"));
    let path = h.path("proj/missing/../alias.toml");
    // The kernel refuses `missing/..`; a tool that normalizes first lands
    // on the link, and so on the settings.
    assert_eq!(resolve_lenient(&path), h.path("cfg/config.toml"));
    let err = resolve(&h.home_roots(), &path, true).expect_err("protected");
    assert!(matches!(err, FsError::Protected { .. }), "{err:?}");
    let path = h.path("proj/a/b/../../src/main.rs");
    assert_eq!(resolve_lenient(&path), h.path("proj/src/main.rs"));
    assert_eq!(
        resolve(&h.proj_roots(), &path, false).expect("inside"),
        h.path("proj/src/main.rs")
    );
}

#[test]
fn a_missing_directory_under_a_link_pointing_outside_is_outside() {
    let h = home();
    h.link("proj/link", h.path("outside"));
    h.link("proj/gone", h.path("outside/missing-dir"));
    let roots = h.proj_roots();
    for path in [
        h.path("proj/link/new/deeper/f.txt"),
        h.path("proj/gone/f.txt"),
        h.path("proj/gone/new/f.txt"),
    ] {
        for for_write in [false, true] {
            let result = resolve(&roots, &path, for_write);
            assert!(outside(result), "{} {for_write}", path.display());
        }
    }
    assert_eq!(
        resolve_lenient(&h.path("proj/link/new/deeper/f.txt")),
        h.path("outside/new/deeper/f.txt")
    );
    assert_eq!(
        resolve_lenient(&h.path("proj/gone/new/f.txt")),
        h.path("outside/missing-dir/new/f.txt")
    );
    assert!(!h.path("outside/new").exists());
}

#[test]
fn proc_magic_links_resolve_to_the_file_they_reach() {
    let h = home();
    h.link("proj/link", h.path("outside"));
    let roots = h.proj_roots();
    let via_root = |rel: &str| PathBuf::from(format!("/proc/self/root{}", h.path(rel).display()));
    assert_eq!(
        resolve(&roots, &via_root("proj/src/main.rs"), false).expect("inside"),
        h.path("proj/src/main.rs")
    );
    assert!(outside(resolve(
        &roots,
        &via_root("proj/link/secret.txt"),
        false
    )));
    assert!(outside(resolve(&roots, &via_root("outside/new.txt"), true)));
    assert_eq!(
        resolve_lenient(&via_root("proj/link/new.txt")),
        h.path("outside/new.txt")
    );
    // `/proc/self/cwd` is warden's own working directory, outside these roots.
    let cwd = std::env::current_dir().expect("cwd");
    assert_eq!(
        resolve_lenient(Path::new("/proc/self/cwd/no-such-file")),
        cwd.join("no-such-file")
    );
    for for_write in [false, true] {
        let result = resolve(&roots, Path::new("/proc/self/cwd/x.txt"), for_write);
        assert!(outside(result), "{for_write}");
    }
}

#[test]
fn trailing_slashes_and_dots_name_the_same_file() {
    let h = home();
    h.link("proj/gone", h.path("outside/new.txt"));
    let roots = h.proj_roots();
    for path in [
        "proj/src/./main.rs",
        "proj/./src/main.rs/",
        "proj/src/main.rs/.",
    ] {
        let path = h.path(path);
        assert_eq!(
            resolve(&roots, &path, false).expect("inside"),
            h.path("proj/src/main.rs")
        );
        assert_eq!(resolve_lenient(&path), h.path("proj/src/main.rs"));
    }
    for path in ["proj/gone/", "proj/./gone/."] {
        let path = h.path(path);
        for for_write in [false, true] {
            assert!(outside(resolve(&roots, &path, for_write)), "{for_write}");
        }
        assert_eq!(resolve_lenient(&path), h.path("outside/new.txt"));
    }
}

#[test]
fn relative_link_targets_are_taken_from_the_link_s_real_directory() {
    let h = home();
    h.link("proj/src/rel", "../../outside/secret.txt");
    h.link("proj/src/rel-gone", "../../outside/new.txt");
    let roots = h.proj_roots();
    for name in ["rel", "rel-gone"] {
        for for_write in [false, true] {
            let path = h.path(&format!("proj/src/{name}"));
            assert!(outside(resolve(&roots, &path, for_write)), "{name}");
        }
    }
    assert_eq!(
        resolve_lenient(&h.path("proj/src/rel-gone")),
        h.path("outside/new.txt")
    );
}

#[test]
fn a_dangling_relative_link_met_through_a_linked_directory_starts_from_the_link_s_real_directory() {
    let h = home();
    // `..` in its target is taken from where the link really is
    // (`cfg/sub`), not from the path as sent (`proj/s`).
    h.link("proj/s", h.path("cfg/sub"));
    h.link("cfg/sub/lk", "../config.toml.lock");
    let path = h.path("proj/s/lk");
    assert_eq!(resolve_lenient(&path), h.path("cfg/config.toml.lock"));
    let err = h
        .protected
        .check_path(&resolve_lenient(&path), Access::Write);
    assert!(matches!(err, Err(FsError::Protected { .. })), "{err:?}");
    assert!(resolve(&h.home_roots(), &path, true).is_err());
    assert!(kernel_writes_where_lenient_says(&path));
}

#[test]
fn both_resolvers_agree_wherever_resolve_allows() {
    let h = home();
    h.link("proj/alias.rs", h.path("proj/src/main.rs"));
    h.link("proj/srclink", "src");
    h.link("proj/out", h.path("outside/sub"));
    h.link("proj/gone", h.path("proj/new.txt"));
    let roots = h.proj_roots();
    for rel in [
        "proj/src/main.rs",
        "proj/alias.rs",
        "proj/srclink/main.rs",
        "proj/srclink/../src/main.rs",
        "proj/srclink/new/file.rs",
        "proj/new/../src/./main.rs",
        "proj/out/../proj/src/main.rs",
        "proj/gone",
        "proj/src",
    ] {
        let path = h.path(rel);
        for for_write in [false, true] {
            if let Ok(real) = resolve(&roots, &path, for_write) {
                assert_eq!(real, resolve_lenient(&path), "{rel} {for_write}");
            }
        }
        resolve_agrees_with_the_kernel(&roots, &path);
    }
}

#[test]
fn every_reading_of_dot_dot_after_a_symlink_meets_the_protected_check() {
    let h = home();
    h.link("proj/up", h.path("cfg/sub"));
    h.link("proj/alias.toml", h.path("cfg/config.toml"));
    // The kernel goes to `cfg/alias.toml` (missing); a tool that applies
    // `..` first opens `proj/alias.toml`, a link to the settings.
    let path = h.path("proj/up/../alias.toml");
    let readings = lenient_readings(&path);
    assert_eq!(readings[0], resolve_lenient(&path));
    assert_eq!(
        readings,
        vec![
            h.path("cfg/alias.toml"),
            h.path("cfg/config.toml"),
            h.path("proj/alias.toml"),
        ]
    );
    let refused = readings
        .iter()
        .filter(|r| h.protected.check_path(r, Access::Write).is_err())
        .count();
    assert_eq!(refused, 1);
    // The kernel's reading is there even where the lexical one is harmless.
    let readings = lenient_readings(&h.path("proj/up/../config.toml.lock"));
    assert!(readings.contains(&h.path("cfg/config.toml.lock")));
    assert!(readings.contains(&h.path("proj/config.toml.lock")));
    // Without `..` after a link: where it leads, and the path as written.
    assert_eq!(
        lenient_readings(&h.path("proj/./alias.toml")),
        vec![h.path("cfg/config.toml"), h.path("proj/alias.toml")]
    );
    assert_eq!(
        lenient_readings(&h.path("proj/src/main.rs")),
        vec![h.path("proj/src/main.rs")]
    );
}

#[test]
fn a_path_through_proc_self_is_refused_for_the_agent_s_own_tools() {
    let h = home();
    // `/proc/self` is the process that opens the path: for the agent's own
    // tools its working directory and descriptors are not warden's.
    h.link("proj/me", "/proc/self/cwd");
    let mut paths = vec![
        PathBuf::from("/proc/self/cwd/x.txt"),
        PathBuf::from("/proc/thread-self/cwd/../x.txt"),
        PathBuf::from("/proc/self/fd/0"),
        h.path("proj/me/x.txt"),
    ];
    if fs::symlink_metadata("/dev/fd").is_ok_and(|m| m.file_type().is_symlink()) {
        paths.push(PathBuf::from("/dev/fd/1"));
    }
    for path in &paths {
        for access in [Access::Read, Access::Write] {
            let refused = lenient_readings(path).iter().any(|r| {
                matches!(
                    h.protected.check_path(r, access),
                    Err(FsError::Protected { .. })
                )
            });
            assert!(refused, "{} {access}", path.display());
        }
    }
    // `/proc/self/root` is `/` for every process: resolved, not refused.
    let via_root = PathBuf::from(format!(
        "/proc/self/root{}",
        h.path("proj/src/main.rs").display()
    ));
    let readings = lenient_readings(&via_root);
    assert_eq!(readings, vec![h.path("proj/src/main.rs"), via_root.clone()]);
    for reading in &readings {
        assert!(h.protected.check_path(reading, Access::Write).is_ok());
    }
}
