"""The syscall filter of the official tiers, built with libseccomp (the `pyseccomp` binding).

Everything is allowed but what a worker never needs and a submission could use to reach past
its process: other processes' memory, kernel-wide state that outlives the process, new
namespaces or mounts, the network. A refused call fails with `EPERM` (a socket of a network
family with `EAFNOSUPPORT`), as if the kernel lacked it: the student's code sees an ordinary
`OSError`, and no point depends on it.

    deny = DENIED["other processes' memory"]     # ('ptrace', 'process_vm_readv', ...)
    with open("filter.bpf", "wb") as out:
        build().export_bpf(out)                  # bubblewrap loads it: --seccomp FD
    build().load()                               # or this process, before any student code

Where libseccomp cannot be loaded `available()` is False and the tier says so in its layers.
"""

from __future__ import annotations

import errno
import socket

# what is refused, by why: the names a reader checks against `man 2 syscalls`
DENIED = {
    "other processes' memory": ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"),
    "kernel keyrings": ("keyctl", "add_key", "request_key"),
    "System V and POSIX IPC (outlive the process)": ("shmget", "shmat", "msgget", "msgsnd", "semget", "semop",
                                                     "semtimedop", "mq_open", "mq_timedsend"),
    "namespaces and mounts": ("unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsmount",
                              "fsconfig", "move_mount", "open_tree", "mount_setattr"),
    "the kernel itself": ("bpf", "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module",
                          "finit_module", "delete_module", "iopl", "ioperm", "reboot", "swapon", "swapoff",
                          "acct", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime", "syslog",
                          "quotactl", "personality", "lookup_dcookie", "open_by_handle_at", "name_to_handle_at"),
}
# socket families refused: every network family (the bubblewrap tier also has no network device)
DENIED_FAMILIES = {
    "the network": (socket.AF_INET, socket.AF_INET6, getattr(socket, "AF_PACKET", 17),
                    getattr(socket, "AF_NETLINK", 16)),
}


def available() -> bool:
    """Whether libseccomp can be loaded here (Linux with libseccomp2 and pyseccomp)."""
    try:
        import pyseccomp

        pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    except Exception:  # noqa: BLE001 - not Linux, no libseccomp.so, an old binding: not available
        return False
    return True


def build():
    """The filter (a `pyseccomp.SyscallFilter`), not yet loaded: allow all, refuse `DENIED`."""
    import pyseccomp

    refused = pyseccomp.ERRNO(errno.EPERM)
    flt = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    for names in DENIED.values():
        for name in names:
            try:
                flt.add_rule(refused, name)
            except Exception:  # noqa: BLE001 - a call this architecture does not have
                pass
    for families in DENIED_FAMILIES.values():
        for family in families:
            flt.add_rule(pyseccomp.ERRNO(errno.EAFNOSUPPORT), "socket", pyseccomp.Arg(0, pyseccomp.EQ, family))
    return flt


def write_bpf(path: str) -> None:
    """The filter as a BPF program in `path`, for `bwrap --seccomp FD`."""
    with open(path, "wb") as out:
        build().export_bpf(out)


def layer_names() -> list[str]:
    """What the filter refuses, for the tier's list of layers."""
    return [*DENIED, *DENIED_FAMILIES]


__all__ = ["DENIED", "DENIED_FAMILIES", "available", "build", "write_bpf", "layer_names"]
