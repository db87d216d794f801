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
    let path = std::env::var_os("PATH").unwrap_or_default();
    edit_on(editor, text, &path, &crate::own_path::untrusted()).await
}

/// [`edit_with`], `sh` and the editor found on `path` outside `untrusted`
/// (the workspaces, the agents' writable directories): the editor runs
/// outside the sandbox, so never one an agent planted (`crate::own_path`).
async fn edit_on(
    editor: &str,
    text: &str,
    path: &std::ffi::OsStr,
    untrusted: &[PathBuf],
) -> Result<String, String> {
    let (sh, trusted) = crate::own_path::find_on("sh", path, untrusted)
        .ok_or_else(|| format!("cannot run `{editor}`: no `sh` on PATH outside the workspace and the agent's writable directories"))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// Issue 32, item 5: the editor runs outside the sandbox, so neither
    /// its `sh` nor the editor it names comes from a directory an agent
    /// writes, however early on `PATH`.
    #[tokio::test]
    async fn a_planted_sh_or_editor_early_on_path_never_runs() {
        // Outside the temporary directory, which is never trusted either.
        let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        let dir = tempfile::tempdir_in(target).unwrap();
        let planted = dir.path().join("agent-bin");
        std::fs::create_dir_all(&planted).unwrap();
        let marker = dir.path().join("planted-ran");
        for name in ["sh", "my-editor"] {
            let file = planted.join(name);
            let script = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
            std::fs::write(&file, script).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut path = planted.clone().into_os_string();
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap());
        let untrusted = [planted.clone()];
        let got = edit_on("true", "hello", &path, &untrusted).await;
        assert_eq!(got.as_deref(), Ok("hello"));
        assert!(!marker.exists(), "a planted sh ran");
        let got = edit_on("my-editor", "hello", &path, &untrusted).await;
        assert!(got.is_err(), "the planted editor is not found: {got:?}");
        assert!(!marker.exists(), "a planted editor ran");
    }
}
