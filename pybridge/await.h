/* The interpreter thread's wait for jobs and for input (jobs.go), and the
 * read and echo it makes before it returns to Go (ReadAhead). */
#ifndef PYAICHAT_AWAIT_H
#define PYAICHAT_AWAIT_H

/* What pyb_await found: bits of its result. */
#define PYB_AWAIT_WOKEN 1 /* wake_fd is readable */
#define PYB_AWAIT_INPUT 2 /* input_fd is readable */

/* Waits until wake_fd or input_fd (-1: none) is readable, or timeout_ms
 * passes (-1: no limit); returns the PYB_AWAIT bits found, or -errno.
 * When input_fd is readable and read_fd is not -1, it then reads read_fd
 * (non-blocking) into buf, cap bytes at most, and stores the count in
 * out[0] (0 when the read gave nothing). When that was one byte from ' '
 * to '~' and echo_fd is not -1, it writes echo (echo_len bytes) and the
 * byte to echo_fd (non-blocking) in one call, and stores how much of them
 * went in out[1]. */
int pyb_await(int wake_fd, int input_fd, int timeout_ms, int read_fd, char *buf, int cap,
              const char *echo, int echo_len, int echo_fd, int *out);

#endif
