//! The prompt history on disk: one JSON Lines file per working directory
//! under `<data dir>/warden/history/`, named by a hash of the directory;
//! each line holds the directory too, so a hash collision never mixes two.
//! The runtime reads and appends on its disk writer (`app/disk.rs`).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state::drafts::HISTORY_LIMIT;

/// One remembered prompt.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    cwd: String,
    text: String,
}

/// The history directory beside the chat records (`<data>/warden/history`).
pub(crate) fn dir_beside(chats_dir: &Path) -> PathBuf {
    chats_dir.with_file_name("history")
}

/// FNV-1a: a hash that stays the same across Rust releases.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The file of `cwd`'s history in `dir`.
pub(crate) fn file(dir: &Path, cwd: &Path) -> PathBuf {
    let key = cwd.to_string_lossy();
    dir.join(format!("{:016x}.jsonl", fnv1a(key.as_bytes())))
}

/// `cwd`'s earlier prompts, oldest first (the newest [`HISTORY_LIMIT`]);
/// a missing or unreadable file is an empty history, a bad line is skipped.
pub(crate) fn load(dir: &Path, cwd: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file(dir, cwd)) else {
        return Vec::new();
    };
    let key = cwd.to_string_lossy();
    let mut out: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .filter(|l| l.cwd == key)
        .map(|l| l.text)
        .collect();
    if out.len() > HISTORY_LIMIT {
        out.drain(..out.len() - HISTORY_LIMIT);
    }
    out
}

/// Append one prompt to `cwd`'s history (one write of one line, so
/// concurrent wardens interleave whole lines). Files only readable by
/// the user: prompts can hold secrets.
pub(crate) fn append(dir: &Path, cwd: &Path, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let line = Line {
        cwd: cwd.to_string_lossy().into_owned(),
        text: text.to_string(),
    };
    let mut bytes = serde_json::to_vec(&line).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(file(dir, cwd))?.write_all(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_kept_per_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("history");
        let a = Path::new("/src/a");
        let b = Path::new("/src/b");
        append(&dir, a, "first\nwith two lines").unwrap();
        append(&dir, a, "second").unwrap();
        append(&dir, b, "elsewhere").unwrap();
        assert_eq!(load(&dir, a), ["first\nwith two lines", "second"]);
        assert_eq!(load(&dir, b), ["elsewhere"]);
        assert!(load(&dir, Path::new("/none")).is_empty());
        // A broken line is skipped, not the file.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(file(&dir, a))
            .unwrap();
        f.write_all(b"{not json\n").unwrap();
        append(&dir, a, "third").unwrap();
        assert_eq!(load(&dir, a), ["first\nwith two lines", "second", "third"]);
    }
}
