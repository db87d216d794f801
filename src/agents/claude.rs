//! Claude Code (`claude-agent-acp`, the Claude Code CLI inside it).
//!
//! - It keeps its shell state in `/tmp/claude-<uid>` whatever `TMPDIR`
//!   says; `CLAUDE_CODE_TMPDIR` moves it. Under the sandbox it goes to the
//!   process's private temp dir.
//! - Its settings file is `~/.claude.json`, a file directly in the home
//!   directory (besides `~/.claude/`). Claude Code 2.1 writes it through a
//!   temporary file renamed over it and a lock directory beside it, and
//!   when those fail (nothing new can be made in the home directory under
//!   the sandbox) writes it in place. On a first run it does not exist: it
//!   is created empty (`{}`) before the start, so that the in-place write
//!   works and the session opens.

use super::{Confined, Launch, is_set};
use crate::acp::AgentCommand;

/// Moves Claude Code's temp dir (`/tmp/claude-<uid>`).
pub const TMPDIR_VAR: &str = "CLAUDE_CODE_TMPDIR";

/// State files in the home directory, and what an empty one holds.
pub const STATE_FILES: &[(&str, &str)] = &[(".claude.json", "{}\n")];

/// Its temp dir in the private one, unless the user moved it.
pub(super) fn launch(command: &AgentCommand, confined: Confined<'_>) -> Launch {
    let mut launch = Launch::default();
    if let Some(tmp) = confined.tmp
        && !is_set(command, TMPDIR_VAR)
    {
        launch
            .env
            .push((TMPDIR_VAR.to_string(), tmp.display().to_string()));
    }
    launch
}
