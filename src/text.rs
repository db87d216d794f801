//! Cutting text at character boundaries.

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
