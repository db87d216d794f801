//! The scanner: one pass over a shell line that splits it into raw command
//! pieces, following quotes, substitutions and here-documents.

use super::wrappers::{unquote, unwrap};
use super::{Command, MAX_DEPTH, ShellLine, Stdin, command, is_static, not_understood, words};

/// Where a command list ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// At the end of the input (the whole line).
    End,
    /// At the `)` that closes a substitution.
    Paren,
}

/// A here-document whose body starts after the next newline.
struct Heredoc {
    /// Where its `<<` stands (chars).
    at: usize,
    /// The delimiter, unquoted.
    delimiter: String,
    /// The delimiter was quoted: the body is literal text.
    quoted: bool,
    /// `<<-`: leading tabs are stripped from the body's lines.
    strip_tabs: bool,
}

/// One raw command piece of the scanner's own text.
struct Piece {
    /// The nesting level (0: the line itself).
    level: usize,
    text: String,
    /// Where the piece starts and ends in the scanned text (chars).
    start: usize,
    end: usize,
    /// The piece before it in a pipeline (`a | b`: `a` for `b`).
    piped_from: Option<usize>,
}

/// What a here-document or here-string gives the command it belongs to.
struct Feed {
    /// Where its `<<` or `<<<` stands (chars).
    at: usize,
    stdin: Stdin,
}

struct Scanner {
    chars: Vec<char>,
    pos: usize,
    /// Raw pieces of this scanner's own text.
    pieces: Vec<Piece>,
    /// Here-documents waiting for their body.
    heredocs: Vec<Heredoc>,
    /// The standard input here-documents and here-strings give.
    feeds: Vec<Feed>,
    /// Where the last backslash escape outside quotes ended: an escaped
    /// blank does not start a word (`\ #x` is no comment).
    escaped_until: usize,
    /// Flags, and the commands of backtick substitutions (parsed separately).
    line: ShellLine,
}

impl Scanner {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    /// Whether `pos` starts a word: the line's start, or after a blank
    /// (space, tab, newline: the shell's, not Unicode's) or an operator
    /// character that no backslash escaped.
    fn word_start(&self) -> bool {
        self.pos == 0
            || (self.pos != self.escaped_until
                && self
                    .chars
                    .get(self.pos - 1)
                    .is_some_and(|&c| " \t\n;&|()<>".contains(c)))
    }

    /// Scan a command list from `pos`, until the input ends or (for
    /// `Stop::Paren`) the unmatched `)`, which is consumed. `parens` counts
    /// subshell parentheses already open.
    fn list(&mut self, stop: Stop, mut parens: usize, depth: usize) {
        if depth > MAX_DEPTH {
            self.line.opaque = true;
            self.pos = self.chars.len();
            return;
        }
        let mut start = self.pos;
        // `case` commands open in this list: their patterns end in `)`.
        let mut cases = 0usize;
        // The piece that pipes into the next one of this list.
        let mut pipe: Option<usize> = None;
        while let Some(c) = self.peek(0) {
            let next = self.peek(1);
            match c {
                '\\' => {
                    self.pos += 2;
                    self.escaped_until = self.pos;
                }
                '\'' => self.single_quoted(),
                '$' if next == Some('\'') => self.ansi_quoted(),
                '"' => self.double_quoted(depth),
                '`' => self.backticks(depth),
                '#' if self.word_start() => {
                    // A comment, up to the end of the line.
                    pipe = None;
                    self.cut(start, depth);
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                    start = self.pos;
                }
                '$' => self.dollar(depth),
                '<' | '>' if next == Some('(') => {
                    self.pos += 2;
                    self.list(Stop::Paren, 0, depth + 1);
                }
                '<' if next == Some('<') => self.heredoc(),
                '<' if next == Some('>') => self.redirect(2),
                '>' => self.redirect(1),
                '&' if next == Some('>') => self.redirect(2),
                ';' | '\n' | '&' | '|' | '(' | ')' => {
                    if c == '(' && next == Some('(') && self.word_start() {
                        // `(( .. ))`: arithmetic, which can run commands
                        // through array subscripts.
                        self.line.opaque = true;
                    }
                    let cut = self.cut(start, depth);
                    if let Some(index) = cut {
                        self.pieces[index].piped_from = pipe.take();
                    }
                    // `a | b` and `a |& b` feed `b`; `||` does not.
                    pipe = match (c, next) {
                        ('|', Some('|')) => None,
                        ('|', _) => cut,
                        _ => None,
                    };
                    let width = match (c, next) {
                        ('&', Some('&')) | ('|', Some('|' | '&')) => 2,
                        _ => 1,
                    };
                    self.pos += width;
                    if c == '\n' {
                        self.heredoc_bodies(depth);
                    }
                    start = self.pos;
                    if c == '(' {
                        parens += 1;
                    } else if c == ')' {
                        if parens > 0 {
                            parens -= 1;
                        } else if cases == 0 && stop == Stop::Paren {
                            // (In a `case`, a `)` ends a pattern.)
                            return;
                        }
                    }
                }
                _ => {
                    if self.word_start() {
                        if self.keyword("case") {
                            cases += 1;
                        } else if self.keyword("esac") {
                            cases = cases.saturating_sub(1);
                        }
                    }
                    self.pos += 1;
                }
            }
        }
        if stop == Stop::Paren {
            // The input ended inside a substitution.
            self.line.opaque = true;
        }
        if let Some(index) = self.cut(start, depth) {
            self.pieces[index].piped_from = pipe;
        }
    }

    /// Whether the word at `pos` is exactly `word` (followed by a blank,
    /// an operator or the end).
    fn keyword(&self, word: &str) -> bool {
        let len = word.chars().count();
        word.chars()
            .enumerate()
            .all(|(i, c)| self.peek(i) == Some(c))
            && self.peek(len).is_none_or(|c| " \t\n;&|()<>".contains(c))
    }

    /// At a `$` outside single quotes: a substitution, a parameter
    /// expansion, arithmetic, or a plain `$`.
    fn dollar(&mut self, depth: usize) {
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => self.arithmetic(depth),
            Some('(') => {
                self.pos += 2;
                self.list(Stop::Paren, 0, depth + 1);
            }
            Some('{') => self.parameter(depth),
            Some('[') => {
                // `$[ .. ]`: old-style arithmetic.
                self.line.opaque = true;
                self.pos += 2;
            }
            _ => self.pos += 1,
        }
    }

    /// At `$((`: arithmetic, or `$( (..) )` written without the blank. The
    /// inside is scanned as a substitution; arithmetic of numbers and
    /// operators only adds nothing, anything else makes the line opaque.
    fn arithmetic(&mut self, depth: usize) {
        let start = self.pos;
        let (pieces, commands) = (self.pieces.len(), self.line.commands.len());
        self.pos += 2;
        self.list(Stop::Paren, 0, depth + 1);
        let inside = &self.chars[start + 1..self.pos.min(self.chars.len())];
        let numeric = inside
            .iter()
            .all(|&c| c.is_ascii_digit() || c.is_whitespace() || "()+-*/%<>=!&|^~?:,".contains(c));
        if numeric {
            self.pieces.truncate(pieces);
            self.line.commands.truncate(commands);
        } else {
            self.line.opaque = true;
        }
    }

    /// At `${`: a parameter expansion, up to its `}`. Only `${NAME}` and
    /// `${N}` (and the special parameters) are understood; the inside of
    /// anything else is scanned for substitutions and the line is opaque.
    fn parameter(&mut self, depth: usize) {
        if depth > MAX_DEPTH {
            self.line.opaque = true;
            self.pos = self.chars.len();
            return;
        }
        self.pos += 2;
        let start = self.pos;
        let mut simple = true;
        loop {
            let Some(c) = self.peek(0) else {
                self.line.opaque = true;
                return;
            };
            match c {
                '}' => break,
                '\\' => {
                    simple = false;
                    self.pos += 2;
                }
                '\'' => {
                    simple = false;
                    self.single_quoted();
                }
                '"' => {
                    simple = false;
                    self.double_quoted(depth + 1);
                }
                '`' => {
                    simple = false;
                    self.backticks(depth);
                }
                '$' if self.peek(1) == Some('\'') => {
                    simple = false;
                    self.ansi_quoted();
                }
                '$' => {
                    simple = false;
                    self.dollar(depth + 1);
                }
                _ => self.pos += 1,
            }
        }
        let name: String = self.chars[start..self.pos].iter().collect();
        self.pos += 1;
        let special = name.len() == 1 && "#?@*!$-".contains(name.as_str());
        let named = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let positional = !name.is_empty() && name.chars().all(|c| c.is_ascii_digit());
        if !(simple && (special || named || positional)) {
            self.line.opaque = true;
        }
    }

    /// At `<<`: a here-string (`<<<`, its word is scanned as usual), or a
    /// here-document, whose delimiter is read now and body after the next
    /// newline.
    fn heredoc(&mut self) {
        let at = self.pos;
        if self.peek(2) == Some('<') {
            self.pos += 3;
            // The word, as the command reads it on its standard input.
            let word = self.raw_word_at(self.pos);
            self.feeds.push(Feed {
                at,
                stdin: Stdin {
                    exact: is_static(&word),
                    text: format!("{}\n", unquote(&word)),
                },
            });
            return;
        }
        self.pos += 2;
        let strip_tabs = self.peek(0) == Some('-');
        if strip_tabs {
            self.pos += 1;
        }
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.pos += 1;
        }
        let start = self.pos;
        let mut quote = None;
        while let Some(c) = self.peek(0) {
            match (quote, c) {
                (None, '\\') => self.pos += 1,
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() || ";&|()<>".contains(c) => break,
                _ => {}
            }
            self.pos += 1;
        }
        let word: String = self.chars[start..self.pos.min(self.chars.len())]
            .iter()
            .collect();
        let delimiter = unquote(&word);
        if delimiter.is_empty() || quote.is_some() {
            self.line.opaque = true;
        }
        self.heredocs.push(Heredoc {
            at,
            quoted: word.contains(['\'', '"', '\\']),
            delimiter,
            strip_tabs,
        });
    }

    /// Just past a newline: the bodies of the here-documents waiting for
    /// one, in order, each up to its delimiter line. An unquoted body's
    /// substitutions are scanned (they may span lines, as in the shell).
    fn heredoc_bodies(&mut self, depth: usize) {
        for doc in std::mem::take(&mut self.heredocs) {
            let body = self.pos;
            let mut line = self.pos;
            let mut found = None;
            while line < self.chars.len() {
                let end = (line..self.chars.len())
                    .find(|&i| self.chars[i] == '\n')
                    .unwrap_or(self.chars.len());
                let text: String = self.chars[line..end].iter().collect();
                let text = if doc.strip_tabs {
                    text.trim_start_matches('\t')
                } else {
                    text.as_str()
                };
                if text == doc.delimiter {
                    found = Some((line, (end + 1).min(self.chars.len())));
                    break;
                }
                line = end + 1;
            }
            let Some((body_end, after)) = found else {
                // The input ended before the delimiter.
                self.line.opaque = true;
                self.pos = self.chars.len();
                return;
            };
            self.feeds.push(Feed {
                at: doc.at,
                stdin: self.body_text(body, body_end, &doc),
            });
            if !doc.quoted {
                self.pos = body;
                while self.pos < body_end {
                    match self.peek(0) {
                        Some('\\') => self.pos += 2,
                        Some('`') => self.backticks(depth),
                        Some('$') => self.dollar(depth),
                        _ => self.pos += 1,
                    }
                }
                if self.pos > body_end {
                    // A substitution ran past the body: not followed.
                    self.line.opaque = true;
                }
            }
            self.pos = self.pos.max(after);
        }
    }

    /// End the current piece at `pos`.
    /// A here-document's body as the command reads it: tabs stripped for
    /// `<<-`; with an unquoted delimiter, `\$`, `\``, `\\` and
    /// backslash-newline as the shell turns them, and not exact when the
    /// body expands anything (its text is then only known when it runs).
    fn body_text(&self, body: usize, end: usize, doc: &Heredoc) -> Stdin {
        let raw: String = self.chars[body..end.max(body)].iter().collect();
        let mut text = String::with_capacity(raw.len());
        for line in raw.split_inclusive('\n') {
            text.push_str(if doc.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            });
        }
        if doc.quoted {
            return Stdin { text, exact: true };
        }
        let mut out = String::with_capacity(text.len());
        let mut exact = true;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') => {}
                    Some(e @ ('$' | '`' | '\\')) => {
                        // The inner shell sees it bare, and may expand it.
                        exact &= e == '\\';
                        out.push(e);
                    }
                    Some(other) => {
                        out.push('\\');
                        out.push(other);
                    }
                    None => out.push('\\'),
                },
                '$' | '`' => {
                    exact = false;
                    out.push(c);
                }
                c => out.push(c),
            }
        }
        Stdin { text: out, exact }
    }

    /// The word starting at `from` (after blanks), as written.
    fn raw_word_at(&self, from: usize) -> String {
        let mut word = String::new();
        let mut quote = None;
        let mut chars = self.chars.iter().skip(from).peekable();
        while let Some(&c) = chars.next() {
            match (quote, c) {
                (None, ' ' | '\t') if word.is_empty() => continue,
                (None, '\\') => {
                    word.push(c);
                    if let Some(&&next) = chars.peek() {
                        word.push(next);
                        chars.next();
                    }
                    continue;
                }
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() || ";&|()<>".contains(c) => break,
                _ => {}
            }
            word.push(c);
        }
        word
    }

    /// Returns the new piece's index, when there was one.
    fn cut(&mut self, start: usize, depth: usize) -> Option<usize> {
        let end = self.pos.min(self.chars.len());
        if start >= end {
            return None;
        }
        let piece: String = self.chars[start..end].iter().collect();
        let piece = piece.trim();
        if piece.is_empty() {
            return None;
        }
        self.pieces.push(Piece {
            level: depth,
            text: piece.to_string(),
            start,
            end,
            piped_from: None,
        });
        Some(self.pieces.len() - 1)
    }

    fn single_quoted(&mut self) {
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == '\'' {
                return;
            }
        }
        self.line.opaque = true;
    }

    /// At `$'`: bash's ANSI-C quoting, where a backslash escapes a `'`.
    fn ansi_quoted(&mut self) {
        self.pos += 2;
        while let Some(c) = self.peek(0) {
            self.pos += if c == '\\' { 2 } else { 1 };
            if c == '\'' {
                return;
            }
        }
        self.line.opaque = true;
    }

    fn double_quoted(&mut self, depth: usize) {
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.pos += 2,
                '"' => {
                    self.pos += 1;
                    return;
                }
                '`' => self.backticks(depth),
                '$' => self.dollar(depth),
                _ => self.pos += 1,
            }
        }
        self.line.opaque = true;
    }

    /// At a backtick: the text up to the closing one, unescaped, is a line of its own.
    fn backticks(&mut self, depth: usize) {
        self.pos += 1;
        let mut inner = String::new();
        let mut closed = false;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => {
                    closed = true;
                    break;
                }
                '\\' => match self.peek(0) {
                    Some(e @ ('`' | '\\' | '$')) => {
                        inner.push(e);
                        self.pos += 1;
                    }
                    _ => inner.push('\\'),
                },
                c => inner.push(c),
            }
        }
        if !closed || depth + 1 > MAX_DEPTH {
            self.line.opaque = true;
            return;
        }
        let sub = parse_at(&inner, depth + 1);
        self.line.commands.extend(sub.commands);
        self.line.writes_file |= sub.writes_file;
        self.line.opaque |= sub.opaque;
    }

    /// At an output redirection (`>`, `>>`, `>|`, `>&`, `&>`, `&>>`, `<>`,
    /// with the operator `width` characters long so far). The target is
    /// only peeked at: the scan goes on over it (it may hold a substitution).
    fn redirect(&mut self, width: usize) {
        self.pos += width;
        if matches!(self.peek(0), Some('>' | '|')) {
            self.pos += 1;
        }
        let dup = width == 1 && self.peek(0) == Some('&');
        if dup {
            self.pos += 1;
        }
        let target = self.word_at(self.pos);
        let harmless = matches!(target.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
            || (dup
                && (target == "-"
                    || (!target.is_empty() && target.chars().all(|c| c.is_ascii_digit()))));
        if !harmless {
            self.line.writes_file = true;
        }
    }

    /// The word starting at `from` (after blanks), quotes removed.
    fn word_at(&self, from: usize) -> String {
        let mut word = String::new();
        let mut quote = None;
        for &c in self.chars.iter().skip(from) {
            match (quote, c) {
                (None, ' ' | '\t') if word.is_empty() => {}
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() || ";&|()<>".contains(c) => break,
                (_, c) => word.push(c),
            }
        }
        word
    }
}

/// The most pieces x here-documents [`stdins`] matches (see `parse_at`).
const MAX_FEED_WORK: usize = 4096;

pub(super) fn parse_at(line: &str, depth: usize) -> ShellLine {
    let mut scanner = Scanner {
        chars: line.chars().collect(),
        pos: 0,
        pieces: Vec::new(),
        heredocs: Vec::new(),
        feeds: Vec::new(),
        escaped_until: usize::MAX,
        line: ShellLine::default(),
    };
    scanner.list(Stop::End, 0, depth);
    if !scanner.heredocs.is_empty() {
        // A here-document whose body never came.
        scanner.line.opaque = true;
    }
    // Matching each piece with its feeds costs pieces x feeds: a line with
    // more than that bound gives no command a standard input it can read
    // (a shell fed one stays unknown) and is opaque.
    let stdins = if scanner.pieces.len().saturating_mul(scanner.feeds.len()) > MAX_FEED_WORK {
        scanner.line.opaque = true;
        vec![None; scanner.pieces.len()]
    } else {
        stdins(&scanner.pieces, &scanner.feeds)
    };
    let mut out = scanner.line;
    let mut pieces: Vec<(usize, &str, Option<Stdin>)> = scanner
        .pieces
        .iter()
        .zip(stdins)
        .map(|(piece, stdin)| (piece.level, piece.text.as_str(), stdin))
        .collect();
    pieces.sort_by_key(|&(level, _, _)| level);
    let mut commands: Vec<(Command, Option<Stdin>)> = pieces
        .into_iter()
        .filter_map(|(_, piece, stdin)| command(piece).map(|c| (c, stdin)))
        .collect();
    commands.extend(out.commands.drain(..).map(|c| (c, None)));
    // What wrappers run, as commands of their own.
    let mut derived = Vec::new();
    for (command, stdin) in &commands {
        unwrap(
            &command.text,
            stdin.as_ref(),
            depth,
            &mut derived,
            &mut out.opaque,
        );
    }
    let mut commands: Vec<Command> = commands.into_iter().map(|(c, _)| c).collect();
    commands.append(&mut derived);
    out.opaque |= commands.iter().any(not_understood);
    out.commands = commands;
    out
}

/// What each piece reads on its standard input, when the line says: the
/// innermost here-document or here-string inside it, else what the piece
/// before it in a pipeline prints, when warden can tell (see [`prints`]).
fn stdins(pieces: &[Piece], feeds: &[Feed]) -> Vec<Option<Stdin>> {
    let mut out: Vec<Option<Stdin>> = Vec::with_capacity(pieces.len());
    for (i, piece) in pieces.iter().enumerate() {
        let own = feeds
            .iter()
            .filter(|f| piece.start <= f.at && f.at < piece.end)
            // Not one of a piece nested inside this one.
            .filter(|f| {
                !pieces
                    .iter()
                    .any(|p| p.level > piece.level && p.start <= f.at && f.at < p.end)
            })
            // The last redirection of standard input is the one it reads.
            .max_by_key(|f| f.at)
            .map(|f| f.stdin.clone());
        // A pipe from a command whose output warden cannot tell still
        // feeds it: an input of unknown text.
        let piped = piece.piped_from.filter(|&from| from < i).map(|from| {
            prints(&pieces[from].text, out[from].as_ref()).unwrap_or(Stdin {
                text: String::new(),
                exact: false,
            })
        });
        out.push(own.or(piped));
    }
    out
}

/// What a command prints, when warden can tell: `echo` of its words
/// (without `-e`), `printf` of a format without conversions, `cat` of its
/// own standard input. Not exact when a word expands.
fn prints(text: &str, stdin: Option<&Stdin>) -> Option<Stdin> {
    let spans = words(text);
    let word = |i: usize| spans.get(i).map(|&(s, e)| &text[s..e]);
    let program = unquote(word(0)?);
    let args: Vec<&str> = (1..spans.len()).filter_map(word).collect();
    match program.rsplit('/').next().unwrap_or(&program) {
        "echo" => {
            let mut args = args.as_slice();
            let mut exact = true;
            while let Some((flag, rest)) = args.split_first() {
                match *flag {
                    "-n" | "-E" => args = rest,
                    "-e" => {
                        exact = false;
                        args = rest;
                    }
                    _ => break,
                }
            }
            exact &= args.iter().all(|w| is_static(w));
            let text: Vec<String> = args.iter().map(|w| unquote(w)).collect();
            Some(Stdin {
                text: format!("{}\n", text.join(" ")),
                exact,
            })
        }
        "printf" => {
            let format = args.first()?;
            let text = unquote(format);
            let plain = !text.contains('%') && !text.replace("\\n", "").contains('\\');
            Some(Stdin {
                exact: plain && is_static(format) && args.len() == 1,
                text: text.replace("\\n", "\n"),
            })
        }
        // `cat` of nothing but its here-document or here-string.
        "cat" => {
            let mut target = false;
            let only_redirections = args.iter().all(|w| {
                let ok = target || w.starts_with('<');
                target = matches!(*w, "<<" | "<<-" | "<<<");
                ok
            });
            only_redirections.then(|| stdin.cloned()).flatten()
        }
        _ => None,
    }
}
