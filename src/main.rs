//! The `warden` command line: parse, wire, exit codes. Thin.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use warden::app::App;
use warden::chats::ChatStore;
use warden::decision_log;
use warden::launch::{self, Want};
use warden::policy::Mode;
use warden::sanitize::{json as safe_json, one_line};
use warden::settings;
use warden::state::{Action, Msg, OnAsk};

mod cli_reports;

use cli_reports::{grants, print_agents, print_log};

/// A terminal chat client for coding agents that speak the Agent Client Protocol.
#[derive(Debug, Parser)]
#[command(name = "warden", version, about)]
struct Cli {
    /// Settings file to read (default: the platform config dir's warden/config.toml).
    #[arg(long, env = "WARDEN_CONFIG", global = true, value_name = "PATH")]
    config: Option<PathBuf>,

    /// Agent to start: the NAME of an [agents.NAME] block of the settings file.
    #[arg(long, value_name = "NAME", conflicts_with = "command")]
    agent: Option<String>,

    /// Working directory of the agent's session (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,

    /// Permission mode the chat starts in: plan, default or auto
    /// (default: the agent's `default_mode` setting, else default).
    #[arg(long, value_name = "MODE")]
    mode: Option<Mode>,

    /// Reopen a past chat: the picker of recorded chats (and of the
    /// sessions the agent lists), newest first, optionally pre-filtered.
    /// Alt-O opens it in a running warden.
    #[arg(long, value_name = "FILTER", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,

    /// Serve the waiting cards to another device (a phone) on the
    /// `[remote] listen` address (127.0.0.1:8765 by default; a taken port
    /// moves on to the next free one, and warden says which).
    #[arg(long)]
    remote: bool,

    /// The port of the remote page (`--remote`, `/remote`, `exec --on-ask
    /// remote`): this one or none.
    #[arg(long, value_name = "PORT", global = true)]
    remote_port: Option<u16>,

    /// A host the agents reach without asking, for this run (`host`,
    /// `host:port`, `*.domain`); repeatable (the TUI, `exec`, `sandbox`).
    #[arg(long = "allow-host", value_name = "HOST", global = true)]
    allow_host: Vec<String>,

    /// Any agent command, after `--`: `warden -- npx -y @zed-industries/claude-agent-acp`.
    #[arg(last = true, value_name = "CMD ARGS")]
    command: Vec<String>,

    #[command(subcommand)]
    sub: Option<Sub>,
}

#[derive(Debug, Subcommand)]
enum ConfigCmd {
    /// Print the settings file path in use.
    Path,
}

/// How `warden exec` answers a request the policy leaves to the user.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum OnAskArg {
    /// Reject it.
    Deny,
    /// Allow it once.
    Allow,
    /// Cancel the turn and exit non-zero.
    Fail,
    /// Serve the cards on the remote page (`[remote] listen`; its URL on
    /// stderr) and wait for an answer there, denying after --ask-timeout.
    Remote,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Run one turn without a TUI: agent text to stdout, one line per decision to stderr.
    Exec {
        /// Permission mode for the turn.
        #[arg(long, value_name = "MODE")]
        mode: Option<Mode>,
        /// What to answer when the policy would ask the user.
        #[arg(long, value_enum, default_value = "deny")]
        on_ask: OnAskArg,
        /// With `--on-ask remote`: deny a card nobody answered after SECS
        /// seconds.
        #[arg(long, value_name = "SECS", default_value_t = 300)]
        ask_timeout: u64,
        /// The prompt (default: read from stdin).
        #[arg(short, long, value_name = "PROMPT")]
        prompt: Option<String>,
        /// Agent to start: an [agents.NAME] block of the settings file.
        #[arg(long, value_name = "NAME", conflicts_with = "command")]
        agent: Option<String>,
        /// Working directory of the session.
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Give up on a turn that has not ended after SECS seconds (the
        /// turn is cancelled; exit status 124).
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
        /// Give up when the agent has not opened its session after SECS
        /// seconds (exit status 124).
        #[arg(long, value_name = "SECS", default_value_t = 60)]
        start_timeout: u64,
        /// Any agent command, after `--`.
        #[arg(last = true, value_name = "CMD ARGS")]
        command: Vec<String>,
    },
    /// Settings file helpers.
    Config {
        #[command(subcommand)]
        what: ConfigCmd,
    },
    /// List the configured agents with their bypass and default mode.
    Agents,
    /// List what decides for you (bypasses, rules), and revoke one.
    Grants {
        /// Revoke the item with this number (from the list).
        #[arg(long, value_name = "N")]
        revoke: Option<usize>,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
    /// Print recent permission decisions from the decision log.
    Log {
        /// Print the raw JSON lines.
        #[arg(long)]
        json: bool,
        /// Only this agent's decisions.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// How many of the most recent decisions.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Write a recorded chat as Markdown (the newest, or the one CHAT names).
    Export {
        /// A chat id, or words of its title.
        chat: Option<String>,
        /// Write to FILE instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Put this directory's files back as they were before a chat's last
    /// turn (the newest chat, or the one whose id starts with CHAT).
    Undo {
        /// A chat id (or its start).
        chat: Option<String>,
        /// Restore without asking.
        #[arg(long)]
        yes: bool,
        /// Files changed since the turn: keep them and write the
        /// checkpoint's copy beside each.
        #[arg(long, conflicts_with_all = ["skip", "overwrite"])]
        keep_both: bool,
        /// Files changed since the turn: leave them.
        #[arg(long, conflicts_with = "overwrite")]
        skip: bool,
        /// Files changed since the turn: overwrite them.
        #[arg(long)]
        overwrite: bool,
    },
    /// List this directory's checkpoints by chat and turn, with their files
    /// and the disk they take.
    Checkpoints {
        /// A chat id (or its start).
        chat: Option<String>,
    },
    /// Run the built-in offline demo agent on stdin/stdout (launched like any agent).
    DemoAgent {
        /// A scenario file (TOML or JSON) that scripts the agent's turns.
        #[arg(long, value_name = "PATH")]
        scenario: Option<PathBuf>,
        /// Play a terminal login instead (what `warden login` runs).
        #[arg(long)]
        login: bool,
    },
    /// Print the sandbox an agent would run in (its rules) and test it: a
    /// confined child tries to write outside the workspace and to read a
    /// hidden file; both must fail (exit status 1 if either succeeds).
    Sandbox {
        /// Agent: an [agents.NAME] block of the settings file.
        #[arg(long, value_name = "NAME", conflicts_with = "command")]
        agent: Option<String>,
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The rules of a chat in Plan (the workspace read-only).
        #[arg(long)]
        plan: bool,
        /// Print every rule (each path and what it allows).
        #[arg(long)]
        rules: bool,
        /// Any agent command, after `--`.
        #[arg(last = true, value_name = "CMD ARGS")]
        command: Vec<String>,
    },
    /// Sign in to an agent whose sign-in is a login in a terminal (kimi-cli,
    /// qwen-code): runs its login here, then start warden again.
    Login {
        /// Agent: an [agents.NAME] block of the settings file.
        #[arg(long, value_name = "NAME", conflicts_with = "command")]
        agent: Option<String>,
        /// The id of the login method (default: the agent's only terminal login).
        #[arg(long, value_name = "ID")]
        method: Option<String>,
        /// Run the login's command line without asking (it is still shown).
        #[arg(long, short = 'y')]
        yes: bool,
        /// Any agent command, after `--`.
        #[arg(last = true, value_name = "CMD ARGS")]
        command: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // One thread: fewer cross-thread wakeups per streamed chunk (measured:
    // half the CPU per chunk of a two-worker runtime, see benches/ingest.rs).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!(
                "warden: cannot start the async runtime: {}",
                one_line(&err.to_string())
            );
            return ExitCode::FAILURE;
        }
    };
    match &cli.sub {
        Some(Sub::DemoAgent { login: true, .. }) => {
            for line in warden::demo_agent::terminal_login() {
                println!("{line}");
            }
            return ExitCode::SUCCESS;
        }
        Some(Sub::Login {
            agent,
            method,
            yes,
            command,
        }) => {
            let consent = if *yes {
                warden::acp::Consent::Given
            } else {
                warden::acp::Consent::Ask
            };
            init_logging();
            warden::reaper::become_subreaper();
            let result = runtime.block_on(run_login(
                cli.config.as_deref(),
                agent.as_deref(),
                method.as_deref(),
                consent,
                command,
            ));
            warden::reaper::end_descendants();
            return match result {
                Ok(0) => ExitCode::SUCCESS,
                Ok(code) => {
                    eprintln!("warden login: the login exited with status {code}");
                    ExitCode::from(u8::try_from(code).unwrap_or(1).max(1))
                }
                Err(err) => {
                    eprintln!("warden login: {}", one_line(&format!("{err:#}")));
                    ExitCode::FAILURE
                }
            };
        }
        Some(Sub::DemoAgent { scenario, .. }) => {
            return match runtime.block_on(warden::demo_agent::run(scenario.as_deref())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("warden demo-agent: {}", one_line(&format!("{err:#}")));
                    ExitCode::FAILURE
                }
            };
        }
        Some(Sub::Log { json, agent, limit }) => {
            return match print_log(*json, agent.as_deref(), *limit) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("warden log: {}", one_line(&format!("{err:#}")));
                    ExitCode::FAILURE
                }
            };
        }
        Some(Sub::Config {
            what: ConfigCmd::Path,
        }) => {
            return match settings::resolve_path(cli.config.as_deref()) {
                Some(path) => {
                    println!("{}", one_line(&path.display().to_string()));
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("warden: no config directory on this system; use --config PATH");
                    ExitCode::FAILURE
                }
            };
        }
        Some(Sub::Export { chat, output }) => {
            return report(
                warden::export::run_cli(chat.as_deref(), output.as_deref()).map_err(Into::into),
            );
        }
        Some(Sub::Undo {
            chat,
            yes,
            keep_both,
            skip,
            overwrite,
        }) => {
            use warden::checkpoint::Resolution;
            let resolution = match (keep_both, skip, overwrite) {
                (true, _, _) => Some(Resolution::KeepBoth),
                (_, true, _) => Some(Resolution::Skip),
                (_, _, true) => Some(Resolution::Overwrite),
                _ => None,
            };
            return report(checkpoints_cli(cli.config.as_deref(), |options, cwd| {
                warden::checkpoint::headless::undo(options, cwd, chat.as_deref(), *yes, resolution)
            }));
        }
        Some(Sub::Checkpoints { chat }) => {
            return report(checkpoints_cli(cli.config.as_deref(), |options, cwd| {
                warden::checkpoint::headless::list(options, cwd, chat.as_deref())
            }));
        }
        Some(Sub::Agents) => return report(print_agents(cli.config.as_deref())),
        Some(Sub::Sandbox {
            agent,
            cwd,
            plan,
            rules,
            command,
        }) => {
            if let Err(err) = launch::set_allow_hosts(&cli.allow_host) {
                return report(Err(err));
            }
            let want = Want {
                config: cli.config.as_deref(),
                agent: agent.as_deref(),
                command,
                cwd: cwd.as_deref(),
                mode: None,
                own_exe: &match own_exe() {
                    Ok(exe) => exe,
                    Err(err) => return report(Err(err)),
                },
            };
            return match launch::resolve(&want) {
                Ok(start) => {
                    let Some(profile) = start.options.sandbox else {
                        return report(Err(anyhow::anyhow!("no sandbox profile")));
                    };
                    let profile = if *plan { profile.read_only() } else { profile };
                    for line in warden::sandbox::describe(&profile, *rules) {
                        println!("{}", one_line(&line));
                    }
                    if profile.mode == warden::sandbox::SandboxMode::Off {
                        println!("self-test: skipped, the sandbox is off");
                        return ExitCode::FAILURE;
                    }
                    let (held, lines) = warden::sandbox::self_test(&profile);
                    for line in lines {
                        println!("self-test: {}", one_line(&line));
                    }
                    if held {
                        println!("self-test: the sandbox holds");
                        ExitCode::SUCCESS
                    } else {
                        println!("self-test: FAILED, the sandbox does not hold");
                        ExitCode::FAILURE
                    }
                }
                Err(err) => report(Err(err)),
            };
        }
        Some(Sub::Grants { revoke, yes }) => {
            return report(grants(cli.config.as_deref(), *revoke, *yes));
        }
        Some(Sub::Exec { .. }) => {
            init_logging();
            warden::reaper::become_subreaper();
            let result = runtime.block_on(run_exec(&cli));
            warden::reaper::end_descendants();
            return match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("warden exec: {}", one_line(&format!("{err:#}")));
                    ExitCode::from(
                        err.downcast_ref::<warden::app::ExecError>()
                            .map_or(1, warden::app::ExecError::exit_code),
                    )
                }
            };
        }
        None => {}
    }
    let log_path = init_logging();
    warden::reaper::become_subreaper();
    let result = runtime.block_on(run_chat(cli));
    warden::reaper::end_descendants();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("warden: {}", one_line(&format!("{err:#}")));
            if let Some(path) = log_path {
                eprintln!("(log: {})", path.display());
            }
            ExitCode::from(2)
        }
    }
}

async fn run_chat(cli: Cli) -> anyhow::Result<()> {
    let own = own_exe()?;
    launch::set_allow_hosts(&cli.allow_host)?;
    let want = Want {
        config: cli.config.as_deref(),
        agent: cli.agent.as_deref(),
        command: &cli.command,
        cwd: cli.cwd.as_deref(),
        mode: cli.mode,
        own_exe: &own,
    };
    let chats_dir = ChatStore::default_dir();
    let (mut app, screen) = launch::tui_app(&want, chats_dir.as_deref())?;
    let remote = warden::settings::resolve_path(cli.config.as_deref())
        .and_then(|path| warden::settings::load(&path).ok().flatten())
        .unwrap_or_default()
        .remote;
    app.set_remote_settings(&remote);
    if let Some(port) = cli.remote_port {
        app.set_remote_port(port);
    }
    if (cli.remote || remote.enabled) && remote.listen.parse::<std::net::SocketAddr>().is_ok() {
        app.start_remote_told(app.remote_listen());
    }
    // Spawn before touching the terminal: a command that does not exist is a
    // plain error on a normal screen.
    app.start_agent()?;
    if let Some(filter) = &cli.resume {
        // The picker of past chats over the new chat, the filter typed in.
        app.handle(Msg::Action(Action::PastChats));
        if !filter.is_empty() {
            app.handle(Msg::Action(Action::Paste(filter.clone())));
            // The records are read off the loop: wait for them.
            app.settle_disk().await;
            app.reopen_exact(filter);
        }
    }
    let mut terminal = match warden::tui::init(screen) {
        Ok(terminal) => terminal,
        Err(err) => {
            app.shutdown().await;
            return Err(err).context("cannot set up the terminal");
        }
    };
    let result = warden::app::run_tui(&mut app, &mut terminal).await;
    warden::tui::restore();
    // After the last writes: a record that could not be written is not named.
    app.shutdown().await;
    let hints = app.resume_hints();
    for hint in hints {
        println!("{hint}");
    }
    result.context("terminal input failed")
}

/// One headless turn: `warden exec`.
async fn run_exec(cli: &Cli) -> anyhow::Result<()> {
    let Some(Sub::Exec {
        mode,
        on_ask,
        ask_timeout,
        prompt,
        agent,
        cwd,
        timeout,
        start_timeout,
        command,
    }) = &cli.sub
    else {
        bail!("not an exec command line");
    };
    launch::set_allow_hosts(&cli.allow_host)?;
    let prompt = match prompt {
        Some(prompt) => prompt.clone(),
        None => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .context("cannot read the prompt from stdin")?;
            text
        }
    };
    if prompt.trim().is_empty() {
        bail!("no prompt: give -p PROMPT or pipe one on stdin");
    }
    let mut start = launch::resolve(&Want {
        config: cli.config.as_deref(),
        agent: agent.as_deref(),
        command,
        cwd: cwd.as_deref(),
        mode: *mode,
        own_exe: &own_exe()?,
    })?;
    for error in &start.errors {
        eprintln!("warden: {}", one_line(error));
    }
    for note in warden::agents::start_notes(&start.command, start.options.sandbox.as_ref()) {
        eprintln!("warden: note: {}", one_line(&note));
    }
    for note in warden::net::upstream::start_notes(start.options.sandbox.as_ref()) {
        eprintln!("warden: note: {}", one_line(&note));
    }
    start.options.notify = warden::app::Notify::default();
    // Recorded like a chat, marked as an exec run: the resume picker shows
    // it with its entries (and marked), not as a bare session the agent lists.
    start.options.chats_dir = ChatStore::default_dir();
    start.options.headless = Some(match on_ask {
        OnAskArg::Deny => OnAsk::Deny,
        OnAskArg::Allow => OnAsk::Allow,
        OnAskArg::Fail => OnAsk::Fail,
        OnAskArg::Remote => OnAsk::Remote,
    });
    let mut app = App::with_options(start.command, start.options);
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    if matches!(on_ask, OnAskArg::Remote) {
        let remote = warden::settings::resolve_path(cli.config.as_deref())
            .and_then(|path| warden::settings::load(&path).ok().flatten())
            .unwrap_or_default()
            .remote;
        let mut listen: std::net::SocketAddr = remote.listen.parse().map_err(|_| {
            anyhow::anyhow!(
                "[remote] listen is not an address and port: {}",
                one_line(&remote.listen)
            )
        })?;
        app.set_remote_listen(listen);
        if let Some(port) = cli.remote_port {
            app.set_remote_port(port);
            listen.set_port(port);
        }
        if let Some(public) = &remote.public_url {
            let base = warden::remote::public_base(public)
                .with_context(|| format!("[remote] public_url: {}", one_line(public)))?;
            app.set_remote_public(Some(base));
        }
        if let Some(notify) = warden::remote::Notify::from_settings(&remote)? {
            app.set_remote_notify(notify);
        }
        app.start_remote_headless(listen, Duration::from_secs(*ask_timeout), &mut err)
            .context("--on-ask remote")?;
    }
    app.start_agent()?;
    let limits = warden::app::ExecLimits {
        start: Duration::from_secs(*start_timeout),
        turn: timeout.map(Duration::from_secs),
    };
    let result = warden::app::run_exec(&mut app, &prompt, limits, &mut out, &mut err).await;
    app.shutdown().await;
    result.map_err(Into::into)
}

fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("warden: {}", one_line(&format!("{err:#}")));
            ExitCode::FAILURE
        }
    }
}

/// `warden login`: the agent's terminal login, in this terminal.
async fn run_login(
    config: Option<&std::path::Path>,
    agent: Option<&str>,
    method: Option<&str>,
    consent: warden::acp::Consent,
    command: &[String],
) -> anyhow::Result<i32> {
    let own = own_exe()?;
    let start = launch::resolve(&Want {
        config,
        agent,
        command,
        cwd: None,
        mode: None,
        own_exe: &own,
    })?;
    warden::acp::login(
        &start.command,
        method,
        start.options.sandbox.as_ref(),
        consent,
    )
    .await
}

fn own_exe() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot find warden's own executable")?;
    Ok(exe.display().to_string())
}

/// Log to a file in the platform data dir; never to the terminal.
fn init_logging() -> Option<PathBuf> {
    let dir = directories::ProjectDirs::from("", "", "warden")?
        .data_local_dir()
        .to_path_buf();
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("warden.log");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    let filter = tracing_subscriber::EnvFilter::try_from_env("WARDEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .init();
    Some(path)
}

/// Run a checkpoint command for the current directory and print its text.
fn checkpoints_cli(
    config: Option<&std::path::Path>,
    run: impl FnOnce(&warden::checkpoint::CheckpointOptions, &std::path::Path) -> anyhow::Result<String>,
) -> anyhow::Result<()> {
    let loaded = settings::resolve_path(config)
        .and_then(|path| settings::load(&path).ok().flatten())
        .unwrap_or_default();
    let dir = warden::checkpoint::CheckpointOptions::default_dir()
        .ok_or_else(|| anyhow::anyhow!("no data directory on this system"))?;
    let mut options = loaded
        .checkpoints
        .options(dir.clone())
        .unwrap_or_else(|| warden::checkpoint::CheckpointOptions::in_dir(dir));
    options.tell_agent = false;
    // warden's own files are never put back, as in the TUI.
    options.own.extend(settings::resolve_path(config));
    options.own.extend(settings::resolve_path(None));
    options.own.extend(warden::decision_log::default_path());
    if let Some(dirs) = directories::ProjectDirs::from("", "", "warden") {
        options.own.push(dirs.data_local_dir().to_path_buf());
    }
    let cwd = std::env::current_dir()?;
    let text = run(&options, &cwd)?;
    print!("{}", one_line_keep_newlines(&text));
    Ok(())
}

/// Each line made safe for the terminal.
fn one_line_keep_newlines(text: &str) -> String {
    text.lines().map(|l| one_line(l) + "\n").collect()
}
