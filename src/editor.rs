//! The external editor (Ctrl-X): the message goes to a private temporary
//! file, `$VISUAL` (else `$EDITOR`, else `vi`) runs on it through `sh -c`
//! (so `code --wait` works), and the file's text comes back.

use std::path::PathBuf;

/// The editor command line to run.
pub(crate) fn command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".into())
}

/// A private temporary file holding `text`.
fn temp_file(text: &str) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    let path = std::env::temp_dir().join(format!("warden-message-{}.md", uuid::Uuid::new_v4()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(&path)?.write_all(text.as_bytes())?;
    Ok(path)
}

/// Run the editor on `text` with the terminal as it is (the caller has
/// suspended the screen); the edited text, or why not.
pub(crate) async fn edit(text: &str) -> Result<String, String> {
    edit_with(&command(), text).await
}

/// Run the shell command line `editor` on a file holding `text`.
pub async fn edit_with(editor: &str, text: &str) -> Result<String, String> {
    // `sh`, and the editor it finds, never from where an agent writes.
    let Some((sh, trusted)) = crate::own_programs::find("sh") else {
        return Err("no sh on PATH outside the workspace and the agent's state".into());
    };
    let path = temp_file(text).map_err(|e| format!("cannot write a temporary file: {e}"))?;
    let status = tokio::process::Command::new(sh)
        .env("PATH", trusted)
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("warden-editor")
        .arg(&path)
        .status()
        .await;
    let result = match status {
        Ok(status) if status.success() => std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read the edited message: {e}")),
        Ok(status) => Err(format!(
            "`{editor}` ended with {status}; the message is unchanged"
        )),
        Err(e) => Err(format!("cannot run `{editor}`: {e}")),
    };
    let _ = std::fs::remove_file(&path);
    result
}

/// Leave the screen, run the editor, and take the screen back.
pub(crate) async fn edit_suspended(
    terminal: &mut crate::tui::Tui,
    text: &str,
) -> Result<String, String> {
    crate::tui::suspended(terminal, edit(text)).await
}
