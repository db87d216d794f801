//! Typed edits of the settings file, applied with `toml_edit` so that the
//! rest of the file (comments, key order, formatting, unknown keys) is left
//! exactly as the user wrote it.

use std::path::{Path, PathBuf};

use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, Value};

use super::edit_place::{keep_section_comment, place_at_end};
use super::{AgentSettings, DEMO_AGENT, Settings, SettingsError, file, parse, template};
use crate::policy::Rule;

/// A typed edit of the settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// `agents.NAME.bypass_permissions = value`: "bypass this agent" on a
    /// card, or revoking it. With `create = Some((command, args))` (an agent
    /// started with `-- CMD ARGS`, which has no block of its own) the bypass
    /// goes to the block that runs exactly that command line, else to a new
    /// block with it, named `NAME` or, when a block of another command has
    /// that name, `NAME-2`, `NAME-3`, ...: chosen under the lock from the
    /// file as it is then, so two wardens never write the same block and a
    /// block of another command is never touched. Without `create`, a missing
    /// block is [`WriteError::NoSuchAgent`]. Turning off the bypass of an
    /// agent that has no block, or setting the value the file already has,
    /// writes nothing.
    SetBypass {
        agent: String,
        value: bool,
        create: Option<(String, Vec<String>)>,
    },
    /// "Keep as rule": append a `[[rules]]` entry after the last one, keys in
    /// the file's usual order (decision, agent, kind, tool, command, path,
    /// note).
    AppendRule(Rule),
    /// "Keep as rule" for an agent started with `-- CMD ARGS` that has no
    /// block yet: a rule naming an agent applies only to an agent a block
    /// binds to that name, so the rule goes with one. The block is chosen
    /// under the lock as for [`Edit::SetBypass`] (the block that runs
    /// exactly `create`, else a new one, without a bypass, named `rule.agent`
    /// or `NAME-N`), and the rule names it.
    AppendAgentRule {
        rule: Rule,
        create: (String, Vec<String>),
    },
    /// Revoke a rule: remove the `[[rules]]` entry at `index` (file order, as
    /// in [`Settings::rules`]), only if it still equals `expected`, so that a
    /// revoke never removes a rule the user did not see. Comment lines right
    /// above the entry go with it; a section comment separated from it by a
    /// blank line stays.
    RemoveRule { index: usize, expected: Rule },
    /// Add `host` to `agents.NAME.sandbox.allow_hosts` (a network card's
    /// "always allow this host for this agent"): the proxy lets it through
    /// without asking from the next run on. With `create` (an agent started
    /// with `-- CMD ARGS`), the block is chosen as for [`Edit::SetBypass`].
    /// A host already there writes nothing.
    AllowHost {
        agent: String,
        host: String,
        create: Option<(String, Vec<String>)>,
    },
}

/// Writing the settings file failed; in every case the file is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The file is not valid TOML or does not fit the schema: warden never
    /// writes over a file it could not read, so nothing of the user's is lost.
    #[error(
        "{path}:{line}:{column}: {message} (not changed: warden does not write to a file it cannot read)"
    )]
    Malformed {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// Creating the directory, locking, reading, or writing and renaming the
    /// temporary file failed; `message` says which and why.
    #[error("{path}: {message} (the settings file was not changed)")]
    Io { path: PathBuf, message: String },
    /// A bypass for an agent with no `[agents.NAME]` block and no command to
    /// create one with.
    #[error(
        "{path} has no [agents.{agent}] block to set bypass_permissions in; the file was not changed"
    )]
    NoSuchAgent { path: PathBuf, agent: String },
    /// The user made the file read-only (`chmod a-w`): warden respects that.
    #[error(
        "{path} is read-only, and warden respects that: the file was not changed (make it writable to save choices)"
    )]
    ReadOnly { path: PathBuf },
    /// The rule to remove is no longer at its index: the file changed since
    /// it was read (another warden, or an edit by hand).
    #[error(
        "the rule changed on disk: rule {} of {path} is no longer `{expected}`; nothing was removed",
        .index + 1
    )]
    RuleChanged {
        path: PathBuf,
        index: usize,
        expected: Box<Rule>,
        found: Option<Box<Rule>>,
    },
    /// The file's layout does not allow the edit, or the edited text would
    /// not read back as the edit meant: nothing is written.
    #[error("cannot edit {path}: {message}; the file was not changed")]
    Unexpected { path: PathBuf, message: String },
}

/// Apply one edit to the settings file at `path` and return the settings as
/// they read after the write.
///
/// Under an exclusive lock on the sidecar `<path>.lock` (so concurrent
/// wardens take turns and none loses another's change), the file is read
/// again, parsed (a file that does not parse is never written:
/// [`WriteError::Malformed`]), edited with `toml_edit`, checked to read back
/// as intended, and replaced atomically: a temporary file in the same
/// directory with the old file's permissions, flushed and synced, renamed
/// over it. A missing file (and directory) is created from [`template`]. A
/// symlink is followed, so a linked dotfile stays linked.
///
/// Blocking: the runtime calls it off its event loop.
pub fn apply(path: &Path, edit: &Edit) -> Result<Settings, WriteError> {
    apply_edit(path, edit).map(|applied| applied.settings)
}

/// What [`apply_edit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The settings as they read after the write.
    pub settings: Settings,
    /// For [`Edit::SetBypass`], the block the bypass is in (or was removed
    /// from); chosen under the lock when the edit creates one.
    pub agent: Option<String>,
}

/// [`apply`], also telling which block a bypass went to. Under the lock it
/// first removes temporary files that killed writers left behind; a file
/// the user made read-only is never written ([`WriteError::ReadOnly`]).
pub fn apply_edit(path: &Path, edit: &Edit) -> Result<Applied, WriteError> {
    let target = file::resolve(path);
    file::create_parent(&target)?;
    let _lock = file::Lock::acquire(&target)?;
    file::remove_stale_temps(&target);
    let existing = file::read(&target)?;
    let text = existing.as_deref().unwrap_or_else(|| template());
    let before = parse(text, &target).map_err(|err| malformed(err, &target))?;
    let mut doc: DocumentMut = text.parse().map_err(|err: toml_edit::TomlError| {
        let (line, column) = err
            .span()
            .map_or((1, 1), |span| super::line_col(text, span.start));
        WriteError::Malformed {
            path: target.clone(),
            line,
            column,
            message: err.message().to_string(),
        }
    })?;
    let edit = choose_block(&before, edit);
    let agent = match &edit {
        Edit::SetBypass { agent, .. } => Some(agent.clone()),
        Edit::AppendAgentRule { rule, .. } => rule.agent.clone(),
        Edit::AllowHost { agent, .. } => Some(agent.clone()),
        _ => None,
    };
    let Some(expected) = edit_document(&mut doc, &before, &edit, &target)? else {
        return Ok(Applied {
            settings: before,
            agent,
        });
    };
    let new_text = doc.to_string();
    let after = parse(&new_text, &target)
        .ok()
        .filter(|after| *after == expected)
        .ok_or_else(|| {
            unexpected(
                &target,
                "the edited file would not read back as intended (a bug in warden)",
            )
        })?;
    if existing.is_some() && file::read_only(&target) {
        return Err(WriteError::ReadOnly { path: target });
    }
    file::replace(&target, new_text.as_bytes())?;
    Ok(Applied {
        settings: after,
        agent,
    })
}

/// A bypass for a command line, with its block name chosen from the file as
/// read under the lock: the block that runs that command, else the wanted
/// name when it is free, else a free `NAME-N`.
fn choose_block(settings: &Settings, edit: &Edit) -> Edit {
    if let Edit::AppendAgentRule {
        rule,
        create: (command, args),
    } = edit
    {
        let wanted = rule.agent.clone().unwrap_or_default();
        let name = match agent_for_command(settings, command, args) {
            Some(existing) => existing.to_string(),
            None if !wanted.is_empty() && !settings.agents.contains_key(&wanted) => wanted,
            None => unique_agent_name(settings, &wanted),
        };
        let mut rule = rule.clone();
        rule.agent = Some(name);
        return Edit::AppendAgentRule {
            rule,
            create: (command.clone(), args.clone()),
        };
    }
    if let Edit::AllowHost {
        agent,
        host,
        create: Some((command, args)),
    } = edit
    {
        let name = match agent_for_command(settings, command, args) {
            Some(existing) => existing.to_string(),
            None if !settings.agents.contains_key(agent) => agent.clone(),
            None => unique_agent_name(settings, agent),
        };
        return Edit::AllowHost {
            agent: name,
            host: host.clone(),
            create: Some((command.clone(), args.clone())),
        };
    }
    let Edit::SetBypass {
        agent,
        value,
        create: Some((command, args)),
    } = edit
    else {
        return edit.clone();
    };
    let name = match agent_for_command(settings, command, args) {
        Some(existing) => existing.to_string(),
        None if !settings.agents.contains_key(agent) => agent.clone(),
        None => unique_agent_name(settings, agent),
    };
    Edit::SetBypass {
        agent: name,
        value: *value,
        create: Some((command.clone(), args.clone())),
    }
}

/// A name for a new `[agents.NAME]` block, from the command (`npx`): the
/// name itself when no block has it, else `npx-2`, `npx-3`, ... The demo
/// agent's name is never handed out, and an empty name becomes `agent`.
pub fn unique_agent_name(settings: &Settings, wanted: &str) -> String {
    let base = match wanted.trim() {
        "" => "agent",
        name => name,
    };
    let taken = |name: &str| name == DEMO_AGENT || settings.agents.contains_key(name);
    if !taken(base) {
        return base.to_string();
    }
    let mut n = 2;
    loop {
        let name = format!("{base}-{n}");
        if !taken(&name) {
            return name;
        }
        n += 1;
    }
}

/// The block that runs the same agent as `program args` started in
/// `cwd`, if any: the same resolved program and script
/// ([`super::naming::agent_identity`]; a block's relative script is taken
/// from `cwd` too, as it would run there). `warden -- CMD ARGS` takes that
/// block's name and settings; a command line that only reads the same (the
/// same `agent.py` of another repository) is another agent.
pub fn agent_for_identity<'a>(
    settings: &'a Settings,
    program: &str,
    args: &[String],
    cwd: &Path,
) -> Option<&'a str> {
    let wanted = super::naming::agent_identity(program, args, cwd);
    settings
        .agents
        .iter()
        .find(|(_, agent)| {
            super::naming::agent_identity(&agent.command, &agent.args, cwd) == wanted
        })
        .map(|(name, _)| name.as_str())
}

/// The block that already runs exactly this command line, if any: a bypass
/// for `warden -- CMD ARGS` (its command line pinned, see
/// [`super::naming::pinned_command`]) reuses it rather than adding a twin.
pub fn agent_for_command<'a>(
    settings: &'a Settings,
    command: &str,
    args: &[String],
) -> Option<&'a str> {
    settings
        .agents
        .iter()
        .find(|(_, agent)| agent.command == command && agent.args == args)
        .map(|(name, _)| name.as_str())
}

/// Change the document; `Ok(None)` when the edit changes nothing, else the
/// settings the edited file must read as.
fn edit_document(
    doc: &mut DocumentMut,
    before: &Settings,
    edit: &Edit,
    path: &Path,
) -> Result<Option<Settings>, WriteError> {
    let mut expected = before.clone();
    match edit {
        Edit::SetBypass {
            agent,
            value,
            create,
        } => {
            if let Some(block) = expected.agents.get_mut(agent) {
                if block.bypass_permissions == *value {
                    return Ok(None);
                }
                block.bypass_permissions = *value;
                let block = doc
                    .get_mut("agents")
                    .and_then(Item::as_table_like_mut)
                    .and_then(|agents| agents.get_mut(agent))
                    .ok_or_else(|| unexpected(path, &format!("no [agents.{agent}] to edit")))?;
                set_value(block, "bypass_permissions", Value::from(*value))
                    .ok_or_else(|| unexpected(path, &format!("[agents.{agent}] is not a table")))?;
            } else if !*value {
                return Ok(None);
            } else if let Some((command, args)) = create {
                expected
                    .agents
                    .insert(agent.clone(), new_block(command, args, true));
                add_agent(doc, agent, command, args, true, path)?;
            } else {
                return Err(WriteError::NoSuchAgent {
                    path: path.to_path_buf(),
                    agent: agent.clone(),
                });
            }
        }
        Edit::AppendRule(rule) => {
            let rule = normalized(rule);
            append_rule(doc, &rule, path)?;
            expected.rules.push(rule);
        }
        Edit::AppendAgentRule {
            rule,
            create: (command, args),
        } => {
            let agent = rule.agent.clone().unwrap_or_default();
            if !expected.agents.contains_key(&agent) {
                expected
                    .agents
                    .insert(agent.clone(), new_block(command, args, false));
                add_agent(doc, &agent, command, args, false, path)?;
            }
            let rule = normalized(rule);
            append_rule(doc, &rule, path)?;
            expected.rules.push(rule);
        }
        Edit::AllowHost {
            agent,
            host,
            create,
        } => {
            match (expected.agents.get_mut(agent), create) {
                (Some(block), _) => {
                    if block.sandbox.allow_hosts.contains(host) {
                        return Ok(None);
                    }
                    block.sandbox.allow_hosts.push(host.clone());
                }
                (None, Some((command, args))) => {
                    let mut block = new_block(command, args, false);
                    block.sandbox.allow_hosts.push(host.clone());
                    expected.agents.insert(agent.clone(), block);
                    add_agent(doc, agent, command, args, false, path)?;
                }
                (None, None) => {
                    return Err(WriteError::NoSuchAgent {
                        path: path.to_path_buf(),
                        agent: agent.clone(),
                    });
                }
            }
            add_allowed_host(doc, agent, host).ok_or_else(|| {
                unexpected(
                    path,
                    &format!("[agents.{agent}] has no sandbox table to add allow_hosts to"),
                )
            })?;
        }
        Edit::RemoveRule {
            index,
            expected: rule,
        } => {
            let rule = normalized(rule);
            let found = before.rules.get(*index);
            if found != Some(&rule) {
                return Err(WriteError::RuleChanged {
                    path: path.to_path_buf(),
                    index: *index,
                    expected: Box::new(rule),
                    found: found.cloned().map(Box::new),
                });
            }
            remove_rule(doc, *index, path)?;
            expected.rules.remove(*index);
        }
    }
    Ok(Some(expected))
}

/// Set `key` of the table `item` to `new`, keeping the old value's spacing
/// and trailing comment; a new key goes after the table's last one. `None`
/// when `item` is not a table.
fn set_value(item: &mut Item, key: &str, mut new: Value) -> Option<()> {
    if let Item::Value(Value::InlineTable(table)) = item
        && !table.contains_key(key)
    {
        // `{ a = 1 }`: the space before `}` belongs to the last value.
        if let Some((_, last)) = table.iter_mut().last() {
            let suffix = last.decor().suffix().cloned();
            if let Some(suffix) = suffix {
                last.decor_mut().set_suffix("");
                new.decor_mut().set_suffix(suffix);
            }
        }
        table.insert(key, new);
        return Some(());
    }
    let table = item.as_table_like_mut()?;
    if let Some(Item::Value(old)) = table.get_mut(key) {
        let decor = old.decor().clone();
        *old = new;
        *old.decor_mut() = decor;
        return Some(());
    }
    table.insert(key, Item::Value(new));
    Some(())
}

/// The settings of a block warden adds for a command line.
fn new_block(command: &str, args: &[String], bypass: bool) -> AgentSettings {
    AgentSettings {
        command: command.to_string(),
        args: args.to_vec(),
        env: Default::default(),
        env_pass: Vec::new(),
        bypass_permissions: bypass,
        default_mode: None,
        agent_plan_mode: None,
        asking_mode: None,
        fs_read: true,
        fs_write: true,
        terminal: true,
        mcp_servers: Default::default(),
        auth_method: None,
        sandbox: Default::default(),
    }
}

/// Add `[agents.NAME]` with the command (and the bypass when set): after
/// the last agent block, or at the end of the file when there is none.
fn add_agent(
    doc: &mut DocumentMut,
    name: &str,
    command: &str,
    args: &[String],
    bypass: bool,
    path: &Path,
) -> Result<(), WriteError> {
    let mut block = Table::new();
    block.insert("command", toml_edit::value(command));
    if !args.is_empty() {
        block.insert(
            "args",
            toml_edit::value(args.iter().map(String::as_str).collect::<Array>()),
        );
    }
    if bypass {
        block.insert("bypass_permissions", toml_edit::value(true));
    }
    if !doc.contains_key("agents") {
        place_at_end(doc, &mut block);
        let mut agents = Table::new();
        agents.set_implicit(true);
        agents.insert(name, Item::Table(block));
        doc.insert("agents", Item::Table(agents));
        return Ok(());
    }
    match doc.get_mut("agents") {
        Some(Item::Table(agents)) => {
            agents.insert(name, Item::Table(block));
        }
        Some(Item::Value(Value::InlineTable(agents))) => {
            agents.insert(name, Value::InlineTable(block.into_inline_table()));
        }
        _ => return Err(unexpected(path, "`agents` is not a table")),
    }
    Ok(())
}

/// A rule as it will read back from the file (`kind` through its name).
fn normalized(rule: &Rule) -> Rule {
    let mut rule = rule.clone();
    rule.kind = rule.kind.map(|kind| kind.as_str().parse().unwrap_or(kind));
    rule
}

fn rule_table(rule: &Rule) -> Table {
    let mut table = Table::new();
    table.insert("decision", toml_edit::value(rule.decision.as_str()));
    let fields = [
        ("agent", rule.agent.as_deref()),
        ("kind", rule.kind.map(|kind| kind.as_str())),
        ("tool", rule.tool.as_deref()),
        ("command", rule.command.as_deref()),
        ("path", rule.path.as_deref()),
        ("note", rule.note.as_deref()),
    ];
    for (key, value) in fields {
        if let Some(value) = value {
            table.insert(key, toml_edit::value(value));
        }
    }
    table
}

fn append_rule(doc: &mut DocumentMut, rule: &Rule, path: &Path) -> Result<(), WriteError> {
    let mut table = rule_table(rule);
    if !doc.contains_key("rules") {
        place_at_end(doc, &mut table);
        let mut rules = ArrayOfTables::new();
        rules.push(table);
        doc.insert("rules", Item::ArrayOfTables(rules));
        return Ok(());
    }
    match doc.get_mut("rules") {
        Some(Item::ArrayOfTables(rules)) => rules.push(table),
        Some(Item::Value(Value::Array(rules))) => {
            let mut value = Value::InlineTable(table.into_inline_table());
            if let Some(last) = rules.iter().last() {
                *value.decor_mut() = last.decor().clone();
            }
            rules.push_formatted(value);
        }
        _ => return Err(unexpected(path, "`rules` is not an array of tables")),
    }
    Ok(())
}

fn remove_rule(doc: &mut DocumentMut, index: usize, path: &Path) -> Result<(), WriteError> {
    match doc.get_mut("rules") {
        Some(Item::ArrayOfTables(rules)) if index < rules.len() => {
            let removed = rules.remove(index);
            keep_section_comment(doc, &removed);
        }
        Some(Item::Value(Value::Array(rules))) if index < rules.len() => {
            rules.remove(index);
        }
        _ => return Err(unexpected(path, "the rule to remove is not in `rules`")),
    }
    Ok(())
}

fn malformed(err: SettingsError, path: &Path) -> WriteError {
    match err {
        SettingsError::Parse {
            path,
            line,
            column,
            message,
        } => WriteError::Malformed {
            path,
            line,
            column,
            message,
        },
        SettingsError::Read { message, .. } => WriteError::Io {
            path: path.to_path_buf(),
            message,
        },
    }
}

/// Append `host` to `agents.AGENT.sandbox.allow_hosts`, making the
/// `[agents.AGENT.sandbox]` table and the array when they are missing.
fn add_allowed_host(doc: &mut DocumentMut, agent: &str, host: &str) -> Option<()> {
    let block = doc
        .get_mut("agents")?
        .as_table_like_mut()?
        .get_mut(agent)?
        .as_table_like_mut()?;
    if block.get("sandbox").is_none() {
        block.insert("sandbox", Item::Table(Table::new()));
    }
    let sandbox = block.get_mut("sandbox")?.as_table_like_mut()?;
    if sandbox.get("allow_hosts").is_none() {
        sandbox.insert("allow_hosts", Item::Value(Value::Array(Array::new())));
    }
    sandbox.get_mut("allow_hosts")?.as_array_mut()?.push(host);
    Some(())
}

fn unexpected(path: &Path, message: &str) -> WriteError {
    WriteError::Unexpected {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// The edit a bypass choice makes. An agent with no block yet
/// (`create_as`: the name it goes by, its command and arguments) gets one
/// when the bypass is turned on: the block that runs that command line, else
/// a new one whose name is chosen under the lock ([`Edit::SetBypass`]).
/// Otherwise the bypass is set in the block `agent`.
pub fn bypass_edit(
    agent: String,
    value: bool,
    block: Option<&str>,
    create_as: Option<&(String, String, Vec<String>)>,
) -> Edit {
    match (value, block, create_as) {
        (true, None, Some((name, program, args))) => Edit::SetBypass {
            agent: name.clone(),
            value,
            create: Some((program.clone(), args.clone())),
        },
        _ => Edit::SetBypass {
            agent,
            value,
            create: None,
        },
    }
}

/// The line that tells the user what an applied edit did to the file at
/// `path`, and the block a bypass created (the agent's chats learn its name).
pub fn describe_applied(edit: &Edit, applied: &Applied, path: &Path) -> (String, Option<String>) {
    let path = path.display();
    match edit {
        Edit::SetBypass { value, create, .. } => {
            let block = crate::sanitize::one_line(applied.agent.as_deref().unwrap_or_default());
            let note = if *value {
                format!("bypass for `{block}` saved to {path} ([agents.{block}])")
            } else {
                format!("bypass for `{block}` removed from {path}")
            };
            let created = create
                .as_ref()
                .map(|_| applied.agent.clone().unwrap_or_default());
            (note, created)
        }
        Edit::AppendRule(_) => (format!("rule saved to {path}"), None),
        Edit::AllowHost { host, create, .. } => {
            let block = crate::sanitize::one_line(applied.agent.as_deref().unwrap_or_default());
            let note = format!(
                "{} allowed for `{block}` from now on: saved to {path} ([agents.{block}.sandbox] allow_hosts)",
                crate::sanitize::one_line(host)
            );
            let created = create
                .as_ref()
                .map(|_| applied.agent.clone().unwrap_or_default());
            (note, created)
        }
        Edit::AppendAgentRule { .. } => {
            let block = applied.agent.clone().unwrap_or_default();
            (
                format!(
                    "rule saved to {path}, for [agents.{}]",
                    crate::sanitize::one_line(&block)
                ),
                Some(block),
            )
        }
        Edit::RemoveRule { .. } => (format!("rule removed from {path}"), None),
    }
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
