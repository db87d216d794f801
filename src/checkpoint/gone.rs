//! When files left the workspace: a gone file has no timestamp of its own,
//! and its directory's last change may be anyone's later write there. So
//! the worker watches the directories of its last snapshot (inotify, no
//! recursion: one watch per directory) and a thread of its own stamps each
//! removal, rename away or directory removal as it is read, a moment after
//! it happened. `Store::as_of` asks it first; a path it never saw leave
//! (not watched yet, a full event queue, no inotify) is judged by its
//! directory, as before.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

/// Removals remembered at most; past it the oldest half is forgotten.
const REMEMBERED: usize = 100_000;
/// Directories watched at most per workspace.
const WATCHED: usize = 20_000;

#[derive(Default)]
struct Seen {
    /// Watch descriptor to its directory.
    dirs: HashMap<i32, PathBuf>,
    /// Directories watched.
    watched: HashSet<PathBuf>,
    /// Each path seen leaving, and when it last did.
    gone: HashMap<PathBuf, SystemTime>,
}

/// The removals seen in one workspace.
pub(crate) struct Watcher {
    fd: Arc<OwnedFd>,
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Watcher {
    /// A watcher with its reading thread; `None` without inotify.
    pub(crate) fn start() -> Option<Watcher> {
        let fd = Arc::new(inotify::init(CreateFlags::CLOEXEC).ok()?);
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (fd, seen, stop) = (Arc::clone(&fd), Arc::clone(&seen), Arc::clone(&stop));
            move || read(&fd, &seen, &stop)
        };
        std::thread::Builder::new()
            .name("warden-checkpoint-watch".into())
            .spawn(reader)
            .ok()?;
        Some(Watcher { fd, seen, stop })
    }

    /// Watch `dirs` (absolute) too.
    pub(crate) fn watch(&self, dirs: impl IntoIterator<Item = PathBuf>) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let flags = WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW;
        for dir in dirs {
            if seen.watched.len() >= WATCHED {
                return;
            }
            if seen.watched.contains(&dir) {
                continue;
            }
            if let Ok(wd) = inotify::add_watch(self.fd.as_fd(), &dir, flags) {
                seen.dirs.insert(wd, dir.clone());
                seen.watched.insert(dir);
            }
        }
    }

    /// When `path` (absolute), or a directory holding it, last left: the
    /// latest removal seen.
    pub(crate) fn left(&self, path: &Path) -> Option<SystemTime> {
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        path.ancestors()
            .filter_map(|p| seen.gone.get(p).copied())
            .max()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Removing the watches wakes the reader (`IN_IGNORED`), which stops.
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        for wd in seen.dirs.keys() {
            let _ = inotify::remove_watch(self.fd.as_fd(), *wd);
        }
    }
}

/// The reading thread: stamps every removal as it comes.
fn read(fd: &OwnedFd, seen: &Mutex<Seen>, stop: &AtomicBool) {
    let mut buf = [MaybeUninit::<u8>::uninit(); 64 * 1024];
    let mut reader = inotify::Reader::new(fd.as_fd(), &mut buf);
    loop {
        let event = match reader.next() {
            Ok(event) => event,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
        };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let now = SystemTime::now();
        let flags = event.events();
        let name = event.file_name().map(|n| OsStr::from_bytes(n.to_bytes()));
        let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
        if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
            // Removals were lost: nothing more is known for sure.
            seen.gone.clear();
            continue;
        }
        let Some(dir) = seen.dirs.get(&event.wd()).cloned() else {
            continue;
        };
        if flags.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM)
            && let Some(name) = name
        {
            if seen.gone.len() >= REMEMBERED {
                let mut times: Vec<SystemTime> = seen.gone.values().copied().collect();
                times.sort_unstable();
                let cut = times[times.len() / 2];
                seen.gone.retain(|_, at| *at > cut);
            }
            seen.gone.insert(dir.join(name), now);
        }
        if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF | ReadFlags::IGNORED) {
            // The directory left (or is no longer watched): its path no
            // longer names what this watch sees.
            if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF) {
                seen.gone.insert(dir.clone(), now);
            }
            if !flags.contains(ReadFlags::IGNORED) {
                let _ = inotify::remove_watch(fd.as_fd(), event.wd());
            }
            seen.dirs.remove(&event.wd());
            seen.watched.remove(&dir);
        }
    }
}
