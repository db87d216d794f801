//! Long pastes folded in the composer: a paste of more than
//! [`FOLD_LINES`] lines goes into the message as one marked line, `[pasted
//! 5,000 lines]`, and the paste itself is kept here. The marker is what the
//! composer, the queue and the transcript show; the message is sent whole
//! ([`Pastes::expand`]), and the prompt history keeps it whole.

/// A paste of more lines than this is folded.
pub const FOLD_LINES: usize = 20;

/// The pastes folded in this chat, by marker.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pastes {
    folded: Vec<(String, String)>,
}

impl Pastes {
    /// Fold `text` when it is long: the marker to put in the message, which
    /// [`Pastes::expand`] turns back into `text`; `None` for a short paste.
    /// Markers are unique (`[pasted 30 lines #2]`), so each stands for its
    /// own paste.
    pub(crate) fn fold(&mut self, text: &str) -> Option<String> {
        let lines = text.lines().count();
        if lines <= FOLD_LINES {
            return None;
        }
        let base = format!("pasted {} lines", thousands(lines));
        let mut marker = format!("[{base}]");
        let mut n = 1;
        while self.folded.iter().any(|(m, _)| *m == marker) {
            n += 1;
            marker = format!("[{base} #{n}]");
        }
        self.folded.push((marker.clone(), text.to_string()));
        Some(marker)
    }

    /// `text` with each marker it holds (its first occurrence) replaced by
    /// the paste it stands for; a marker the user edited is plain text.
    pub(crate) fn expand(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (marker, paste) in &self.folded {
            if let Some(at) = out.find(marker.as_str()) {
                out.replace_range(at..at + marker.len(), paste);
            }
        }
        out
    }
}

/// `5000` as `5,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_long_paste_folds_into_a_unique_marker_and_expands_whole() {
        let mut pastes = Pastes::default();
        assert_eq!(pastes.fold(&lines(20)), None, "20 lines stay as they are");
        let big = lines(5000);
        let marker = pastes.fold(&big).expect("folded");
        assert_eq!(marker, "[pasted 5,000 lines]");
        let again = pastes.fold(&big).expect("folded");
        assert_eq!(again, "[pasted 5,000 lines #2]");
        let message = format!("explain {marker} and {again}");
        assert_eq!(pastes.expand(&message), format!("explain {big} and {big}"));
        // An edited marker is no longer one.
        assert_eq!(pastes.expand("[pasted 5,000 line]"), "[pasted 5,000 line]");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(21), "21");
    }
}
