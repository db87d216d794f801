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
/// `offsetof(struct seccomp_data, args[1])`, its low 32 bits (little endian).
const ARG1_LOW: u32 = 16 + 8;

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
    let mut out = vec![stmt(LOAD, ARCH)];
    // Each arch block: jeq arch, ld nr, one jeq per number, ja allow.
    let blocks: usize = ARCHES.iter().map(|(_, nrs)| 3 + nrs.len()).sum();
    // Index of the `allow` return, and of the request check after it.
    let allow = 1 + blocks;
    let check = allow + 1;
    let rel = |from: usize, to: usize| u8::try_from(to - from - 1).unwrap_or(u8::MAX);
    for (arch, nrs) in ARCHES {
        let start = out.len();
        let next = start + 3 + nrs.len();
        out.push(jeq(*arch, 0, rel(start, next)));
        out.push(stmt(LOAD, NR));
        for nr in *nrs {
            let at = out.len();
            out.push(jeq(*nr, rel(at, check), 0));
        }
        let at = out.len();
        out.push(stmt(
            libc::BPF_JMP | libc::BPF_JA,
            u32::try_from(allow - at - 1).unwrap_or(0),
        ));
    }
    out.push(stmt(RET, ALLOW));
    out.push(stmt(LOAD, ARG1_LOW));
    let refuse = out.len() + REFUSED.len() + 1;
    for request in REFUSED {
        let at = out.len();
        out.push(jeq(request, rel(at, refuse), 0));
    }
    out.push(stmt(RET, ALLOW));
    out.push(stmt(RET, REFUSE));
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
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        data[24..32].copy_from_slice(&arg1.to_le_bytes());
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
}
