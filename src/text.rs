//! Cutting text at character boundaries; base64 (for OSC 52, a data URI,
//! a proxy's Basic credentials).

/// The largest character boundary of `text` at or before `index`.
pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The smallest character boundary of `text` at or after `index`.
pub(crate) fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_around_a_wide_character() {
        // "a日b": 'a' at 0, '日' at 1..4, 'b' at 4.
        let s = "a日b";
        assert_eq!(
            (floor_char_boundary(s, 2), ceil_char_boundary(s, 2)),
            (1, 4)
        );
        assert_eq!(
            (floor_char_boundary(s, 4), ceil_char_boundary(s, 4)),
            (4, 4)
        );
        assert_eq!(
            (floor_char_boundary(s, 99), ceil_char_boundary(s, 99)),
            (5, 5)
        );
    }
}

/// Append `data` to `buf`, a buffer whose kept text is its newest `limit`
/// bytes ([`kept`]). The bytes before that are dropped only once the buffer
/// holds more than twice the limit (at least 4 KiB), in one drain, so many
/// small appends cost linear time, not quadratic. Returns whether anything
/// now lies beyond the limit (older output was, or will be, dropped).
pub(crate) fn append_capped(buf: &mut String, data: &str, limit: usize) -> bool {
    buf.push_str(data);
    let over = buf.len() > limit;
    if buf.len() > 2 * limit.max(4096) {
        let cut = kept_start(buf, limit);
        buf.drain(..cut);
    }
    over
}

/// The newest `limit` bytes of `buf` (from a character boundary).
pub(crate) fn kept(buf: &str, limit: usize) -> &str {
    &buf[kept_start(buf, limit)..]
}

fn kept_start(buf: &str, limit: usize) -> usize {
    ceil_char_boundary(buf, buf.len().saturating_sub(limit))
}

#[cfg(test)]
mod capped_tests {
    use super::*;

    /// Many small appends keep the newest bytes, never more than the limit
    /// in view, and never more than twice the limit in memory.
    #[test]
    fn appending_many_small_chunks_keeps_the_newest_bytes_and_the_cap() {
        let limit = 5000;
        let mut buf = String::new();
        let mut all = String::new();
        let mut over = false;
        for n in 0..20_000 {
            let chunk = format!("{n}é,");
            all.push_str(&chunk);
            over |= append_capped(&mut buf, &chunk, limit);
            assert!(buf.len() <= 2 * limit + chunk.len(), "{}", buf.len());
        }
        let view = kept(&buf, limit);
        assert!(over);
        assert!(
            view.len() <= limit && view.len() + 4 > limit,
            "{}",
            view.len()
        );
        assert!(all.ends_with(view));
        assert!(view.ends_with("19999é,"));
    }

    /// Below the limit nothing is dropped or reported.
    #[test]
    fn a_short_buffer_is_kept_whole() {
        let mut buf = String::new();
        assert!(!append_capped(&mut buf, "abc", 10));
        assert!(!append_capped(&mut buf, "defgh", 10));
        assert_eq!(kept(&buf, 10), "abcdefgh");
    }
}

/// Whether `pred` holds for every byte. Checked 32 bytes at a time with no
/// early exit inside, which the compiler turns into vector instructions (a
/// plain `all` stops to test at every byte).
pub(crate) fn every_byte(bytes: &[u8], pred: impl Fn(u8) -> bool) -> bool {
    bytes
        .chunks(32)
        .all(|chunk| chunk.iter().fold(true, |ok, &b| ok & pred(b)))
}

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ABC[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod base64_tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
            ("us@er:pw", "dXNAZXI6cHc="),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
    }
}
