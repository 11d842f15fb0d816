#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE 1
#include <Python.h>
#include <frameobject.h>
#include <marshal.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bridge.h"
#include "display.h"
#include "isolate.h"
#include "signals.h"
#include "tracked.h"
#include "_cgo_export.h"

static PyThreadState *main_tstate;  /* the interpreter's thread, GIL dropped */

static char *dup_utf8(PyObject *str, size_t *len) {
    PyObject *bytes = PyUnicode_AsEncodedString(str, "utf-8", "backslashreplace");
    if (bytes == NULL) {
        PyErr_Clear();
        return NULL;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(bytes);
    char *out = malloc((size_t)n + 1);
    if (out != NULL) {
        memcpy(out, PyBytes_AS_STRING(bytes), (size_t)n);
        out[n] = '\0';
        if (len != NULL) *len = (size_t)n;
    }
    Py_DECREF(bytes);
    return out;
}

static char *dup_str_of(PyObject *obj) {
    if (obj == NULL) return NULL;
    PyObject *s = PyObject_Str(obj);
    if (s == NULL) {
        PyErr_Clear();
        return strdup("<unprintable>");
    }
    char *out = dup_utf8(s, NULL);
    Py_DECREF(s);
    return out;
}

void pyb_error_free(pyb_error *err) {
    free(err->type);
    free(err->message);
    free(err->traceback);
    err->type = err->message = err->traceback = NULL;
}

void pyb_error_set(pyb_error *err, const char *type, const char *msg) {
    err->type = strdup(type);
    err->message = strdup(msg);
    err->traceback = NULL;
}

void pyb_error_fetch(pyb_error *err, int full) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL) {
        pyb_error_set(err, "SystemError", "error return without exception set");
        return;
    }
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL) PyException_SetTraceback(value, tb);

    if (full) {
        PyObject *qualname = PyObject_GetAttrString(type, "__qualname__");
        err->type = qualname ? dup_str_of(qualname) : strdup("Exception");
        Py_XDECREF(qualname);
        PyErr_Clear();
    } else {
        const char *tname = PyType_Check(type) ? ((PyTypeObject *)type)->tp_name : "Exception";
        const char *dot = strrchr(tname, '.');
        err->type = strdup(dot ? dot + 1 : tname);
    }
    err->message = value ? dup_str_of(value) : strdup("");
    err->traceback = NULL;

    PyObject *tbmod = full ? PyImport_ImportModule("traceback") : NULL;
    if (tbmod != NULL) {
        PyObject *lines = PyObject_CallMethod(tbmod, "format_exception", "OOO",
                                              type, value ? value : Py_None,
                                              tb ? tb : Py_None);
        if (lines != NULL) {
            PyObject *empty = PyUnicode_FromString("");
            PyObject *joined = empty ? PyUnicode_Join(empty, lines) : NULL;
            if (joined != NULL) err->traceback = dup_utf8(joined, NULL);
            Py_XDECREF(joined);
            Py_XDECREF(empty);
            Py_DECREF(lines);
        }
        Py_DECREF(tbmod);
    }
    PyErr_Clear();
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

/* A pending exception as a helper's error: type, message and traceback. */
static void fetch_error(pyb_error *err) { pyb_error_fetch(err, 1); }

static void status_error(PyStatus status, pyb_error *err) {
    if (PyStatus_IsExit(status)) {
        /* A command line Python refused: it said why, as python3 does. */
        char code[32];
        snprintf(code, sizeof code, "%d", status.exitcode);
        pyb_error_set(err, "SystemExit", code);
        return;
    }
    const char *msg = status.err_msg ? status.err_msg : "unknown error";
    char buf[512];
    snprintf(buf, sizeof buf, "%s%s%s", status.func ? status.func : "",
             status.func ? ": " : "", msg);
    pyb_error_set(err, "InitError", buf);
}

/* ---- line input through Go ------------------------------------------- */

enum { LINE_OK = 0, LINE_EOF = 1, LINE_INTERRUPTED = 2 };

/* Lines user code has read (input(), sys.stdin): each ended the terminal's
 * line with the Enter typed, which the REPL's record of what output left
 * on that line must know. */
static unsigned long lines_read;

void pyb_line_read(void) { __atomic_fetch_add(&lines_read, 1, __ATOMIC_RELAXED); }

unsigned long pyb_lines_read(void) { return __atomic_load_n(&lines_read, __ATOMIC_RELAXED); }

/* _pyaichat.lines_read() */
static PyObject *mod_lines_read(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
    return PyLong_FromUnsignedLong(pyb_lines_read());
}

/* Whether input() on a terminal reads the terminal itself, as in python3
 * (set by _pyaichat.native_input), or asks Go for a line. */
static int native_input;

/* GNU readline's PyOS_ReadlineFunctionPointer, once the readline module
 * installed it. */
static char *(*gnu_readline)(FILE *, FILE *, const char *);

static char *readline_hook(FILE *in, FILE *out, const char *prompt);

/* Takes GNU readline's function, if the readline module put it in place
 * of ours (imported by user code or by sys.__interactivehook__), and puts
 * ours back so that lines read are still counted. GIL held. */
static void adopt_gnu_readline(void) {
    if (PyOS_ReadlineFunctionPointer != NULL && PyOS_ReadlineFunctionPointer != readline_hook) {
        gnu_readline = PyOS_ReadlineFunctionPointer;
        PyOS_ReadlineFunctionPointer = readline_hook;
    }
}

/* python3 -i calls sys.__interactivehook__ (site's sets up GNU readline,
 * its completion and ~/.python_history) before its first prompt; pyaichat,
 * whose own prompt is not GNU readline's, calls it before the first
 * nested prompt (input(), pdb), which saves start-up the 7 ms it takes. */
static void interactive_hook_once(void) {
    static int called;
    if (called) return;
    called = 1;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *hook = PySys_GetObject("__interactivehook__"); /* borrowed */
    if (hook != NULL) {
        if (PySys_Audit("cpython.run_interactivehook", "O", hook) < 0) {
            PyErr_Print();
        } else {
            PyObject *r = PyObject_CallNoArgs(hook);
            if (r == NULL) {
                PySys_WriteStderr("Failed calling sys.__interactivehook__\n");
                PyErr_Print();
            }
            Py_XDECREF(r);
        }
    }
    adopt_gnu_readline();
    PyGILState_Release(g);
}

/* Reads a line as PyOS_StdioReadline does, for a Python without the
 * readline module: the prompt on stderr, the line from in, EINTR checked
 * for signals. NULL with an exception set when a handler raised. */
static char *stdio_readline(FILE *in, const char *prompt) {
    fputs(prompt, stderr);
    fflush(stderr);
    size_t cap = 256, len = 0;
    char *buf = PyMem_RawMalloc(cap);
    if (buf == NULL) return NULL;
    for (;;) {
        errno = 0;
        int c = getc(in);
        if (c == EOF) {
            if (errno == EINTR) {
                clearerr(in);
                PyGILState_STATE g = PyGILState_Ensure();
                int failed = PyErr_CheckSignals() < 0;
                PyGILState_Release(g);
                if (failed) {
                    PyMem_RawFree(buf);
                    return NULL;
                }
                continue;
            }
            break;
        }
        if (len + 2 > cap) {
            char *more = PyMem_RawRealloc(buf, cap *= 2);
            if (more == NULL) {
                PyMem_RawFree(buf);
                return NULL;
            }
            buf = more;
        }
        buf[len++] = (char)c;
        if (c == '\n') break;
    }
    buf[len] = '\0';
    return buf;
}

/* PyOS_ReadlineFunctionPointer: input() on a terminal lands here, with the
 * GIL released. The result must come from PyMem_RawMalloc. */
static char *readline_hook(FILE *in, FILE *out, const char *prompt) {
    if (native_input) {
        interactive_hook_once();
        pyb_line_read();
        return gnu_readline != NULL ? gnu_readline(in, out, prompt) : stdio_readline(in, prompt);
    }
    size_t len = 0;
    int status = LINE_OK;
    char *line = pybReadLine((char *)prompt, 1, &len, &status);
    if (status == LINE_INTERRUPTED) {
        free(line);
        return NULL; /* input() then runs PyErr_CheckSignals */
    }
    char *res = PyMem_RawMalloc(len + 1);
    if (res == NULL) {
        free(line);
        return NULL;
    }
    if (status == LINE_OK && line != NULL) {
        memcpy(res, line, len);
        pyb_line_read();
    } else {
        len = 0;
    }
    res[len] = '\0';
    free(line);
    return res;
}

/* _pyaichat.readline(): sys.stdin.readline() for user code. */
static PyObject *mod_readline(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
    size_t len = 0;
    int status = LINE_OK;
    char *line;
    Py_BEGIN_ALLOW_THREADS
    line = pybReadLine(NULL, 0, &len, &status);
    Py_END_ALLOW_THREADS
    if (status == LINE_INTERRUPTED) {
        free(line);
        if (PyErr_CheckSignals() == 0 && !PyErr_Occurred())
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        return NULL;
    }
    if (status == LINE_OK && line != NULL) pyb_line_read();
    PyObject *res = PyUnicode_DecodeUTF8(line ? line : "", line ? (Py_ssize_t)len : 0,
                                         "surrogateescape");
    free(line);
    return res;
}

/* Helper modules pybridge loaded (pyaichat's REPL helper, the capabilities'
 * helper), by name. They stay out of sys.modules, and so do the modules they
 * import while loading: loading one changes nothing user code can see, and
 * user code that edits sys.modules cannot unload pyaichat's own code. (A
 * module a helper imported is imported afresh if the user imports it.) */
static PyObject *helpers;

/* The builtins as they were before any of the user's input ran: every
 * helper's __builtins__, so that a repr, len or __import__ the user
 * replaces in builtins is never what pyaichat's own code calls. */
static PyObject *own_builtins;

/* A helper's Python code runs with the thread's profile and trace
 * functions suspended: a profiler or tracer the user set is user code,
 * and the helper's frames are none of its business. */
static void quiet_tracing_begin(PyThreadState *ts) {
#if PY_VERSION_HEX >= 0x030B0000
    PyThreadState_EnterTracing(ts);
#else
    ts->tracing++;
    ts->cframe->use_tracing = 0;
#endif
}

static void quiet_tracing_end(PyThreadState *ts) {
#if PY_VERSION_HEX >= 0x030B0000
    PyThreadState_LeaveTracing(ts);
#else
    ts->tracing--;
    ts->cframe->use_tracing = ts->tracing <= 0 && (ts->c_tracefunc != NULL || ts->c_profilefunc != NULL);
#endif
}

PyObject *pyb_helper(const char *name) {
    PyObject *mod = helpers != NULL ? PyDict_GetItemString(helpers, name) : NULL;
    if (mod == NULL) {
        PyErr_Format(PyExc_ImportError, "pyaichat helper %s is not loaded", name);
        return NULL;
    }
    Py_INCREF(mod);
    return mod;
}

/* _pyaichat.helper(name): a helper module, for another helper. */
static PyObject *mod_helper(PyObject *self, PyObject *name) {
    const char *s = PyUnicode_AsUTF8(name);
    return s != NULL ? pyb_helper(s) : NULL;
}

/* _pyaichat.native_input(flag) */
static PyObject *mod_native_input(PyObject *self, PyObject *flag) {
    (void)self;
    native_input = PyObject_IsTrue(flag) > 0;
    Py_RETURN_NONE;
}

/* ---- reads that run no user code and raise no audit event ------------
 *
 * The capabilities' in-session steps promise to run no user code: no
 * user __eq__ through a dict lookup whose key's hash collides, and no
 * user audit hook through an audited attribute (traceback.tb_frame,
 * frame.f_code) or builtin (id). These read the same things in C. */

/* _pyaichat.ident(obj): id(obj) without the builtins.id audit event. */
static PyObject *mod_ident(PyObject *self, PyObject *obj) {
    (void)self;
    return PyLong_FromVoidPtr(obj);
}

/* _pyaichat.lookup(d, key, default): d[key] for an exact dict and an
 * exact str key, comparing only exact str keys (a key of another type
 * whose hash collides would have its __eq__ called by d.get); default if
 * absent or if d is not an exact dict. A class's dict is read through
 * the class (its mappingproxy hides the dict). */
static PyObject *safe_lookup(PyObject *d, PyObject *key, PyObject *dflt) {
    if (!PyUnicode_CheckExact(key)) return Py_NewRef(dflt);
    if (PyType_Check(d)) {
        /* tp_dict holds a class's attributes; from 3.12 a static builtin
         * type keeps them elsewhere, reachable by PyType_GetDict. */
#if PY_VERSION_HEX >= 0x030C0000
        PyObject *td = PyType_GetDict((PyTypeObject *)d);
        if (td == NULL) return NULL;
        PyObject *r = safe_lookup(td, key, dflt);
        Py_DECREF(td);
        return r;
#else
        d = ((PyTypeObject *)d)->tp_dict;
        if (d == NULL) return Py_NewRef(dflt);
#endif
    }
    if (!PyDict_CheckExact(d)) return Py_NewRef(dflt);
    Py_hash_t h = PyObject_Hash(key);
    if (h == -1) return NULL;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (k == key) return Py_NewRef(v);
        if (!PyUnicode_CheckExact(k) || PyObject_Hash(k) != h) continue;
        int eq = PyUnicode_Compare(k, key);
        if (eq == -1 && PyErr_Occurred()) return NULL;
        if (eq == 0) return Py_NewRef(v);
    }
    return Py_NewRef(dflt);
}

static PyObject *mod_lookup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *d, *key, *dflt;
    if (!PyArg_ParseTuple(args, "OOO", &d, &key, &dflt)) return NULL;
    return safe_lookup(d, key, dflt);
}

/* _pyaichat.tb_frame(tb), frame_code(frame) and func_code(fn), without their
 * object.__getattr__ audit events. */
static PyObject *mod_tb_frame(PyObject *self, PyObject *tb) {
    (void)self;
    if (!PyTraceBack_Check(tb)) {
        PyErr_SetString(PyExc_TypeError, "tb_frame: not a traceback");
        return NULL;
    }
    PyObject *f = (PyObject *)((PyTracebackObject *)tb)->tb_frame;
    return Py_NewRef(f != NULL ? f : Py_None);
}

static PyObject *mod_frame_code(PyObject *self, PyObject *frame) {
    (void)self;
    if (!PyFrame_Check(frame)) {
        PyErr_SetString(PyExc_TypeError, "frame_code: not a frame");
        return NULL;
    }
    return (PyObject *)PyFrame_GetCode((PyFrameObject *)frame);
}

static PyObject *mod_func_code(PyObject *self, PyObject *fn) {
    (void)self;
    if (!PyFunction_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "func_code: not a function");
        return NULL;
    }
    return Py_NewRef(PyFunction_GetCode(fn));
}

/* _pyaichat.scrub_environ(names, dicts) */
static PyObject *mod_scrub_environ(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *names, *dicts;
    if (!PyArg_ParseTuple(args, "OO", &names, &dicts)) return NULL;
    return pyb_scrub_environ(names, dicts);
}

/* _pyaichat.inst_dict(obj): obj's own __dict__, or None, read without
 * looking __dict__ up on its class (where a property could stand). */
static PyObject *mod_inst_dict(PyObject *self, PyObject *obj) {
    (void)self;
    if (PyType_Check(obj) || PyModule_Check(obj)) Py_RETURN_NONE;
    PyObject *d = PyObject_GenericGetDict(obj, NULL);
    if (d == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return d;
}

static PyObject *mod_exit_begins(PyObject *self, PyObject *unused);
static PyObject *mod_exit_ends(PyObject *self, PyObject *unused);

static PyMethodDef mod_methods[] = {
    {"ident", mod_ident, METH_O, "id(obj), without an audit event."},
    {"inst_dict", mod_inst_dict, METH_O, "obj's own __dict__, not looked up on its class."},
    {"lookup", mod_lookup, METH_VARARGS, "d[key] comparing only exact str keys."},
    {"tb_frame", mod_tb_frame, METH_O, "tb.tb_frame, without an audit event."},
    {"frame_code", mod_frame_code, METH_O, "frame.f_code, without an audit event."},
    {"func_code", mod_func_code, METH_O, "fn.__code__, without an audit event."},
    {"scrub_environ", mod_scrub_environ, METH_VARARGS, "Wipe secret environment values (isolated copy only)."},
    {"native_input", mod_native_input, METH_O, "Let input() read the terminal itself."},
    {"readline", mod_readline, METH_NOARGS, "Read one line through pyaichat."},
    {"lines_read", mod_lines_read, METH_NOARGS, "How many lines user code has read."},
    {"exit_begins", mod_exit_begins, METH_NOARGS, "atexit: the user's handlers begin."},
    {"exit_ends", mod_exit_ends, METH_NOARGS, "atexit: the user's handlers have run."},
    {"helper", mod_helper, METH_O, "One of pyaichat's helper modules, by name."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef mod_def = {
    PyModuleDef_HEAD_INIT, "_pyaichat", "pyaichat's bridge to Go.", -1, mod_methods,
};

static PyObject *mod_init(void) {
    PyObject *mod = PyModule_Create(&mod_def);
    if (mod != NULL && (pyb_add_tracked_type(mod) < 0 || pyb_add_capture(mod) < 0 ||
                          pyb_add_display(mod) < 0)) Py_CLEAR(mod);
    return mod;
}

/* Removes from sys.modules every module not named in before. */
static void forget_new_modules(PyObject *before) {
    PyObject *modules = PyImport_GetModuleDict(); /* borrowed */
    PyObject *names = PyDict_Keys(modules);
    if (names == NULL) {
        PyErr_Clear();
        return;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        if (PySet_Contains(before, name) == 0 && PyDict_DelItem(modules, name) < 0) PyErr_Clear();
    }
    Py_DECREF(names);
}

/* Makes a helper's imports find the standard library, never a json.py or
 * dis.py in the working directory nor one the user already imported from
 * there: the REPL helper's _OwnImports, begun here and ended by
 * end_own_imports with what this returns. Before the REPL helper exists
 * there is nothing of the user's yet, and nothing to do (NULL). */
static PyObject *begin_own_imports(void) {
    PyObject *repl = helpers != NULL ? PyDict_GetItemString(helpers, "_pyaichat_repl") : NULL;
    if (repl == NULL) return NULL;
    PyObject *token = PyObject_CallMethod(repl, "own_imports_begin", NULL);
    if (token == NULL) PyErr_Clear();
    return token;
}

static void end_own_imports(PyObject *token) {
    if (token == NULL) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *repl = PyDict_GetItemString(helpers, "_pyaichat_repl");
    PyObject *r = repl != NULL ? PyObject_CallMethod(repl, "own_imports_end", "O", token) : NULL;
    if (r == NULL) PyErr_Clear();
    Py_XDECREF(r);
    PyErr_Restore(type, value, tb);
    Py_DECREF(token);
}

/* While a helper loads, the modules it imports run their top-level code
 * (class bodies, enum set-up) with the builtins module's dict as it is:
 * its entries are put back as they were at start-up for that time, and
 * the user's restored after. Returns the user's entries to restore, or
 * NULL when there is nothing to do (the first helper, loaded before any
 * user code) or on failure (then the load goes on as it is). */
static PyObject *own_builtins_begin(void) {
    PyObject *live = PyEval_GetBuiltins(); /* borrowed */
    if (own_builtins == NULL || helpers == NULL || PyDict_GetItemString(helpers, "_pyaichat_repl") == NULL) return NULL;
    PyObject *theirs = PyDict_Copy(live);
    if (theirs == NULL || PyDict_Update(live, own_builtins) < 0) {
        PyErr_Clear();
        Py_XDECREF(theirs);
        return NULL;
    }
    return theirs;
}

static void own_builtins_end(PyObject *theirs) {
    if (theirs == NULL) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *live = PyEval_GetBuiltins(); /* borrowed */
    PyDict_Clear(live);
    if (PyDict_Update(live, theirs) < 0) PyErr_Clear();
    Py_DECREF(theirs);
    PyErr_Restore(type, value, tb);
}

/* A helper's code object from a compiled copy (cache: the interpreter's
 * 4-byte magic number, then marshal data), or NULL (no error set) when the
 * copy is missing or from another Python. */
static PyObject *cached_code(const pyb_bytes *cache) {
    long magic = PyImport_GetMagicNumber();
    if (cache == NULL || cache->data == NULL || cache->len <= 4 ||
        memcmp(cache->data, &magic, 4) != 0)
        return NULL;
    PyObject *code = PyMarshal_ReadObjectFromString(cache->data + 4, (Py_ssize_t)(cache->len - 4));
    if (code == NULL || !PyCode_Check(code)) {
        PyErr_Clear();
        Py_XDECREF(code);
        return NULL;
    }
    return code;
}

/* Fills *out with a compiled copy of code for cached_code (malloc'd data),
 * or leaves it empty. */
static void save_code(PyObject *code, pyb_bytes *out) {
    if (out == NULL) return;
    PyObject *data = PyMarshal_WriteObjectToString(code, Py_MARSHAL_VERSION);
    if (data == NULL) {
        PyErr_Clear();
        return;
    }
    long magic = PyImport_GetMagicNumber();
    size_t n = (size_t)PyBytes_GET_SIZE(data);
    out->data = malloc(n + 4);
    if (out->data != NULL) {
        memcpy(out->data, &magic, 4);
        memcpy(out->data + 4, PyBytes_AS_STRING(data), n);
        out->len = n + 4;
    }
    Py_DECREF(data);
}

/* Call with the GIL held. cache, if not NULL, is a compiled copy of source
 * from an earlier run; a fresh one is put in *fresh when there was none
 * (compiling pyaichat's helpers takes milliseconds at every start). */
static int load_module(const char *name, const char *source, const pyb_bytes *cache,
                       pyb_bytes *fresh, pyb_error *err) {
    char filename[256];
    snprintf(filename, sizeof filename, "<pyaichat %s>", name);
    PyObject *code = NULL, *mod = NULL, *res = NULL;
    PyObject *before = PySet_New(PyImport_GetModuleDict());
    if (before == NULL) goto fail;
    if (helpers == NULL && (helpers = PyDict_New()) == NULL) goto fail;
    code = cached_code(cache);
    if (code == NULL) {
        code = Py_CompileString(source, filename, Py_file_input);
        if (code == NULL) goto fail;
        save_code(code, fresh);
    }
    mod = PyModule_New(name);
    if (mod == NULL) goto fail;
    PyObject *globals = PyModule_GetDict(mod); /* borrowed */
    if (own_builtins == NULL && (own_builtins = PyDict_Copy(PyEval_GetBuiltins())) == NULL) goto fail;
    if (PyDict_SetItemString(globals, "__builtins__", own_builtins) < 0) goto fail;
    PyObject *refused = pyb_refused_type(); /* borrowed */
    if (refused == NULL || PyDict_SetItemString(globals, "_PYAICHAT_REFUSED", refused) < 0) goto fail;
    /* What a helper would otherwise import or read through attributes that
     * user code can intercept (a module's class swapped, sys.modules
     * rebound): the bridge module, the modules dict, the module type. */
    PyObject *bridge = PyDict_GetItemString(PyImport_GetModuleDict(), "_pyaichat"); /* borrowed */
    if (bridge == NULL || PyDict_SetItemString(globals, "_PYAICHAT_BRIDGE", bridge) < 0 ||
        PyDict_SetItemString(globals, "_PYAICHAT_MODULES", PyImport_GetModuleDict()) < 0 ||
        PyDict_SetItemString(globals, "_PYAICHAT_MODULE_TYPE", (PyObject *)&PyModule_Type) < 0)
        goto fail;
    quiet_tracing_begin(PyThreadState_Get());
    PyObject *theirs = own_builtins_begin();
    PyObject *own = begin_own_imports();
    res = PyEval_EvalCode(code, globals, globals);
    end_own_imports(own);
    own_builtins_end(theirs);
    quiet_tracing_end(PyThreadState_Get());
    if (res == NULL) goto fail;
    if (PyDict_SetItemString(helpers, name, mod) < 0) goto fail;
    forget_new_modules(before);
    Py_DECREF(res);
    Py_DECREF(mod);
    Py_DECREF(code);
    Py_DECREF(before);
    return 0;

fail:
    fetch_error(err);
    if (before != NULL) forget_new_modules(before);
    Py_XDECREF(res);
    Py_XDECREF(mod);
    Py_XDECREF(code);
    Py_XDECREF(before);
    return -1;
}

int pyb_load_module(const char *name, const char *source, const pyb_bytes *cache,
                    pyb_bytes *fresh, pyb_error *err) {
    PyEval_RestoreThread(main_tstate);
    int rc = load_module(name, source, cache, fresh, err);
    main_tstate = PyEval_SaveThread();
    return rc;
}

/* ---- life cycle ------------------------------------------------------- */

/* Whether the interpreter started as python3 -i with nothing to run first
 * (no FILE, -c or -m: sys.argv is ['']) and with site, whose interactive
 * hook python3 then runs before its first prompt. */
static int bare_repl(void) {
    PyObject *argv = PySys_GetObject("argv"); /* borrowed */
    if (argv == NULL || !PyList_Check(argv) || PyList_GET_SIZE(argv) != 1) return 0;
    PyObject *first = PyList_GET_ITEM(argv, 0);
    if (!PyUnicode_Check(first) || PyUnicode_GET_LENGTH(first) != 0) return 0;
    PyObject *modules = PyImport_GetModuleDict(); /* borrowed */
    return PyDict_GetItemString(modules, "site") != NULL;
}

/* Which of fds 0, 1 and 2 were closed when the process started, seen
 * before Go's runtime starts: it opens /dev/null on them, where python3
 * makes sys.stdin, sys.stdout or sys.stderr None. */
static int closed_at_start[3];

__attribute__((constructor)) static void note_closed_stdio(void) {
    for (int fd = 0; fd < 3; fd++) closed_at_start[fd] = fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

/* As python3 has them: None for a standard stream whose descriptor was
 * closed at start (GIL held). */
static int drop_closed_stdio(void) {
    static const char *names[3][2] = {{"stdin", "__stdin__"}, {"stdout", "__stdout__"}, {"stderr", "__stderr__"}};
    for (int fd = 0; fd < 3; fd++) {
        if (!closed_at_start[fd]) continue;
        for (int i = 0; i < 2; i++)
            if (PySys_SetObject(names[fd][i], Py_None) < 0) return -1;
    }
    return 0;
}

/* The process the interpreter started in (see end_forked_child). */
static pid_t session_pid;

int pyb_init(const char *executable, int argc, char **argv, const char *helper_src,
             const pyb_bytes *cache, pyb_bytes *fresh, pyb_error *err) {
    PyStatus status;
    PyConfig config;

    if (PyImport_AppendInittab("_pyaichat", mod_init) < 0) {
        pyb_error_set(err, "InitError", "cannot register module _pyaichat");
        return -1;
    }

    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0; /* Go owns signals */
    config.parse_argv = 1; /* python3's options, as python3 reads them */
    config.interactive = 1;             /* sys.flags as for python3 -i */
    config.inspect = 1;
    status = PyConfig_SetBytesArgv(&config, argc, argv);
    if (PyStatus_Exception(status)) goto fail;
    if (executable != NULL && executable[0] != '\0') {
        status = PyConfig_SetBytesString(&config, &config.executable, executable);
        if (PyStatus_Exception(status)) goto fail;
        status = PyConfig_SetBytesString(&config, &config.program_name, executable);
        if (PyStatus_Exception(status)) goto fail;
    }
    session_pid = getpid();
    pyb_install_audit_guard();
    pyb_signals_before_python();
    status = Py_InitializeFromConfig(&config);
    if (PyStatus_Exception(status)) {
        pyb_signals_after_python();
        goto fail;
    }
    PyConfig_Clear(&config);

    /* As python3 does (unless it started with SIGINT ignored), SIGINT runs
     * default_int_handler, which raises KeyboardInterrupt. _signal, not
     * signal: the latter imports enum, 7 ms of start-up. */
    const char *sigint_setup = pyb_signals_sigint_ignored()
                                   ? "import _signal\ndel _signal\n"
                                   : "import _signal\n"
                                     "_signal.signal(_signal.SIGINT, _signal.default_int_handler)\n"
                                     "del _signal\n";
    int sig_rc = PyRun_SimpleString(sigint_setup);
    pyb_signals_after_python();
    if (sig_rc != 0) {
        pyb_error_set(err, "InitError", "cannot set the SIGINT handler");
        return -1;
    }

    PyOS_ReadlineFunctionPointer = readline_hook;
    if (drop_closed_stdio() < 0) {
        fetch_error(err);
        return -1;
    }

    /* Imported before any helper, so that it stays in sys.modules and every
     * helper shares it (the isolated copy swaps its readline). */
    PyObject *bridge = PyImport_ImportModule("_pyaichat");
    if (bridge == NULL) {
        fetch_error(err);
        return -1;
    }
    /* faulthandler's report lists the extension modules in sys.modules
     * that are not the standard library's, and python3 has none: the
     * helpers share a plain module holding the same functions. */
    PyObject *plain = PyModule_New("_pyaichat");
    int plain_rc = plain != NULL ? PyDict_Update(PyModule_GetDict(plain), PyModule_GetDict(bridge)) : -1;
    if (plain_rc == 0) plain_rc = PyDict_SetItemString(PyImport_GetModuleDict(), "_pyaichat", plain);
    Py_XDECREF(plain);
    Py_DECREF(bridge);
    if (plain_rc < 0) {
        fetch_error(err);
        return -1;
    }
    /* python3 -i has re (and enum, which re imports) loaded by its first
     * prompt: the interactive hook site installs imports rlcompleter,
     * which imports them. Loaded here for the user too, before any helper,
     * they are shared by the helpers, which would otherwise load private
     * copies of them (see forget_new_modules), whose classes then showed
     * twice where CPython lists them (int.__subclasses__()). Not before a
     * FILE, -c or -m, which python3 runs before that hook, or never runs
     * it after. */
    if (bare_repl()) {
        PyObject *re = PyImport_ImportModule("re");
        if (re == NULL) {
            fetch_error(err);
            return -1;
        }
        Py_DECREF(re);
    }
    if (load_module("_pyaichat_repl", helper_src, cache, fresh, err) != 0) return -1;
    main_tstate = PyEval_SaveThread();
    return 0;

fail:
    status_error(status, err);
    PyConfig_Clear(&config);
    return -1;
}

/* The str a helper returned, as malloc'd UTF-8; NULL with *err set when it
 * is not a str or cannot be copied. */
static char *str_result(PyObject *res, const char *what, size_t *out_len, pyb_error *err) {
    if (!PyUnicode_Check(res)) {
        PyErr_Format(PyExc_TypeError, "%s returned %.100s, not str", what, Py_TYPE(res)->tp_name);
        fetch_error(err);
        return NULL;
    }
    char *out = dup_utf8(res, out_len);
    if (out == NULL) pyb_error_set(err, "MemoryError", "cannot copy the result");
    return out;
}

static int finalize_held(void);

/* A child that user code forked (os.fork() in a statement at the prompt,
 * in FILE or -c) has only this thread: the Go runtime's other threads are
 * not in it, so it cannot go back to Go, where it would hang for ever. It
 * ends with the statement that forked it, as a python3 process exits:
 * its threads waited for, its atexit handlers run, Python finalized; with
 * the status of the SystemExit it raised (exiting), as python3's would,
 * or else with 0, saying why (where python3's child would go on reading
 * the same terminal as its parent). Forks that end themselves
 * (multiprocessing, subprocess, a child that calls os._exit) never get
 * here. */
static void end_forked_child(int exiting, int status) {
    if (getpid() == session_pid) return;
    const char *streams[] = {"stdout", "stderr"};
    for (int i = 0; i < 2; i++) {
        PyObject *f = PySys_GetObject(streams[i]); /* borrowed */
        PyObject *r = f != NULL ? PyObject_CallMethod(f, "flush", NULL) : NULL;
        if (r == NULL) PyErr_Clear();
        Py_XDECREF(r);
    }
    if (!exiting) {
        static const char msg[] =
            "pyaichat: the process forked by this statement ends here (only pyaichat's first process has a REPL)\n";
        ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)n;
    }
    _exit(finalize_held() < 0 ? 120 : status);
}

/* The exception a signal handler raised while no user code ran (at the
 * prompt, or as a statement ended), kept for the REPL to show as python3's
 * prompt shows it (pyb_show_signal_error); the first one wins, as python3's
 * prompt stops at it. A byte on signal_error_fd tells Go of it. */
static PyObject *signal_error;
static int signal_error_fd = -1;

void pyb_signal_errors_notify(int fd) { signal_error_fd = fd; }

/* Moves the pending exception into signal_error (GIL held). */
static void keep_signal_error(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL) PyException_SetTraceback(value, tb);
    if (signal_error == NULL && value != NULL) {
        signal_error = value;
        value = NULL;
        if (signal_error_fd >= 0) {
            char c = 0;
            ssize_t n = write(signal_error_fd, &c, 1);
            (void)n;
        }
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

/* Runs the handlers of the signals that arrived, keeping what they raise
 * for the REPL; a KeyboardInterrupt is a Ctrl-C that came once the code
 * had finished, stale, and dropped rather than let surface in the next
 * statement (GIL held). */
static void run_late_handlers(void) {
    if (PyErr_CheckSignals() == 0) return;
    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
        PyErr_Clear();
    else
        keep_signal_error();
}

/* After user code: a forked child ends (see end_forked_child; exiting and
 * status say whether the code raised SystemExit, and its status); Go gets
 * SIGINT and SIGWINCH back; and the handlers of signals that arrived as
 * the code ended run (run_late_handlers). */
static void settle_after_user_code(int exiting, int status) {
    end_forked_child(exiting, status);
    adopt_gnu_readline();
    pyb_signals_user_end();
    run_late_handlers();
}

/* pyaichat's own Python (the REPL helper compiling an input, the
 * suggester, the capabilities) is no part of the user's program: python3's
 * loop is C, so a trace or profile function the user set sees only the
 * user's code. It is paused around pyaichat's (GIL held; calls nest). */
static void pause_tracing(void) {
#if PY_VERSION_HEX >= 0x030B0000
    PyThreadState_EnterTracing(PyThreadState_Get());
#else
    PyThreadState *ts = PyThreadState_Get();
    ts->tracing++;
    ts->cframe->use_tracing = 0;
#endif
}

static void resume_tracing(void) {
#if PY_VERSION_HEX >= 0x030B0000
    PyThreadState_LeaveTracing(PyThreadState_Get());
#else
    PyThreadState *ts = PyThreadState_Get();
    ts->tracing--;
    ts->cframe->use_tracing = ts->tracing == 0 && (ts->c_tracefunc != NULL || ts->c_profilefunc != NULL);
#endif
}

/* Set while user code may run (pyb_busy). */
static int user_code_running;

int pyb_busy(void) { return __atomic_load_n(&user_code_running, __ATOMIC_RELAXED); }

/* Reads two pointers and follows none, without the GIL: a thread state
 * goes in at the head of its interpreter's list (3.10 to 3.13), so the
 * list is main_tstate alone exactly when the head is main_tstate and
 * nothing follows it. Another thread starting or ending meanwhile makes
 * the answer stale, never unsafe. */
int pyb_sole_thread(void) {
    PyInterpreterState *interp = PyThreadState_GetInterpreter(main_tstate);
    return PyInterpreterState_ThreadHead(interp) == main_tstate && PyThreadState_Next(main_tstate) == NULL;
}

static void set_busy(int busy) { __atomic_store_n(&user_code_running, busy, __ATOMIC_RELAXED); }

char *pyb_call(const char *module, const char *func, const char *arg, size_t arg_len,
               size_t *out_len, int kind, pyb_error *err) {
    char *out = NULL;
    PyEval_RestoreThread(main_tstate);
    /* A collection could run a user __del__ or gc callback, which a
     * read-only call must not (a ready copy of the session would miss its
     * effects). */
    int gc_was = kind == PYB_CALL_READ_ONLY ? PyGC_Disable() : 0;
    if (kind == PYB_CALL_USER) {
        set_busy(1);
        pyb_signals_user_begin();
    } else {
        pause_tracing();
    }

    PyObject *fn = NULL, *py_arg = NULL, *res = NULL;
    PyObject *mod = pyb_helper(module);
    if (mod == NULL) goto error;
    fn = PyObject_GetAttrString(mod, func);
    Py_DECREF(mod);
    if (fn == NULL) goto error;
    py_arg = PyUnicode_DecodeUTF8(arg, (Py_ssize_t)arg_len, "surrogateescape");
    if (py_arg == NULL) goto error;
    if (kind != PYB_CALL_USER) quiet_tracing_begin(PyThreadState_Get());
    res = PyObject_CallOneArg(fn, py_arg);
    if (kind != PYB_CALL_USER) quiet_tracing_end(PyThreadState_Get());
    if (res == NULL) goto error;
    out = str_result(res, func, out_len, err);
    goto done;

error:
    fetch_error(err);
done:
    Py_XDECREF(res);
    Py_XDECREF(py_arg);
    Py_XDECREF(fn);
    if (gc_was > 0) PyGC_Enable();
    if (kind == PYB_CALL_USER) {
        settle_after_user_code(0, 0);
        set_busy(0);
    } else {
        resume_tracing();
    }
    main_tstate = PyEval_SaveThread();
    return out;
}

/* The REPL helper's answer to a step (python/repl.py, STEP_*): a tuple
 * (step, exit status, exception type or "", what output left on the
 * current line). */
enum { STEP_DONE = 0, STEP_MORE = 1, STEP_RUN = 2, STEP_EXIT = 3 };

/* Reads a step tuple into *out and returns its step, or -1 with a
 * TypeError set. */
static int read_step(PyObject *res, pyb_outcome *out) {
    long step, status;
    PyObject *error, *partial;
    if (!PyTuple_Check(res) || !PyArg_ParseTuple(res, "llUU", &step, &status, &error, &partial)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "the REPL helper answered %.100s, not a step tuple", Py_TYPE(res)->tp_name);
        return -1;
    }
    if (step == STEP_RUN) return STEP_RUN;
    out->more = step == STEP_MORE;
    out->exit = step == STEP_EXIT;
    out->status = (int)status;
    out->error = PyUnicode_GET_LENGTH(error) > 0 ? dup_utf8(error, NULL) : NULL;
    out->partial = PyUnicode_GET_LENGTH(partial) > 0 ? dup_utf8(partial, NULL) : NULL;
    return (int)step;
}

/* Runs the code the REPL helper queued in __main__, from C so that no
 * Python frame sits under user code, as in python3's own interactive
 * loop, then lets the helper show an exception or record the input.
 * Returns the helper's answer (a new reference) or NULL. */
static PyObject *run_pending(PyObject *mod) {
    PyObject *codes = PyObject_CallMethod(mod, "take_pending", NULL);
    if (codes == NULL) return NULL;
    if (!PyList_Check(codes)) {
        Py_DECREF(codes);
        PyErr_SetString(PyExc_TypeError, "take_pending did not return a list");
        return NULL;
    }
    PyObject *main_mod = PyImport_AddModule("__main__"); /* borrowed */
    if (main_mod == NULL) {
        Py_DECREF(codes);
        return NULL;
    }
    PyObject *globals = PyModule_GetDict(main_mod); /* borrowed */
    int failed = 0;
    resume_tracing();
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(codes); i++) {
        PyObject *r = PyEval_EvalCode(PyList_GET_ITEM(codes, i), globals, globals);
        if (r == NULL) {
            failed = 1;
            break;
        }
        Py_DECREF(r);
    }
    pause_tracing();
    Py_DECREF(codes);
    if (!failed) return PyObject_CallMethod(mod, "after_run", NULL);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL) PyException_SetTraceback(value, tb);
    PyObject *res = PyObject_CallMethod(mod, "show_exception", "O", value ? value : Py_None);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return res;
}

int pyb_repl_step(const char *func, const char *arg, size_t arg_len, pyb_outcome *out,
                  pyb_error *err) {
    memset(out, 0, sizeof *out);
    int rc = -1, ran = 0;
    PyEval_RestoreThread(main_tstate);
    pause_tracing();
    PyObject *mod = pyb_helper("_pyaichat_repl");
    PyObject *res = NULL;
    if (mod == NULL) goto done;
    PyObject *py_arg = PyUnicode_DecodeUTF8(arg, (Py_ssize_t)arg_len, "surrogateescape");
    if (py_arg == NULL) goto done;
    res = PyObject_CallMethod(mod, func, "O", py_arg);
    Py_DECREF(py_arg);
    if (res == NULL) goto done;
    int step = read_step(res, out);
    if (step == STEP_RUN) {
        Py_CLEAR(res);
        ran = 1;
        set_busy(1);
        pyb_signals_user_begin();
        res = run_pending(mod);
        if (res != NULL) step = read_step(res, out);
        if (step == STEP_RUN) {
            PyErr_SetString(PyExc_TypeError, "the REPL helper asked to run code twice");
            step = -1;
        }
    }
    if (step >= 0) rc = 0;
done:
    if (rc != 0) fetch_error(err);
    Py_XDECREF(res);
    Py_XDECREF(mod);
    if (ran) {
        settle_after_user_code(out->exit, out->status);
        set_busy(0);
    }
    resume_tracing();
    main_tstate = PyEval_SaveThread();
    return rc;
}

/* Open while run_idle_handlers runs, which makes pyb_busy true: a SIGINT
 * that Go took at the prompt while another signal's handlers ran, and
 * handed on as a Ctrl-C for user code (pyb_set_interrupt), came at the
 * prompt, not during the handlers. It is kept (IDLE_INTERRUPTED) and sent
 * again once Go has SIGINT back; tripping Python's flag instead would
 * lose it, a KeyboardInterrupt past the handlers' last check being
 * dropped as stale (run_late_handlers). One variable holds both, so that
 * a SIGINT kept as the window closes is either sent again by this run or
 * not kept at all: never left for a later run to send at a later prompt,
 * where SIGINT may kill. The wait blocks SIGINT (await.c), so the signal
 * sent again cannot start another such run. */
enum { IDLE_CLOSED, IDLE_OPEN, IDLE_INTERRUPTED };
static int idle_window;

/* Runs the Python handlers of the signals that arrived while no user code
 * ran, as python3's prompt does when its read is interrupted; with ctrl_c,
 * a Ctrl-C typed at the prompt counts as SIGINT arriving (the key is not a
 * signal there: the terminal is raw), and the KeyboardInterrupt of
 * Python's default handler is told apart rather than kept. */
static int run_idle_handlers(int ctrl_c) {
    PyEval_RestoreThread(main_tstate);
    __atomic_store_n(&idle_window, IDLE_OPEN, __ATOMIC_SEQ_CST);
    set_busy(1);
    pyb_signals_user_begin();
    int rc = PYB_SIGINT_RETURNED;
    /* Trips SIGINT as Python's own C handler would have; PyErr_CheckSignals
     * then runs whatever Python handler the user's code set. */
    if (ctrl_c) PyErr_SetInterruptEx(SIGINT);
    if (PyErr_CheckSignals() < 0) {
        if (ctrl_c && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
            PyErr_Clear();
            rc = PYB_SIGINT_RAISED_KI;
        } else {
            keep_signal_error();
            rc = PYB_SIGINT_RAISED;
        }
    }
    settle_after_user_code(0, 0);
    set_busy(0);
    int window = __atomic_exchange_n(&idle_window, IDLE_CLOSED, __ATOMIC_SEQ_CST);
    main_tstate = PyEval_SaveThread();
    if (window == IDLE_INTERRUPTED) {
        /* Go now has SIGINT again, and sees that no user code runs. */
        syscall(SYS_kill, getpid(), SIGINT);
    }
    return rc;
}

void pyb_idle_signals(void) { run_idle_handlers(0); }

int pyb_sigint_at_prompt(void) { return run_idle_handlers(1); }


int pyb_show_signal_error(pyb_outcome *out, pyb_error *err) {
    memset(out, 0, sizeof *out);
    PyEval_RestoreThread(main_tstate);
    int rc = 0;
    PyObject *exc = signal_error;
    signal_error = NULL;
    if (exc != NULL) {
        rc = -1;
        PyObject *mod = pyb_helper("_pyaichat_repl");
        PyObject *res = mod != NULL ? PyObject_CallMethod(mod, "show_signal_error", "O", exc) : NULL;
        if (res != NULL && read_step(res, out) >= 0) rc = 0;
        if (rc != 0) fetch_error(err);
        Py_XDECREF(res);
        Py_XDECREF(mod);
        Py_DECREF(exc);
    }
    main_tstate = PyEval_SaveThread();
    return rc;
}

void pyb_outcome_free(pyb_outcome *out) {
    free(out->error);
    free(out->partial);
    out->error = out->partial = NULL;
}

/* Kicks under way, and whether they are refused: once finalization
 * begins, a thread that asks for the GIL is ended by Python (a Go thread
 * must never be), or finds the runtime gone. */
static int kicks_in_flight, kicks_closed;

void pyb_kick(void) {
    __atomic_add_fetch(&kicks_in_flight, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&kicks_closed, __ATOMIC_SEQ_CST)) {
        PyGILState_STATE st = PyGILState_Ensure();
        PyGILState_Release(st);
    }
    __atomic_sub_fetch(&kicks_in_flight, 1, __ATOMIC_SEQ_CST);
}

/* Refuses kicks from now on, and lets the ones under way (waiting for the
 * GIL) finish (GIL held). */
static void close_kicks(void) {
    __atomic_store_n(&kicks_closed, 1, __ATOMIC_SEQ_CST);
    /* A forked child has no thread but this one: a count it inherited
     * belongs to its parent's. */
    if (getpid() != session_pid) return;
    Py_BEGIN_ALLOW_THREADS
    while (__atomic_load_n(&kicks_in_flight, __ATOMIC_SEQ_CST) > 0) usleep(1000);
    Py_END_ALLOW_THREADS
}

void pyb_set_interrupt(void) {
    int open = IDLE_OPEN;
    if (__atomic_compare_exchange_n(&idle_window, &open, IDLE_INTERRUPTED, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST) ||
        open == IDLE_INTERRUPTED)
        return;
    PyErr_SetInterrupt();
}

/* What finalization is doing (pyb_finalize_phase). */
static int finalize_phase;

static void set_phase(int phase) { __atomic_store_n(&finalize_phase, phase, __ATOMIC_RELAXED); }

int pyb_finalize_phase(void) { return __atomic_load_n(&finalize_phase, __ATOMIC_RELAXED); }

/* Py_FinalizeEx waits for non-daemon threads, then runs the atexit
 * handlers, for as long as they take, before it finalizes the rest; in
 * 3.12 and later with fork and new threads refused from the start. It
 * runs them itself, as python3's does. Two atexit handlers of pyaichat's
 * tell Go which of those it waits for: exit_begins, registered last (it
 * runs first), once the threads have ended; exit_ends, registered when
 * the REPL helper loads, before any of the user's (it runs last), once
 * the user's handlers have run. */
static PyObject *mod_exit_begins(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    set_phase(PYB_FINALIZE_ATEXIT);
    Py_RETURN_NONE;
}

static PyObject *mod_exit_ends(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    if (pyb_finalize_phase() == PYB_FINALIZE_NOT) Py_RETURN_NONE; /* the user ran the handlers early */
    /* python3 destroys __main__'s objects first of all modules'; the REPL
     * helper, which outlives them, lets go of it. */
    PyObject *repl = pyb_helper("_pyaichat_repl");
    PyObject *released = repl != NULL ? PyObject_CallMethod(repl, "release_main", NULL) : NULL;
    if (released == NULL) PyErr_Clear();
    Py_XDECREF(released);
    Py_XDECREF(repl);
    /* The rest runs no code of the user's that waits; past this point a
     * thread that asks for the GIL (Go's, after a Ctrl-C) would be ended. */
    pyb_signals_user_end();
    set_busy(0);
    close_kicks();
    set_phase(PYB_FINALIZE_REST);
    Py_RETURN_NONE;
}

/* Finalizes Python as python3 does at exit (GIL held); Py_FinalizeEx's
 * result. */
static int finalize_held(void) {
    /* Ctrl-C reaches the threads' wait and the handlers as it reaches
     * user code. */
    set_busy(1);
    pyb_signals_user_begin();
    PyObject *repl = pyb_helper("_pyaichat_repl");
    PyObject *res = repl != NULL ? PyObject_CallMethod(repl, "exit_begins", NULL) : NULL;
    if (res == NULL) PyErr_Clear();
    Py_XDECREF(res);
    Py_XDECREF(repl);
    set_phase(PYB_FINALIZE_THREADS);
    int rc = Py_FinalizeEx();
    if (pyb_finalize_phase() != PYB_FINALIZE_REST) { /* exit_ends never ran */
        pyb_signals_user_end();
        set_busy(0);
    }
    return rc;
}

int pyb_finalize(int status) {
    PyEval_RestoreThread(main_tstate);
    int rc = finalize_held();
    /* A process forked during exit (by an atexit handler) exits as its
     * parent does; back in Go it would hang. */
    if (getpid() != session_pid) _exit(rc < 0 ? 120 : status);
    return rc;
}

int pyb_version_major(void) { return PY_MAJOR_VERSION; }
int pyb_version_minor(void) { return PY_MINOR_VERSION; }
const char *pyb_version_string(void) { return Py_GetVersion(); }
const char *pyb_platform(void) { return Py_GetPlatform(); }
