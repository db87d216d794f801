//! Opening a path in one step that cannot be redirected: no symlink and no
//! `/proc` magic link is followed anywhere on the way, and a path relative
//! to a directory never leaves it.
//!
//! The paths given here are already resolved (canonical), so a symlink met
//! while opening one can only have been swapped in after the check: the open
//! fails instead of following it, and the file opened is always the one
//! whose path the policy saw.
//!
//! On Linux this is one `openat2` call with `RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS` (and `RESOLVE_BENEATH` relative to a directory);
//! elsewhere, or on kernels without `openat2`, the path is opened component
//! by component with `O_NOFOLLOW`.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags};

/// Flags for a directory on the way: searchable, and readable so that it can
/// be synced after a rename.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// Open the directory at the absolute, canonical `path`.
pub(crate) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    open(rustix::fs::CWD, path, dir_flags(), Mode::empty(), false)
}

/// Open the directory `rel` under `dir` (`rel` empty: `dir` itself again).
pub(crate) fn open_subdir(dir: BorrowedFd<'_>, rel: &Path) -> io::Result<OwnedFd> {
    open(dir, rel, dir_flags(), Mode::empty(), true)
}

/// Open `name` (a relative, resolved path) under `dir` with `flags`.
pub(crate) fn open_in(
    dir: BorrowedFd<'_>,
    name: &Path,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    open(dir, name, flags | OFlags::CLOEXEC, mode, true)
}

fn open(
    dir: BorrowedFd<'_>,
    path: &Path,
    flags: OFlags,
    mode: Mode,
    beneath: bool,
) -> io::Result<OwnedFd> {
    check_components(path, beneath)?;
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if !force_walk()
        && let Some(result) = linux::openat2(dir, path, flags, mode, beneath)
    {
        return result;
    }
    walk(dir, path, flags, mode)
}

#[cfg(test)]
thread_local! {
    /// Tests on Linux set it to exercise the portable walk.
    pub(crate) static FORCE_WALK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
fn force_walk() -> bool {
    FORCE_WALK.with(std::cell::Cell::get)
}

#[cfg(not(test))]
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
fn force_walk() -> bool {
    false
}

/// Only plain names (after a leading `/` for an absolute path): `.`, `..`
/// and prefixes have no place in a resolved path.
fn check_components(path: &Path, beneath: bool) -> io::Result<()> {
    for (i, component) in path.components().enumerate() {
        match component {
            Component::Normal(_) => {}
            Component::RootDir if i == 0 && !beneath => {}
            Component::CurDir if path.as_os_str() == "." => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a resolved path", path.display()),
                ));
            }
        }
    }
    Ok(())
}

/// The portable way: one component at a time, none of them a symlink.
fn walk(dir: BorrowedFd<'_>, path: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    let names: Vec<&std::ffi::OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let mut current: Option<OwnedFd> = if path.is_absolute() {
        Some(rustix::fs::openat(
            rustix::fs::CWD,
            "/",
            dir_flags(),
            Mode::empty(),
        )?)
    } else {
        None
    };
    let Some((last, middle)) = names.split_last() else {
        let base = current.as_ref().map_or(dir, AsFd::as_fd);
        return Ok(rustix::fs::openat(
            base,
            ".",
            flags | OFlags::NOFOLLOW,
            mode,
        )?);
    };
    for name in middle {
        let base = current.as_ref().map_or(dir, AsFd::as_fd);
        let next = rustix::fs::openat(base, *name, dir_flags() | OFlags::NOFOLLOW, Mode::empty())?;
        current = Some(next);
    }
    let base = current.as_ref().map_or(dir, AsFd::as_fd);
    Ok(rustix::fs::openat(
        base,
        *last,
        flags | OFlags::NOFOLLOW,
        mode,
    )?)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux {
    use std::io;
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;

    /// Set once the kernel said it has no `openat2`.
    static MISSING: AtomicBool = AtomicBool::new(false);

    /// `None` when the kernel lacks `openat2` (the caller walks instead).
    pub(super) fn openat2(
        dir: BorrowedFd<'_>,
        path: &Path,
        flags: OFlags,
        mode: Mode,
        beneath: bool,
    ) -> Option<io::Result<OwnedFd>> {
        if MISSING.load(Ordering::Relaxed) {
            return None;
        }
        let mut resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        if beneath {
            resolve |= ResolveFlags::BENEATH;
        }
        // EAGAIN: a rename elsewhere raced the lookup; the kernel asks to retry.
        let mut tries = 0;
        loop {
            match rustix::fs::openat2(dir, path, flags, mode, resolve) {
                Err(Errno::NOSYS) => {
                    MISSING.store(true, Ordering::Relaxed);
                    return None;
                }
                Err(Errno::AGAIN) if tries < 16 => tries += 1,
                result => return Some(result.map_err(io::Error::from)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn symlinks_and_dot_dot_are_never_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(base.join("root/sub")).expect("mkdir");
        std::fs::write(base.join("root/sub/f"), "x").expect("write");
        std::fs::write(base.join("secret"), "s").expect("write");
        symlink(base.join("secret"), base.join("root/link")).expect("symlink");
        symlink(base.join("root/sub"), base.join("root/dirlink")).expect("symlink");
        let root = open_dir(&base.join("root")).expect("root");
        let read = OFlags::RDONLY;
        assert!(open_in(root.as_fd(), Path::new("sub/f"), read, Mode::empty()).is_ok());
        for bad in [
            "link",
            "dirlink/f",
            "../secret",
            "/etc/passwd",
            "sub/../sub/f",
        ] {
            assert!(
                open_in(root.as_fd(), Path::new(bad), read, Mode::empty()).is_err(),
                "{bad} opened"
            );
        }
        assert!(open_dir(&base.join("root/dirlink")).is_err());
        assert!(open_subdir(root.as_fd(), Path::new("")).is_ok());
    }

    #[test]
    fn the_portable_walk_refuses_symlinks_too() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(base.join("root/sub")).expect("mkdir");
        std::fs::write(base.join("root/sub/f"), "x").expect("write");
        symlink(base.join("root/sub"), base.join("root/dirlink")).expect("symlink");
        let root = open_dir(&base.join("root")).expect("root");
        let read = OFlags::RDONLY | OFlags::CLOEXEC;
        assert!(walk(root.as_fd(), Path::new("sub/f"), read, Mode::empty()).is_ok());
        assert!(walk(root.as_fd(), Path::new("dirlink/f"), read, Mode::empty()).is_err());
        assert!(walk(root.as_fd(), Path::new("dirlink"), read, Mode::empty()).is_err());
        assert!(
            walk(
                rustix::fs::CWD,
                &base.join("root/dirlink/f"),
                read,
                Mode::empty()
            )
            .is_err()
        );
    }
}
