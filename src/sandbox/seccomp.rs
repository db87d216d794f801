//! A seccomp filter that refuses the two ioctls that write into a
//! terminal's input or drive the console: `TIOCSTI` (push a byte into a
//! terminal's input queue, as if typed) and `TIOCLINUX`. Everything else
//! is allowed. The program is built in the parent; the child only hands it
//! to the kernel.
//!
//! The ioctl's request is an `unsigned int`: only the low 32 bits of the
//! argument are compared (the kernel ignores the high ones, so a caller
//! could set them to slip past a 64-bit comparison). A 64-bit process can
//! also make the 32-bit (and x32) system calls, whose numbers differ:
//! each architecture the CPU runs is checked with its own number.

/// `offsetof(struct seccomp_data, nr)`.
const NR: u32 = 0;
/// `offsetof(struct seccomp_data, arch)`.
const ARCH: u32 = 4;
/// `offsetof(struct seccomp_data, args[0])`, its low 32 bits (little endian).
const ARG0_LOW: u32 = 16;
/// `offsetof(struct seccomp_data, args[1])`, its low 32 bits (little endian).
const ARG1_LOW: u32 = 16 + 8;
/// `offsetof(struct seccomp_data, args[2])`, its low 32 bits (little endian).
const ARG2_LOW: u32 = 16 + 16;

/// The requests refused.
const REFUSED: [u32; 2] = [libc::TIOCSTI as u32, libc::TIOCLINUX as u32];

/// `AUDIT_ARCH_*` and the `ioctl` system call's numbers under it.
#[cfg(target_arch = "x86_64")]
const ARCHES: &[(u32, &[u32])] = &[
    // x86_64, and x32 (the same arch, numbers with bit 30 set: ioctl is 514).
    (0xC000_003E, &[16, 0x4000_0000 | 514, 0x4000_0000 | 16]),
    // i386 (`int 0x80` from a 64-bit process).
    (0x4000_0003, &[54]),
];
#[cfg(target_arch = "aarch64")]
const ARCHES: &[(u32, &[u32])] = &[
    (0xC000_00B7, &[29]),
    // 32-bit ARM.
    (0x4000_0028, &[54]),
];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCHES: &[(u32, &[u32])] = &[];

/// Per architecture (as [`ARCHES`], in the same order): the `socket`
/// system call's numbers, and those refused whole when the network is
/// walled (i386's `socketcall`, whose arguments the filter cannot read).
#[cfg(target_arch = "x86_64")]
const SOCKET_NRS: &[(&[u32], &[u32])] = &[(&[41, 0x4000_0000 | 41], &[]), (&[359], &[102])];
#[cfg(target_arch = "aarch64")]
const SOCKET_NRS: &[(&[u32], &[u32])] = &[(&[198], &[]), (&[281], &[102])];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SOCKET_NRS: &[(&[u32], &[u32])] = &[];

/// Whether warden has a filter for this architecture.
pub(super) fn known_arch() -> bool {
    !ARCHES.is_empty()
}

const fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jeq(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

const LOAD: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const RET: u32 = libc::BPF_RET | libc::BPF_K;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const REFUSE: u32 = libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32);

/// The filter's program: per architecture, "is it ioctl?"; an ioctl's
/// request compared with [`REFUSED`].
pub(super) fn program() -> Vec<libc::sock_filter> {
    build(false)
}

/// The same, and the network walled: `socket` makes only unix, netlink
/// and TCP sockets (no UDP, raw or packet socket: no way out but TCP,
/// which Landlock confines to the proxy's port).
pub(super) fn program_walled() -> Vec<libc::sock_filter> {
    build(true)
}

fn build(walled: bool) -> Vec<libc::sock_filter> {
    let none: (&[u32], &[u32]) = (&[], &[]);
    let sockets = |i: usize| -> (&[u32], &[u32]) {
        if walled {
            SOCKET_NRS.get(i).copied().unwrap_or(none)
        } else {
            none
        }
    };
    let mut out = vec![stmt(LOAD, ARCH)];
    // Each arch block: jeq arch, ld nr, one jeq per number, ja allow.
    let blocks: usize = ARCHES
        .iter()
        .enumerate()
        .map(|(i, (_, nrs))| 3 + nrs.len() + sockets(i).0.len() + sockets(i).1.len())
        .sum();
    // The `allow` return, the request check after it (two instructions
    // and one per request, then allow, refuse), then the socket check.
    let allow = 1 + blocks;
    let check = allow + 1;
    let refuse = check + 1 + REFUSED.len() + 1;
    let socket_check = refuse + 1;
    let rel = |from: usize, to: usize| u8::try_from(to - from - 1).unwrap_or(u8::MAX);
    for (i, (arch, nrs)) in ARCHES.iter().enumerate() {
        let (socket, banned) = sockets(i);
        let start = out.len();
        let next = start + 3 + nrs.len() + socket.len() + banned.len();
        out.push(jeq(*arch, 0, rel(start, next)));
        out.push(stmt(LOAD, NR));
        for nr in *nrs {
            let at = out.len();
            out.push(jeq(*nr, rel(at, check), 0));
        }
        for nr in socket {
            let at = out.len();
            out.push(jeq(*nr, rel(at, socket_check), 0));
        }
        for nr in banned {
            let at = out.len();
            out.push(jeq(*nr, rel(at, refuse), 0));
        }
        let at = out.len();
        out.push(stmt(
            libc::BPF_JMP | libc::BPF_JA,
            u32::try_from(allow - at - 1).unwrap_or(0),
        ));
    }
    out.push(stmt(RET, ALLOW));
    out.push(stmt(LOAD, ARG1_LOW));
    for request in REFUSED {
        let at = out.len();
        out.push(jeq(request, rel(at, refuse), 0));
    }
    out.push(stmt(RET, ALLOW));
    out.push(stmt(RET, REFUSE));
    if walled {
        // socket(domain, type, protocol): unix and netlink pass; inet and
        // inet6 pass as a stream of protocol 0 or TCP; the rest is refused.
        let at = out.len();
        let ret_allow = at + 13;
        let ret_refuse = at + 14;
        let inet = at + 5;
        out.push(stmt(LOAD, ARG0_LOW));
        out.push(jeq(libc::AF_UNIX as u32, rel(at + 1, ret_allow), 0));
        out.push(jeq(libc::AF_NETLINK as u32, rel(at + 2, ret_allow), 0));
        out.push(jeq(libc::AF_INET as u32, rel(at + 3, inet), 0));
        out.push(jeq(
            libc::AF_INET6 as u32,
            rel(at + 4, inet),
            rel(at + 4, ret_refuse),
        ));
        // inet:
        out.push(stmt(LOAD, ARG1_LOW));
        out.push(stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, 0xF));
        out.push(jeq(libc::SOCK_STREAM as u32, 0, rel(at + 7, ret_refuse)));
        out.push(stmt(LOAD, ARG2_LOW));
        out.push(jeq(0, rel(at + 9, ret_allow), 0));
        out.push(jeq(libc::IPPROTO_TCP as u32, rel(at + 10, ret_allow), 0));
        out.push(stmt(RET, REFUSE));
        out.push(stmt(RET, REFUSE));
        out.push(stmt(RET, ALLOW));
        out.push(stmt(RET, REFUSE));
    }
    out
}

/// In the child (no-new-privileges already set): install `program`.
pub(super) fn install(program: &[libc::sock_filter]) -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).unwrap_or(u16::MAX),
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `prog` points at `program`, alive for the call; the kernel
    // copies the filter.
    let done = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &raw const prog,
            0,
            0,
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny interpreter of the instructions the program uses.
    fn run(program: &[libc::sock_filter], arch: u32, nr: u32, arg1: u64) -> u32 {
        run_args(program, arch, nr, [0, arg1, 0])
    }

    fn run_args(program: &[libc::sock_filter], arch: u32, nr: u32, args: [u64; 3]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, arg) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&arg.to_le_bytes());
        }
        let mut a = 0u32;
        let mut pc = 0usize;
        loop {
            let i = program[pc];
            let code = u32::from(i.code);
            pc += 1;
            if code == LOAD {
                let k = i.k as usize;
                a = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
            } else if code == RET {
                return i.k;
            } else if code == libc::BPF_JMP | libc::BPF_JA {
                pc += i.k as usize;
            } else if code == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K {
                a &= i.k;
            } else if code == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K {
                pc += usize::from(if a == i.k { i.jt } else { i.jf });
            } else {
                panic!("unexpected instruction {code:#x}");
            }
        }
    }

    // `Ioctl` is `c_ulong` with glibc, `c_int` with musl.
    #[allow(clippy::unnecessary_cast)]
    #[test]
    fn only_tiocsti_and_tioclinux_are_refused_on_every_arch_the_cpu_runs() {
        let program = program();
        for (arch, nrs) in ARCHES {
            for nr in *nrs {
                for request in REFUSED {
                    assert_eq!(run(&program, *arch, *nr, u64::from(request)), REFUSE);
                    // High bits the kernel ignores do not slip past.
                    let high = (0xdead_beef_u64 << 32) | u64::from(request);
                    assert_eq!(run(&program, *arch, *nr, high), REFUSE);
                }
                assert_eq!(run(&program, *arch, *nr, libc::TIOCGPTPEER as u64), ALLOW);
                assert_eq!(run(&program, *arch, *nr, libc::TIOCGWINSZ as u64), ALLOW);
            }
            // Another system call with the same argument is not an ioctl.
            assert_eq!(run(&program, *arch, 1, u64::from(REFUSED[0])), ALLOW);
        }
        assert_eq!(run(&program, 0x1234, 16, u64::from(REFUSED[0])), ALLOW);
    }

    /// Issue 35: with the network walled, `socket` makes unix, netlink
    /// and TCP sockets only; the ioctls stay refused; without, anything.
    #[allow(clippy::unnecessary_cast)]
    #[test]
    fn a_walled_network_refuses_udp_raw_and_packet_sockets() {
        let walled = program_walled();
        let open = program();
        let (inet, inet6, unix) = (
            libc::AF_INET as u64,
            libc::AF_INET6 as u64,
            libc::AF_UNIX as u64,
        );
        let stream = libc::SOCK_STREAM as u64;
        let cloexec = libc::SOCK_CLOEXEC as u64;
        for ((arch, ioctls), (sockets, banned)) in ARCHES.iter().zip(SOCKET_NRS) {
            for nr in *sockets {
                let r = |args| run_args(&walled, *arch, *nr, args);
                assert_eq!(r([inet, stream | cloexec, 0]), ALLOW);
                assert_eq!(r([inet6, stream, libc::IPPROTO_TCP as u64]), ALLOW);
                assert_eq!(r([unix, libc::SOCK_DGRAM as u64, 0]), ALLOW);
                assert_eq!(
                    r([libc::AF_NETLINK as u64, libc::SOCK_RAW as u64, 0]),
                    ALLOW
                );
                assert_eq!(r([inet, libc::SOCK_DGRAM as u64 | cloexec, 0]), REFUSE);
                assert_eq!(r([inet6, libc::SOCK_DGRAM as u64, 0]), REFUSE);
                assert_eq!(r([inet, libc::SOCK_RAW as u64, 1]), REFUSE);
                assert_eq!(r([inet, stream, libc::IPPROTO_MPTCP as u64]), REFUSE);
                assert_eq!(
                    r([libc::AF_PACKET as u64, libc::SOCK_RAW as u64, 0]),
                    REFUSE
                );
                assert_eq!(r([libc::AF_VSOCK as u64, stream, 0]), REFUSE);
                // The high bits of the domain do not slip past.
                assert_eq!(r([(1 << 40) | inet, libc::SOCK_DGRAM as u64, 0]), REFUSE);
                assert_eq!(
                    run_args(&open, *arch, *nr, [inet, libc::SOCK_DGRAM as u64, 0]),
                    ALLOW
                );
            }
            for nr in *banned {
                assert_eq!(run_args(&walled, *arch, *nr, [1, 0, 0]), REFUSE);
            }
            for nr in *ioctls {
                assert_eq!(run(&walled, *arch, *nr, u64::from(REFUSED[0])), REFUSE);
                assert_eq!(run(&walled, *arch, *nr, libc::TIOCGWINSZ as u64), ALLOW);
            }
        }
    }
}
