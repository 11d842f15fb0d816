/* Signals as python3 has them, in a process whose runtime is Go's.
 *
 * python3 is one thread that installs no signal handler but SIGINT's (and
 * ignores SIGPIPE and SIGXFSZ); Go's runtime starts threads of its own and
 * installs a handler for nearly every signal. Four things bring the
 * first back inside the second (why each is needed: pybridge/README.md,
 * "Signals"):
 *
 * 1. Python's table starts as python3's. Python's signal module reads the
 *    dispositions it starts with and reports a handler it did not install
 *    as None, which breaks `old = signal.signal(SIG, h); ...;
 *    signal.signal(SIG, old)`. While Python starts, every signal Go
 *    handles is set to SIG_DFL; afterwards Go gets back what it needs.
 * 2. Signals reach Python's thread. The kernel hands a process-directed
 *    signal to any thread that does not block it; only the one that runs
 *    Python sees its blocking system call interrupted, and only its mask
 *    is the one user code sets with pthread_sigmask. So Go's threads block
 *    the signals Go does not need (a constructor blocks them before the
 *    runtime starts, and every Go thread inherits that mask), Python's
 *    thread unblocks them, and SIGINT, which Go cannot let its threads
 *    block, is passed on to Python's thread by its handler.
 * 3. SIGINT, SIGWINCH and SIGURG are Python's while user code runs and
 *    Go's while pyaichat waits at its prompt or for the assistant: what
 *    user code set (a handler, SIG_DFL, SIG_IGN) is in force, for the
 *    process, exactly while user code runs, as it would be in python3.
 * 4. A crash in C code ends as python3's: faulthandler's traceback when it
 *    is enabled, then death by the same signal, never Go's goroutine dump.
 *    Go passes a fault it finds outside Go code to the handler that was
 *    installed before its runtime started (the constructor's), and a
 *    signal re-raised by faulthandler or abort() comes to ours first.
 * 4a. A SIGINT at the prompt, while it is the user's (py>, no answer under
 *    way), that user code set to SIG_IGN is dropped as it arrives, as the
 *    kernel drops it for python3: Go's handler, which the prompt's handler
 *    passes every other one to, acts on a signal later, on another
 *    thread, by then maybe under another disposition (a SIGINT ignored at
 *    one prompt killed the process after the next line set SIG_DFL).
 * 5. A signal Python's thread sends its own process (os.kill(os.getpid(),
 *    sig)) is that thread's, as it is python3's only thread's: delivered
 *    before kill returns, so os.kill's own check runs its handler, and left
 *    pending while that thread blocks it. Go keeps SIGTERM, SIGHUP,
 *    SIGQUIT and SIGCHLD unblocked on its threads, and the kernel may hand
 *    a process-directed one to any of them: a blocked SIGTERM then killed
 *    the process, and a handled one could run after os.kill had returned
 *    (kill, below). */
#define _GNU_SOURCE 1

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "signals.h"

/* Signals Go does not need that Python may handle, blocked on Go's threads
 * (Go unblocks the ones it cannot do without on its threads: SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGURG). */
static const int python_thread_signals[] = {SIGUSR1, SIGUSR2, SIGALRM,   SIGVTALRM, SIGXCPU,
                                            SIGIO,   SIGPWR,  SIGSTKFLT, SIGWINCH};
#define N_PYTHON_THREAD (sizeof python_thread_signals / sizeof python_thread_signals[0])

/* Signals Go keeps handling, reported as SIG_DFL to Python as python3
 * reports them. The first three are shared: Go's while pyaichat waits,
 * Python's while user code runs (SIGINT: Ctrl-C; SIGWINCH: the line
 * editor follows the terminal's size; SIGURG: Go's preemption). SIGPROF,
 * Go's profiler, is Python's once user code handles it. */
static const int go_signals[] = {SIGINT, SIGWINCH, SIGURG, SIGPROF};
#define N_GO (sizeof go_signals / sizeof go_signals[0])
#define N_SHARED 3

/* Faults and aborts: death by the signal, as in python3. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define N_FATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static sigset_t python_thread_set;
static char started_ignored[NSIG]; /* nohup, trap '' ...: python3 keeps them ignored */

static pid_t python_tid;
static int notify_fd = -1;

static struct sigaction go_handler[NSIG];     /* Go's, for go_signals and fatal_signals */
static struct sigaction python_handler[NSIG]; /* in force while user code runs, for the shared ones */

static void fatal_signal(int sig, siginfo_t *info, void *ctx);
static void prompt_sigint(int sig, siginfo_t *info, void *ctx);

/* Whether a SIGINT at the prompt is the user's (pyb_signals_sigint_users). */
static int sigint_users = 1;

static void set_action(int sig, void (*fn)(int, siginfo_t *, void *)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK; /* Go's threads run on small stacks */
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void set_simple(int sig, void (*fn)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* Runs before Go's runtime starts: the mask set here is the one Go gives
 * every thread it makes, and a fault handler set here is the one Go passes
 * faults outside Go code to. */
__attribute__((constructor)) static void pyb_signals_constructor(void) {
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        started_ignored[sig] = sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
    }

    sigemptyset(&python_thread_set);
    for (size_t i = 0; i < N_PYTHON_THREAD; i++) sigaddset(&python_thread_set, python_thread_signals[i]);
    pthread_sigmask(SIG_BLOCK, &python_thread_set, NULL);

    for (size_t i = 0; i < N_FATAL; i++) set_action(fatal_signals[i], fatal_signal);
}

static pid_t gettid_(void) { return (pid_t)syscall(SYS_gettid); }

static int is_handler(const struct sigaction *sa) {
    return (sa->sa_flags & SA_SIGINFO) || (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

static void call_handler(const struct sigaction *sa, int sig, siginfo_t *info, void *ctx) {
    if (sa->sa_flags & SA_SIGINFO)
        sa->sa_sigaction(sig, info, ctx);
    else if (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN)
        sa->sa_handler(sig);
}

/* SIGINT's handler while user code runs with a handler of Python's: the
 * signal is taken on Python's thread, as python3's single thread takes it,
 * so a blocking call there returns EINTR and the KeyboardInterrupt comes
 * at the same bytecode. Go learns of it through notify_fd, to tell a
 * Ctrl-C that Python cannot act on (busy inside C code). */
static void forward_sigint(int sig, siginfo_t *info, void *ctx) {
    int saved_errno = errno;
    if (gettid_() != python_tid) {
        syscall(SYS_tgkill, getpid(), python_tid, sig);
    } else {
        call_handler(&python_handler[SIGINT], sig, info, ctx);
        if (notify_fd >= 0) {
            char c = 0;
            ssize_t n = write(notify_fd, &c, 1);
            (void)n;
        }
    }
    errno = saved_errno;
}

static __thread int passed_to_go;

/* A fault in C code (Go passes it back here: see the top), or a fatal
 * signal raised on purpose (abort(), faulthandler re-raising, kill): the
 * process dies by it. A fault in Go code is Go's (a panic). */
static void fatal_signal(int sig, siginfo_t *info, void *ctx) {
    int go_fault = info != NULL && info->si_code > 0 && !passed_to_go && is_handler(&go_handler[sig]);
    if (!go_fault) {
        set_simple(sig, SIG_DFL);
        if (info == NULL || info->si_code <= 0) raise(sig); /* delivered on return */
        return; /* a fault happens again, now with the default action */
    }
    passed_to_go = 1;
    call_handler(&go_handler[sig], sig, info, ctx);
    passed_to_go = 0;
}

/* Signals no process may handle, and glibc's own (SIGCANCEL, SIGSETXID). */
static int untouchable(int sig) { return sig == SIGKILL || sig == SIGSTOP || (sig >= 32 && sig < SIGRTMIN); }

void pyb_signals_before_python(void) {
    python_tid = gettid_();
    pthread_sigmask(SIG_UNBLOCK, &python_thread_set, NULL);

    /* python3's dispositions: what it inherited (exec resets handlers, so
     * the default or, if inherited, ignored), and SIGPIPE and SIGXFSZ
     * ignored. The signals Go needs get its handlers back afterwards. */
    for (size_t i = 0; i < N_GO; i++) sigaction(go_signals[i], NULL, &go_handler[go_signals[i]]);
    for (size_t i = 0; i < N_FATAL; i++) sigaction(fatal_signals[i], NULL, &go_handler[fatal_signals[i]]);
    for (int sig = 1; sig < NSIG; sig++) {
        if (untouchable(sig)) continue;
        int ignore = started_ignored[sig] || sig == SIGPIPE || sig == SIGXFSZ;
        set_simple(sig, ignore ? SIG_IGN : SIG_DFL);
    }
}

/* What user code left SIGINT to do (PYB_SIGINT_*), kept as one value
 * that Go's threads and prompt_sigint read while python_handler may be
 * changing. */
static int sigint_action;

static void keep_sigint_action(const struct sigaction *sa) {
    int action = PYB_SIGINT_DEFAULT;
    if (is_handler(sa))
        action = PYB_SIGINT_HANDLED;
    else if (sa->sa_handler == SIG_IGN)
        action = PYB_SIGINT_IGNORED;
    __atomic_store_n(&sigint_action, action, __ATOMIC_RELAXED);
}

/* Gives a shared signal back to pyaichat at the prompt: Go's handler, or
 * for SIGINT the prompt's, which passes it on to Go's (item 4a); the
 * disposition it replaces goes in old, if not NULL. */
static int give_back(int sig, struct sigaction *old) {
    if (sig != SIGINT) return sigaction(sig, &go_handler[sig], old);
    struct sigaction sa = go_handler[SIGINT];
    sa.sa_sigaction = prompt_sigint;
    sa.sa_flags |= SA_SIGINFO;
    return sigaction(SIGINT, &sa, old);
}

void pyb_signals_after_python(void) {
    for (size_t i = 0; i < N_SHARED; i++) sigaction(go_signals[i], NULL, &python_handler[go_signals[i]]);
    keep_sigint_action(&python_handler[SIGINT]);
    for (size_t i = 0; i < N_GO; i++)
        if (!started_ignored[go_signals[i]]) give_back(go_signals[i], NULL);
    for (size_t i = 0; i < N_FATAL; i++) {
        struct sigaction now;
        /* Left alone when faulthandler took it while Python started: it
         * dies by the signal after its traceback already. */
        if (sigaction(fatal_signals[i], NULL, &now) == 0 && !is_handler(&now))
            set_action(fatal_signals[i], fatal_signal);
    }
}

void pyb_signals_notify(int fd) { notify_fd = fd; }

void pyb_signals_user_begin(void) {
    if (is_handler(&python_handler[SIGINT]))
        set_action(SIGINT, forward_sigint);
    else
        sigaction(SIGINT, &python_handler[SIGINT], NULL);
    for (size_t i = 1; i < N_SHARED; i++) sigaction(go_signals[i], &python_handler[go_signals[i]], NULL);
}

static int is_forwarder(const struct sigaction *sa) {
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == forward_sigint;
}

static void keep_python_handler(int sig, const struct sigaction *now) {
    if (is_forwarder(now)) return;
    python_handler[sig] = *now;
    if (sig == SIGINT) keep_sigint_action(now);
}

void pyb_signals_user_end(void) {
    /* SIGINT's choice is known before the prompt's handler is in: that
     * handler drops what arrives when it is SIG_IGN. */
    struct sigaction now;
    if (sigaction(SIGINT, NULL, &now) == 0) keep_python_handler(SIGINT, &now);
    give_back(SIGINT, NULL);
    for (size_t i = 1; i < N_SHARED; i++) {
        int sig = go_signals[i];
        /* User code that called signal.signal() left its choice here: it
         * is read in the same call that gives Go its handler back (one
         * system call per signal on every input). */
        if (give_back(sig, &now) == 0) keep_python_handler(sig, &now);
    }
}

/* SIGINT at the prompt (item 4a). */
static void prompt_sigint(int sig, siginfo_t *info, void *ctx) {
    if (__atomic_load_n(&sigint_users, __ATOMIC_RELAXED) && pyb_signals_sigint_action() == PYB_SIGINT_IGNORED)
        return;
    call_handler(&go_handler[SIGINT], sig, info, ctx);
}

void pyb_signals_sigint_users(int users) { __atomic_store_n(&sigint_users, users, __ATOMIC_RELAXED); }

int pyb_signals_python_tid(void) { return (int)python_tid; }

/* kill(2), in place of libc's for the C code linked into pyaichat and the
 * extension modules it loads (the executable's definition comes first):
 * from Python's thread to its own process, the signal goes to that thread
 * (item 5 above); anything else is kill(2) as it is. */
int kill(pid_t pid, int sig) {
    if (python_tid != 0 && pid == getpid() && gettid_() == python_tid)
        return (int)syscall(SYS_tgkill, pid, python_tid, sig);
    return (int)syscall(SYS_kill, pid, sig);
}

int pyb_signals_sigint_ignored(void) { return started_ignored[SIGINT]; }

int pyb_signals_sigint_action(void) { return __atomic_load_n(&sigint_action, __ATOMIC_RELAXED); }

void pyb_signals_die_by_sigint(void) {
    set_simple(SIGINT, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGINT);
}
