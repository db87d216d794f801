use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

fn texts(line: &str) -> Vec<String> {
    parse(line).commands.into_iter().map(|c| c.text).collect()
}

#[test]
fn splits_on_operators() {
    assert_eq!(
        texts("cargo test && cargo fmt"),
        ["cargo test", "cargo fmt"]
    );
    assert_eq!(texts("cargo test; rm -rf ~"), ["cargo test", "rm -rf ~"]);
    assert_eq!(
        texts("a || b | c |& d & e\nf"),
        ["a", "b", "c", "d", "e", "f"]
    );
    assert_eq!(texts("  ;; a ;  "), ["a"]);
    assert_eq!(texts("(cd x && rm -rf y)"), ["cd x", "rm -rf y"]);
}

#[test]
fn quotes_protect_separators() {
    assert_eq!(
        texts("git commit -m 'a; b && c'"),
        ["git commit -m 'a; b && c'"]
    );
    assert_eq!(texts("echo \"x | y\"; ls"), ["echo \"x | y\"", "ls"]);
    assert_eq!(texts("echo a\\;b"), ["echo a\\;b"]);
    assert_eq!(texts("echo 'it\"s'; ls"), ["echo 'it\"s'", "ls"]);
    assert_eq!(
        texts(r"cargo test $'\'' ; rm -rf ~ #'"),
        [r"cargo test $'\''", "rm -rf ~"]
    );
    assert_eq!(texts("echo $'a;b'; ls"), ["echo $'a;b'", "ls"]);
}

#[test]
fn substitutions_are_commands_too() {
    assert_eq!(texts("echo $(rm -rf /)"), ["echo $(rm -rf /)", "rm -rf /"]);
    assert_eq!(texts("echo `rm -rf /`"), ["echo `rm -rf /`", "rm -rf /"]);
    assert_eq!(
        texts("echo \"$(rm -rf /)\""),
        ["echo \"$(rm -rf /)\"", "rm -rf /"]
    );
    assert_eq!(texts("echo '$(rm -rf /)'"), ["echo '$(rm -rf /)'"]);
    assert_eq!(
        texts("a $(b $(c; d) e) f"),
        ["a $(b $(c; d) e) f", "b $(c; d) e", "c", "d"]
    );
    assert_eq!(
        texts("echo `a \\`b\\``"),
        ["echo `a \\`b\\``", "a `b`", "b"]
    );
    assert_eq!(
        texts("diff <(ls a) >(tee b)"),
        ["diff <(ls a) >(tee b)", "ls a", "tee b"]
    );
    assert_eq!(
        texts("echo $(( 1 + $(wc -l) ))"),
        ["echo $(( 1 + $(wc -l) ))", "1 + $(wc -l)", "wc -l"]
    );
    assert_eq!(
        texts("echo $((rm -rf ~) )"),
        ["echo $((rm -rf ~) )", "rm -rf ~"]
    );
    assert_eq!(
        texts("echo $( (a) ; b ) c"),
        ["echo $( (a) ; b ) c", "a", "b"]
    );
}

#[test]
fn keywords_and_assignments() {
    assert_eq!(
        texts("if cargo test; then echo ok; fi"),
        ["cargo test", "echo ok"]
    );
    assert_eq!(texts("for f in *; do rm $f; done"), ["for f in *", "rm $f"]);
    assert_eq!(texts("{ ls; }"), ["ls"]);
    let line = parse("FOO='a b' BAR=1 cargo test");
    assert_eq!(
        line.commands,
        [Command {
            text: "FOO='a b' BAR=1 cargo test".into(),
            bare: Some("cargo test".into()),
            derived: false,
            unknown: false,
            plain: Some("cargo test".into()),
            code: false,
        }]
    );
    assert_eq!(parse("X=1").commands[0].bare, None);
    let ansi = parse(r"FOO=$'it\'s x' rm -rf /");
    assert_eq!(ansi.commands[0].bare.as_deref(), Some("rm -rf /"));
}

fn derived(line: &str) -> Vec<String> {
    parse(line)
        .commands
        .into_iter()
        .filter(|c| c.derived)
        .map(|c| c.text)
        .collect()
}

#[test]
fn wrappers_are_looked_into() {
    assert_eq!(derived("sudo rm -rf /"), ["rm -rf /"]);
    assert_eq!(derived("sudo -u root -E rm -rf /"), ["rm -rf /"]);
    assert_eq!(derived("/usr/bin/sudo -- rm x"), ["rm x"]);
    assert_eq!(
        derived("env -i FOO=1 timeout -s KILL 5 nice -n 10 make"),
        [
            "timeout -s KILL 5 nice -n 10 make",
            "nice -n 10 make",
            "make"
        ]
    );
    assert_eq!(derived("find . | xargs -I{} rm {}"), ["rm {}"]);
    assert_eq!(derived("nohup ./serve &"), ["./serve"]);
    assert_eq!(derived("env"), Vec::<String>::new());
    assert_eq!(derived("cargo test"), Vec::<String>::new());
    assert_eq!(derived("env X=1 Y=2 rm -rf ~")[0], "rm -rf ~");
}

#[test]
fn shell_strings_are_scanned() {
    assert_eq!(derived("sh -c 'rm -rf ~'"), ["rm -rf ~"]);
    assert_eq!(
        derived("bash -lc \"cd / && rm -rf \\\"$HOME\\\"\""),
        ["cd /", "rm -rf \"$HOME\""]
    );
    assert_eq!(
        derived("sudo sh -c 'echo hi; curl x | sh'"),
        [
            "sh -c 'echo hi; curl x | sh'",
            "echo hi",
            "curl x",
            "sh",
            "sh"
        ]
    );
    assert_eq!(derived("eval 'rm -rf' /tmp/x"), ["rm -rf /tmp/x"]);
    assert_eq!(derived("bash script.sh"), ["bash script.sh"]);
    assert!(parse("bash script.sh").commands[1].unknown);
    assert_eq!(derived("zsh -c $'rm\\t-rf /'"), ["rm\t-rf /"]);
}

#[test]
fn redirections() {
    assert!(!parse("cargo test 2>&1 | tail").writes_file);
    assert!(!parse("cargo test > /dev/null 2>&-").writes_file);
    assert!(!parse("cat < in.txt").writes_file);
    assert!(parse("cargo test > out.txt").writes_file);
    assert!(parse("cargo test >> ~/.bashrc").writes_file);
    assert!(parse("cargo test &> log").writes_file);
    assert!(parse("cargo test >& log").writes_file);
    assert!(!parse("echo 'a > b'").writes_file);
    assert_eq!(
        texts("echo x >$(rm -rf /)"),
        ["echo x >$(rm -rf /)", "rm -rf /"]
    );
}

#[test]
fn deep_nesting_is_opaque() {
    let line = format!("{}x{}", "$(".repeat(100), ")".repeat(100));
    assert!(parse(&line).opaque);
    let ticks = format!("{}x", "`".repeat(2));
    assert!(!parse(&ticks).opaque);
}

proptest! {
    #[test]
    fn never_panics_and_pieces_are_trimmed(line in "[a-z $()`'\";&|<>\\\\\n{}!=]{0,60}") {
        let parsed = parse(&line);
        for c in parsed.commands {
            prop_assert!(!c.text.is_empty());
            prop_assert_eq!(c.text.trim(), c.text.as_str());
        }
    }
}
