//! `warden login`: run an agent's terminal login in the user's terminal.
//!
//! ACP's terminal authentication: the client runs the agent program it
//! has configured, with the `args` and `env` of the method (never a
//! program the agent names), in a terminal the user sees; exit status 0
//! means signed in, and the agent is started again afterwards.
//!
//! The agent answers the methods, so it chooses the arguments: the exact
//! command line is shown and the user asked before it runs. The agent
//! started to read the methods, and the login's program, run under the
//! chat's sandbox with the workspace read-only (the agent's state stays
//! writable, where the login saves its token), without loader variables,
//! and everything the login started is ended with it.

use tokio::sync::mpsc;

use super::{AgentCommand, AuthKind, AuthMethod, ClientCaps};

/// Variables a login gets besides its agent's allow-list: it may open a
/// browser on the user's desktop.
const LOGIN_ENV: &[&str] = &[
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "BROWSER",
];

/// Whether the user agrees to run the sign-in's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consent {
    /// Show it and ask on this terminal (stderr, an answer on stdin).
    Ask,
    /// Agreed beforehand (`warden login --yes`): shown, not asked.
    Given,
}

/// The agent's terminal login `method` (or its only one), run in the
/// foreground with warden's stdio, under `sandbox` with the workspace
/// read-only, once the user agreed; the login's exit code.
pub async fn login(
    command: &AgentCommand,
    method: Option<&str>,
    sandbox: Option<&crate::sandbox::Profile>,
    consent: Consent,
) -> anyhow::Result<i32> {
    let sandbox = sandbox.map(crate::sandbox::Profile::read_only);
    let methods = methods_of(command, sandbox.as_ref()).await?;
    let terminal: Vec<&AuthMethod> = methods
        .iter()
        .filter(|m| matches!(m.kind, AuthKind::Terminal { .. }))
        .collect();
    let listed = |list: &[&AuthMethod]| {
        list.iter()
            .map(|m| {
                format!(
                    "`{}` ({})",
                    crate::sanitize::one_line(&m.id),
                    crate::sanitize::one_line(&m.name)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen = match method {
        Some(id) => terminal
            .iter()
            .find(|m| m.id == id)
            .copied()
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "`{}` is not one of the agent's terminal logins ({})",
                    crate::sanitize::one_line(id),
                    if terminal.is_empty() {
                        "it offers none".to_string()
                    } else {
                        listed(&terminal)
                    }
                )
            })?,
        None => match terminal.as_slice() {
            [only] => *only,
            [] => anyhow::bail!(
                "the agent offers no terminal login; its sign-in methods: {}",
                if methods.is_empty() {
                    "none".to_string()
                } else {
                    listed(&methods.iter().collect::<Vec<_>>())
                }
            ),
            several => anyhow::bail!(
                "the agent offers several terminal logins, name one with --method: {}",
                listed(several)
            ),
        },
    };
    let AuthKind::Terminal { args, env } = &chosen.kind else {
        anyhow::bail!("not a terminal login");
    };
    let line = command_line(command, args, env);
    if crate::sanitize::one_line(&line) != line {
        anyhow::bail!(
            "the sign-in `{}` asks to run a command line that cannot be shown as it is \
             (control or invisible characters): not run: {}",
            crate::sanitize::one_line(&chosen.id),
            crate::sanitize::one_line(&line)
        );
    }
    let under = match &sandbox {
        Some(profile) => match crate::sandbox::badge_of(profile) {
            crate::sandbox::Badge::ReadOnly | crate::sandbox::Badge::NetOpenReadOnly => {
                "under the sandbox (the workspace read-only, the agent's state writable)"
            }
            crate::sandbox::Badge::PartialReadOnly => {
                "under the sandbox, partial on this kernel (the workspace read-only, the agent's \
                 state writable; `warden sandbox` names the open doors)"
            }
            crate::sandbox::Badge::Confined | crate::sandbox::Badge::NetOpen => "under the sandbox",
            crate::sandbox::Badge::Partial => {
                "under the sandbox, partial on this kernel (`warden sandbox` names the open doors)"
            }
            crate::sandbox::Badge::Off => "UNCONFINED (the sandbox is off for this agent)",
            crate::sandbox::Badge::Unconfined => "UNCONFINED (no Landlock)",
        },
        None => "UNCONFINED (no sandbox)",
    };
    eprintln!(
        "warden: the sign-in `{}` ({}) runs, in {}, {under}:\n  {line}",
        crate::sanitize::one_line(&chosen.id),
        crate::sanitize::one_line(&chosen.name),
        crate::sanitize::one_line(&command.cwd.display().to_string()),
    );
    if consent == Consent::Ask && !ask("Run it? [y/N] ").await {
        anyhow::bail!("not run: the sign-in was not confirmed");
    }
    let confinement = sandbox
        .as_ref()
        .map(crate::sandbox::Confinement::prepare)
        .transpose()
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    let mut program = tokio::process::Command::new(&command.program);
    if let Some(profile) = &sandbox {
        // The agent's environment, and what opens a browser: not all of
        // warden's.
        let mut profile = profile.clone();
        profile
            .env_pass
            .extend(LOGIN_ENV.iter().map(|name| name.to_string()));
        crate::sandbox::env::scrub(&mut program, &profile);
    }
    program
        .args(args)
        .envs(command.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(&command.cwd);
    crate::sandbox::strip_loader_env(&mut program);
    let tree = crate::procs::Tree::prepare();
    tree.apply(&mut program);
    if let Some(confinement) = &confinement {
        confinement.apply(&mut program);
    }
    // On warden's spawner thread, dying with warden.
    let status = match crate::procs::spawner::spawn(program) {
        Ok(mut child) => child.wait().await,
        Err(err) => Err(err),
    };
    let _ = tokio::task::spawn_blocking(move || tree.end(None)).await;
    drop(confinement);
    let status = status.map_err(|err| anyhow::anyhow!("cannot run the login: {err}"))?;
    Ok(status.code().unwrap_or(1))
}

/// The login as one shell line: the method's variables, the program, its
/// arguments, each quoted where the shell would read it otherwise.
fn command_line(command: &AgentCommand, args: &[String], env: &[(String, String)]) -> String {
    let mut words: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={}", crate::policy::shell_quote(v)))
        .collect();
    words.push(crate::policy::shell_quote(&command.program).into_owned());
    words.extend(
        args.iter()
            .map(|a| crate::policy::shell_quote(a).into_owned()),
    );
    words.join(" ")
}

/// Ask `question` on stderr; whether the answer on stdin is yes.
async fn ask(question: &str) -> bool {
    use std::io::Write as _;
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let answer = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await;
    matches!(answer, Ok(Ok(line)) if matches!(line.trim().to_lowercase().as_str(), "y" | "yes"))
}

/// Start the agent, read its authentication methods, end it.
async fn methods_of(
    command: &AgentCommand,
    sandbox: Option<&crate::sandbox::Profile>,
) -> anyhow::Result<Vec<AuthMethod>> {
    let (events, mut incoming) = mpsc::unbounded_channel();
    // Only its allowed hosts: no one answers an ask here (refused).
    let (asks, _) = mpsc::unbounded_channel();
    let handle = super::spawn_now(command, ClientCaps::default(), sandbox, events.into(), asks)
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    let answer = handle.auth_methods();
    let methods = tokio::select! {
        methods = answer => methods.ok(),
        failed = async {
            loop {
                match incoming.recv().await {
                    Some(super::AgentEvent::ConnectFailed(message)) => break message,
                    Some(super::AgentEvent::Exited { status, .. }) => {
                        break format!("the agent exited ({status})")
                    }
                    Some(_) => {}
                    None => break "the agent is gone".to_string(),
                }
            }
        } => {
            handle.shutdown(std::time::Duration::from_millis(500)).await;
            anyhow::bail!("{failed}");
        }
    };
    handle.shutdown(std::time::Duration::from_millis(500)).await;
    methods.ok_or_else(|| anyhow::anyhow!("the agent did not initialise"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent() -> AgentCommand {
        AgentCommand {
            name: "kimi".into(),
            program: "/usr/bin/kimi".into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: std::path::PathBuf::from("/tmp"),
        }
    }

    #[test]
    fn the_command_line_shows_each_word_and_variable_quoted() {
        let args = vec!["login".to_string(), "a b".to_string(), "it's".to_string()];
        let env = vec![("KIMI_MODE".to_string(), "x y".to_string())];
        assert_eq!(
            command_line(&agent(), &args, &env),
            "KIMI_MODE='x y' /usr/bin/kimi login 'a b' 'it'\\''s'"
        );
    }

    #[test]
    fn a_line_with_characters_that_cannot_be_shown_is_told_apart() {
        let hidden = vec!["login\u{1b}[2K".to_string(), "x\u{202e}y".to_string()];
        for arg in hidden {
            let line = command_line(&agent(), std::slice::from_ref(&arg), &[]);
            assert_ne!(crate::sanitize::one_line(&line), line, "{arg:?}");
        }
        let line = command_line(&agent(), &["login".to_string()], &[]);
        assert_eq!(crate::sanitize::one_line(&line), line);
    }
}
