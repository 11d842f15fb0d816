/* The interpreter thread's wait for jobs and input, in C so that a key
 * that ends it can be read and echoed before the thread is back in Go:
 * there the runtime's monitor, having seen the thread wait for over 10 ms,
 * has marked its goroutine for preemption, and a goroutine locked to its
 * thread is then handed to another thread and back (two wake-ups) before
 * it runs on. See ReadAhead in host.go. */
#define _GNU_SOURCE 1 /* ppoll */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "await.h"

/* Reads what read_fd has and echoes a lone printable key (pyb_await),
 * unless more input waits behind it: keys typed ahead are drawn together,
 * in one write, once the editor has them all, as GNU readline draws them. */
static void read_ahead(int read_fd, char *buf, int cap, const char *echo, int echo_len, int echo_fd, int *out) {
    ssize_t n;
    do {
        n = read(read_fd, buf, (size_t)cap);
    } while (n < 0 && errno == EINTR);
    out[0] = n > 0 ? (int)n : 0;
    if (n != 1 || echo_fd < 0 || buf[0] < ' ' || buf[0] > '~') return;
    int behind = 0;
    if (ioctl(read_fd, FIONREAD, &behind) == 0 && behind > 0) {
        out[2] = 1;
        return;
    }
    struct iovec iov[2] = {{(void *)echo, (size_t)echo_len}, {buf, 1}};
    ssize_t w;
    do {
        w = writev(echo_fd, iov, 2);
    } while (w < 0 && errno == EINTR);
    out[1] = w > 0 ? (int)w : 0;
}

int pyb_await(int wake_fd, const int *inputs, int n_inputs, int timeout_ms, int read_fd, char *buf,
              int cap, const char *echo, int echo_len, int echo_fd, int *out) {
    struct pollfd fds[1 + PYB_AWAIT_INPUTS] = {{wake_fd, POLLIN, 0}};
    if (n_inputs > PYB_AWAIT_INPUTS) n_inputs = PYB_AWAIT_INPUTS;
    for (int i = 0; i < n_inputs; i++) fds[1 + i] = (struct pollfd){inputs[i], POLLIN, 0};
    out[0] = out[1] = out[2] = 0;
    /* SIGINT is blocked during the wait, so that the kernel hands it to one
     * of Go's threads. At the prompt SIGINT is Go's (signals.c) and tells
     * Python nothing: taken here it would only end the wait with EINTR,
     * and the Python handlers that then run (pyb_idle_signals) would make
     * the interpreter look busy to the Go code that takes the same signal
     * as Ctrl-C, which hands it back, re-sent (pyb_set_interrupt), to end
     * the next wait the same way. */
    sigset_t mask;
    int err = pthread_sigmask(SIG_SETMASK, NULL, &mask);
    if (err != 0) return -err;
    sigaddset(&mask, SIGINT);
    struct timespec limit = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
    if (ppoll(fds, (nfds_t)(1 + n_inputs), timeout_ms < 0 ? NULL : &limit, &mask) < 0) return -errno;
    int found = fds[0].revents != 0 ? PYB_AWAIT_WOKEN : 0;
    for (int i = 1; i <= n_inputs; i++) {
        if (fds[i].revents == 0) continue;
        found |= PYB_AWAIT_INPUT;
        if (fds[i].fd == read_fd && cap > 0) read_ahead(read_fd, buf, cap, echo, echo_len, echo_fd, out);
    }
    return found;
}
