//! The `warden` command line: parse, wire, exit codes. Thin.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use warden::acp::AgentCommand;
use warden::app::{App, ChatOptions};
use warden::decision_log;
use warden::policy::Mode;
use warden::settings::{self, DEMO_AGENT, Settings};
use warden::state::OnAsk;

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

    /// Any agent command, after `--`: `warden -- npx @zed-industries/claude-code-acp`.
    #[arg(last = true, value_name = "CMD ARGS")]
    command: Vec<String>,

    #[command(subcommand)]
    sub: Option<Sub>,
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
        /// The prompt (default: read from stdin).
        #[arg(short, long, value_name = "PROMPT")]
        prompt: Option<String>,
        /// Agent to start: an [agents.NAME] block of the settings file.
        #[arg(long, value_name = "NAME", conflicts_with = "command")]
        agent: Option<String>,
        /// Working directory of the session.
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Any agent command, after `--`.
        #[arg(last = true, value_name = "CMD ARGS")]
        command: Vec<String>,
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
    /// Run the built-in offline demo agent on stdin/stdout (launched like any agent).
    DemoAgent {
        /// A scenario file (TOML or JSON) that scripts the agent's turns.
        #[arg(long, value_name = "PATH")]
        scenario: Option<PathBuf>,
    },
}

/// What main decided to start, plus lines to show in the transcript first.
struct Start {
    command: AgentCommand,
    options: ChatOptions,
    notes: Vec<String>,
    errors: Vec<String>,
}

/// Which agent the user asked for, from whichever command line.
struct Want<'a> {
    config: Option<&'a Path>,
    agent: Option<&'a str>,
    command: &'a [String],
    cwd: Option<&'a Path>,
    mode: Option<Mode>,
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
            eprintln!("warden: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match &cli.sub {
        Some(Sub::DemoAgent { scenario }) => {
            return match runtime.block_on(warden::demo_agent::run(scenario.as_deref())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("warden demo-agent: {err:#}");
                    ExitCode::FAILURE
                }
            };
        }
        Some(Sub::Log { json, agent, limit }) => {
            return match print_log(*json, agent.as_deref(), *limit) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("warden log: {err:#}");
                    ExitCode::FAILURE
                }
            };
        }
        Some(Sub::Exec { .. }) => {
            init_logging();
            return match runtime.block_on(run_exec(&cli)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("warden exec: {err:#}");
                    ExitCode::from(1)
                }
            };
        }
        None => {}
    }
    let log_path = init_logging();
    match runtime.block_on(run_chat(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("warden: {err:#}");
            if let Some(path) = log_path {
                eprintln!("(log: {})", path.display());
            }
            ExitCode::from(2)
        }
    }
}

async fn run_chat(cli: Cli) -> anyhow::Result<()> {
    let start = resolve(&Want {
        config: cli.config.as_deref(),
        agent: cli.agent.as_deref(),
        command: &cli.command,
        cwd: cli.cwd.as_deref(),
        mode: cli.mode,
    })?;
    let mut app = App::with_options(start.command, start.options);
    // Spawn before touching the terminal: a command that does not exist is a
    // plain error on a normal screen.
    app.start_agent()?;
    for note in start.notes {
        app.state.info(note);
    }
    for error in start.errors {
        app.state.error(error, Vec::new());
    }
    let mut terminal = match warden::tui::init() {
        Ok(terminal) => terminal,
        Err(err) => {
            app.shutdown().await;
            return Err(err).context("cannot set up the terminal");
        }
    };
    let result = warden::app::run_tui(&mut app, &mut terminal).await;
    warden::tui::restore();
    app.shutdown().await;
    result.context("terminal input failed")
}

/// One headless turn: `warden exec`.
async fn run_exec(cli: &Cli) -> anyhow::Result<()> {
    let Some(Sub::Exec {
        mode,
        on_ask,
        prompt,
        agent,
        cwd,
        command,
    }) = &cli.sub
    else {
        bail!("not an exec command line");
    };
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
    let mut start = resolve(&Want {
        config: cli.config.as_deref(),
        agent: agent.as_deref(),
        command,
        cwd: cwd.as_deref(),
        mode: *mode,
    })?;
    for error in &start.errors {
        eprintln!("warden: {error}");
    }
    start.options.notify = false;
    start.options.headless = Some(match on_ask {
        OnAskArg::Deny => OnAsk::Deny,
        OnAskArg::Allow => OnAsk::Allow,
        OnAskArg::Fail => OnAsk::Fail,
    });
    let mut app = App::with_options(start.command, start.options);
    app.start_agent()?;
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    let result = warden::app::run_exec(&mut app, &prompt, &mut out, &mut err).await;
    app.shutdown().await;
    result.map_err(Into::into)
}

/// `warden log`: the most recent decisions as a table, or raw JSON lines.
fn print_log(json: bool, agent: Option<&str>, limit: usize) -> anyhow::Result<()> {
    let path = decision_log::default_path().context("no data directory for the decision log")?;
    let records =
        decision_log::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let picked: Vec<_> = records
        .iter()
        .filter(|r| agent.is_none_or(|a| r.agent == a))
        .collect();
    let recent = &picked[picked.len().saturating_sub(limit)..];
    if json {
        for record in recent {
            println!("{}", serde_json::to_string(record)?);
        }
        return Ok(());
    }
    if recent.is_empty() {
        println!("no decisions logged yet ({})", path.display());
        return Ok(());
    }
    println!(
        "{:<20}  {:<12}  {:<9}  {:<10}  {:<11}  {:<7}  title / reason",
        "time", "agent", "decision", "source", "kind", "mode"
    );
    for r in recent {
        println!(
            "{:<20}  {:<12}  {:<9}  {:<10}  {:<11}  {:<7}  {} — {}",
            r.time,
            clip(&r.agent, 12),
            r.decision,
            r.source,
            r.kind,
            r.mode,
            warden::sanitize::one_line(&r.title),
            warden::sanitize::one_line(&r.reason)
        );
    }
    Ok(())
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// Pick the agent: `-- CMD`, `--agent NAME`, the settings' default, or the demo agent.
fn resolve(want: &Want<'_>) -> anyhow::Result<Start> {
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
    let loaded: Option<Settings> = match path.as_deref().map(settings::load) {
        Some(Ok(settings)) => settings,
        Some(Err(err)) => {
            errors.push(format!("settings not loaded, using defaults: {err}"));
            None
        }
        None => None,
    };
    let shown_path = path.as_deref().map_or_else(
        || "the settings file".to_string(),
        |p| p.display().to_string(),
    );

    let settings = loaded.unwrap_or_default();
    let mut options = ChatOptions {
        mode: want.mode.unwrap_or_default(),
        rules: settings.rules.clone(),
        decision_log: decision_log::default_path(),
        notify: settings.notifications.bell || settings.notifications.desktop,
        ..ChatOptions::default()
    };
    if let Some((program, args)) = want.command.split_first() {
        let name = Path::new(program)
            .file_name()
            .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned());
        return Ok(Start {
            command: AgentCommand {
                name,
                program: program.clone(),
                args: args.to_vec(),
                env: Vec::new(),
                cwd,
            },
            options,
            notes: Vec::new(),
            errors,
        });
    }
    let wanted = want
        .agent
        .map(str::to_string)
        .or_else(|| settings.default_agent.clone());
    match wanted {
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
            options.bypass = agent.bypass_permissions;
            options.agent_plan_mode = agent.agent_plan_mode.clone();
            if want.mode.is_none() {
                options.mode = agent.default_mode.unwrap_or_default();
            }
            // `warden` as an agent's command means this very binary.
            let program = if agent.command == "warden" {
                own_exe()?
            } else {
                agent.command.clone()
            };
            Ok(Start {
                command: AgentCommand {
                    name,
                    program,
                    args: agent.args.clone(),
                    env: agent.env.clone().into_iter().collect(),
                    cwd,
                },
                options,
                notes: Vec::new(),
                errors,
            })
        }
        _ => Ok(Start {
            command: AgentCommand {
                name: DEMO_AGENT.to_string(),
                program: own_exe()?,
                args: vec!["demo-agent".to_string()],
                env: Vec::new(),
                cwd,
            },
            options,
            notes: vec![format!(
                "This is warden's built-in demo agent (offline; type `help`). To use a real agent, add an [agents.NAME] block to {shown_path} (see config.example.toml) or run `warden -- <agent command>`."
            )],
            errors,
        }),
    }
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
