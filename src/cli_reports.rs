//! The subcommands that show and edit what warden keeps: `warden agents`
//! (the configured agents), `warden grants` (bypasses and rules, `--revoke`)
//! and `warden log` (the decision log).

use super::*;

fn load_settings(
    config: Option<&std::path::Path>,
) -> anyhow::Result<(PathBuf, settings::Settings)> {
    let path = settings::resolve_path(config).context("no config directory; use --config PATH")?;
    let loaded = settings::load(&path)?.unwrap_or_default();
    Ok((path, loaded))
}

/// `warden agents`.
pub(super) fn print_agents(config: Option<&std::path::Path>) -> anyhow::Result<()> {
    let (path, loaded) = load_settings(config)?;
    println!("settings: {}", one_line(&path.display().to_string()));
    if loaded.agents.is_empty() {
        println!("no agents configured: `warden` starts the built-in demo agent");
        return Ok(());
    }
    println!(
        "{:<16}  {:<7}  {:<7}  {:<8}  command",
        "agent", "default", "bypass", "mode"
    );
    for (name, agent) in &loaded.agents {
        let default = if loaded.default_agent.as_deref() == Some(name) {
            "yes"
        } else {
            ""
        };
        println!(
            "{:<16}  {:<7}  {:<7}  {:<8}  {}",
            one_line(name),
            default,
            if agent.bypass_permissions {
                "on"
            } else {
                "off"
            },
            agent.default_mode.unwrap_or_default().as_str(),
            one_line(&shell_words(&agent.command, &agent.args))
        );
    }
    Ok(())
}

/// `warden grants`: bypasses and rules, numbered; `--revoke N` removes one.
pub(super) fn grants(
    config: Option<&std::path::Path>,
    revoke: Option<usize>,
    yes: bool,
) -> anyhow::Result<()> {
    let (path, loaded) = load_settings(config)?;
    let mut items: Vec<(String, settings::Edit)> = Vec::new();
    for (name, agent) in &loaded.agents {
        if agent.bypass_permissions {
            items.push((
                format!(
                    "bypass: every request of `{name}` is allowed (deny and ask rules still apply)"
                ),
                settings::Edit::SetBypass {
                    agent: name.clone(),
                    value: false,
                    create: None,
                },
            ));
        }
    }
    for (index, rule) in loaded.rules.iter().enumerate() {
        items.push((
            format!("rule {}: {}", index + 1, rule.describe()),
            settings::Edit::RemoveRule {
                index,
                expected: rule.clone(),
            },
        ));
    }
    let Some(n) = revoke else {
        println!("settings: {}", one_line(&path.display().to_string()));
        if items.is_empty() {
            println!("nothing decides for you beyond the mode: no bypass, no rules");
        }
        for (i, (text, _)) in items.iter().enumerate() {
            println!("{:>3}. {}", i + 1, one_line(text));
        }
        println!("(\"allow for this chat\" grants live in a running chat: Ctrl-G there)");
        return Ok(());
    };
    let Some((text, edit)) = n.checked_sub(1).and_then(|i| items.get(i)) else {
        bail!("no item {n}: `warden grants` lists {} item(s)", items.len());
    };
    if !yes {
        eprint!("revoke {}? [y/N] ", one_line(text));
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .context("cannot read the answer")?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("not revoked");
            return Ok(());
        }
    }
    settings::apply(&path, edit)?;
    println!("revoked: {}", one_line(text));
    Ok(())
}

/// `warden log`: the most recent decisions as a table, or raw JSON lines.
pub(super) fn print_log(json: bool, agent: Option<&str>, limit: usize) -> anyhow::Result<()> {
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
            // serde escapes C0 controls; C1 and formatting characters too.
            println!("{}", safe_json(&serde_json::to_string(record)?));
        }
        return Ok(());
    }
    if recent.is_empty() {
        println!(
            "no decisions logged yet ({})",
            one_line(&path.display().to_string())
        );
        return Ok(());
    }
    // The agent column fits the longest name shown ("claude-agent-acp"),
    // up to a width that leaves the title room.
    let agent_width = recent
        .iter()
        .map(|r| one_line(&r.agent).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(5, 32);
    // The project: the last part of the chat's working directory.
    let project = |r: &decision_log::DecisionRecord| {
        let name = std::path::Path::new(&r.cwd)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| r.cwd.clone());
        one_line(if name.is_empty() { "-" } else { &name })
    };
    let project_width = recent
        .iter()
        .map(|r| project(r).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(7, 24);
    println!(
        "{:<20}  {:<project_width$}  {:<agent_width$}  {:<9}  {:<10}  {:<11}  {:<7}  title / reason",
        "time", "project", "agent", "decision", "source", "kind", "mode"
    );
    for r in recent {
        println!(
            "{:<20}  {:<project_width$}  {:<agent_width$}  {:<9}  {:<10}  {:<11}  {:<7}  {} — {}",
            one_line(&r.time),
            clip(&project(r), project_width),
            clip(&one_line(&r.agent), agent_width),
            one_line(r.decision.as_str()),
            one_line(r.source.as_str()),
            one_line(&r.kind),
            one_line(&r.mode),
            one_line(&r.title),
            one_line(&r.reason)
        );
    }
    Ok(())
}

/// A command line as one string, each word quoted when it needs it, so
/// that `warden agents` shows where one argument ends.
fn shell_words(command: &str, args: &[String]) -> String {
    let words: Vec<String> = std::iter::once(command.to_string())
        .chain(args.iter().cloned())
        .collect();
    warden::policy::shell_join(&words)
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}
