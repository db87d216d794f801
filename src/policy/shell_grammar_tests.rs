//! Property tests of the scanner: random lines from a grammar of shell
//! constructs, checked against a small model of which commands each line
//! can run.

use proptest::prelude::*;

use super::*;

// --- The grammar ----------------------------------------------------------

/// What a generated line can run, as the model sees it.
#[derive(Debug, Clone, PartialEq)]
enum Run {
    /// A program with its first argument, if any.
    Known(String, Option<String>),
    /// Something nobody can read before it runs.
    Unknown,
}

/// A generated shell construct: how it is written, and what it can run.
#[derive(Debug, Clone)]
struct Gen {
    text: String,
    runs: Vec<Run>,
    /// A simple command (usable inside `env -S`, `find -exec`).
    simple: bool,
}

fn known(name: &str, first: Option<&str>) -> Run {
    Run::Known(name.into(), first.map(str::to_string))
}

/// The ways to write a program name the shell resolves at parse time.
fn spelling() -> impl Strategy<Value = (String, String)> {
    let name = prop::sample::select(vec!["cargo", "rm", "ls", "echo"]);
    (name, 0..9usize).prop_map(|(name, how)| {
        let (head, tail) = name.split_at(1);
        let text = match how {
            0 | 1 => name.to_string(),
            2 => format!("\\{name}"),
            3 => format!("/usr/bin/{name}"),
            4 => format!("'{name}'"),
            5 => format!("\"{name}\""),
            6 => format!("$'{name}'"),
            7 => format!("{head}''{tail}"),
            _ => format!("{head}\\{tail}"),
        };
        (text, name.to_string())
    })
}

/// Arguments that do not run anything.
fn plain_arg() -> impl Strategy<Value = (String, String)> {
    prop::sample::select(vec![
        ("test", "test"),
        ("-rf", "-rf"),
        ("x", "x"),
        ("'a b'", "a b"),
        ("\"c d\"", "c d"),
        ("$Y", "$Y"),
        ("${Y}", "${Y}"),
        ("'#'", "#"),
        ("a#b", "a#b"),
        ("$((1+2))", "3"),
        ("'$(rm x)'", "$(rm x)"),
        ("\\;", ";"),
        ("2>&1", ""),
        (">/dev/null", ""),
    ])
    .prop_map(|(t, v)| (t.to_string(), v.to_string()))
}

fn simple() -> impl Strategy<Value = Gen> {
    (
        spelling(),
        prop::collection::vec(plain_arg(), 0..3),
        0..8usize,
    )
        .prop_map(|((name_text, name), args, how)| {
            let first = args.iter().map(|(_, v)| v.clone()).find(|v| !v.is_empty());
            let mut text = name_text;
            for (i, (arg, _)) in args.iter().enumerate() {
                // `rm${IFS}-rf`: the shell splits the word.
                let ifs = how == 0 && i == 0 && !arg.starts_with(['$', '>', '2', '\\']);
                text.push_str(if ifs { "${IFS}" } else { " " });
                text.push_str(arg);
            }
            Gen {
                text,
                runs: vec![Run::Known(name, first)],
                simple: true,
            }
        })
}

/// Program names only known at run time.
fn dynamic() -> impl Strategy<Value = Gen> {
    prop::sample::select(vec![
        ("$X x", vec![Run::Unknown]),
        ("${X} -rf", vec![Run::Unknown]),
        ("\"$X\"", vec![Run::Unknown]),
        ("* x", vec![Run::Unknown]),
        ("$'\\x72m' x", vec![Run::Unknown]),
        (
            "$(echo rm) x",
            vec![Run::Unknown, known("echo", Some("rm"))],
        ),
        ("`echo rm` x", vec![Run::Unknown, known("echo", Some("rm"))]),
        ("cat x | sh", vec![known("cat", Some("x")), Run::Unknown]),
        ("ls ${x[A]}", vec![known("ls", None), Run::Unknown]),
        ("ls $((A+1))", vec![known("ls", None), Run::Unknown]),
        ("((A++))", vec![Run::Unknown]),
    ])
    .prop_map(|(text, runs)| Gen {
        text: text.to_string(),
        runs,
        simple: false,
    })
}

fn single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Comment texts, with quotes and substitutions that never run.
fn comment() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "'", "\"", "$(rm x)", "`rm x`", "${x[A]}", "rm x", ")", "'\"'",
    ])
    .prop_map(str::to_string)
}

fn line() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![4 => simple(), 1 => dynamic()];
    leaf.prop_recursive(4, 32, 3, |inner| {
        let op = prop::sample::select(vec![";", "&&", "||", "|", "&", "\n"]);
        prop_oneof![
            3 => (inner.clone(), op, inner.clone()).prop_map(|(a, op, b)| Gen {
                text: format!("{} {op} {}", a.text, b.text),
                runs: [a.runs, b.runs].concat(),
                simple: false,
            }),
            2 => (inner.clone(), comment(), inner.clone()).prop_map(|(a, c, b)| Gen {
                text: format!("{} #{c}\n{}", a.text, b.text),
                runs: [a.runs, b.runs].concat(),
                simple: false,
            }),
            1 => (simple(), inner.clone(), 0..5usize).prop_map(|(outer, sub, how)| {
                let text = match how {
                    0 => format!("{} $({})", outer.text, sub.text),
                    1 => format!("{} \"$({})\"", outer.text, sub.text),
                    2 => format!(
                        "{} `{}`",
                        outer.text,
                        sub.text
                            .replace('\\', "\\\\")
                            .replace('`', "\\`")
                            .replace('$', "\\$")
                    ),
                    3 => format!("{} <({})", outer.text, sub.text),
                    _ => format!("{} ${{Y:-$({})}}", outer.text, sub.text),
                };
                let mut runs = [outer.runs, sub.runs].concat();
                if how == 4 {
                    runs.push(Run::Unknown);
                }
                Gen {
                    text,
                    runs,
                    simple: false,
                }
            }),
            1 => inner.clone().prop_map(|a| Gen {
                text: format!("( {} )", a.text),
                runs: a.runs,
                simple: false,
            }),
            1 => inner.clone().prop_map(|a| Gen {
                text: format!("{{ {}\n}}", a.text),
                runs: a.runs,
                simple: false,
            }),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Gen {
                text: format!("if {}\nthen {}\nfi", a.text, b.text),
                runs: [a.runs, b.runs].concat(),
                simple: false,
            }),
            1 => (inner.clone(), any::<bool>()).prop_map(|(body, quoted)| {
                let delimiter = if quoted { "'EOF'" } else { "EOF" };
                let mut runs = vec![known("cat", None)];
                if !quoted {
                    runs.extend(body.runs);
                }
                Gen {
                    text: format!("cat <<{delimiter}\n$({})\nEOF\n", body.text),
                    runs,
                    simple: false,
                }
            }),
            1 => (inner.clone(), 0..12usize).prop_map(|(a, how)| wrapped(a, how)),
            1 => (inner.clone(), 0..3usize).prop_map(|(a, how)| {
                let text = match how {
                    0 => format!("case $Y in a) {}\n;; *) ls;; esac", a.text),
                    1 => format!("! {}", a.text),
                    _ => format!("time {}", a.text),
                };
                let mut runs = a.runs;
                if how == 0 {
                    runs.extend([known("ls", None), Run::Unknown]);
                }
                Gen { text, runs, simple: false }
            }),
        ]
    })
}

/// `a` run through a wrapper.
fn wrapped(a: Gen, how: usize) -> Gen {
    let shell = |name: &str, flag: &str| Gen {
        text: format!("{name} {flag} {}", single_quote(&a.text)),
        runs: [vec![known(name, Some(flag))], a.runs.clone()].concat(),
        simple: false,
    };
    let prefix = |words: &str| {
        let program = words.split(' ').next().unwrap_or(words);
        Gen {
            text: format!("{words} {}", a.text),
            runs: [vec![known(program, None)], a.runs.clone()].concat(),
            simple: false,
        }
    };
    if a.simple {
        match how {
            0 => {
                return Gen {
                    text: format!("env -S {}", single_quote(&a.text)),
                    runs: [vec![known("env", Some("-S"))], a.runs.clone()].concat(),
                    simple: false,
                };
            }
            1 => {
                return Gen {
                    text: format!("find . -exec {} {{}} \\;", a.text),
                    runs: [vec![known("find", Some("."))], a.runs.clone()].concat(),
                    simple: false,
                };
            }
            2 => return prefix("sudo -u root"),
            3 => return prefix("timeout 5"),
            4 => return prefix("nice -n 1"),
            5 => return prefix("xargs -0"),
            6 => return prefix("flock /tmp/l"),
            7 => return prefix("strace -f"),
            8 => return prefix("chroot /"),
            9 => return prefix("busybox"),
            _ => {}
        }
    }
    match how % 3 {
        0 => shell("sh", "-c"),
        1 => shell("bash", "-lc"),
        _ => shell("su", "-c"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// An allow rule `cargo test *` matches only lines whose every command
    /// the model knows is `cargo test ...`.
    #[test]
    fn an_allow_rule_covers_every_command_the_line_runs(g in line()) {
        let allow = [command_rule(RuleDecision::Allow, "cargo test *")];
        let d = decide_in(&shell_request(&g.text), Mode::Default, false, &allow);
        if matches!(d, Decision::Allow { .. }) {
            for run in &g.runs {
                prop_assert_eq!(
                    run,
                    &known("cargo", Some("test")),
                    "{:?} allowed, runs {:?}", g.text, g.runs
                );
            }
        }
    }

    /// A deny rule `rm *` refuses every line that runs `rm`, however spelt;
    /// a line that may run what nobody can read asks, never runs.
    #[test]
    fn a_deny_rule_sees_every_rm(g in line()) {
        let deny = [command_rule(RuleDecision::Deny, "rm *")];
        let d = decide_in(&shell_request(&g.text), Mode::Auto, true, &deny);
        let runs_rm = g.runs.iter().any(|r| matches!(r, Run::Known(n, _) if n == "rm"));
        if runs_rm {
            prop_assert_eq!(short(&d), "deny", "{:?} runs {:?}", g.text, g.runs);
        } else if g.runs.contains(&Run::Unknown) {
            prop_assert_ne!(short(&d), "allow", "{:?} runs {:?}", g.text, g.runs);
        }
    }
}
