"""A student's module that reports what its worker sees, reaches and may do from inside a sandbox.

Each function answers one question as the student's code would find out for itself (the
worker is the student's: in these tests that is the point).

    >>> worker = worker_for(zygote, write_module(tmp_path, PROBE))   # doctest: +SKIP  (tests.workers)
    >>> call_in(worker, "connect", 80)["value"]                      # doctest: +SKIP
    'PermissionError'
"""

PROBE = '''
import ctypes, errno, os, socket, time

def exists(paths):
    return {p: os.path.lexists(p) for p in paths}

def connect(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return "connected"
    except OSError as err:
        return type(err).__name__

def processes():
    return sorted(int(n) for n in os.listdir("/proc") if n.isdigit())

def signal_pid(pid, sig):
    try:
        os.kill(pid, sig)
        return "sent"
    except OSError as err:
        return type(err).__name__

def read_memory(pid):
    try:
        with open(f"/proc/{pid}/mem", "rb") as handle:
            handle.read(1)
        return "read"
    except OSError as err:
        return type(err).__name__

def who():
    return {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid()}

def write(path):
    try:
        with open(path, "w") as handle:
            handle.write("x")
        return "written"
    except OSError as err:
        return type(err).__name__

def syscall(name):
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
    calls = {"ptrace": lambda: libc.ptrace(16, 1, 0, 0),  # PTRACE_ATTACH to the zygote
             "keyctl": lambda: libc.syscall(keyctl, 0, 0, 0, 0, 0),
             "shmget": lambda: libc.shmget(0, 4096, 0o1666),
             "unshare": lambda: libc.unshare(0x20000000)}
    result = calls[name]()
    return "allowed" if result != -1 else errno.errorcode.get(ctypes.get_errno(), "?")

def leave_behind():
    """A process that outlives the worker, and files in every writable place."""
    for path in ("/tmp/left.txt", "/dev/shm/left"):
        try:
            with open(path, "w") as handle:
                handle.write("mine")
        except OSError:
            pass
    if os.fork() == 0:
        os.setsid()
        while True:
            time.sleep(0.1)
    return os.getpid()

def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError as err:
        return type(err).__name__

def dig(depth):
    """A working folder `depth` folders deep (more than a recursive removal can walk)."""
    for _ in range(depth):
        os.mkdir("d")
        os.chdir("d")
    return depth

def workdirs():
    """The workers' folders in /tmp, and this worker's own."""
    return sorted(n for n in os.listdir("/tmp") if n.startswith("w")), os.getcwd()

def look_around():
    found = []
    for folder in ("/tmp", "/dev/shm"):
        for root, dirs, files in os.walk(folder):
            found += [os.path.join(root, f) for f in files]
    return {"files": found, "processes": processes()}
'''
