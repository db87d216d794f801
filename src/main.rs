//! The `warden` command line: parse, wire, exit codes. Thin.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A terminal chat client for coding agents that speak the Agent Client Protocol.
#[derive(Debug, Parser)]
#[command(name = "warden", version, about, args_conflicts_with_subcommands = true)]
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("warden: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match cli.sub {
        Some(Sub::DemoAgent { scenario }) => {
            match runtime.block_on(warden::demo_agent::run(scenario.as_deref())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("warden demo-agent: {err:#}");
                    ExitCode::FAILURE
                }
            }
        }
        None => {
            let _ = (cli.config, cli.agent, cli.cwd, cli.command);
            ExitCode::SUCCESS
        }
    }
}
