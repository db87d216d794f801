//! The `warden` command line: parse, wire, exit codes. Thin.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use warden::acp::AgentCommand;
use warden::app::App;
use warden::settings::{self, DEMO_AGENT, Settings};

/// A terminal chat client for coding agents that speak the Agent Client Protocol.
#[derive(Debug, Parser)]
#[command(
    name = "warden",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
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

    /// Any agent command, after `--`: `warden -- npx @zed-industries/claude-code-acp`.
    #[arg(last = true, value_name = "CMD ARGS")]
    command: Vec<String>,

    #[command(subcommand)]
    sub: Option<Sub>,
}

#[derive(Debug, Subcommand)]
enum Sub {
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
    notes: Vec<String>,
    errors: Vec<String>,
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
    if let Some(Sub::DemoAgent { scenario }) = &cli.sub {
        return match runtime.block_on(warden::demo_agent::run(scenario.as_deref())) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("warden demo-agent: {err:#}");
                ExitCode::FAILURE
            }
        };
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
    let start = resolve(&cli)?;
    let mut app = App::new(start.command);
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

/// Pick the agent: `-- CMD`, `--agent NAME`, the settings' default, or the demo agent.
fn resolve(cli: &Cli) -> anyhow::Result<Start> {
    let cwd = match &cli.cwd {
        Some(dir) => std::fs::canonicalize(dir)
            .with_context(|| format!("--cwd {}: no such directory", dir.display()))?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !cwd.is_dir() {
        bail!("--cwd {}: not a directory", cwd.display());
    }
    let path = settings::resolve_path(cli.config.as_deref());
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

    if let Some((program, args)) = cli.command.split_first() {
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
            notes: Vec::new(),
            errors,
        });
    }
    let settings = loaded.unwrap_or_default();
    let wanted = cli.agent.clone().or_else(|| settings.default_agent.clone());
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
