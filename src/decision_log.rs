//! The append-only decision log: one JSON object per line, in the platform
//! data dir. Every permission decision, automatic or the user's, lands here.
//!
//! Each record is written with a single `write` on a file opened with
//! `O_APPEND`, so lines from two warden processes never interleave. The
//! runtime appends on its disk writer (`app/disk.rs`), off the event loop.

use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::record::DecisionRecord;

/// The log file's default place: `<data dir>/warden/decisions.jsonl`.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "warden")
        .map(|d| d.data_local_dir().join("decisions.jsonl"))
}

/// Append one record as one line (creating the file and its directory).
pub(crate) fn append(path: &Path, record: &DecisionRecord) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Escaped like `warden log --json`: `tail -f` on the file shows no raw
    // C1 controls or bidi characters either.
    let json = serde_json::to_string(record).map_err(std::io::Error::other)?;
    let mut line = crate::sanitize::json(&json).into_owned();
    line.push('\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    // One write call: O_APPEND makes it land whole at the end.
    file.write_all(line.as_bytes())
}

/// Read the records (skipping lines that do not parse), oldest first.
pub fn read(path: &Path) -> std::io::Result<Vec<DecisionRecord>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// The current time as RFC 3339 UTC, without a date crate.
pub(crate) fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

fn rfc3339(secs: u64) -> String {
    let (y, mo, d, h, m, s) = civil_utc(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

pub(crate) use crate::record::civil_utc;

/// Seconds since 1970 of an RFC 3339 / ISO 8601 time ("2026-11-18T11:06:40Z";
/// fractions are dropped, an offset is applied); `None` when it is not one.
pub(crate) fn parse_rfc3339(text: &str) -> Option<u64> {
    let text = text.trim();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let seps = text.as_bytes();
    if seps.len() < 19 || seps[4] != b'-' || seps[7] != b'-' || seps[13] != b':' || seps[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    // Days-from-civil (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if mo > 2 { mo - 3 } else { mo + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let mut secs = days * 86_400 + h * 3600 + mi * 60 + s;
    // An offset after the seconds (and any fraction): local = UTC + offset.
    let rest = text[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    if let Some(sign) = rest.chars().next().filter(|c| *c == '+' || *c == '-') {
        let oh = num(text.len() - rest.len() + 1..text.len() - rest.len() + 3)?;
        let om = rest
            .get(4..6)
            .and_then(|m| m.parse::<i64>().ok())
            .unwrap_or(0);
        let offset = oh * 3600 + om * 60;
        secs -= if sign == '+' { offset } else { -offset };
    }
    u64::try_from(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: u64) -> DecisionRecord {
        DecisionRecord {
            time: rfc3339(n),
            agent: "demo".into(),
            session: "s".into(),
            chat: "c".into(),
            request_id: n,
            tool_call_id: format!("t{n}"),
            title: "Edit a.rs".into(),
            kind: "edit".into(),
            category: "write".into(),
            mode: "default".into(),
            decision: crate::record::Verdict::Allowed,
            option_id: Some("allow-once".into()),
            option_kind: Some("allow_once".into()),
            source: crate::policy::Source::User.into(),
            reason: "allowed by you".into(),
            cwd: String::new(),
        }
    }

    #[test]
    fn times_parse_back() {
        for secs in [0, 951_782_400, 1_795_000_000, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&rfc3339(secs)), Some(secs));
        }
        assert_eq!(
            parse_rfc3339("2026-11-18T11:06:40.123Z"),
            Some(1_795_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-18T12:06:40+01:00"),
            Some(1_795_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-18T10:06:40-01:00"),
            Some(1_795_000_000)
        );
        for bad in ["", "yesterday", "2026-13-01T00:00:00Z", "2026-11-18 11:06"] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_000_000), "2026-11-18T11:06:40Z");
    }

    #[test]
    fn appends_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/decisions.jsonl");
        append(&path, &record(1)).expect("append");
        append(&path, &record(2)).expect("append");
        assert_eq!(read(&path).expect("read"), vec![record(1), record(2)]);
    }

    #[test]
    fn concurrent_appends_stay_whole_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("decisions.jsonl");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let mut r = record(t * 1000 + i);
                        r.reason = "x".repeat(2000);
                        append(&path, &r).expect("append");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.lines().count(), 1600);
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<DecisionRecord>(l).is_ok())
        );
    }
}
