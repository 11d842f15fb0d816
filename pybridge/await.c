/* The interpreter thread's wait for jobs and input, in C so that a key
 * that ends it can be read and echoed before the thread is back in Go:
 * there the runtime's monitor, having seen the thread wait for over 10 ms,
 * has marked its goroutine for preemption, and a goroutine locked to its
 * thread is then handed to another thread and back (two wake-ups) before
 * it runs on. See ReadAhead in host.go. */
#include <errno.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "await.h"

/* Reads what read_fd has and echoes a lone printable key (pyb_await). */
static void read_ahead(int read_fd, char *buf, int cap, const char *echo, int echo_len, int echo_fd, int *out) {
    ssize_t n;
    do {
        n = read(read_fd, buf, (size_t)cap);
    } while (n < 0 && errno == EINTR);
    out[0] = n > 0 ? (int)n : 0;
    if (n != 1 || echo_fd < 0 || buf[0] < ' ' || buf[0] > '~') return;
    struct iovec iov[2] = {{(void *)echo, (size_t)echo_len}, {buf, 1}};
    ssize_t w;
    do {
        w = writev(echo_fd, iov, 2);
    } while (w < 0 && errno == EINTR);
    out[1] = w > 0 ? (int)w : 0;
}

int pyb_await(int wake_fd, int input_fd, int timeout_ms, int read_fd, char *buf, int cap,
              const char *echo, int echo_len, int echo_fd, int *out) {
    struct pollfd fds[2] = {{wake_fd, POLLIN, 0}, {input_fd, POLLIN, 0}};
    out[0] = out[1] = 0;
    if (poll(fds, input_fd < 0 ? 1 : 2, timeout_ms) < 0) return -errno;
    int found = 0;
    if (fds[0].revents != 0) found |= PYB_AWAIT_WOKEN;
    if (input_fd >= 0 && fds[1].revents != 0) {
        found |= PYB_AWAIT_INPUT;
        if (read_fd >= 0 && cap > 0) read_ahead(read_fd, buf, cap, echo, echo_len, echo_fd, out);
    }
    return found;
}
