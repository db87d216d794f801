//! What to call an agent started with `-- CMD ARGS`: the script or package
//! it runs, never the interpreter or launcher that runs it (`node`,
//! `python3`, `npx`), so that two node-based agents do not share a name;
//! and the safe word an agent's own name (`agentInfo.name`) becomes.

use std::path::{Component, Path};

/// Launchers whose first non-option argument names a package to run.
const PACKAGE_RUNNERS: [&str; 5] = ["npx", "bunx", "pnpx", "uvx", "pipx"];

/// Package managers that run a package after a subcommand (`pnpm dlx PKG`).
const PACKAGE_SUBCOMMANDS: [(&str, &[&str]); 6] = [
    ("pnpm", &["dlx", "exec"]),
    ("yarn", &["dlx", "exec"]),
    ("npm", &["exec", "x"]),
    ("bun", &["x"]),
    ("uv", &["run", "tool"]),
    ("pipx", &["run"]),
];

/// Interpreters whose first non-option argument is a script (or `-m MODULE`).
const INTERPRETERS: [&str; 12] = [
    "node", "nodejs", "python", "python3", "deno", "bun", "ruby", "perl", "tsx", "ts-node", "sh",
    "bash",
];

/// Options of the launchers above that take a value (`--package X`).
const VALUED: [&str; 19] = [
    "-p",
    "-e",
    "--eval",
    "--print",
    "--package",
    "--from",
    "--with",
    "--python",
    "-r",
    "--require",
    "--import",
    "--loader",
    "--env-file",
    "--config",
    "-c",
    "--cwd",
    "--spec",
    "-I",
    "--index-url",
];

/// Script names that say nothing about the agent: the directory above names it.
const GENERIC_STEMS: [&str; 11] = [
    "index",
    "main",
    "cli",
    "cli-entry",
    "agent",
    "server",
    "run",
    "app",
    "start",
    "__main__",
    "mod",
];

/// Directories that say nothing about the agent.
const GENERIC_DIRS: [&str; 11] = [
    "dist", "build", "out", "lib", "src", "bin", "examples", "example", "scripts", "target",
    "release",
];

/// A name for the agent that `program args` runs (in `cwd`):
/// `npx -y @zed-industries/claude-agent-acp` -> `claude-agent-acp`,
/// `python3 -m fast_agent` -> `fast_agent`, `node dist/examples/agent.js`
/// -> the package directory's name (else `agent`), `uvx kimi-cli@1` ->
/// `kimi-cli`, `codex-acp` -> `codex-acp`. When the command names no script
/// or package (`node -e '...'`), `<interpreter>-agent`.
pub(crate) fn agent_name_for(program: &str, args: &[String], cwd: &Path) -> String {
    clean(&derive(program, args, cwd))
}

/// What an agent started as `program args` in `cwd` is, for telling it
/// from another: the program resolved as exec resolves it (a bare name
/// through `PATH`, a path from `cwd`), canonical; the script an
/// interpreter runs (`python3 agent.py`, `node dist/index.js`, `uv run
/// x.py`, `deno run x.ts`) resolved from `cwd`, canonical; every other
/// argument as typed (a package spec of `npx`, `uvx`, ... is the package).
/// `python3 agent.py` in two repositories is two agents.
pub(crate) fn agent_identity(program: &str, args: &[String], cwd: &Path) -> Vec<String> {
    let mut identity = vec![resolve_program(program, cwd)];
    let mut args = args.to_vec();
    if let Some(at) = script_index(program, &args) {
        args[at] = absolute(&args[at], cwd).display().to_string();
    }
    identity.extend(args);
    identity
}

/// `program args` as a settings block keeps it so that it means the same
/// agent wherever warden starts: a program given as a path, and the script
/// an interpreter runs, made absolute (from `cwd`, canonical); a bare
/// program name stays (found through `PATH`).
pub(crate) fn pinned_command(program: &str, args: &[String], cwd: &Path) -> (String, Vec<String>) {
    let program = if program.contains('/') {
        absolute(program, cwd).display().to_string()
    } else {
        program.to_string()
    };
    let mut args = args.to_vec();
    if let Some(at) = script_index(&program, &args) {
        args[at] = absolute(&args[at], cwd).display().to_string();
    }
    (program, args)
}

/// `path` from `cwd`, canonical when it exists, else with `.` and `..`
/// taken away.
fn absolute(path: &str, cwd: &Path) -> std::path::PathBuf {
    let joined = cwd.join(path);
    joined.canonicalize().unwrap_or_else(|_| {
        let mut out = std::path::PathBuf::new();
        for part in joined.components() {
            match part {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    })
}

/// The program exec runs for `program`: a path from `cwd`, a bare name
/// through `PATH`; canonical. As typed when it cannot be found.
fn resolve_program(program: &str, cwd: &Path) -> String {
    if program.contains('/') {
        return absolute(program, cwd).display().to_string();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(dir)
        };
        let candidate = dir.join(program);
        if candidate.is_file() {
            return candidate
                .canonicalize()
                .unwrap_or(candidate)
                .display()
                .to_string();
        }
    }
    program.to_string()
}

/// Where among `args` the script that `program` runs is, if it runs one
/// (an interpreter's script, `deno run` / `bun run` / `uv run`'s, through
/// `env`); never a package spec or a module name.
fn script_index(program: &str, args: &[String]) -> Option<usize> {
    let base = file_name(program);
    let launcher = interpreter_name(&base);
    if launcher == "env" {
        let skip = args
            .iter()
            .take_while(|a| a.starts_with('-') || a.contains('='))
            .count();
        let (cmd, tail) = args[skip..].split_first()?;
        return script_index(cmd, tail).map(|at| skip + 1 + at);
    }
    if launcher == "uv" {
        let at = args.iter().position(|a| a == "run")?;
        return operand_index(&args[at + 1..]).map(|i| at + 1 + i);
    }
    if !INTERPRETERS.contains(&launcher) || args.iter().any(|a| a == "-m") {
        return None;
    }
    if matches!(launcher, "sh" | "bash") && args.iter().any(|a| a == "-c") {
        return None;
    }
    let mut from = 0;
    if matches!(launcher, "deno" | "bun")
        && let Some(at) = args.iter().position(|a| a == "run")
    {
        from = at + 1;
    }
    if matches!(
        launcher,
        "node"
            | "nodejs"
            | "deno"
            | "bun"
            | "tsx"
            | "ts-node"
            | "python"
            | "python3"
            | "ruby"
            | "perl"
    ) && args.iter().any(|a| a == "-e" || a == "--eval" || a == "-c")
    {
        return None;
    }
    operand_index(&args[from..]).map(|i| from + i)
}

/// Where the first argument that is not an option or an option's value is.
fn operand_index(args: &[String]) -> Option<usize> {
    let mut skip = false;
    for (i, arg) in args.iter().enumerate() {
        if skip {
            skip = false;
            continue;
        }
        if arg == "--" {
            continue;
        }
        if arg.starts_with('-') {
            skip = VALUED.contains(&arg.as_str());
            continue;
        }
        return Some(i);
    }
    None
}

/// The longest name an agent's own `agentInfo.name` becomes.
const SLUG_MAX: usize = 40;

/// What an agent's own name (`agentInfo.name`, untrusted) becomes: lowercase
/// ASCII letters, digits, `-`, `_` and `.`; control characters dropped,
/// anything else (spaces, other scripts, bidi and invisible marks) a `-`;
/// an npm scope dropped (`@zed-industries/claude-agent-acp` ->
/// `claude-agent-acp`); at most `SLUG_MAX` characters. May be empty.
pub(crate) fn agent_slug(name: &str) -> String {
    let name = name.rsplit('/').next().unwrap_or(name);
    let mut slug = String::new();
    for c in name.chars() {
        let c = match c {
            'a'..='z' | '0'..='9' | '_' | '.' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            c if c.is_control() => continue,
            _ => '-',
        };
        if c == '-' && (slug.is_empty() || slug.ends_with('-')) {
            continue;
        }
        slug.push(c);
        if slug.len() >= SLUG_MAX {
            break;
        }
    }
    slug.trim_matches(['-', '.', '_']).to_string()
}

/// Whether `name` is an interpreter or launcher (`node`, `python3.12`,
/// `npx`, `env`): never an agent's name.
pub(crate) fn is_launcher(name: &str) -> bool {
    let name = interpreter_name(name);
    name == "env"
        || INTERPRETERS.contains(&name)
        || PACKAGE_RUNNERS.contains(&name)
        || PACKAGE_SUBCOMMANDS
            .iter()
            .any(|(runner, _)| *runner == name)
}

fn file_name(program: &str) -> String {
    Path::new(program)
        .file_name()
        .map_or_else(|| program.to_string(), |n| n.to_string_lossy().into_owned())
}

/// `python3.12` -> `python3`, `node22` stays (not an interpreter name).
fn interpreter_name(base: &str) -> &str {
    match base.split_once('.') {
        Some((head, tail)) if tail.chars().all(|c| c.is_ascii_digit() || c == '.') => head,
        _ => base,
    }
}

fn derive(program: &str, args: &[String], cwd: &Path) -> String {
    let base = file_name(program);
    let launcher = interpreter_name(&base);
    if launcher == "env" {
        // `env [-i] [VAR=x ...] CMD ARGS`.
        let rest: Vec<String> = args
            .iter()
            .skip_while(|a| a.starts_with('-') || a.contains('='))
            .cloned()
            .collect();
        return match rest.split_first() {
            Some((cmd, tail)) => derive(cmd, tail, cwd),
            None => "env-agent".to_string(),
        };
    }
    if PACKAGE_RUNNERS.contains(&launcher) {
        if let Some(pkg) = operand(args) {
            let pkg = if launcher == "pipx" && pkg == "run" {
                operand(&args[position(args, "run") + 1..]).unwrap_or(pkg)
            } else {
                pkg
            };
            return package_name(pkg);
        }
        return format!("{launcher}-agent");
    }
    if let Some((_, subs)) = PACKAGE_SUBCOMMANDS
        .iter()
        .find(|(name, _)| *name == launcher)
        && let Some(at) = args.iter().position(|a| subs.contains(&a.as_str()))
    {
        let mut rest = &args[at + 1..];
        // `uv tool run PKG`.
        if launcher == "uv" && args[at] == "tool" {
            rest = rest.strip_prefix(&["run".to_string()]).unwrap_or(rest);
        }
        if launcher == "uv" && args[at] == "run" {
            if let Some(script) = operand(rest) {
                return script_name(script, cwd);
            }
        } else if let Some(pkg) = operand(rest) {
            return package_name(pkg);
        }
        return format!("{launcher}-agent");
    }
    if INTERPRETERS.contains(&launcher) {
        // `python3 -m MODULE`.
        if let Some(at) = args.iter().position(|a| a == "-m")
            && let Some(module) = args.get(at + 1)
        {
            return module.clone();
        }
        let mut rest = args;
        // `deno run [opts] SCRIPT`, `bun run SCRIPT`.
        if matches!(launcher, "deno" | "bun")
            && let Some(at) = rest.iter().position(|a| a == "run")
        {
            rest = &rest[at + 1..];
        }
        if let Some(script) = operand(rest)
            && !(matches!(launcher, "sh" | "bash") && rest.iter().any(|a| a == "-c"))
        {
            return script_name(script, cwd);
        }
        return format!("{launcher}-agent");
    }
    base
}

fn position(args: &[String], word: &str) -> usize {
    args.iter().position(|a| a == word).unwrap_or(0)
}

/// The first argument that is not an option or an option's value.
fn operand(args: &[String]) -> Option<&str> {
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if arg == "--" {
            continue;
        }
        if arg.starts_with('-') {
            skip = VALUED.contains(&arg.as_str());
            continue;
        }
        return Some(arg);
    }
    None
}

/// `@scope/pkg@1.2` -> `pkg`; `pkg==1.0`, `pkg[extra]` -> `pkg`; a path -> its name.
fn package_name(spec: &str) -> String {
    let spec = spec.rsplit('/').next().unwrap_or(spec);
    // The first character may be `@` of a scope; a version marker comes after.
    let end = spec
        .char_indices()
        .skip(1)
        .find(|(_, c)| matches!(c, '@' | '=' | '[' | '<' | '>' | '~' | '!'))
        .map_or(spec.len(), |(i, _)| i);
    spec[..end].to_string()
}

/// A script's name: its stem, or the first telling directory above it when
/// the stem says nothing (`dist/examples/agent.js` in `acp-demo/`).
fn script_name(script: &str, cwd: &Path) -> String {
    let path = cwd.join(script);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !stem.is_empty() && !GENERIC_STEMS.contains(&stem.as_str()) {
        return stem;
    }
    let dirs: Vec<String> = path
        .parent()
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    dirs.into_iter()
        .rev()
        .find(|d| !GENERIC_DIRS.contains(&d.as_str()) && !d.starts_with('.'))
        .unwrap_or(stem)
}

/// Only letters, digits, `-`, `_` and `.`; anything else becomes `-`; never empty.
fn clean(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    let cleaned = cleaned.trim_matches(['-', '.']);
    if cleaned.is_empty() {
        "agent".to_string()
    } else {
        cleaned.to_string()
    }
}

/// Why an agent may not take the name `new` (what it calls itself, made a
/// safe word by [`agent_slug`]) by the name alone: it has no letters or
/// digits, it is an interpreter's or launcher's, or it is the demo agent's.
pub(crate) fn name_refused(new: &str) -> Option<String> {
    if new.is_empty() {
        return Some("that has no letters or digits warden can use".into());
    }
    if is_launcher(new) {
        return Some(format!("`{new}` is an interpreter or launcher"));
    }
    if new == super::DEMO_AGENT {
        return Some(format!("`{new}` is warden's demo agent"));
    }
    None
}

/// Why an agent may not take the name `new` by the settings file as it is
/// now (another warden may have added a block): the file did not load at
/// start (`writable` is false), it does not load now, or an
/// `[agents.NEW]` block runs another command.
///
/// Blocking: it reads the file (the runtime calls it off its event loop).
pub(crate) fn name_refused_by_file(
    path: Option<&Path>,
    writable: bool,
    new: &str,
) -> Option<String> {
    if !writable {
        return Some("the settings file did not load".into());
    }
    match path.map(super::load) {
        Some(Err(_)) => Some("the settings file does not load".into()),
        Some(Ok(Some(file))) if file.agents.contains_key(new) => Some(format!(
            "`[agents.{new}]` of the settings runs another command"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn name(line: &str) -> String {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        agent_name_for(&words[0], &words[1..], Path::new("/home/u/code/acp-demo"))
    }

    #[test]
    fn names_come_from_the_script_or_package_never_the_interpreter() {
        let cases = [
            (
                "npx -y @zed-industries/claude-agent-acp",
                "claude-agent-acp",
            ),
            (
                "npx @google/gemini-cli@0.61.0 --experimental-acp",
                "gemini-cli",
            ),
            ("npx --package=x -y pkg", "pkg"),
            ("npx -p @a/b c-acp", "c-acp"),
            ("node dist/examples/agent.js", "acp-demo"),
            ("node /opt/tools/my-agent/dist/index.js", "my-agent"),
            ("node --require ts-node/register runner.js", "runner"),
            ("/usr/bin/node ./claude.mjs", "claude"),
            ("python3 -m fast_agent", "fast_agent"),
            ("python3.12 agents/kimi.py --acp", "kimi"),
            ("python -u -m fast_agent.acp serve", "fast_agent.acp"),
            ("uvx kimi-cli@1.2 --acp", "kimi-cli"),
            ("uvx --from fast-agent-mcp fast-agent", "fast-agent"),
            ("uv tool run fast-agent==0.3", "fast-agent"),
            ("uv run agent.py", "acp-demo"),
            ("pipx run qwen-acp", "qwen-acp"),
            ("bunx @scope/thing@latest", "thing"),
            ("pnpm dlx @zed-industries/codex-acp", "codex-acp"),
            ("yarn dlx opencode-acp", "opencode-acp"),
            ("deno run -A https://x.dev/acp/mod.ts", "acp"),
            ("bun run src/cli.ts", "acp-demo"),
            ("env FOO=1 node z-agent.js", "z-agent"),
            ("node -e console.log(1)", "node-agent"),
            ("npx", "npx-agent"),
            ("codex-acp", "codex-acp"),
            ("/usr/local/bin/gemini --acp", "gemini"),
        ];
        for (line, want) in cases {
            assert_eq!(name(line), want, "{line}");
        }
    }

    #[test]
    fn names_are_plain_words() {
        assert_eq!(
            agent_name_for("npx", &["@x/\u{1b}]0;t\u{7}ev il".into()], Path::new("/")),
            "-0-t-ev-il".trim_matches('-')
        );
        assert_eq!(clean("\u{202e}"), "agent");
    }

    #[test]
    fn agent_slugs_are_plain_lowercase_words() {
        let cases = [
            ("Claude Code", "claude-code"),
            ("@zed-industries/claude-agent-acp", "claude-agent-acp"),
            ("Kimi Code CLI", "kimi-code-cli"),
            ("OpenCode", "opencode"),
            ("codex-acp", "codex-acp"),
            ("fast_agent.acp", "fast_agent.acp"),
            // Escapes and bidi controls leave nothing raw behind.
            (
                "\u{1b}]0;owned\u{7}Evil\u{1b}[31m Agent",
                "0-ownedevil-31m-agent",
            ),
            ("evil\u{202e}tnega", "evil-tnega"),
            ("a\u{200b}b\u{feff}\u{feff}c\u{e0041}", "a-b-c"),
            // Another script is not a look-alike of an ASCII name.
            ("cl\u{430}ude-code", "cl-ude-code"),
            ("  --..Name..--  ", "name"),
            ("\u{1b}\u{7}\u{202e}", ""),
            ("", ""),
            ("日本語", ""),
        ];
        for (name, want) in cases {
            assert_eq!(agent_slug(name), want, "{name:?}");
        }
        let long = agent_slug(&"x".repeat(500));
        assert_eq!(long.len(), SLUG_MAX);
        let slug = agent_slug(&"ab ".repeat(100));
        assert!(slug.len() <= SLUG_MAX && !slug.ends_with('-'), "{slug}");
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// Issue 22 item 5: `python3 agent.py` in two repositories is two
    /// agents; a package spec is the package wherever it runs.
    #[test]
    fn an_identity_is_the_resolved_program_and_script() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        for repo in ["a", "b"] {
            std::fs::create_dir_all(base.join(repo)).expect("mkdir");
            std::fs::write(base.join(repo).join("agent.py"), "").expect("script");
        }
        let (a, b) = (base.join("a"), base.join("b"));
        let args = strings(&["agent.py"]);
        let in_a = agent_identity("python3", &args, &a);
        let in_b = agent_identity("python3", &args, &b);
        assert_ne!(in_a, in_b);
        assert_eq!(in_a[1], a.join("agent.py").display().to_string());
        // The same script named from elsewhere is the same agent.
        let from_b = agent_identity("python3", &strings(&["../a/agent.py"]), &b);
        assert_eq!(from_b, in_a);
        // A package spec is the package; options stay.
        let npx = strings(&["-y", "@zed-industries/claude-agent-acp"]);
        assert_eq!(
            agent_identity("npx", &npx, &a),
            agent_identity("npx", &npx, &b)
        );
        // Through env, after a script-less option, in `uv run`.
        for (program, words, at) in [
            ("env", &["FOO=1", "node", "agent.py"][..], 2),
            ("node", &["--require", "x", "agent.py"][..], 2),
            ("uv", &["run", "agent.py"][..], 1),
            ("deno", &["run", "-A", "agent.py"][..], 2),
        ] {
            let one = agent_identity(program, &strings(words), &a);
            let two = agent_identity(program, &strings(words), &b);
            assert_ne!(one, two, "{program} {words:?}");
            assert_eq!(one[at + 1], a.join("agent.py").display().to_string());
        }
        // Inline code and modules are what they say.
        let inline = strings(&["-c", "import x"]);
        assert_eq!(
            agent_identity("python3", &inline, &a),
            agent_identity("python3", &inline, &b)
        );
        // A program given as a path is that file.
        assert_eq!(
            agent_identity("./agent.py", &[], &a)[0],
            a.join("agent.py").display().to_string()
        );
    }

    #[test]
    fn a_pinned_command_names_its_script_and_program_path_absolutely() {
        let cwd = Path::new("/nonexistent/repo");
        assert_eq!(
            pinned_command("python3", &strings(&["-u", "./agent.py", "--acp"]), cwd),
            (
                "python3".to_string(),
                strings(&["-u", "/nonexistent/repo/agent.py", "--acp"])
            )
        );
        assert_eq!(
            pinned_command("bin/../run", &strings(&["x"]), cwd),
            ("/nonexistent/repo/run".to_string(), strings(&["x"]))
        );
        let npx = strings(&["-y", "pkg@1"]);
        assert_eq!(pinned_command("npx", &npx, cwd), ("npx".to_string(), npx));
    }

    #[test]
    fn launchers_are_never_names() {
        for name in [
            "node",
            "python3",
            "python3.12",
            "npx",
            "uvx",
            "env",
            "bash",
            "pnpm",
        ] {
            assert!(is_launcher(name), "{name}");
        }
        for name in ["claude-code", "node22", "codex-acp", "gemini"] {
            assert!(!is_launcher(name), "{name}");
        }
    }
}
