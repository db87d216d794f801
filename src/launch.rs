//! Picking the agent to start and the chat's options from the command line
//! and the settings file.

use std::path::Path;

use anyhow::{Context, bail};

use crate::acp::{AgentCommand, ClientCaps};
use crate::app::{ChatOptions, Notify, SettingsLink};
use crate::decision_log;
use crate::policy::Mode;
use crate::settings::{self, DEMO_AGENT, Settings};
use crate::state::Msg;

/// What main decided to start, plus lines to show in the transcript first.
pub struct Start {
    pub command: AgentCommand,
    pub options: ChatOptions,
    /// Lines to show first (the demo hint).
    pub notes: Vec<String>,
    /// Errors to show first (a settings file that did not load).
    pub errors: Vec<String>,
    /// `[screen]` of the settings.
    pub screen: settings::Screen,
}

/// Pick the agent as `resolve_loaded` does, and fail closed when the
/// settings file did not load: every request asks (the file's deny and ask
/// rules are unknown), Auto starts as Default, no bypass.
pub fn resolve(want: &Want<'_>) -> anyhow::Result<Start> {
    let (mut start, loaded) = resolve_loaded(want)?;
    if !loaded {
        let options = &mut start.options;
        options.rules = vec![settings::fail_closed_rule()];
        options.bypass = false;
        if options.mode == Mode::Auto {
            options.mode = Mode::Default;
        }
        if options.new_chat_mode == Some(Mode::Auto) {
            options.new_chat_mode = Some(Mode::Default);
        }
    }
    Ok(start)
}

/// Which agent the user asked for, from whichever command line.
pub struct Want<'a> {
    /// `--config`.
    pub config: Option<&'a Path>,
    /// `--agent NAME`.
    pub agent: Option<&'a str>,
    /// `-- CMD ARGS`.
    pub command: &'a [String],
    /// `--cwd`.
    pub cwd: Option<&'a Path>,
    /// `--mode`.
    pub mode: Option<Mode>,
    /// This warden's executable (runs the demo agent and `warden` commands).
    pub own_exe: &'a str,
}

/// Pick the agent and its sandbox (see [`pick`]); and whether the settings
/// file loaded (or does not exist).
fn resolve_loaded(want: &Want<'_>) -> anyhow::Result<(Start, bool)> {
    let (mut start, loaded, settings, path) = pick(want)?;
    let profile = sandbox_profile(&settings, &start, path.as_deref());
    if profile.mode != crate::sandbox::SandboxMode::Off
        && let crate::sandbox::Support::Missing(why) = crate::sandbox::kernel_support()
    {
        let what = match profile.when_unavailable {
            crate::sandbox::WhenUnavailable::Refuse => {
                "agents will not start (`[sandbox] when_unavailable = \"run-unconfined\"` runs them \
                 with all your rights)"
            }
            crate::sandbox::WhenUnavailable::RunUnconfined => {
                "agents run UNCONFINED, with all your rights (`when_unavailable = \"run-unconfined\"`)"
            }
        };
        start
            .errors
            .push(format!("the sandbox is unavailable: {why}; {what}"));
    }
    if profile.mode != crate::sandbox::SandboxMode::Off
        && matches!(
            crate::sandbox::kernel_support(),
            crate::sandbox::Support::Landlock(_)
        )
    {
        for door in crate::sandbox::open_doors() {
            start.notes.push(format!(
                "the sandbox leaves a door open on this kernel: {door} (`warden sandbox` says more)"
            ));
        }
    }
    if let Some(note) = crate::sandbox::workspace_note(&profile) {
        start.notes.push(note);
    }
    start
        .notes
        .extend(crate::agents::start_notes(&start.command, Some(&profile)));
    start
        .notes
        .extend(crate::net::upstream::start_notes(Some(&profile)));
    start.options.sandbox = Some(profile);
    Ok((start, loaded))
}

/// `--allow-host`: hosts every agent of this run reaches without asking
/// (set once by the command line, before the first agent is resolved).
static ALLOW_HOSTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Set `--allow-host`'s hosts for this run; a pattern that is no host
/// pattern is an error.
pub fn set_allow_hosts(hosts: &[String]) -> anyhow::Result<()> {
    if let Some(bad) = hosts
        .iter()
        .find(|h| !crate::net::hosts::is_host_pattern(h))
    {
        bail!("--allow-host {bad}: not a host pattern (`host`, `host:port` or `*.domain`)");
    }
    let _ = ALLOW_HOSTS.set(hosts.to_vec());
    Ok(())
}

/// The sandbox of the agent `start` runs: `[sandbox]`, changed by the
/// agent block's `sandbox` table; the workspace is the cwd and the roots;
/// warden's own files (settings, decision log, chat records, data) hidden.
fn sandbox_profile(
    settings: &Settings,
    start: &Start,
    path: Option<&Path>,
) -> crate::sandbox::Profile {
    let block = start
        .options
        .settings
        .agent_block
        .as_ref()
        .and_then(|name| settings.agents.get(name))
        .map(|agent| &agent.sandbox);
    let global = &settings.sandbox;
    let mut writable = global.writable.clone();
    let mut hidden = global.hidden.clone();
    let mut env_pass = global.env_pass.clone();
    if let Some(block) = block {
        writable.extend(block.writable.iter().cloned());
        hidden.extend(block.hidden.iter().cloned());
    }
    if let Some(agent) = start
        .options
        .settings
        .agent_block
        .as_ref()
        .and_then(|name| settings.agents.get(name))
    {
        env_pass.extend(agent.env_pass.iter().cloned());
    }
    let mut warden_files: Vec<std::path::PathBuf> =
        path.map(Path::to_path_buf).into_iter().collect();
    warden_files.extend(settings::resolve_path(None));
    warden_files.extend(start.options.decision_log.iter().cloned());
    let command = &start.command;
    // The demo agent is warden's own binary: its sessions are its state.
    let demo_state = (command.args.first().map(String::as_str) == Some("demo-agent"))
        .then(|| crate::demo_agent::state_dir(&command.env))
        .flatten();
    if let Some(dirs) = directories::ProjectDirs::from("", "", "warden") {
        warden_files.push(dirs.config_dir().to_path_buf());
        for data in [dirs.data_local_dir(), dirs.data_dir()] {
            match &demo_state {
                Some(demo) if demo.starts_with(data) => {
                    // Everything of warden's data but the demo's sessions.
                    let known = ["chats", "decisions.jsonl", "warden.log", "history"];
                    warden_files.extend(known.iter().map(|name| data.join(name)));
                    if let Ok(entries) = std::fs::read_dir(data) {
                        warden_files.extend(
                            entries
                                .flatten()
                                .map(|e| e.path())
                                .filter(|p| !demo.starts_with(p)),
                        );
                    }
                }
                _ => warden_files.push(data.to_path_buf()),
            }
        }
    }
    if let Some(demo) = demo_state {
        writable.push(demo.display().to_string());
    }
    // The agent's own caches, kept between runs, out of everyone else's way.
    let cache = directories::ProjectDirs::from("", "", "warden")
        .and_then(|dirs| dirs.state_dir().map(Path::to_path_buf))
        .map(|state| {
            let slug = settings::agent_slug(&command.name);
            state
                .join("agents")
                .join(if slug.is_empty() { "agent" } else { &slug })
        });
    let mut workspace = vec![command.cwd.clone()];
    workspace.extend(start.options.extra_roots.iter().cloned());
    let command_line = std::iter::once(command.program.as_str())
        .chain(command.args.iter().map(String::as_str))
        .collect();
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
    let mut profile = crate::sandbox::Profile::new(&crate::sandbox::ProfileInput {
        agent: &command.name,
        command_line,
        mode: block.and_then(|b| b.mode).unwrap_or(global.mode),
        when_unavailable: global.when_unavailable,
        workspace,
        writable,
        hidden,
        warden_files,
        home: home.clone(),
        env: command.env.clone(),
        env_pass,
        cache,
    });
    // Its network: the block's mode, else `[sandbox]`'s; its model's hosts
    // (`Profile::new`), then `allow_hosts` of both, then `--allow-host`.
    profile.network = block.and_then(|b| b.network).unwrap_or(global.network);
    profile
        .allow_hosts
        .extend(global.allow_hosts.iter().cloned());
    if let Some(block) = block {
        profile
            .allow_hosts
            .extend(block.allow_hosts.iter().cloned());
    }
    profile
        .allow_hosts
        .extend(ALLOW_HOSTS.get().into_iter().flatten().cloned());
    profile.allow_hosts.dedup();
    // The state files a known agent writes before they exist (`agents/`).
    if let Some(home) = &home {
        for file in crate::agents::state_files(command, home) {
            if !profile.writable.contains(&file) {
                profile.writable.push(file);
            }
        }
    }
    profile
}

type Picked = (Start, bool, Settings, Option<std::path::PathBuf>);

/// Pick the agent: `-- CMD`, `--agent NAME`, the settings' default, or the
/// demo agent; whether the settings file loaded (or does not exist), the
/// settings and their path.
fn pick(want: &Want<'_>) -> anyhow::Result<Picked> {
    let cwd = match want.cwd {
        Some(dir) => std::fs::canonicalize(dir)
            .with_context(|| format!("--cwd {}: no such directory", dir.display()))?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !cwd.is_dir() {
        bail!("--cwd {}: not a directory", cwd.display());
    }
    let path = settings::resolve_path(want.config);
    let mut errors = Vec::new();
    let mut notes = Vec::new();
    let mut writable = true;
    let loaded: Option<Settings> = match path.as_deref().map(settings::load) {
        Some(Ok(settings)) => settings,
        Some(Err(err)) => {
            errors.push(format!(
                "{}: every request asks, Auto and bypasses are off, and warden will not \
                 write to the file: {err}",
                settings::NOT_LOADED
            ));
            writable = false;
            None
        }
        None => None,
    };
    let shown_path = path.as_deref().map_or_else(
        || "the settings file".to_string(),
        |p| p.display().to_string(),
    );

    let settings = loaded.unwrap_or_default();
    let agent_servers = settings.agents.iter().flat_map(|(agent, a)| {
        a.mcp_servers
            .iter()
            .map(move |(name, s)| (format!("[agents.{agent}.mcp_servers.{name}]"), name, s))
    });
    let all_servers = settings
        .mcp_servers
        .iter()
        .map(|(name, s)| (format!("[mcp_servers.{name}]"), name, s))
        .chain(agent_servers);
    for (block, name, server) in all_servers {
        if let Err(err) = server.to_server(name) {
            errors.push(format!("{block} is skipped: {err}"));
        }
    }
    let mut options = ChatOptions {
        mode: want.mode.unwrap_or_default(),
        rules: settings.rules.clone(),
        decision_log: decision_log::default_path(),
        notify: Notify {
            bell: settings.notifications.bell,
            desktop: settings.notifications.desktop,
            turn_end_after: (settings.notifications.turn_end_after > 0)
                .then(|| std::time::Duration::from_secs(settings.notifications.turn_end_after)),
        },
        settings: SettingsLink {
            path: path.clone(),
            writable,
            create_as: None,
            agent_block: None,
            named_by_command: false,
            bypassed: settings
                .agents
                .iter()
                .filter(|(_, a)| a.bypass_permissions)
                .map(|(name, _)| name.clone())
                .collect(),
        },
        extra_roots: settings.roots.iter().map(|r| expand_home(r)).collect(),
        mcp_servers: mcp_servers(&settings.mcp_servers),
        ..ChatOptions::default()
    };
    if let Some((program, args)) = want.command.split_first() {
        // A block that runs the same agent (the same resolved program and
        // script, not the same words) lends its name and settings (bypass,
        // mode); any other command gets a name of its own.
        let name = match settings::agent_for_identity(&settings, program, args, &cwd) {
            Some(block) => {
                apply_agent_settings(&mut options, want.mode, block, &settings.agents[block]);
                block.to_string()
            }
            None => {
                let name = settings::unique_agent_name(
                    &settings,
                    &settings::agent_name_for(program, args, &cwd),
                );
                // `b` writes the command line pinned to this agent: its
                // script and program path absolute.
                let (pinned, pinned_args) = settings::pinned_command(program, args, &cwd);
                options.settings.create_as = Some((name.clone(), pinned, pinned_args));
                options.settings.named_by_command = true;
                name
            }
        };
        let start = Start {
            command: AgentCommand {
                name,
                program: program.clone(),
                args: args.to_vec(),
                env: Vec::new(),
                cwd,
            },
            options,
            notes,
            errors,
            screen: settings.screen,
        };
        return Ok((start, writable, settings, path));
    }
    let wanted = want
        .agent
        .map(str::to_string)
        .or_else(|| settings.default_agent.clone());
    let start = match wanted {
        Some(name) if name != DEMO_AGENT || settings.agents.contains_key(&name) => {
            let Some(agent) = settings.agents.get(&name) else {
                let known: Vec<&str> = settings.agents.keys().map(String::as_str).collect();
                bail!(
                    "no agent named `{name}` in {shown_path} (configured: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                );
            };
            apply_agent_settings(&mut options, want.mode, &name, agent);
            // `warden` as an agent's command means this very binary.
            let program = if agent.command == "warden" {
                want.own_exe.to_string()
            } else {
                agent.command.clone()
            };
            Start {
                command: AgentCommand {
                    name,
                    program,
                    args: agent.args.clone(),
                    env: agent.env.clone().into_iter().collect(),
                    cwd,
                },
                options,
                notes,
                errors,
                screen: settings.screen,
            }
        }
        _ => Start {
            options: {
                // `[agents.demo]`, else a block `b` wrote for the demo's command.
                let demo_args = ["demo-agent".to_string()];
                let block = match settings.agents.get(DEMO_AGENT) {
                    Some(_) => Some(DEMO_AGENT),
                    None => settings::agent_for_command(&settings, "warden", &demo_args),
                };
                match block {
                    Some(name) => {
                        apply_agent_settings(&mut options, want.mode, name, &settings.agents[name]);
                    }
                    None => {
                        options.settings.create_as = Some((
                            DEMO_AGENT.to_string(),
                            "warden".to_string(),
                            vec!["demo-agent".to_string()],
                        ))
                    }
                }
                options
            },
            command: AgentCommand {
                name: DEMO_AGENT.to_string(),
                program: want.own_exe.to_string(),
                args: vec!["demo-agent".to_string()],
                env: Vec::new(),
                cwd,
            },
            notes: {
                notes.insert(0, format!(
                    "This is warden's built-in demo agent (offline; type `help`). To use a real agent, add an [agents.NAME] block to {shown_path} (see config.example.toml) or start warden with `-- <agent command>` (from a clone: `cargo run --release -- -- <agent command>`)."
                ));
                notes
            },
            errors,
            screen: settings.screen,
        },
    };
    Ok((start, writable, settings, path))
}

/// The agents a new chat can run besides the first chat's: every
/// `[agents.NAME]` of the settings, each with its options (no `--mode`: a new chat
/// starts at its agent's `default_mode`, else Default). Chats are recorded
/// in `chats_dir`. A settings file that does not load offers the demo only.
pub fn choices(
    config: Option<&Path>,
    cwd: &Path,
    own_exe: &str,
    chats_dir: Option<&Path>,
) -> Vec<crate::app::AgentChoice> {
    let settings = settings::resolve_path(config)
        .and_then(|path| settings::load(&path).ok().flatten())
        .unwrap_or_default();
    settings
        .agents
        .keys()
        .map(String::as_str)
        .filter_map(|name| {
            let start = resolve(&Want {
                config,
                agent: Some(name),
                command: &[],
                cwd: Some(cwd),
                mode: None,
                own_exe,
            })
            .ok()?;
            let mut options = start.options;
            options.chats_dir = chats_dir.map(Path::to_path_buf);
            options.checkpoints = checkpoint_options(&settings, chats_dir);
            Some(crate::app::AgentChoice {
                command: start.command,
                options,
            })
        })
        .collect()
}

/// Take an agent block's policy settings into the chat's options.
fn apply_agent_settings(
    options: &mut ChatOptions,
    mode: Option<Mode>,
    name: &str,
    agent: &settings::AgentSettings,
) {
    options.bypass = agent.bypass_permissions;
    options.agent_plan_mode = agent.agent_plan_mode.clone();
    options.asking_mode = agent.asking_mode.clone();
    options.mode = mode.or(agent.default_mode).unwrap_or_default();
    options.new_chat_mode = agent.default_mode;
    options.settings.agent_block = Some(name.to_string());
    options.caps = ClientCaps {
        read_text_file: agent.fs_read,
        write_text_file: agent.fs_write,
        terminal: agent.terminal,
    };
    let mut servers: Vec<crate::acp::McpServer> = options
        .mcp_servers
        .iter()
        .filter(|s| !agent.mcp_servers.contains_key(&s.name))
        .cloned()
        .collect();
    servers.extend(mcp_servers(&agent.mcp_servers));
    options.mcp_servers = servers;
    options.auth_method = agent.auth_method.clone();
}

/// The valid servers of `[mcp_servers.*]` blocks (the invalid ones were
/// reported at start).
fn mcp_servers(
    blocks: &std::collections::BTreeMap<String, settings::McpServerSettings>,
) -> Vec<crate::acp::McpServer> {
    blocks
        .iter()
        .filter_map(|(name, s)| s.to_server(name).ok())
        .collect()
}

impl Start {
    /// The chat, with the start's notes and errors already in its transcript.
    pub fn into_app(self) -> crate::app::App {
        let mut app = crate::app::App::with_options(self.command, self.options);
        for note in self.notes {
            app.handle(Msg::Note(note));
        }
        for error in self.errors {
            app.handle(Msg::ErrorLine(error));
        }
        app
    }
}

/// The TUI's app: the chat `want` asks for (recorded in `chats_dir`), and
/// every agent of the settings for new chats. The agent is resolved once:
/// new chats of the first chat's agent start at its `default_mode`
/// (`ChatOptions::new_chat_mode`), never at `--mode`.
pub fn tui_app(
    want: &Want<'_>,
    chats_dir: Option<&Path>,
) -> anyhow::Result<(crate::app::App, settings::Screen)> {
    let mut start = resolve(want)?;
    start.options.chats_dir = chats_dir.map(Path::to_path_buf);
    let settings = settings::resolve_path(want.config)
        .and_then(|path| settings::load(&path).ok().flatten())
        .unwrap_or_default();
    start.options.checkpoints = checkpoint_options(&settings, chats_dir);
    let cwd = start.command.cwd.clone();
    let screen = start.screen;
    let mut app = start.into_app();
    app.set_choices(choices(want.config, &cwd, want.own_exe, chats_dir));
    Ok((app, screen))
}

/// Checkpoints beside the chat records (`<data dir>/warden/checkpoints`),
/// as `[checkpoints]` says; none without a data dir or when turned off.
pub fn checkpoint_options(
    settings: &settings::Settings,
    chats_dir: Option<&Path>,
) -> Option<crate::checkpoint::CheckpointOptions> {
    let dir = chats_dir?.with_file_name("checkpoints");
    settings.checkpoints.options(dir)
}

/// `~/x` -> `$HOME/x`.
fn expand_home(path: &str) -> std::path::PathBuf {
    match (path.strip_prefix("~/"), directories::BaseDirs::new()) {
        (Some(rest), Some(base)) => base.home_dir().join(rest),
        _ if path == "~" => {
            directories::BaseDirs::new().map_or_else(|| path.into(), |b| b.home_dir().to_path_buf())
        }
        _ => path.into(),
    }
}
