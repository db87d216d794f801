//! A terminal's output as text: the UTF-8 decoder of its pipes, the bounded
//! buffer that keeps its newest output, and the limits on what is kept.

use super::*;

/// Turns a byte stream into text: invalid UTF-8 becomes U+FFFD, and a
/// character split across two reads is put back together rather than
/// turned into replacement characters.
#[derive(Debug, Default, Clone)]
pub struct Utf8Decoder {
    /// The start of a character whose remaining bytes have not come yet.
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// A decoder with nothing pending.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The text of `bytes`, after anything pending from the last call.
    pub(crate) fn decode(&mut self, bytes: &[u8]) -> String {
        let joined;
        let mut rest: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            let mut buf = std::mem::take(&mut self.pending);
            buf.extend_from_slice(bytes);
            joined = buf;
            &joined
        };
        let mut out = String::with_capacity(rest.len());
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    // Valid by construction: nothing is replaced here.
                    out.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[len.min(after.len())..];
                        }
                        None => {
                            // An incomplete character at the end: wait for
                            // the rest of it.
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        out
    }

    /// The end of the stream: a character left incomplete becomes U+FFFD.
    pub(crate) fn finish(&mut self) -> String {
        if self.pending.is_empty() {
            return String::new();
        }
        let pending = std::mem::take(&mut self.pending);
        String::from_utf8_lossy(&pending).into_owned()
    }
}

/// The most output kept of one terminal, whatever limit the agent asks for.
pub(crate) const MAX_OUTPUT: usize = 16 << 20;

/// The most output all of warden's terminals keep together (every chat's):
/// past it, older output is dropped, finished terminals' first.
pub(crate) const TOTAL_OUTPUT: usize = 64 << 20;

/// What dropping for the total leaves of each terminal: its newest output.
pub(crate) const KEPT_EACH: usize = 64 << 10;

/// The most of a terminal's (newest) output handed to the screen.
pub(crate) const SCREEN_OUTPUT: usize = 1 << 20;

/// A terminal's output, bounded: keeps the newest text within `limit`
/// bytes (at most [`MAX_OUTPUT`]), dropping from the front at a character
/// boundary. The front is dropped in bulk once the text is twice the limit,
/// so that keeping output costs O(bytes) however small each chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputBuffer {
    /// The newest output: at most twice `limit` bytes; [`OutputBuffer::text`]
    /// is its last `limit` bytes.
    pub(super) text: String,
    limit: usize,
    truncated: bool,
    /// Bytes ever written, to say how much was dropped.
    written: u64,
}

impl OutputBuffer {
    /// An empty buffer keeping at most `limit` bytes (`None`, or more than
    /// [`MAX_OUTPUT`]: [`MAX_OUTPUT`]).
    pub(crate) fn new(limit: Option<usize>) -> Self {
        Self {
            text: String::new(),
            limit: limit.unwrap_or(MAX_OUTPUT).min(MAX_OUTPUT),
            truncated: false,
            written: 0,
        }
    }

    /// Append text; what falls out of the limit is dropped.
    pub(crate) fn push_str(&mut self, text: &str) {
        self.written += text.len() as u64;
        if crate::text::append_capped(&mut self.text, text, self.limit) {
            self.truncated = true;
        }
    }

    /// Bytes held in memory (the kept text and what is not dropped yet).
    pub(crate) fn held(&self) -> usize {
        self.text.len()
    }

    /// Keep only the newest `keep` bytes (from a character boundary);
    /// returns the bytes freed.
    pub(crate) fn shrink_to(&mut self, keep: usize) -> usize {
        let before = self.text.len();
        let cut = crate::text::ceil_char_boundary(&self.text, before.saturating_sub(keep));
        if cut == 0 {
            return 0;
        }
        self.text.drain(..cut);
        self.text.shrink_to_fit();
        self.truncated = true;
        before - self.text.len()
    }

    /// Bytes written but no longer kept: `tail` bytes are shown of the rest.
    pub(crate) fn dropped(&self, tail: usize) -> u64 {
        self.written.saturating_sub(tail as u64)
    }

    #[cfg(test)]
    /// Append bytes that are known to be whole characters or invalid:
    /// decoded lossily. Use a [`Utf8Decoder`] for a stream read in chunks.
    pub(crate) fn push_bytes(&mut self, bytes: &[u8]) {
        self.push_str(&String::from_utf8_lossy(bytes));
    }

    /// The kept text.
    pub(crate) fn text(&self) -> &str {
        crate::text::kept(&self.text, self.limit)
    }

    /// The newest `max` bytes of the kept text (at a character boundary),
    /// and whether that is less than everything ever written.
    pub(crate) fn tail(&self, max: usize) -> (&str, bool) {
        let text = self.text();
        let cut = text.len().saturating_sub(max);
        let cut = ceil_char_boundary(text, cut);
        (&text[cut..], self.truncated || cut > 0)
    }

    /// Whether anything was dropped.
    pub(crate) fn truncated(&self) -> bool {
        self.truncated
    }

    #[cfg(test)]
    /// The byte limit.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}
