//! Random tokens (128 bits from the OS) and their constant-time comparison.

/// A secret: 16 random bytes, written as 32 hex digits.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A fresh token from the OS's random source.
    pub fn fresh() -> std::io::Result<Token> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The hex text (for the URL, the cookie, a form).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `given` is this token, in time that does not depend on
    /// where they differ.
    pub fn matches(&self, given: &str) -> bool {
        equal(self.0.as_bytes(), given.as_bytes())
    }
}

/// Constant-time equality (the length is not secret: every token has 32).
pub fn equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_128_bits_and_fresh() {
        let a = Token::fresh().unwrap();
        let b = Token::fresh().unwrap();
        assert_eq!(a.as_str().len(), 32);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn only_the_same_token_matches() {
        let a = Token::fresh().unwrap();
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(""));
        let mut other = a.as_str().to_string();
        other.replace_range(31.., if other.ends_with('0') { "1" } else { "0" });
        assert!(!a.matches(&other));
        assert!(!a.matches(&format!("{}0", a.as_str())));
    }
}
