/* Optional C accelerator for allfives_env.observation.encode.

   It fills the seat-dependent pieces of an observation vector from a PlayerView, exactly as the
   pure-Python encoder in allfives_env/observation.py does (tests/test_observation.py checks that
   the two agree value for value). It knows no rules and no layout: the piece offsets and scales
   (observation.PIECES) and the tiles' pips come from configure(), the scores' scale (a rules field)
   and the points of each legal move (view.move_points()) come with each call, and the pieces fixed
   by the rules are already in the buffer (the encoder's template).

   If this module is not built (no C compiler), the Python encoder is used instead. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_fastargs.h"
#include "_fastbits.h"

enum {
    HAND, PLAYED, ARM_PIP, ARM_OPEN, ARM_DOUBLE, ARM_VALUE, SPIN_PIP, SPIN_SIDES, TOTAL, LEAD, FORCED,
    MOVE_POINTS, COUNTS, BONEYARD, MISSING, SCORES, HAND_PIPS, UNSEEN, NUM_OFFSETS
};
static const char *OFFSET_NAMES[NUM_OFFSETS] = {
    "hand", "played", "arm_pip", "arm_open", "arm_double", "arm_value", "spinner_pip", "spinner_sides",
    "ends_total", "lead", "forced", "move_points", "tile_counts", "boneyard", "missing_pips", "scores",
    "hand_pips", "unseen_pips",
};

#define NUM_TILES 28
#define NUM_ACTIONS 112
#define CLOSED 7

/* the pieces whose values are divided by a number from configure(); indices into OFFSET_NAMES */
static const int SCALED[] = {ARM_VALUE, TOTAL, MOVE_POINTS, COUNTS, BONEYARD, HAND_PIPS, UNSEEN};
#define NUM_SCALED (sizeof(SCALED) / sizeof(SCALED[0]))

static Py_ssize_t off[NUM_OFFSETS];
static double scale[NUM_OFFSETS]; /* set for the SCALED pieces only */
static Py_ssize_t obs_size = -1;
static int tile_a[NUM_TILES], tile_b[NUM_TILES];
static long pip_tiles[7]; /* mask of the tiles showing each pip */

enum {
    A_HAND, A_PLAYED, A_PIPS, A_VALUES, A_DOUBLE_ENDS, A_SPINNER, A_COVERED, A_COUNT, A_LEAD, A_FORCED,
    A_LEGAL, A_SEAT, A_COUNTS, A_MISSING, A_SCORES, A_BONEYARD, A_DRAWABLE, NUM_ATTRS
};
static const char *ATTR_NAMES[NUM_ATTRS] = {
    "hand", "played", "pips", "values", "double_ends", "spinner", "spinner_covered", "count", "lead",
    "forced_tile", "legal_actions", "seat", "tile_counts", "missing_pips", "scores", "boneyard_size", "drawable",
};
static PyObject *attr_names[NUM_ATTRS];

/* configure(offsets, scales, size, tiles); changes nothing unless all of it is valid */
static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *offsets, *scales, *tiles;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "O!O!nO", &PyDict_Type, &offsets, &PyDict_Type, &scales, &size, &tiles))
        return NULL;
    Py_ssize_t new_off[NUM_OFFSETS];
    double new_scale[NUM_OFFSETS];
    int a[NUM_TILES], b[NUM_TILES];
    for (int i = 0; i < NUM_OFFSETS; i++) {
        PyObject *v = PyDict_GetItemString(offsets, OFFSET_NAMES[i]);
        if (v == NULL) {
            PyErr_Format(PyExc_KeyError, "offsets lack piece %s", OFFSET_NAMES[i]);
            return NULL;
        }
        new_off[i] = PyLong_AsSsize_t(v);
        if (new_off[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    for (size_t k = 0; k < NUM_SCALED; k++) {
        const char *name = OFFSET_NAMES[SCALED[k]];
        PyObject *v = PyDict_GetItemString(scales, name);
        if (v == NULL) {
            PyErr_Format(PyExc_KeyError, "scales lack piece %s", name);
            return NULL;
        }
        double x;
        char what[64];
        snprintf(what, sizeof what, "the scale of %s", name);
        if (number_of(v, &x, what) < 0)
            return NULL;
        if (!(x > 0)) {
            PyErr_Format(PyExc_ValueError, "the scale of %s must be positive", name);
            return NULL;
        }
        new_scale[SCALED[k]] = x;
    }
    PyObject *seq = PySequence_Fast(tiles, "tiles must be a sequence");
    if (seq == NULL)
        return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != NUM_TILES) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "tiles must hold 28 (a, b) pairs");
        return NULL;
    }
    for (int t = 0; t < NUM_TILES; t++) {
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, t), "ii", &a[t], &b[t])) {
            Py_DECREF(seq);
            return NULL;
        }
        if (a[t] < 0 || a[t] > 6 || b[t] < 0 || b[t] > 6) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "tiles must hold pips 0..6");
            return NULL;
        }
    }
    Py_DECREF(seq);
    for (int i = 0; i < NUM_OFFSETS; i++)
        off[i] = new_off[i];
    for (size_t k = 0; k < NUM_SCALED; k++)
        scale[SCALED[k]] = new_scale[SCALED[k]];
    for (int p = 0; p < 7; p++)
        pip_tiles[p] = 0;
    for (int t = 0; t < NUM_TILES; t++) {
        tile_a[t] = a[t];
        tile_b[t] = b[t];
        pip_tiles[a[t]] |= 1L << t;
        pip_tiles[b[t]] |= 1L << t;
    }
    obs_size = size;
    Py_RETURN_NONE;
}

static inline float clip1(double x) { return x < -1.0 ? -1.0f : (x > 1.0 ? 1.0f : (float)x); }

/* fill(out, view, rel_sides, score_scale, move_points): write the view's pieces into ``out`` (a
   writable float32 buffer holding the rules' template) */
static PyObject *fill(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "fill(out, view, rel_sides, score_scale, move_points) takes 5 arguments");
        return NULL;
    }
    if (obs_size < 0) {
        PyErr_SetString(PyExc_RuntimeError, "configure() was not called");
        return NULL;
    }
    PyObject *view = args[1], *rel_sides = args[2], *points = args[4];
    double score_scale;
    if (number_of(args[3], &score_scale, "score_scale") < 0)
        return NULL;
    if (!(score_scale > 0)) {
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
    long v[NUM_ATTRS];
    static const int scalars[] = {A_HAND, A_PLAYED, A_DOUBLE_ENDS, A_SPINNER, A_COVERED, A_COUNT, A_LEAD,
                                  A_FORCED, A_SEAT, A_BONEYARD, A_DRAWABLE};
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
        if (int_named(a[scalars[i]], &v[scalars[i]], "view.", ATTR_NAMES[scalars[i]]) < 0)
            goto done;
    long hand = v[A_HAND], played = v[A_PLAYED], double_ends = v[A_DOUBLE_ENDS], spinner = v[A_SPINNER];
    long covered = v[A_COVERED], count = v[A_COUNT], lead = v[A_LEAD], forced = v[A_FORCED], seat = v[A_SEAT];
    long boneyard = v[A_BONEYARD], drawable = v[A_DRAWABLE];
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
    if (n_pips != 4 || n_values != 4 || n_points != n_legal || n < 2 || n > 4 || n_missing != n || n_rel != n ||
        seat < 0 || seat >= n) {
        PyErr_SetString(PyExc_ValueError, "view does not have the shape of an All Fives view");
        goto done;
    }
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_WRITABLE) < 0)
        goto done;
    if (buf.len != obs_size * (Py_ssize_t)sizeof(float)) {
        PyErr_Format(PyExc_ValueError, "out must hold %zd float32 values", obs_size);
        goto done;
    }
    float *o = (float *)buf.buf;

    for (int t = 0; t < NUM_TILES; t++) {
        if (hand >> t & 1)
            o[off[HAND] + t] = 1.0f;
        if (played >> t & 1)
            o[off[PLAYED] + t] = 1.0f;
    }
    for (int e = 0; e < 4; e++) {
        long p, value;
        if (int_named(pips[e], &p, "an item of ", "view.pips") < 0 ||
            int_named(values[e], &value, "an item of ", "view.values") < 0)
            goto done;
        if (p != CLOSED) {
            if (p < 0 || p > 6) {
                PyErr_SetString(PyExc_ValueError, "view.pips holds a pip outside 0..7");
                goto done;
            }
            o[off[ARM_PIP] + 7 * e + p] = 1.0f;
            o[off[ARM_OPEN] + e] = 1.0f;
            if (double_ends >> e & 1)
                o[off[ARM_DOUBLE] + e] = 1.0f;
            o[off[ARM_VALUE] + e] = (float)(value / scale[ARM_VALUE]);
        }
    }
    if (spinner >= 0 && spinner < 7) {
        o[off[SPIN_PIP] + spinner] = 1.0f;
        if (covered >= 1) {
            o[off[SPIN_SIDES]] = 1.0f;
            if (covered >= 2)
                o[off[SPIN_SIDES] + 1] = 1.0f;
        }
    }
    o[off[TOTAL]] = count < scale[TOTAL] ? (float)(count / scale[TOTAL]) : 1.0f;
    if (lead < 0)
        o[off[LEAD]] = 1.0f;
    if (forced >= 0)
        o[off[FORCED]] = 1.0f;
    for (Py_ssize_t i = 0; i < n_legal; i++) {
        long action, p;
        if (int_named(legal[i], &action, "an item of ", "view.legal_actions") < 0 ||
            int_named(pts[i], &p, "an item of ", "move_points") < 0)
            goto done;
        if (action < 0 || action >= NUM_ACTIONS) {
            PyErr_SetString(PyExc_ValueError, "view.legal_actions holds an id outside 0..111");
            goto done;
        }
        if (p)
            o[off[MOVE_POINTS] + action] = p < scale[MOVE_POINTS] ? (float)(p / scale[MOVE_POINTS]) : 1.0f;
    }
    for (Py_ssize_t r = 0; r < n; r++) {
        Py_ssize_t s = (seat + r) % n;
        long c, m, side, x;
        if (int_named(counts[s], &c, "an item of ", "view.tile_counts") < 0 ||
            int_named(missing[s], &m, "an item of ", "view.missing_pips") < 0 ||
            int_named(sides[r], &side, "an item of ", "rel_sides") < 0)
            goto done;
        if (side < 0 || side >= n_scores) {
            PyErr_SetString(PyExc_ValueError, "rel_sides names a side outside the scores");
            goto done;
        }
        if (int_named(scores[side], &x, "an item of ", "view.scores") < 0)
            goto done;
        o[off[COUNTS] + r] = c < scale[COUNTS] ? (float)(c / scale[COUNTS]) : 1.0f;
        for (int p = 0; p < 7; p++)
            if (m >> p & 1)
                o[off[MISSING] + 7 * r + p] = 1.0f;
        if (x)
            o[off[SCORES] + r] = clip1((double)x / score_scale);
    }
    o[off[BONEYARD]] = (float)(boneyard / scale[BONEYARD]);
    o[off[BONEYARD] + 1] = (float)(drawable / scale[BONEYARD]);
    long hp = 0;
    for (int t = 0; t < NUM_TILES; t++)
        if (hand >> t & 1)
            hp += tile_a[t] + tile_b[t];
    o[off[HAND_PIPS]] = hp < scale[HAND_PIPS] ? (float)(hp / scale[HAND_PIPS]) : 1.0f;
    long unseen = ~(hand | played) & ((1L << NUM_TILES) - 1);
    for (int p = 0; p < 7; p++)
        o[off[UNSEEN] + p] = (float)(bit_count(pip_tiles[p] & unseen) / scale[UNSEEN]);
    result = Py_None;
    Py_INCREF(result);
done:
    if (buf.obj != NULL)
        PyBuffer_Release(&buf);
    for (int i = 0; i < NUM_ATTRS; i++)
        Py_XDECREF(a[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(offsets, scales, size, tiles): the observation layout (offsets and scales by piece name) and the tiles"},
    {"fill", (PyCFunction)(void (*)(void))fill, METH_FASTCALL,
     "fill(out, view, rel_sides, score_scale, move_points): write a view's pieces into a template copy"},
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
