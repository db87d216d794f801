//! The runtime's door to the disk for the gate (`crate::gate`): what the
//! disk says of a request before the gate decides. A permission request's
//! facts are built by the gate ([`gate::facts::gather`]); here, each path
//! it names is read as the IO would resolve it (symlinks, `..`, `/proc`
//! magic links) and warden's own files are found. A client call is made a
//! request here: its path resolved, a write's change against the file on
//! disk, a terminal's program looked up on PATH. All of it touches the
//! disk, so all of it runs off the UI loop in the file worker
//! ([`super::calls::FileWorker`]) and comes back as facts: nothing is
//! decided here.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::calls::FsStep;
use crate::acp::{ClientCall, ClientError, ClientReply, ClientResponder};
use crate::client::fs::{self, FsError};
use crate::client::terminal::{command_line, needs_shell_char};
use crate::gate::{self, facts::PathReading};
use crate::model::{Location, PermissionRequest, ToolCall, ToolCallFields, ToolContent, ToolKind};
use crate::policy::{self, CLIENT_READ, CLIENT_TERMINAL, CLIENT_WRITE};
use crate::state::{Refusal, RequestFacts};

/// The error the agent gets for a file call that failed.
pub(super) fn fs_error(err: FsError) -> ClientError {
    match err {
        FsError::NotFound { .. } => ClientError::NotFound(err.to_string()),
        FsError::Io { .. } => ClientError::Failed(err.to_string()),
        _ => ClientError::InvalidParams(err.to_string()),
    }
}

/// Why warden refuses a file call for safety, whatever the mode (the gate
/// refuses it and logs it): one of warden's own files, a path outside the
/// roots, one that changed under warden or reads two ways. Other errors are
/// plain failures.
pub(super) fn safety_refusal(err: &FsError) -> Option<Refusal> {
    match err {
        FsError::Protected { .. } => Some(Refusal::Protected(err.to_string())),
        FsError::OutsideRoots { .. } | FsError::Changed { .. } | FsError::Ambiguous { .. } => {
            Some(Refusal::Safety(err.to_string()))
        }
        _ => None,
    }
}

/// A read of a file that does not exist (inside the roots: `fs::resolve`
/// checks them first) is answered with empty content, as Zed answers it (it
/// opens a missing path as a new, empty buffer). gemini-cli reads a file
/// before writing it and does not recognise a `-32002` error, so it could not
/// create a new file otherwise; an agent that checks for the error sees an
/// empty file, which it may write over. The one place for it: a read whose
/// path does not resolve yet, and a read whose file is gone when it runs.
pub(super) fn missing_reads_empty(err: FsError) -> Result<ClientReply, FsError> {
    match err {
        FsError::NotFound { .. } => Ok(ClientReply::Text(String::new())),
        other => Err(other),
    }
}

/// A file call refused for safety before any IO (outside the roots, one
/// of warden's own files): the gate refuses it and logs it; the agent gets
/// `error`.
pub(super) fn refused(
    call: ClientCall,
    responder: ClientResponder,
    error: ClientError,
    refusal: Refusal,
    cwd: &Path,
    session: Option<String>,
) -> FsStep {
    tracing::warn!(?error, "agent client call refused");
    let fields = refused_fields(&call, cwd);
    FsStep::Gate {
        call,
        responder,
        real: PathBuf::new(),
        fields: Box::new(fields),
        session,
        refused: Some((refusal, error)),
    }
}

/// A read or a write, ready for the gate: the path resolved (the card
/// shows the path that will be opened, and the path as sent when they
/// differ; the policy sees both), a write's change against the file on
/// disk. A read of a missing file is answered empty; a path that is not
/// safe goes to the gate refused.
pub(super) fn file_call(
    call: ClientCall,
    responder: ClientResponder,
    roots: &fs::Roots,
    cwd: &Path,
    session: Option<String>,
) -> FsStep {
    let (path, write) = match &call {
        ClientCall::ReadTextFile { path, .. } => (path.clone(), false),
        ClientCall::WriteTextFile { path, .. } => (path.clone(), true),
        other => {
            let error = ClientError::Failed(format!("internal: {other:?} is no file call"));
            return FsStep::Reply {
                responder,
                result: Err(error),
            };
        }
    };
    let real = match fs::resolve(roots, &path, write) {
        Ok(real) => real,
        Err(err) => {
            let err = match missing_reads_empty(err) {
                Ok(empty) if !write => {
                    tracing::debug!(path = %path.display(), "read of a missing file answered empty");
                    return FsStep::Reply {
                        responder,
                        result: Ok(empty),
                    };
                }
                Ok(_) => FsError::NotFound { path: path.clone() },
                Err(err) => err,
            };
            return match safety_refusal(&err) {
                // The gate refuses it, and logs it.
                Some(refusal) => refused(call, responder, fs_error(err), refusal, cwd, session),
                None => FsStep::Reply {
                    responder,
                    result: Err(fs_error(err)),
                },
            };
        }
    };
    let shown = real.display().to_string();
    let sent = path.display().to_string();
    let differs = shown != sent;
    let mut locations = vec![Location {
        path: shown.clone(),
        line: None,
    }];
    let mut raw_input = json!({ "path": shown });
    let mut title = format!("{} {shown}", if write { "Write" } else { "Read" });
    if differs {
        locations.push(Location {
            path: sent.clone(),
            line: None,
        });
        raw_input["requested_path"] = json!(sent);
        title.push_str(&format!(" (requested as {sent})"));
    }
    let mut fields = ToolCallFields {
        title: Some(title),
        kind: Some(if write {
            ToolKind::Edit
        } else {
            ToolKind::Read
        }),
        raw_input: Some(raw_input),
        locations: Some(locations),
        // Its own tool name: grants and `tool` rules on the agent's
        // `Write` or `Read` never cover warden's calls.
        tool_name: Some(if write { CLIENT_WRITE } else { CLIENT_READ }.to_string()),
        ..ToolCallFields::default()
    };
    if let ClientCall::WriteTextFile { content, .. } = &call {
        // The card and the transcript show the change against the file on disk.
        fields.content = Some(vec![ToolContent::Diff {
            path: shown,
            old: fs::current_text(roots, &real),
            new: content.clone(),
        }]);
    }
    FsStep::Gate {
        call,
        responder,
        real,
        fields: Box::new(fields),
        session,
        refused: None,
    }
}

/// A `terminal/create`, ready for the gate: its directory resolved (`cwd`
/// when it names none), and what runs resolved once ([`terminal_run`]):
/// the policy judges exactly the line that `sh -c` (or a direct exec) is
/// given, and the terminal spawns that line, never the agent's words
/// again.
pub(super) fn terminal_call(
    call: ClientCall,
    responder: ClientResponder,
    roots: &fs::Roots,
    cwd: &Path,
    session: Option<String>,
) -> FsStep {
    let ClientCall::CreateTerminal {
        session_id,
        command,
        args,
        env,
        cwd: asked,
        output_byte_limit,
    } = call
    else {
        let error = ClientError::Failed(format!("internal: {call:?} is no terminal"));
        return FsStep::Reply {
            responder,
            result: Err(error),
        };
    };
    let dir = asked.clone().unwrap_or_else(|| cwd.to_path_buf());
    let call = |command, args| ClientCall::CreateTerminal {
        session_id,
        command,
        args,
        env: env.clone(),
        cwd: asked,
        output_byte_limit,
    };
    let real = match fs::resolve(roots, &dir, false) {
        Ok(real) => real,
        Err(err) => {
            return match safety_refusal(&err) {
                // The gate refuses it, and logs it.
                Some(refusal) => refused(
                    call(command, args),
                    responder,
                    fs_error(err),
                    refusal,
                    cwd,
                    session,
                ),
                None => FsStep::Reply {
                    responder,
                    result: Err(fs_error(err)),
                },
            };
        }
    };
    let run = match terminal_run(&command, &args, &env, &real) {
        Ok(run) => run,
        // Nothing to run (no such program, an empty line): the gate
        // refuses it and logs it, like every request.
        Err(err) => {
            let refusal = Refusal::Safety(format!("nothing to run: {err}"));
            let error = ClientError::InvalidParams(err);
            return refused(call(command, args), responder, error, refusal, cwd, session);
        }
    };
    let line = run.judged.clone();
    let mut input = json!({ "command": line, "cwd": real.display().to_string() });
    if let Some(program) = &run.program {
        input["program"] = json!(program);
    }
    if !run.resolved_args.is_empty() {
        input["paths"] = json!(run.resolved_args);
    }
    // The environment the agent sets: shown on the card, and no allow rule
    // covers one that changes what runs. An inherited PATH that looks in
    // relative directories changes it too.
    let mut shown: Vec<(String, String)> = env.clone();
    if let Some(path) = run.relative_path {
        shown.push(("PATH".to_string(), path));
    }
    if !shown.is_empty() {
        let env: serde_json::Map<String, serde_json::Value> =
            shown.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        input["env"] = serde_json::Value::Object(env);
    }
    let fields = Box::new(ToolCallFields {
        title: Some(format!("Run {line}")),
        kind: Some(ToolKind::Execute),
        raw_input: Some(input),
        tool_name: Some(CLIENT_TERMINAL.to_string()),
        ..ToolCallFields::default()
    });
    FsStep::Gate {
        call: call(run.spawned, Vec::new()),
        responder,
        real,
        fields,
        session,
        refused: None,
    }
}

/// The facts of a permission request from the agent, gathered here on the
/// file worker: the gate builds them ([`gate::facts::gather`]); this is its
/// door to the disk, which tells what each path the request names can
/// mean (`fs::lenient_readings`) and which of those are warden's own files
/// for the request's access. Nothing is decided here.
pub(super) fn permission(
    request: &mut PermissionRequest,
    known: Option<ToolCall>,
    home: Option<&Path>,
    cwd: &Path,
    roots: &fs::Roots,
) -> RequestFacts {
    gate::facts::gather(request, known, home, cwd, |expanded, write| {
        let access = if write {
            fs::Access::Write
        } else {
            fs::Access::Read
        };
        PathReading {
            normalized: fs::normalize(expanded),
            meant: fs::lenient_readings(expanded)
                .into_iter()
                .map(|candidate| {
                    let protected = roots
                        .protected()
                        .check_path(&candidate, access)
                        .err()
                        .map(|err| err.to_string());
                    (candidate, protected)
                })
                .collect(),
        }
    })
}

/// What the card and the log show of a client call refused before any IO:
/// the path or command as the agent sent it.
fn refused_fields(call: &ClientCall, cwd: &Path) -> ToolCallFields {
    let (title, kind, input, tool, path) = match call {
        ClientCall::ReadTextFile { path, .. } => (
            format!("Read {}", path.display()),
            ToolKind::Read,
            json!({ "path": path.display().to_string() }),
            CLIENT_READ,
            Some(path),
        ),
        ClientCall::WriteTextFile { path, .. } => (
            format!("Write {}", path.display()),
            ToolKind::Edit,
            json!({ "path": path.display().to_string() }),
            CLIENT_WRITE,
            Some(path),
        ),
        ClientCall::CreateTerminal {
            command,
            args,
            cwd: dir,
            ..
        } => {
            let line = command_line(command, args);
            let dir = dir.as_deref().unwrap_or(cwd).display().to_string();
            (
                format!("Run {line}"),
                ToolKind::Execute,
                json!({ "command": line, "cwd": dir }),
                CLIENT_TERMINAL,
                None,
            )
        }
        other => (
            format!("{other:?}"),
            ToolKind::Other,
            serde_json::Value::Null,
            "",
            None,
        ),
    };
    ToolCallFields {
        title: Some(title),
        kind: Some(kind),
        raw_input: Some(input),
        locations: path.map(|p| {
            vec![Location {
                path: p.display().to_string(),
                line: None,
            }]
        }),
        tool_name: (!tool.is_empty()).then(|| tool.to_string()),
        ..ToolCallFields::default()
    }
}

/// A `terminal/create` resolved as it will run (see [`terminal_run`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TerminalRun {
    /// The shell line the policy judges and the card shows.
    judged: String,
    /// The line the terminal runs: the same, except that a program found
    /// on PATH is named by the path it was found at.
    spawned: String,
    /// The file a program and arguments run, resolved.
    program: Option<String>,
    /// The PATH the child gets, when it looks in a relative directory (the
    /// cwd, where the agent can put a program of any name).
    relative_path: Option<String>,
    /// Where the arguments that name existing files really lead, when a
    /// symlink or `..` takes them elsewhere (`k/id_rsa` with `k` linking to
    /// `~/.ssh`): path rules see them as the request's paths.
    resolved_args: Vec<String>,
}

/// The most arguments [`resolved_args`] looks at on disk.
const MAX_RESOLVED_ARGS: usize = 64;

/// Where the words of a terminal's arguments that name existing files
/// really lead (symlinks and `..` followed), for those whose real path
/// differs from the path as written. A shell line is split on blanks,
/// quotes dropped: a word too many only adds a path for the rules to see.
fn resolved_args(words: &[String], cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for word in words.iter().take(MAX_RESOLVED_ARGS) {
        let word = word.trim_matches(|c| c == '\'' || c == '"');
        let word = match word.split_once('=') {
            Some((option, value)) if option.starts_with('-') => value,
            _ if word.starts_with('-') => continue,
            _ => word,
        };
        if word.is_empty() || word.starts_with('~') {
            continue;
        }
        let written = cwd.join(word);
        let Ok(real) = std::fs::canonicalize(&written) else {
            continue;
        };
        if real != fs::normalize(&written) {
            let real = real.display().to_string();
            if !out.contains(&real) {
                out.push(real);
            }
        }
    }
    out
}

/// What a `terminal/create` runs. A `command` without `args` that holds a
/// shell character is a shell line, run by `/bin/sh -c` and judged as
/// written. Otherwise `command` is one program, resolved as exec resolves
/// it: a name with a `/` is a path from the terminal's cwd, resolved to the
/// real file (`ls /../../bin/sh` through a directory named `ls `, or a
/// symlink `./ls` to `/bin/sh`, is `/usr/bin/dash`); a bare name is looked
/// up on the PATH the child gets (the agent's `env` overrides warden's).
/// The program and its arguments are then quoted into one line, judged
/// with the resolved program (a bare name found in an absolute directory
/// of warden's own PATH keeps its name, so `allow ls *` still reads it) and
/// spawned with the path it was found at, so what runs is what was judged.
fn terminal_run(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> Result<TerminalRun, String> {
    let own_path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let path = own_path
        .clone()
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    let relative = path.split(':').any(|dir| !dir.starts_with('/'));
    let relative_path = (relative && own_path.is_none()).then(|| path.clone());
    if args.is_empty() && command.contains(needs_shell_char) {
        let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        return Ok(TerminalRun {
            judged: command.to_string(),
            spawned: command.to_string(),
            program: None,
            relative_path,
            resolved_args: resolved_args(&words, cwd),
        });
    }
    if command.trim().is_empty() {
        return Err("the command is empty".to_string());
    }
    let line = |program: &str| {
        let mut argv = vec![program.to_string()];
        argv.extend(args.iter().cloned());
        policy::shell_join(&argv)
    };
    if command.contains('/') {
        let real = std::fs::canonicalize(cwd.join(command))
            .map_err(|err| format!("cannot run `{command}`: {err}"))?;
        let real = real.display().to_string();
        return Ok(TerminalRun {
            judged: line(&real),
            spawned: line(&real),
            program: Some(real),
            relative_path: None,
            resolved_args: resolved_args(args, cwd),
        });
    }
    for dir in path.split(':') {
        let dir_relative = !dir.starts_with('/');
        let found = cwd.join(dir).join(command);
        if !is_executable(&found) {
            continue;
        }
        let found_text = found.display().to_string();
        if dir_relative || own_path.is_some() {
            // Found where the agent can put a program: judged by its path.
            let real = std::fs::canonicalize(&found)
                .map_err(|err| format!("cannot run `{command}`: {err}"))?
                .display()
                .to_string();
            return Ok(TerminalRun {
                judged: line(&real),
                spawned: line(&real),
                program: Some(real),
                relative_path: None,
                resolved_args: resolved_args(args, cwd),
            });
        }
        return Ok(TerminalRun {
            judged: line(command),
            spawned: line(&found_text),
            program: Some(found_text),
            relative_path: None,
            resolved_args: resolved_args(args, cwd),
        });
    }
    Err(format!(
        "no program `{command}` on the PATH the terminal gets"
    ))
}

/// A regular file (through symlinks) with an execute bit.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ChatState;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_string()).collect()
    }

    #[test]
    fn a_terminals_program_is_judged_as_what_exec_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
        let sh = std::fs::canonicalize("/bin/sh")
            .expect("/bin/sh")
            .display()
            .to_string();
        // A directory named `ls ` and `..` up to /bin/sh.
        std::fs::create_dir(cwd.join("ls ")).expect("ls dir");
        let climb = format!("ls {}", "/..".repeat(20) + "/bin/sh");
        let run = terminal_run(&climb, &args(&["-c", "rm -rf x"]), &[], &cwd).expect("resolved");
        assert_eq!(run.judged, format!("{sh} -c 'rm -rf x'"));
        assert_eq!(run.spawned, run.judged);
        // A symlink named `ls` in the cwd.
        std::os::unix::fs::symlink("/bin/sh", cwd.join("ls")).expect("symlink");
        let run = terminal_run("./ls", &args(&["-c", "x"]), &[], &cwd).expect("resolved");
        assert_eq!(run.judged, format!("{sh} -c x"));
        // A bare name found on warden's own PATH keeps its name; it runs
        // from where it was found.
        let run = terminal_run("sh", &args(&["-c", "rm x"]), &[], &cwd).expect("resolved");
        assert_eq!(run.judged, "sh -c 'rm x'");
        assert!(run.spawned.starts_with('/') && run.spawned.ends_with("/sh -c 'rm x'"));
        // The agent's PATH: found in the cwd, judged by its real path.
        let bin = cwd.join("bin");
        std::fs::create_dir(&bin).expect("bin");
        std::fs::copy("/bin/sh", bin.join("cargo")).expect("fake cargo");
        let env = vec![("PATH".to_string(), "bin:/usr/bin:/bin".to_string())];
        let run = terminal_run("cargo", &args(&["test"]), &env, &cwd).expect("resolved");
        assert_eq!(run.judged, format!("{}/bin/cargo test", cwd.display()));
        // A shell line is judged as written.
        let run = terminal_run("ls -la | wc -l", &[], &[], &cwd).expect("a line");
        assert_eq!((run.judged.as_str(), run.program), ("ls -la | wc -l", None));
        // Arguments through a symlink: their real paths are facts too.
        std::os::unix::fs::symlink("/etc", cwd.join("k")).expect("symlink k");
        let run = terminal_run("cat", &args(&["k/hostname"]), &[], &cwd).expect("resolved");
        let etc = std::fs::canonicalize("/etc/hostname");
        if let Ok(etc) = etc {
            assert_eq!(run.resolved_args, [etc.display().to_string()]);
        }
        // No such program: refused before the gate.
        assert!(terminal_run("./missing", &[], &[], &cwd).is_err());
        assert!(terminal_run("no-such-program-here", &args(&["x"]), &[], &cwd).is_err());
    }

    /// `proj/up/../link/key` where `proj/up` links to `other/sub`: the
    /// kernel opens `other/link/key` (missing), a tool that applies `..`
    /// first opens `proj/link/key`, which `proj/link` sends into `vault`.
    /// The rules must see both, or a deny rule on the vault is walked past.
    #[test]
    fn the_rules_see_every_reading_of_a_path_with_dot_dot_after_a_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        for sub in ["proj", "other/sub", "vault"] {
            std::fs::create_dir_all(base.join(sub)).expect("mkdir");
        }
        std::os::unix::fs::symlink(base.join("other/sub"), base.join("proj/up")).expect("link");
        std::os::unix::fs::symlink(base.join("vault"), base.join("proj/link")).expect("link");
        let sent = base.join("proj/up/../link/key").display().to_string();
        let mut request = crate::test_support::read_of(&sent);
        let mut state = ChatState::new("demo", base.join("proj").display().to_string());
        state.session.cwd_path = base.join("proj");
        let roots = fs::Roots::new(&base.join("proj"), &[]);
        let facts = permission(&mut request, None, None, &state.session.cwd_path, &roots);
        assert_eq!(facts.refusal, None);
        let view = facts.view;
        let seen: Vec<String> = request
            .fields
            .locations
            .unwrap_or_default()
            .into_iter()
            .map(|l| l.path)
            .collect();
        for reading in ["other/link/key", "vault/key"] {
            let reading = base.join(reading).display().to_string();
            assert!(seen.contains(&reading), "{reading} not in {seen:?}");
            assert!(
                view.locations.contains(&reading),
                "the policy sees {reading}"
            );
            assert!(
                facts
                    .readings
                    .iter()
                    .any(|(_, meant)| meant.contains(&reading)),
                "{reading} is a reading of the path sent"
            );
        }
    }
}
