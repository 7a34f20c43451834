/* Optional C accelerator for allfives_env.observation.encode.

   It fills the seat-dependent pieces of an observation vector from a PlayerView, exactly as the
   pure-Python encoder in allfives_env/observation.py does (tests/test_observation.py checks that
   the two agree value for value). It reads the view and writes with _fastview.h, which knows no
   rules and no layout: the piece offsets and scales (observation.PIECES) and the tiles' pips come
   from configure(), the scores' scale (a rules field) and the points of each legal move
   (view.move_points()) come with each call, and the pieces fixed by the rules are already in the
   buffer (the encoder's template).

   If this module is not built (no C compiler), the Python encoder is used instead. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_fastview.h"

#define NUM_TILES V1_TILES
#define NUM_ACTIONS V1_ACTIONS
#define CLOSED V1_CLOSED

enum {
    A_HAND, A_PLAYED, A_PIPS, A_VALUES, A_DOUBLE_ENDS, A_SPINNER, A_COVERED, A_COUNT, A_LEAD, A_FORCED,
    A_LEGAL, A_SEAT, A_COUNTS, A_MISSING, A_SCORES, A_BONEYARD, A_DRAWABLE, NUM_ATTRS
};
static const char *ATTR_NAMES[NUM_ATTRS] = {
    "hand", "played", "pips", "values", "double_ends", "spinner", "spinner_covered", "count", "lead",
    "forced_tile", "legal_actions", "seat", "tile_counts", "missing_pips", "scores", "boneyard_size", "drawable",
};
static PyObject *attr_names[NUM_ATTRS];

/* configure(offsets, scales, size, tiles): see _fastview.h's configure_v1 */
static PyObject *configure(PyObject *self, PyObject *args) { return configure_v1(args); }

/* fill(out, view, rel_sides, score_scale, move_points): write the view's pieces into ``out`` (a
   writable float32 buffer holding the rules' template) */
static PyObject *fill(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "fill(out, view, rel_sides, score_scale, move_points) takes 5 arguments");
        return NULL;
    }
    if (v1_configured() < 0)
        return NULL;
    PyObject *view = args[1], *rel_sides = args[2], *points = args[4];
    view_t v;
    if (number_of(args[3], &v.score_scale, "score_scale") < 0)
        return NULL;
    if (!(v.score_scale > 0)) {
        PyErr_SetString(PyExc_ValueError, "score_scale must be positive");
        return NULL;
    }
    PyObject *a[NUM_ATTRS] = {NULL};
    PyObject *result = NULL;
    Py_buffer buf;
    buf.obj = NULL;
    for (int i = 0; i < NUM_ATTRS; i++) {
        a[i] = PyObject_GetAttr(view, attr_names[i]);
        if (a[i] == NULL)
            goto done;
    }
    long x[NUM_ATTRS];
    static const int scalars[] = {A_HAND, A_PLAYED, A_DOUBLE_ENDS, A_SPINNER, A_COVERED, A_COUNT, A_LEAD,
                                  A_FORCED, A_SEAT, A_BONEYARD, A_DRAWABLE};
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
        if (int_named(a[scalars[i]], &x[scalars[i]], "view.", ATTR_NAMES[scalars[i]]) < 0)
            goto done;
    v.hand = x[A_HAND];
    v.played = x[A_PLAYED];
    v.double_ends = x[A_DOUBLE_ENDS];
    v.spinner = x[A_SPINNER];
    v.covered = x[A_COVERED];
    v.count = x[A_COUNT];
    v.lead = x[A_LEAD];
    v.forced = x[A_FORCED];
    v.boneyard = x[A_BONEYARD];
    v.drawable = x[A_DRAWABLE];
    long seat = x[A_SEAT];
    Py_ssize_t n_pips, n_values, n_legal, n_points, n_counts, n_missing, n_scores, n_rel;
    PyObject **pips = items_of(a[A_PIPS], &n_pips, "view.pips");
    PyObject **values = pips ? items_of(a[A_VALUES], &n_values, "view.values") : NULL;
    PyObject **legal = values ? items_of(a[A_LEGAL], &n_legal, "view.legal_actions") : NULL;
    PyObject **pts = legal ? items_of(points, &n_points, "move_points") : NULL;
    PyObject **counts = pts ? items_of(a[A_COUNTS], &n_counts, "view.tile_counts") : NULL;
    PyObject **missing = counts ? items_of(a[A_MISSING], &n_missing, "view.missing_pips") : NULL;
    PyObject **scores = missing ? items_of(a[A_SCORES], &n_scores, "view.scores") : NULL;
    PyObject **sides = scores ? items_of(rel_sides, &n_rel, "rel_sides") : NULL;
    if (sides == NULL)
        goto done;
    Py_ssize_t n = n_counts;
    if (n_pips != 4 || n_values != 4 || n_points != n_legal || n_legal > NUM_ACTIONS || n < 2 ||
        n > V1_MAX_SEATS || n_missing != n || n_rel != n || seat < 0 || seat >= n) {
        PyErr_SetString(PyExc_ValueError, "view does not have the shape of an All Fives view");
        goto done;
    }
    v.n = n;
    for (int e = 0; e < 4; e++) {
        if (int_named(pips[e], &v.pips[e], "an item of ", "view.pips") < 0 ||
            int_named(values[e], &v.values[e], "an item of ", "view.values") < 0)
            goto done;
        if (v.pips[e] != CLOSED && (v.pips[e] < 0 || v.pips[e] > 6)) {
            PyErr_SetString(PyExc_ValueError, "view.pips holds a pip outside 0..7");
            goto done;
        }
    }
    v.n_legal = n_legal;
    for (Py_ssize_t i = 0; i < n_legal; i++) {
        if (int_named(legal[i], &v.legal[i], "an item of ", "view.legal_actions") < 0 ||
            int_named(pts[i], &v.points[i], "an item of ", "move_points") < 0)
            goto done;
        if (v.legal[i] < 0 || v.legal[i] >= NUM_ACTIONS) {
            PyErr_SetString(PyExc_ValueError, "view.legal_actions holds an id outside 0..111");
            goto done;
        }
    }
    for (Py_ssize_t r = 0; r < n; r++) {
        Py_ssize_t s = (seat + r) % n;
        if (int_named(counts[s], &v.counts[r], "an item of ", "view.tile_counts") < 0 ||
            int_named(missing[s], &v.missing[r], "an item of ", "view.missing_pips") < 0)
            goto done;
    }
    if (v1_scores(&v, a[A_SCORES], rel_sides, "view.scores") < 0)
        goto done;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_WRITABLE) < 0)
        goto done;
    if (buf.len != v1_size * (Py_ssize_t)sizeof(float)) {
        PyErr_Format(PyExc_ValueError, "out must hold %zd float32 values", v1_size);
        goto done;
    }
    write_v1((float *)buf.buf, &v);
    result = Py_None;
    Py_INCREF(result);
done:
    if (buf.obj != NULL)
        PyBuffer_Release(&buf);
    for (int i = 0; i < NUM_ATTRS; i++)
        Py_XDECREF(a[i]);
    return result;
}

/* pack_events(out, at, events, start, seat, play, draw): the rows of the AEC env's events info
   (aec.EventInfos) for ``events[start:]`` as ``seat`` sees them, written as int16 into the writable
   buffer ``out`` from byte ``at`` on, 5 values a row (kind, player, tile, end, points): all five of
   an event of kind ``play``, (kind, player, tile) of ``seat``'s own ``draw``, (kind, player) of any
   other event (a pass, another seat's draw); what a row does not get is left as it is (the env
   fills its block with -1). Returns the number of rows. */
static PyObject *pack_events(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "pack_events(out, at, events, start, seat, play, draw) takes 7 arguments");
        return NULL;
    }
    long at, start, seat, play, draw;
    if (int_of(args[1], &at, "at") < 0 || int_of(args[3], &start, "start") < 0 || int_of(args[4], &seat, "seat") < 0 ||
        int_of(args[5], &play, "play") < 0 || int_of(args[6], &draw, "draw") < 0)
        return NULL;
    Py_ssize_t n;
    PyObject **events = items_of(args[2], &n, "events");
    if (events == NULL)
        return NULL;
    if (start < 0 || start > n || at < 0) {
        PyErr_SetString(PyExc_ValueError, "start must be in 0..len(events) and at must not be negative");
        return NULL;
    }
    Py_buffer buf;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_WRITABLE) < 0)
        return NULL;
    const Py_ssize_t row = 5 * (Py_ssize_t)sizeof(short);
    if (at + (n - start) * row > buf.len) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "out is too small for the events");
        return NULL;
    }
    short *o = (short *)((char *)buf.buf + at);
    for (Py_ssize_t i = start; i < n; i++, o += 5) {
        Py_ssize_t k;
        PyObject **e = items_of(events[i], &k, "an event");
        long x[5];
        if (e == NULL)
            goto fail;
        if (k < 2) {
            PyErr_SetString(PyExc_ValueError, "an event must hold a kind and a player");
            goto fail;
        }
        if (int_of(e[0], &x[0], "an event's kind") < 0 || int_of(e[1], &x[1], "an event's player") < 0)
            goto fail;
        Py_ssize_t m = x[0] == play ? 5 : (x[0] == draw && x[1] == seat ? 3 : 2);
        if (k < m) {
            PyErr_Format(PyExc_ValueError, "an event of kind %ld must hold %zd fields", x[0], m);
            goto fail;
        }
        for (Py_ssize_t j = 0; j < m; j++) {
            if (int_of(e[j], &x[j], "an event's field") < 0)
                goto fail;
            if (x[j] < -32768 || x[j] > 32767) {
                PyErr_SetString(PyExc_OverflowError, "an event's field does not fit an int16");
                goto fail;
            }
            o[j] = (short)x[j];
        }
    }
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(n - start);
fail:
    PyBuffer_Release(&buf);
    return NULL;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(offsets, scales, size, tiles): the observation layout (offsets and scales by piece name) and the tiles"},
    {"fill", (PyCFunction)(void (*)(void))fill, METH_FASTCALL,
     "fill(out, view, rel_sides, score_scale, move_points): write a view's pieces into a template copy"},
    {"pack_events", (PyCFunction)(void (*)(void))pack_events, METH_FASTCALL,
     "pack_events(out, at, events, start, seat, play, draw): the AEC env's events info rows, as int16"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastobs", "C accelerator for the observation encoder", -1, methods,
};

PyMODINIT_FUNC PyInit__fastobs(void) {
    for (int i = 0; i < NUM_ATTRS; i++) {
        attr_names[i] = PyUnicode_InternFromString(ATTR_NAMES[i]);
        if (attr_names[i] == NULL)
            return NULL;
    }
    return PyModule_Create(&module);
}
