/* Isolated calls: the helper runs in a fork()ed copy of the interpreter.
 *
 * Why fork: audit hooks and AST allowlists cannot stop setattr, list.append,
 * a mutating __repr__ or a loop inside C code (pybridge/README.md, "Why
 * a copy"). A copy of the process sees the same
 * objects, and whatever it changes dies with it; a deadline is a SIGKILL.
 *
 * The child never returns into Go (the Go runtime's other threads do not
 * exist in it): it runs only C and Python, writes its result to a pipe and
 * _exit()s. Before any Python runs in it, it drops the terminal and every
 * inherited descriptor, makes shared writable mappings read-only, limits
 * its resources and installs a seccomp filter; a C audit hook, installed
 * once in the parent and armed only in the child, refuses files, processes,
 * sockets, ctypes and imports with a clear Python exception.
 *
 * A fork costs time in proportion to the session's memory (page tables:
 * 15-20 ms for 1 GiB), so a copy can also be made ahead of time, while the
 * session is idle (pyb_prepare_isolated): a "ready copy" that installs all
 * the guards and then waits for one request on a socket. The call then
 * only sends the request and reads the result. Go decides when a ready
 * copy is still the session as it is (isolate.go, readyCopy). */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE 1
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <termios.h>
#endif

#include "bridge.h"
#include "isolate.h"

/* The child's end of the result pipe after it rearranges its descriptors. */
#define RESULT_FD 3

/* Extra address space a child may map beyond the parent's: an expression
 * that allocates without bound gets MemoryError instead of the machine's
 * memory. */
#define CHILD_AS_BUDGET ((size_t)1 << 30)

static volatile int guard_armed;   /* set only in a child, never in the parent */
static PyObject *refused_type;     /* pyaichat.Refused(PermissionError) */
static int hook_installed;

/* ---- errors --------------------------------------------------------- */

/* An IsolationError: what failed, and the errno it failed with. */
static void iso_errno(pyb_error *err, const char *what, int errnum) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s: %s", what, strerror(errnum));
    pyb_error_set(err, "IsolationError", buf);
}

/* A pending Python exception in the parent as type + str(value); the
 * helper's own lookups fail this way (missing module or function). No
 * traceback: rendering one could change the session (linecache). */
static void iso_fetch(pyb_error *err) { pyb_error_fetch(err, 0); }

/* ---- the audit guard ------------------------------------------------ */

/* Audit events refused in the child, by prefix. Reading the session is
 * what capabilities are for; files, processes, the network, ctypes (which
 * could write anywhere in memory, shared mappings included), signals,
 * threads, terminal input and imports are not. The seccomp filter stops
 * the same things at the system-call level; this gives a clear error. */
static const char *const refused_events[] = {
    "open", "os.", "subprocess.", "_posixsubprocess", "socket.", "ctypes.",
    "import", "shutil.", "pty.", "tempfile.", "glob.", "mmap.", "fcntl.",
    "sqlite3.", "urllib.", "http.", "ftplib.", "smtplib.", "poplib.",
    "imaplib.", "nntplib.", "telnetlib.", "webbrowser.", "syslog.",
    "resource.", "_thread.start_new_thread", "signal.", "builtins.input",
    "pdb.", "sys.setopencodehook", "cpython.run_", "winreg.", "msvcrt.",
    /* A code object built by hand (code.replace, marshal) can read any
     * address through an out-of-range constant or name index. */
    "code.__new__", "marshal.load",
    NULL,
};

static int audit_guard(const char *event, PyObject *args, void *data) {
    (void)data;
    if (!guard_armed) return 0;
    for (const char *const *p = refused_events; *p != NULL; p++) {
        if (strncmp(event, *p, strlen(*p)) != 0) continue;
        PyObject *first = (args != NULL && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0)
                              ? PyTuple_GET_ITEM(args, 0) : NULL;
        /* Only exact builtin values are shown: formatting anything else
         * could run user code inside the hook. */
        if (first != NULL && (PyUnicode_CheckExact(first) || PyBytes_CheckExact(first) ||
                              PyLong_CheckExact(first)))
            PyErr_Format(refused_type,
                         "%s(%.200R) refused: capabilities are read-only and may not use "
                         "files, processes, the network, signals, threads or imports",
                         event, first);
        else
            PyErr_Format(refused_type,
                         "%s refused: capabilities are read-only and may not use "
                         "files, processes, the network, signals, threads or imports",
                         event);
        return -1;
    }
    return 0;
}

PyObject *pyb_refused_type(void) {
    if (refused_type == NULL)
        refused_type = PyErr_NewExceptionWithDoc(
            "pyaichat.Refused",
            "A capability tried something it may not do (pyaichat's read-only policy).",
            PyExc_PermissionError, NULL);
    return refused_type;
}

/* Installs the audit hook before the interpreter starts, so that no
 * audit hook of the user's (sitecustomize, PYTHONSTARTUP, the session)
 * is ever called for it. Hooks cannot be removed, so this one stays for
 * the life of the process; in the parent it returns at once. */
void pyb_install_audit_guard(void) {
    if (PySys_AddAuditHook(audit_guard, NULL) == 0) hook_installed = 1;
}

/* Call with the GIL held, in the parent. */
static int install_guard(pyb_error *err) {
    if (pyb_refused_type() == NULL) {
        iso_fetch(err);
        return -1;
    }
    if (hook_installed) return 0;
    if (PySys_AddAuditHook(audit_guard, NULL) < 0) {
        iso_fetch(err);
        return -1;
    }
    hook_installed = 1;
    return 0;
}

/* ---- what the copy may not read ------------------------------------ */

/* The address range of Go's heap (pyb_set_private_range): the API key,
 * the request bodies and the typed lines live there. Only C and Python
 * run in a copy, never Go, so the copy unmaps it (unmap_private_range)
 * before any Python runs: no expression can read what pyaichat itself
 * holds, whatever route to raw memory it finds. */
static uintptr_t private_lo, private_hi;

void pyb_set_private_range(uintptr_t lo, uintptr_t hi) {
    private_lo = lo;
    private_hi = hi;
}

/* Why a foreign call is refused in the copy. */
static const char foreign_call_refused[] =
    "calling a C function through ctypes is refused: capabilities are read-only "
    "and may not read or write raw memory";

static PyObject *refuse_foreign_call(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    (void)args;
    (void)kw;
    PyErr_SetString(refused_type, foreign_call_refused);
    return NULL;
}

/* Makes t and every subclass of t refuse to be called. A subclass copies
 * its base's call slot when it is made, so each one is patched; the slot
 * wrapper in the base's dict (t.__call__(...)) is removed too. */
static void refuse_calls(PyTypeObject *t, int depth) {
    if (depth > 64) return;
    t->tp_call = refuse_foreign_call;
    if (t->tp_dict != NULL && PyDict_GetItemString(t->tp_dict, "__call__") != NULL &&
        PyDict_DelItemString(t->tp_dict, "__call__") != 0)
        PyErr_Clear();
    PyType_Modified(t);
    PyObject *subs = PyObject_CallMethod((PyObject *)t, "__subclasses__", NULL);
    if (subs == NULL) {
        PyErr_Clear();
        return;
    }
    for (Py_ssize_t i = 0; PyList_Check(subs) && i < PyList_GET_SIZE(subs); i++) {
        PyObject *sub = PyList_GET_ITEM(subs, i);
        if (PyType_Check(sub)) refuse_calls((PyTypeObject *)sub, depth + 1);
    }
    Py_DECREF(subs);
}

/* ctypes calls C functions without an audit event (ctypes.memmove,
 * memset, cast and string_at are all foreign function objects): in the
 * copy, every foreign function object refuses to be called. Only a
 * ctypes the session has loaded matters: the copy may not import. */
static void refuse_foreign_calls(void) {
    PyObject *modules = PyImport_GetModuleDict();
    PyObject *mod = modules != NULL ? PyDict_GetItemString(modules, "_ctypes") : NULL;
    if (mod == NULL || !PyModule_CheckExact(mod)) {
        PyErr_Clear();
        return;
    }
    PyObject *base = PyDict_GetItemString(PyModule_GetDict(mod), "CFuncPtr");
    if (base != NULL && PyType_Check(base)) refuse_calls((PyTypeObject *)base, 0);
    PyErr_Clear();
}

/* _pyaichat.scrub_environ(names, dicts), in a copy only: the values of
 * the environment variables named in names (a set of str) are zeroed in
 * the C environment and, in each dict of dicts (os.environ's data,
 * posix.environ), zeroed in place and replaced by a marker, so that no
 * expression, however it transforms them, finds them. */
PyObject *pyb_scrub_environ(PyObject *names, PyObject *dicts) {
    if (!guard_armed) {
        PyErr_SetString(PyExc_RuntimeError, "scrub_environ runs only in an isolated copy");
        return NULL;
    }
    if (!PyAnySet_CheckExact(names) || !PyTuple_CheckExact(dicts)) {
        PyErr_SetString(PyExc_TypeError, "scrub_environ(set of names, tuple of dicts)");
        return NULL;
    }
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        char *eq = strchr(*e, '=');
        if (eq == NULL) continue;
        PyObject *name = PyUnicode_DecodeFSDefaultAndSize(*e, eq - *e);
        if (name == NULL) return NULL;
        int hit = PySet_Contains(names, name);
        Py_DECREF(name);
        if (hit < 0) return NULL;
        if (hit) memset(eq + 1, 0, strlen(eq + 1));
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dicts); i++) {
        PyObject *d = PyTuple_GET_ITEM(dicts, i);
        if (!PyDict_CheckExact(d)) continue;
        /* On POSIX, os.environ's data is posix.environ itself. */
        int seen = 0;
        for (Py_ssize_t j = 0; j < i; j++) seen |= PyTuple_GET_ITEM(dicts, j) == d;
        if (seen) continue;
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(d, &pos, &key, &value)) {
            PyObject *name = PyBytes_CheckExact(key) ? PyUnicode_DecodeFSDefaultAndSize(
                                                           PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key))
                             : PyUnicode_CheckExact(key) ? Py_NewRef(key)
                                                         : NULL;
            if (name == NULL) {
                PyErr_Clear();
                continue;
            }
            int hit = PySet_Contains(names, name);
            Py_DECREF(name);
            if (hit < 0) return NULL;
            if (!hit) continue;
            Py_ssize_t n = PyBytes_CheckExact(value) ? PyBytes_GET_SIZE(value)
                           : PyUnicode_CheckExact(value) ? PyUnicode_GET_LENGTH(value)
                                                         : -1;
            /* One-byte bytes objects are shared singletons: not zeroed. */
            if (PyBytes_CheckExact(value) && n > 1) memset(PyBytes_AS_STRING(value), 0, (size_t)n);
            char marker[96];
            snprintf(marker, sizeof marker, "<redacted: secret environment value, %zd chars>",
                     n < 0 ? (Py_ssize_t)0 : n);
            PyObject *m = PyBytes_CheckExact(key) ? PyBytes_FromString(marker)
                                                  : PyUnicode_FromString(marker);
            if (m == NULL) return NULL;
            /* Replacing the value of a present key never resizes the
             * dict, so the iteration stays valid. */
            int rc = PyDict_SetItem(d, key, m);
            Py_DECREF(m);
            if (rc != 0) return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* ---- the child ------------------------------------------------------ */

static int write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Input read by user code in the child must never reach Go's line editor
 * (Go does not exist here): stdin is at end of file. */
static char *child_readline(FILE *in, FILE *out, const char *prompt) {
    (void)in;
    (void)out;
    (void)prompt;
    char *res = PyMem_RawMalloc(1);
    if (res != NULL) res[0] = '\0';
    return res;
}

static void close_from(int lowfd) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (int fd = lowfd; fd < max; fd++) close(fd);
}

#ifdef __linux__
/* Calls fn(ctx, start, end, perms, path) for each line of /proc/self/maps
 * (path is "" for an anonymous mapping). Returns -1 if the maps cannot be
 * read. It reads into a static buffer: the child runs it before any
 * Python, on its only thread. */
typedef void (*mapping_fn)(void *ctx, unsigned long start, unsigned long end,
                           const char *perms, const char *path);

static int for_each_mapping(mapping_fn fn, void *ctx) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    static char buf[1 << 16];
    size_t have = 0;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0 && have == 0) break;
        if (r > 0) have += (size_t)r;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL) {
            *nl = '\0';
            unsigned long start, end;
            char perms[5];
            int path_at = 0;
            if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, perms, &path_at) >= 3)
                fn(ctx, start, end, perms, path_at > 0 ? line + path_at : "");
            line = nl + 1;
        }
        size_t rest = have - (size_t)(line - buf);
        if (r <= 0 || rest == sizeof buf - 1) break; /* end, or a line too long */
        memmove(buf, line, rest);
        have = rest;
    }
    close(fd);
    return 0;
}

/* A writable MAP_SHARED mapping (multiprocessing shared memory, an mmap of
 * a file opened for writing) is the one way the copy could change memory
 * that the session or the disk sees: make each one read-only, so that a
 * write crashes the child instead. Counts the shared mappings that could
 * be made writable (those that were, and read-only ones whose file was
 * opened for writing), for which the seccomp filter then refuses
 * mprotect. */
static void protect_shared(void *ctx, unsigned long start, unsigned long end,
                           const char *perms, const char *path) {
    (void)path;
    if (perms[3] != 's') return;
    int keep = (perms[0] == 'r' || perms[1] == 'w' ? PROT_READ : 0) | (perms[2] == 'x' ? PROT_EXEC : 0);
    /* A read-only one (glibc maps its gconv cache so) can be made
     * writable only if its file was opened for writing: try, and put it
     * back. */
    if (perms[1] == 'w' || mprotect((void *)start, end - start, keep | PROT_WRITE) == 0)
        (*(int *)ctx)++;
    mprotect((void *)start, end - start, keep);
}

/* Returns the count of protect_shared, or -1 if the maps cannot be read. */
static int protect_shared_mappings(void) {
    int writable = 0;
    return for_each_mapping(protect_shared, &writable) == 0 ? writable : -1;
}

/* The anonymous private mappings inside the private range that hold none
 * of the probe addresses (memory C and Python use: the stack, malloc,
 * pymalloc, the interpreter's state), collected before any is unmapped. */
#define MAX_PRIVATE_MAPPINGS 512
struct private_mappings {
    const uintptr_t *probes;
    int nprobes;
    int n;
    unsigned long start[MAX_PRIVATE_MAPPINGS], end[MAX_PRIVATE_MAPPINGS];
};

static void collect_private(void *ctx, unsigned long start, unsigned long end,
                            const char *perms, const char *path) {
    struct private_mappings *m = ctx;
    if (perms[3] != 'p' || path[0] != '\0' || start < private_lo || end > private_hi) return;
    for (int i = 0; i < m->nprobes; i++)
        if (m->probes[i] >= start && m->probes[i] < end) return;
    if (m->n < MAX_PRIVATE_MAPPINGS) {
        m->start[m->n] = start;
        m->end[m->n] = end;
        m->n++;
    }
}

static void unmap_private_range(void) {
    if (private_hi <= private_lo) return;
    int here;
    void *raw = malloc(1);
    void *mem = PyMem_Malloc(1);
    void *obj = PyObject_Malloc(1);
    const uintptr_t probes[] = {
        (uintptr_t)&here, (uintptr_t)raw, (uintptr_t)mem, (uintptr_t)obj,
        (uintptr_t)PyThreadState_Get(), (uintptr_t)PyImport_GetModuleDict(),
    };
    static struct private_mappings m;
    m.probes = probes;
    m.nprobes = (int)(sizeof probes / sizeof probes[0]);
    m.n = 0;
    if (for_each_mapping(collect_private, &m) == 0)
        for (int i = 0; i < m.n; i++) munmap((void *)m.start[i], m.end[i] - m.start[i]);
    free(raw);
    PyMem_Free(mem);
    PyObject_Free(obj);
}

static size_t current_vm_size(void) {
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[128];
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0) return 0;
    buf[r] = '\0';
    return (size_t)strtoull(buf, NULL, 10) * (size_t)sysconf(_SC_PAGESIZE);
}

#if defined(__x86_64__)
#define ISO_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ISO_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef ISO_AUDIT_ARCH
#define ISO_MAX_FILTER 256
struct filter_buf {
    struct sock_filter f[ISO_MAX_FILTER];
    unsigned short n;
};

static void emit(struct filter_buf *b, struct sock_filter s) {
    if (b->n < ISO_MAX_FILTER) b->f[b->n++] = s;
}

#define LOAD_NR() emit(b, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
                                                        offsetof(struct seccomp_data, nr)))
#define LOAD_ARG_LO(i) emit(b, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
                                                             offsetof(struct seccomp_data, args[i])))
#define LOAD_ARG_HI(i) emit(b, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
                                                             offsetof(struct seccomp_data, args[i]) + 4))
#define RET(v) emit(b, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (v)))
#define IF_EQ_ELSE_SKIP(k, skip) emit(b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), 0, (skip)))
#define ALLOW SECCOMP_RET_ALLOW
#define DENY (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

/* if (nr == sys) return ALLOW; */
static void allow(struct filter_buf *b, long sys) {
    IF_EQ_ELSE_SKIP((unsigned)sys, 1);
    RET(ALLOW);
}

/* if (nr == sys) return (low word of arg i is one of vals) ? ALLOW : DENY.
 * The argument's high word must be zero too (a 64-bit fd or request). */
static void allow_if_arg(struct filter_buf *b, long sys, int i, const unsigned *vals, int nvals) {
    IF_EQ_ELSE_SKIP((unsigned)sys, (unsigned char)(4 + nvals * 2));
    LOAD_ARG_HI(i);
    IF_EQ_ELSE_SKIP(0, (unsigned char)(1 + nvals * 2));
    LOAD_ARG_LO(i);
    for (int k = 0; k < nvals; k++) {
        IF_EQ_ELSE_SKIP(vals[k], 1);
        RET(ALLOW);
    }
    RET(DENY);
}

/* if (nr == sys) return (arg i has none of the bits in mask) ? ALLOW : DENY.
 * A high word that is not zero is denied too (the kernel would refuse
 * such flags anyway). */
static void allow_if_arg_clear(struct filter_buf *b, long sys, int i, unsigned mask) {
    IF_EQ_ELSE_SKIP((unsigned)sys, 6);
    LOAD_ARG_HI(i);
    IF_EQ_ELSE_SKIP(0, 3);
    LOAD_ARG_LO(i);
    emit(b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 1, 0));
    RET(ALLOW);
    RET(DENY);
}

/* An allowlist: what evaluating Python expressions needs (memory, time,
 * signals, futexes, reading descriptors it already has, stat), and nothing
 * that opens, creates, writes (except the result pipe and the /dev/null
 * stdout/stderr), spawns, connects or signals another process. */
static int install_seccomp(pid_t self, int shared_writable) {
    static struct filter_buf fb;
    struct filter_buf *b = &fb;
    b->n = 0;
    emit(b, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    emit(b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ISO_AUDIT_ARCH, 1, 0));
    RET(SECCOMP_RET_KILL_PROCESS);
    LOAD_NR();
#ifdef __x86_64__
    /* x32 system calls alias the 64-bit ones with this bit set. */
    emit(b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));
    RET(DENY);
#endif
    static const long plain[] = {
        SYS_read, SYS_readv, SYS_pread64, SYS_close, SYS_fstat, SYS_newfstatat,
        SYS_lseek, SYS_mmap, SYS_munmap, SYS_brk,
        SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_sigaltstack,
        SYS_futex, SYS_clock_gettime, SYS_clock_getres, SYS_clock_nanosleep,
        SYS_nanosleep, SYS_gettimeofday, SYS_getpid, SYS_gettid, SYS_getppid,
        SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_getrandom,
        SYS_exit, SYS_exit_group, SYS_ppoll, SYS_pselect6, SYS_sched_yield,
        SYS_sched_getaffinity, SYS_getcwd, SYS_uname, SYS_getrusage, SYS_times,
        SYS_sysinfo, SYS_restart_syscall, SYS_faccessat, SYS_readlinkat,
#ifdef SYS_statx
        SYS_statx,
#endif
#ifdef SYS_faccessat2
        SYS_faccessat2,
#endif
#ifdef __x86_64__
        SYS_stat, SYS_lstat, SYS_poll, SYS_select, SYS_time, SYS_access, SYS_readlink,
#endif
    };
    for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++) allow(b, plain[k]);

    /* Shared mappings were made read-only (protect_shared_mappings), but
     * ctypes, once the session has loaded it, calls any C function
     * without an audit event: mprotect could make them writable again,
     * and a write would reach the session's memory or the file on disk.
     * So while there are such mappings no mapping may gain write or
     * execute permission (new memory comes from mmap, writable from the
     * start). Only then: glibc grows a thread's non-main malloc arena
     * with mprotect, and the interpreter's thread may be on one, where
     * each allocation would then fall back to mmap, 20 times slower.
     * Without shared mappings that could be written, mprotect only
     * changes the copy's private memory. (pkey_mprotect is never
     * allowed.) */
    if (shared_writable != 0)
        allow_if_arg_clear(b, SYS_mprotect, 2, PROT_WRITE | PROT_EXEC);
    else
        allow(b, SYS_mprotect);
    LOAD_NR();
    /* mremap with an old size of 0 makes a second mapping of the same
     * shared pages, which would not be read-only; resizing and moving
     * keep a mapping's protection. */
    IF_EQ_ELSE_SKIP((unsigned)SYS_mremap, 6);
    LOAD_ARG_HI(1);
    IF_EQ_ELSE_SKIP(0, 3);
    LOAD_ARG_LO(1);
    IF_EQ_ELSE_SKIP(0, 1);
    RET(DENY);
    RET(ALLOW);
    LOAD_NR();
    static const unsigned out_fds[] = {1, 2, RESULT_FD};
    allow_if_arg(b, SYS_write, 0, out_fds, 3);
    LOAD_NR();
    allow_if_arg(b, SYS_writev, 0, out_fds, 3);
    LOAD_NR();
    /* isatty() and terminal-size queries only; never TIOCSTI and friends. */
    static const unsigned ioctls[] = {TCGETS, TIOCGWINSZ, FIONREAD};
    allow_if_arg(b, SYS_ioctl, 1, ioctls, 3);
    LOAD_NR();
    static const unsigned fcntls[] = {F_GETFD, F_GETFL};
    allow_if_arg(b, SYS_fcntl, 1, fcntls, 2);
    LOAD_NR();
    /* MADV_REMOVE would punch a hole in shared memory; malloc's advice is fine. */
    static const unsigned advice[] = {MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL,
                                      MADV_WILLNEED, MADV_DONTNEED, MADV_FREE,
                                      MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTDUMP};
    allow_if_arg(b, SYS_madvise, 2, advice, 9);
    LOAD_NR();
    /* abort() signals itself; no other process may be signalled. */
    unsigned me = (unsigned)self;
    allow_if_arg(b, SYS_kill, 0, &me, 1);
    LOAD_NR();
    allow_if_arg(b, SYS_tgkill, 0, &me, 1);
    LOAD_NR();
    allow_if_arg(b, SYS_tkill, 0, &me, 1);
    LOAD_NR();
    /* getrlimit (prlimit64 with no new limit); setting limits is refused. */
    static const unsigned zero[] = {0};
    allow_if_arg(b, SYS_prlimit64, 2, zero, 1);
    RET(DENY);
    if (b->n >= ISO_MAX_FILTER) return -1;

    struct sock_fprog prog = {.len = b->n, .filter = b->f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return -1;
    return 0;
}
#else
static int install_seccomp(pid_t self, int shared_writable) {
    (void)self;
    (void)shared_writable;
    return -1;
}
#endif /* ISO_AUDIT_ARCH */
#endif /* __linux__ */

/* Makes the forked child safe to run user code in: no Go signal handlers,
 * no terminal, no descriptors but /dev/null and chan_fd (moved to
 * RESULT_FD), resource limits, read-only shared mappings, the seccomp
 * filter and the armed audit hook; then re-creates the GIL and thread
 * bookkeeping for the only thread that exists. Runs only C, and Python from PyOS_AfterFork_Child on. */
static void child_guard(int chan_fd, pid_t parent, long long cpu_seconds) {
    /* Go's signal handlers would run Go code: default dispositions, no
     * blocked signals. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++) {
        if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    /* A new session has no controlling terminal: /dev/tty cannot be opened
     * and the terminal's Ctrl-C reaches only the parent. */
    setsid();
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    prctl(PR_SET_DUMPABLE, 0); /* no core file on a crash */
#endif

    /* Descriptors: /dev/null for stdio, the channel at RESULT_FD, nothing
     * else (no terminal, no sockets, no files the session has open). */
    int w = fcntl(chan_fd, F_DUPFD, 10);
    int null = open("/dev/null", O_RDWR);
    if (w < 0 || null < 0) _exit(126);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (dup2(w, RESULT_FD) != RESULT_FD) _exit(126);

    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = 0;
    setrlimit(RLIMIT_CORE, &rl);
    setrlimit(RLIMIT_FSIZE, &rl); /* no file may grow */
    setrlimit(RLIMIT_NPROC, &rl); /* no process may be created (non-root) */
    /* A backstop in case the parent cannot kill the child at the deadline. */
    rl.rlim_cur = rl.rlim_max = (rlim_t)cpu_seconds;
    setrlimit(RLIMIT_CPU, &rl);

#ifdef __linux__
    size_t vm = current_vm_size();
    if (vm > 0) {
        rl.rlim_cur = rl.rlim_max = vm + CHILD_AS_BUDGET;
        setrlimit(RLIMIT_AS, &rl);
    }
    int shared_writable = protect_shared_mappings();
    unmap_private_range();
    close_from(RESULT_FD + 1);
    /* Without it (an old kernel, a container that forbids filters) the
     * other guards still hold; the parent asks the kernel (copy_guards). */
    (void)install_seccomp(getpid(), shared_writable);
#else
    close_from(RESULT_FD + 1);
#endif

    PyOS_ReadlineFunctionPointer = child_readline;
    guard_armed = 1;
    /* We hold the GIL (taken before the fork); this re-creates it and the
     * thread bookkeeping for the only thread that exists now. */
    PyOS_AfterFork_Child();
    refuse_foreign_calls();
}

/* Calls fn(arg) (or reports why it cannot: fn is NULL) and writes the
 * result to RESULT_FD; never returns. */
static void child_answer(PyObject *fn, PyObject *arg, const char *no_text)
    __attribute__((noreturn));

static void child_answer(PyObject *fn, PyObject *arg, const char *no_text) {
    PyObject *res = fn != NULL ? PyObject_CallOneArg(fn, arg) : NULL;
    const char *data = NULL;
    Py_ssize_t n = 0;
    PyObject *bytes = NULL;
    if (res != NULL && PyUnicode_Check(res)) {
        bytes = PyUnicode_AsEncodedString(res, "utf-8", "backslashreplace");
        if (bytes != NULL) {
            data = PyBytes_AS_STRING(bytes);
            n = PyBytes_GET_SIZE(bytes);
        }
    }
    if (data == NULL) {
        PyErr_Clear();
        data = no_text;
        n = (Py_ssize_t)strlen(data);
    }
    /* Header: a byte the parent ignores (it asks the kernel which guards
     * the copy had), and the payload length, so that the parent can tell
     * a complete result from a child that died while writing. */
    unsigned char hdr[9];
    hdr[0] = 0;
    uint64_t len = (uint64_t)n;
    for (int i = 0; i < 8; i++) hdr[1 + i] = (unsigned char)(len >> (8 * i));
    if (write_all(RESULT_FD, (const char *)hdr, sizeof hdr) != 0 ||
        write_all(RESULT_FD, data, (size_t)n) != 0)
        _exit(124);
    _exit(0);
}

static const char no_text_result[] =
    "{\"error\": {\"type\": \"InternalError\", \"message\": "
    "\"the isolated helper did not return text\"}}";

/* An on-demand copy: runs in the forked child; never returns. */
static void child_main(PyObject *fn, PyObject *arg, int wfd, pid_t parent, long long timeout_ms)
    __attribute__((noreturn));

static void child_main(PyObject *fn, PyObject *arg, int wfd, pid_t parent, long long timeout_ms) {
    child_guard(wfd, parent, timeout_ms / 1000 + 2);
    child_answer(fn, arg, no_text_result);
}

/* ---- the ready copy ------------------------------------------------- */

/* A ready copy is forked while the session is idle and waits, guarded,
 * for one request on a socket (RESULT_FD in the child), which also
 * carries the result back. The request is a 16-byte header (module and
 * function name lengths as u32, the argument's length as u64, little
 * endian) followed by the three strings. */
#define REQ_HDR 16
#define REQ_NAME_MAX 4096

static int read_full(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static uint64_t get_le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put_le(unsigned char *p, int n, uint64_t v) {
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void ready_child_main(int fd, pid_t parent) __attribute__((noreturn));

static void ready_child_main(int fd, pid_t parent) {
    /* Every guard is in place before the copy waits: all it can do until
     * the request comes is read it. */
    child_guard(fd, parent, PYB_READY_CPU_BACKSTOP);
    unsigned char hdr[REQ_HDR];
    /* End of file: the session discarded this copy (or died). */
    if (read_full(RESULT_FD, hdr, sizeof hdr) != 0) _exit(0);
    uint64_t mlen = get_le(hdr, 4), flen = get_le(hdr + 4, 4), alen = get_le(hdr + 8, 8);
    if (mlen > REQ_NAME_MAX || flen > REQ_NAME_MAX || alen > ((uint64_t)1 << 40)) _exit(123);
    char *buf = malloc((size_t)(mlen + flen + alen + 2));
    if (buf == NULL) _exit(123);
    char *mname = buf, *fname = buf + mlen + 1, *arg = buf + mlen + flen + 2;
    if (read_full(RESULT_FD, mname, (size_t)mlen) != 0 ||
        read_full(RESULT_FD, fname, (size_t)flen) != 0 ||
        read_full(RESULT_FD, arg, (size_t)alen) != 0)
        _exit(0);
    mname[mlen] = '\0';
    fname[flen] = '\0';

    /* The parent looked the helper up; the copy has the same helpers
     * (loading one discards the copy), so this imports nothing. */
    PyObject *fn = NULL, *py_arg = NULL;
    PyObject *mod = pyb_helper(mname);
    if (mod != NULL) {
        fn = PyObject_GetAttrString(mod, fname);
        Py_DECREF(mod);
    }
    if (fn != NULL) {
        py_arg = PyUnicode_DecodeUTF8(arg, (Py_ssize_t)alen, "surrogateescape");
        if (py_arg == NULL) Py_CLEAR(fn);
    }
    child_answer(fn, py_arg,
                 fn != NULL ? no_text_result
                            : "{\"error\": {\"type\": \"InternalError\", \"message\": "
                              "\"the ready copy of the session has no such helper\"}}");
}

/* Python threads other than the calling one (GIL held). While there are
 * none, no Python code runs between pybridge's jobs, so a copy forked
 * while idle stays identical to the session until the next job. */
static int other_python_threads(void) {
    PyThreadState *me = PyThreadState_Get();
    int n = 0;
    for (PyThreadState *t = PyInterpreterState_ThreadHead(PyThreadState_GetInterpreter(me));
         t != NULL; t = PyThreadState_Next(t))
        if (t != me) n++;
    return n;
}

/* Calls _imp.<name>() (GIL held): 0, or -1 with a Python error set. */
static int import_lock(const char *name) {
    PyObject *imp = PyImport_ImportModule("_imp");
    if (imp == NULL) return -1;
    PyObject *r = PyObject_CallMethod(imp, name, NULL);
    Py_DECREF(imp);
    Py_XDECREF(r);
    return r != NULL ? 0 : -1;
}

/* Forks a copy of the session (GIL held): returns the child's pid in the
 * parent, 0 in the child, or -1 with *err set.
 *
 * Not PyOS_BeforeFork/AfterFork_Parent: those run the user's
 * os.register_at_fork callbacks in the session, which a read-only call
 * must not do. They only add the import lock around the fork, which we
 * take ourselves so that no import is half done in the copy. The child
 * still calls PyOS_AfterFork_Child, under the guards (child_guard). */
static pid_t fork_session(pyb_error *err) {
    /* _imp.acquire_lock() is the import lock PyOS_BeforeFork takes, on
     * every version (its C function is private, with another signature in
     * 3.12 and not exported in 3.13); PyOS_AfterFork_Child resets it in
     * the copy. */
    if (import_lock("acquire_lock") != 0) {
        iso_fetch(err);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) return 0;
    int fork_errno = errno;
    if (import_lock("release_lock") != 0) PyErr_Clear();
    if (pid < 0) iso_errno(err, "fork failed", fork_errno);
    return pid;
}

int pyb_prepare_isolated(int *pid_out, int *fd_out, pyb_error *err) {
    *pid_out = 0;
    *fd_out = -1;
    PyGILState_STATE gil = PyGILState_Ensure();
    if (install_guard(err) != 0) {
        PyGILState_Release(gil);
        return PYB_ISO_ERROR;
    }
    if (other_python_threads() > 0) {
        PyGILState_Release(gil);
        return PYB_ISO_SKIPPED;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        iso_errno(err, "cannot create the request socket", errno);
        PyGILState_Release(gil);
        return PYB_ISO_ERROR;
    }
    pid_t parent = getpid();
    pid_t pid = fork_session(err);
    if (pid == 0) {
        close(sv[0]);
        ready_child_main(sv[1], parent);
    }
    PyGILState_Release(gil);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return PYB_ISO_ERROR;
    }
    /* Non-blocking: a request is sent under the call's deadline. */
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    *pid_out = pid;
    *fd_out = sv[0];
    return 0;
}

/* ---- the parent ----------------------------------------------------- */

/* The PYB_GUARD_* flags of a copy, as the kernel reports them: user code
 * runs in the copy and can write any result it likes, guard flags
 * included, so they are not taken from it. Call before the copy is
 * reaped (a zombie still reports its filter). */
static int copy_guards(pid_t pid) {
    int guards = 0;
#ifdef __linux__
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *line = strstr(buf, "\nSeccomp:");
    if (line != NULL && strtol(line + strlen("\nSeccomp:"), NULL, 10) == SECCOMP_MODE_FILTER)
        guards |= PYB_GUARD_SECCOMP;
#else
    (void)pid;
#endif
    return guards;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void describe_exit(int status, pyb_error *err) {
    char buf[256];
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        snprintf(buf, sizeof buf,
                 "the isolated evaluation crashed (signal %d, %s) before it produced a "
                 "result; the session is unchanged",
                 sig, strsignal(sig));
    } else if (WIFEXITED(status)) {
        snprintf(buf, sizeof buf,
                 "the isolated evaluation exited with status %d before it produced a "
                 "result; the session is unchanged",
                 WEXITSTATUS(status));
    } else {
        snprintf(buf, sizeof buf, "the isolated evaluation ended without a result");
    }
    pyb_error_set(err, "Crashed", buf);
}

/* Sends a request to a ready copy; GIL released. Returns 0 once it is sent
 * or the copy is gone (its result then never comes: read_result sees end
 * of file), PYB_ISO_TIMEOUT or PYB_ISO_CANCELED. */
static int send_request(int fd, const char *module, const char *func, const char *arg,
                        size_t arg_len, int cancel_fd, long long deadline) {
    size_t mlen = strlen(module), flen = strlen(func);
    size_t total = REQ_HDR + mlen + flen + arg_len;
    char *msg = malloc(total);
    if (msg == NULL) return 0;
    put_le((unsigned char *)msg, 4, mlen);
    put_le((unsigned char *)msg + 4, 4, flen);
    put_le((unsigned char *)msg + 8, 8, arg_len);
    memcpy(msg + REQ_HDR, module, mlen);
    memcpy(msg + REQ_HDR + mlen, func, flen);
    memcpy(msg + REQ_HDR + mlen + flen, arg, arg_len);
    size_t off = 0;
    int rc = 0;
    while (off < total) {
        /* MSG_NOSIGNAL: a copy that died is EPIPE here, not SIGPIPE. */
        ssize_t n = send(fd, msg + off, total - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break; /* gone */
        long long left = deadline - now_ms();
        if (left <= 0) {
            rc = PYB_ISO_TIMEOUT;
            break;
        }
        struct pollfd p[2] = {{.fd = fd, .events = POLLOUT}, {.fd = cancel_fd, .events = POLLIN}};
        int np = cancel_fd >= 0 ? 2 : 1;
        int r = poll(p, (nfds_t)np, left > 1000000 ? 1000000 : (int)left);
        if (r < 0 && errno != EINTR) break;
        if (r > 0 && np == 2 && p[1].revents != 0) {
            rc = PYB_ISO_CANCELED;
            break;
        }
    }
    free(msg);
    return rc;
}

/* A result longer than this is not read: the helpers bound their results
 * far below it, but user code runs in the copy and could replace them, and
 * a copy can write gigabytes into the pipe before its deadline. */
#define MAX_RESULT ((uint64_t)64 << 20)
#define ISO_TOO_BIG (-100) /* read_result's own outcome */

/* Waits for the pipe to reach EOF, the deadline or cancel_fd; GIL released.
 * Returns 0 with the bytes read, PYB_ISO_TIMEOUT, PYB_ISO_CANCELED or
 * ISO_TOO_BIG (the header announces more than MAX_RESULT). */
static int read_result(int rfd, int cancel_fd, long long deadline, char **buf, size_t *have) {
    size_t cap = 0;
    *buf = NULL;
    *have = 0;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) return PYB_ISO_TIMEOUT;
        struct pollfd p[2] = {{.fd = rfd, .events = POLLIN}, {.fd = cancel_fd, .events = POLLIN}};
        int np = cancel_fd >= 0 ? 2 : 1;
        int r = poll(p, (nfds_t)np, left > 1000000 ? 1000000 : (int)left);
        if (r < 0) {
            if (errno == EINTR) continue;
            return PYB_ISO_TIMEOUT;
        }
        if (np == 2 && p[1].revents != 0) return PYB_ISO_CANCELED;
        if (p[0].revents == 0) continue;
        if (*have + 65536 > cap) {
            size_t ncap = cap ? cap * 2 : 65536 + 16;
            char *nb = realloc(*buf, ncap);
            if (nb == NULL) return PYB_ISO_TIMEOUT;
            *buf = nb;
            cap = ncap;
        }
        ssize_t n = read(rfd, *buf + *have, cap - *have);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return 0;
        }
        if (n == 0) return 0;
        *have += (size_t)n;
        /* Done as soon as the whole result is here: the child's exit (the
         * teardown of a large copy takes as long as the fork) is not
         * waited for. */
        if (*have >= 9) {
            uint64_t len = 0;
            for (int i = 0; i < 8; i++) len |= (uint64_t)(unsigned char)(*buf)[1 + i] << (8 * i);
            if (len > MAX_RESULT) return ISO_TOO_BIG;
            if (*have - 9 >= len) return 0;
        }
    }
}

int pyb_call_isolated(const char *module, const char *func, const char *arg,
                      size_t arg_len, long long timeout_ms, int cancel_fd,
                      int ready_pid, int ready_fd, int *used_ready,
                      char **out, size_t *out_len, int *guards, int *reap,
                      pyb_error *err) {
    long long deadline = now_ms() + timeout_ms;
    *reap = 0;
    *out = NULL;
    *out_len = 0;
    *guards = 0;
    *used_ready = 0;

    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *fn = NULL, *py_arg = NULL;
    if (install_guard(err) != 0) goto fail_gil;
    /* Looked up in the session even when a ready copy answers, so that a
     * missing helper is reported the same way. The cyclic GC is off
     * meanwhile: a collection could run a user __del__ in the session,
     * which a ready copy would not see (and a read-only call must not do). */
    int gc_was = PyGC_Disable();
    PyObject *mod = pyb_helper(module);
    if (mod != NULL) {
        fn = PyObject_GetAttrString(mod, func);
        Py_DECREF(mod);
    }
    if (fn != NULL) py_arg = PyUnicode_DecodeUTF8(arg, (Py_ssize_t)arg_len, "surrogateescape");
    if (gc_was) PyGC_Enable();
    if (py_arg == NULL) {
        iso_fetch(err);
        goto fail_gil;
    }

    /* A ready copy is the session as it is now only if no other Python
     * thread could have run since it was forked. */
    long long cpu_seconds = timeout_ms / 1000 + 2;
    int use_ready = ready_pid > 0 && ready_fd >= 0 && cpu_seconds <= PYB_READY_CPU_BACKSTOP &&
                    strlen(module) <= REQ_NAME_MAX && strlen(func) <= REQ_NAME_MAX &&
                    other_python_threads() == 0;
    pid_t pid;
    int rfd;
    if (use_ready) {
        pid = ready_pid;
        rfd = ready_fd;
        *used_ready = 1;
        Py_CLEAR(fn);
        Py_CLEAR(py_arg);
    } else {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) {
            iso_errno(err, "cannot create the result pipe", errno);
            goto fail_gil;
        }
        pid_t parent = getpid();
        pid = fork_session(err);
        if (pid == 0) {
            close(p[0]);
            child_main(fn, py_arg, p[1], parent, timeout_ms);
        }
        close(p[1]);
        Py_CLEAR(fn);
        Py_CLEAR(py_arg);
        if (pid < 0) {
            close(p[0]);
            PyGILState_Release(gil);
            return PYB_ISO_ERROR;
        }
        rfd = p[0];
    }

    /* The user's threads run while we wait. */
    PyThreadState *ts = PyEval_SaveThread();
    int rc = 0;
    if (use_ready) {
#ifdef __linux__
        /* The CPU backstop an on-demand copy gets; lowering a child's
         * limit needs no privilege. */
        struct rlimit rl = {.rlim_cur = (rlim_t)cpu_seconds, .rlim_max = (rlim_t)cpu_seconds};
        prlimit(pid, RLIMIT_CPU, &rl, NULL);
#endif
        rc = send_request(rfd, module, func, arg, arg_len, cancel_fd, deadline);
    }
    char *buf = NULL;
    size_t have = 0;
    if (rc == 0) rc = read_result(rfd, cancel_fd, deadline, &buf, &have);
    close(rfd);
    int status = 0;
    int complete = 0;
    uint64_t len = 0;
    if (rc == 0 && have >= 9) {
        for (int i = 0; i < 8; i++) len |= (uint64_t)(unsigned char)buf[1 + i] << (8 * i);
        complete = (have - 9 == len);
    }
    if (complete) {
        *guards = copy_guards(pid);
        /* The child is in _exit; Go reaps it in the background. */
        *reap = pid;
    } else if (rc == 0) {
        /* EOF without a whole result: the child is dying; its status says
         * why, unless it lingers past the deadline. */
        for (;;) {
            pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid) break;
            if (r < 0 && errno != EINTR) break;
            if (now_ms() >= deadline) {
                rc = PYB_ISO_TIMEOUT;
                break;
            }
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    if (rc != 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    PyEval_RestoreThread(ts);
    PyGILState_Release(gil);

    if (rc == PYB_ISO_TIMEOUT || rc == PYB_ISO_CANCELED) {
        free(buf);
        return rc;
    }
    if (rc == ISO_TOO_BIG) {
        free(buf);
        pyb_error_set(err, "IsolationError",
                  "the isolated evaluation's result is over 64 MiB and was not read; "
                  "the session is unchanged");
        return PYB_ISO_ERROR;
    }
    if (!complete) {
        free(buf);
        describe_exit(status, err);
        return PYB_ISO_ERROR;
    }
    memmove(buf, buf + 9, (size_t)len);
    *out = buf;
    *out_len = (size_t)len;
    return 0;

fail_gil:
    Py_XDECREF(fn);
    Py_XDECREF(py_arg);
    PyGILState_Release(gil);
    return PYB_ISO_ERROR;
}
