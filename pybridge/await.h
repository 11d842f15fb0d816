/* The interpreter thread's wait for jobs and for input (jobs.go), and the
 * read and echo it makes before it returns to Go (ReadAhead). */
#ifndef PYAICHAT_AWAIT_H
#define PYAICHAT_AWAIT_H

/* What pyb_await found: bits of its result. */
#define PYB_AWAIT_WOKEN 1 /* wake_fd is readable */
#define PYB_AWAIT_INPUT 2 /* one of the inputs is readable */

/* The most inputs pyb_await watches. */
#define PYB_AWAIT_INPUTS 4

/* Waits until wake_fd or one of the n_inputs descriptors in inputs is
 * readable, or timeout_ms passes (-1: no limit); returns the PYB_AWAIT
 * bits found, or -errno. When read_fd, one of the inputs, is readable, it
 * then reads it (non-blocking) into buf, cap bytes at most, and stores
 * the count in out[0] (0 when the read gave nothing). When that was one
 * byte from ' ' to '~' and echo_fd is not -1, it writes echo (echo_len
 * bytes) and the byte to echo_fd (non-blocking) in one call, and stores
 * how much of them went in out[1]; unless more input was waiting behind
 * the byte, which it then says with out[2] = 1, writing nothing. */
int pyb_await(int wake_fd, const int *inputs, int n_inputs, int timeout_ms, int read_fd, char *buf,
              int cap, const char *echo, int echo_len, int echo_fd, int *out);

#endif
