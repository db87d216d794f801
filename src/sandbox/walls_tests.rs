use super::*;

/// Issue 32, item 3: `warden sandbox` names the socket door the mount
/// namespace leaves, exactly: sockets bound after the agent starts,
/// and those bound again by a restart.
#[test]
fn the_sandbox_report_names_sockets_bound_after_the_start() {
    let walls = KernelWalls {
        namespace: Some(Namespace::User),
        seccomp: true,
        abi: 7,
        net: true,
    };
    let said = walls.describe().join("\n");
    for want in [
        "OPEN: a pathname socket bound after the agent starts",
        "binds its socket again",
        "/tmp/tmux-",
        "ABI 9; this kernel: ABI 7",
    ] {
        assert!(said.contains(want), "{want}: {said}");
    }
}

#[test]
fn bound_sockets_are_read_from_the_kernels_table() {
    let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
         0000000000000000: 00000002 00000000 00010000 0001 01 16062 /run/user/1000/bus\n\
         0000000000000000: 00000002 00000000 00010000 0001 01 16063 @/tmp/.X11-unix/X0\n\
         0000000000000000: 00000003 00000000 00000000 0001 03 16064\n\
         0000000000000000: 00000002 00000000 00010000 0001 01 16065 /tmp/a b/sock\n";
    assert_eq!(
        bound_sockets(table),
        vec![
            PathBuf::from("/run/user/1000/bus"),
            PathBuf::from("/tmp/a b/sock")
        ]
    );
}
