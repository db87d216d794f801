//! `warden login`: run an agent's terminal login in the user's terminal.
//!
//! ACP's terminal authentication: the client runs the agent program it
//! has configured, with the `args` and `env` of the method (never a
//! program the agent names), in a terminal the user sees; exit status 0
//! means signed in, and the agent is started again afterwards.

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

/// The agent's terminal login `method` (or its only one), run in the
/// foreground with warden's stdio; the login's exit code. With `sandbox`
/// (the agent's profile) the agent asked for its methods runs confined,
/// and the login itself (which must write the agent's sign-in) gets the
/// agent's environment and what opens a browser, not all of warden's.
pub async fn login(
    command: &AgentCommand,
    method: Option<&str>,
    sandbox: Option<&crate::sandbox::Profile>,
) -> anyhow::Result<i32> {
    let methods = methods_of(command, sandbox).await?;
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
    eprintln!(
        "warden: running {} {} for `{}`",
        crate::sanitize::one_line(&command.program),
        crate::sanitize::one_line(&args.join(" ")),
        crate::sanitize::one_line(&chosen.name)
    );
    let mut login = tokio::process::Command::new(&command.program);
    if let Some(profile) = sandbox {
        let mut profile = profile.clone();
        profile
            .env_pass
            .extend(LOGIN_ENV.iter().map(|name| name.to_string()));
        crate::sandbox::env::scrub(&mut login, &profile);
    }
    let status = login
        .args(args)
        .envs(command.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(&command.cwd)
        .status()
        .await
        .map_err(|err| anyhow::anyhow!("cannot run the login: {err}"))?;
    Ok(status.code().unwrap_or(1))
}

/// Start the agent, read its authentication methods, end it.
async fn methods_of(
    command: &AgentCommand,
    sandbox: Option<&crate::sandbox::Profile>,
) -> anyhow::Result<Vec<AuthMethod>> {
    let (events, mut incoming) = mpsc::unbounded_channel();
    let handle = super::spawn(command, ClientCaps::default(), sandbox, events.into())
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
