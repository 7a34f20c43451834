/* The version-1 pieces of an observation vector from one seat's facts (a view_t), shared by the C
   accelerators: _fastobs.c reads the facts from a PlayerView, _fastlook.c's observe_game from a
   Game. It knows no rules and no layout: the piece offsets and scales (observation.PIECES) and
   the tiles' pips come from configure_v1(), the scores' scale (a rules field) with each view, and
   the pieces fixed by the rules are already in the buffer (the encoder's template). Each
   extension that includes this header keeps its own copy of the configuration. Header only. */

#ifndef ALLFIVES_FASTVIEW_H
#define ALLFIVES_FASTVIEW_H

#include <Python.h>

#include "_fastargs.h"
#include "_fastbits.h"

#define V1_TILES 28
#define V1_ACTIONS 112
#define V1_CLOSED 7
#define V1_MAX_SEATS 4

enum {
    HAND, PLAYED, ARM_PIP, ARM_OPEN, ARM_DOUBLE, ARM_VALUE, SPIN_PIP, SPIN_SIDES, TOTAL, LEAD, FORCED,
    MOVE_POINTS, COUNTS, BONEYARD, MISSING, SCORES, HAND_PIPS, UNSEEN, NUM_OFFSETS
};
static const char *OFFSET_NAMES[NUM_OFFSETS] = {
    "hand", "played", "arm_pip", "arm_open", "arm_double", "arm_value", "spinner_pip", "spinner_sides",
    "ends_total", "lead", "forced", "move_points", "tile_counts", "boneyard", "missing_pips", "scores",
    "hand_pips", "unseen_pips",
};

/* the pieces whose values are divided by a number from configure_v1(); indices into OFFSET_NAMES */
static const int SCALED[] = {ARM_VALUE, TOTAL, MOVE_POINTS, COUNTS, BONEYARD, HAND_PIPS, UNSEEN};
#define NUM_SCALED (sizeof(SCALED) / sizeof(SCALED[0]))

static Py_ssize_t v1_off[NUM_OFFSETS];
static double v1_scale[NUM_OFFSETS]; /* set for the SCALED pieces only */
static Py_ssize_t v1_size = -1;
static int v1_tile_a[V1_TILES], v1_tile_b[V1_TILES];
static long v1_pip_tiles[7]; /* mask of the tiles showing each pip */

/* what the version-1 pieces are written from: one seat's view, already checked */
typedef struct {
    long hand, played, pips[4], values[4], double_ends, spinner, covered, count, lead, forced, boneyard, drawable;
    Py_ssize_t n;                      /* seats */
    long counts[V1_MAX_SEATS];         /* per relative seat r (the seat r places after the viewer) */
    long missing[V1_MAX_SEATS];        /* per relative seat: 7-bit mask of pips it is known not to hold */
    long scores[V1_MAX_SEATS];         /* per relative seat: its side's score */
    double score_scale;
    Py_ssize_t n_legal;
    long legal[V1_ACTIONS], points[V1_ACTIONS];
} view_t;

/* configure_v1(offsets, scales, size, tiles); changes nothing unless all of it is valid */
static PyObject *configure_v1(PyObject *args) {
    PyObject *offsets, *scales, *tiles;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "O!O!nO", &PyDict_Type, &offsets, &PyDict_Type, &scales, &size, &tiles))
        return NULL;
    Py_ssize_t new_off[NUM_OFFSETS];
    double new_scale[NUM_OFFSETS];
    int a[V1_TILES], b[V1_TILES];
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
    if (PySequence_Fast_GET_SIZE(seq) != V1_TILES) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "tiles must hold 28 (a, b) pairs");
        return NULL;
    }
    for (int t = 0; t < V1_TILES; t++) {
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
        v1_off[i] = new_off[i];
    for (size_t k = 0; k < NUM_SCALED; k++)
        v1_scale[SCALED[k]] = new_scale[SCALED[k]];
    for (int p = 0; p < 7; p++)
        v1_pip_tiles[p] = 0;
    for (int t = 0; t < V1_TILES; t++) {
        v1_tile_a[t] = a[t];
        v1_tile_b[t] = b[t];
        v1_pip_tiles[a[t]] |= 1L << t;
        v1_pip_tiles[b[t]] |= 1L << t;
    }
    v1_size = size;
    Py_RETURN_NONE;
}

/* 0 once configure_v1() was called, else -1 with the error */
static inline int v1_configured(void) {
    if (v1_size >= 0)
        return 0;
    PyErr_SetString(PyExc_RuntimeError, "configure() was not called");
    return -1;
}

static inline float clip1(double x) { return x < -1.0 ? -1.0f : (x > 1.0 ? 1.0f : (float)x); }

/* the version-1 pieces of ``v`` into ``o`` (at least v1_size floats holding the rules' template):
   exactly what the pure-Python encoder (observation._fill_python) writes */
static void write_v1(float *o, const view_t *v) {
    const Py_ssize_t *off = v1_off;
    const double *scale = v1_scale;
    for (int t = 0; t < V1_TILES; t++) {
        if (v->hand >> t & 1)
            o[off[HAND] + t] = 1.0f;
        if (v->played >> t & 1)
            o[off[PLAYED] + t] = 1.0f;
    }
    for (int e = 0; e < 4; e++) {
        long p = v->pips[e];
        if (p != V1_CLOSED) {
            o[off[ARM_PIP] + 7 * e + p] = 1.0f;
            o[off[ARM_OPEN] + e] = 1.0f;
            if (v->double_ends >> e & 1)
                o[off[ARM_DOUBLE] + e] = 1.0f;
            o[off[ARM_VALUE] + e] = (float)(v->values[e] / scale[ARM_VALUE]);
        }
    }
    long spinner = v->spinner;
    if (spinner >= 0 && spinner < 7) {
        o[off[SPIN_PIP] + spinner] = 1.0f;
        if (v->covered >= 1) {
            o[off[SPIN_SIDES]] = 1.0f;
            if (v->covered >= 2)
                o[off[SPIN_SIDES] + 1] = 1.0f;
        }
    }
    long count = v->count;
    o[off[TOTAL]] = count < scale[TOTAL] ? (float)(count / scale[TOTAL]) : 1.0f;
    if (v->lead < 0)
        o[off[LEAD]] = 1.0f;
    if (v->forced >= 0)
        o[off[FORCED]] = 1.0f;
    for (Py_ssize_t i = 0; i < v->n_legal; i++) {
        long p = v->points[i];
        if (p)
            o[off[MOVE_POINTS] + v->legal[i]] = p < scale[MOVE_POINTS] ? (float)(p / scale[MOVE_POINTS]) : 1.0f;
    }
    for (Py_ssize_t r = 0; r < v->n; r++) {
        long c = v->counts[r], m = v->missing[r], x = v->scores[r];
        o[off[COUNTS] + r] = c < scale[COUNTS] ? (float)(c / scale[COUNTS]) : 1.0f;
        for (int p = 0; p < 7; p++)
            if (m >> p & 1)
                o[off[MISSING] + 7 * r + p] = 1.0f;
        if (x)
            o[off[SCORES] + r] = clip1((double)x / v->score_scale);
    }
    o[off[BONEYARD]] = (float)(v->boneyard / scale[BONEYARD]);
    o[off[BONEYARD] + 1] = (float)(v->drawable / scale[BONEYARD]);
    long hp = 0;
    for (int t = 0; t < V1_TILES; t++)
        if (v->hand >> t & 1)
            hp += v1_tile_a[t] + v1_tile_b[t];
    o[off[HAND_PIPS]] = hp < scale[HAND_PIPS] ? (float)(hp / scale[HAND_PIPS]) : 1.0f;
    long unseen = ~(v->hand | v->played) & ((1L << V1_TILES) - 1);
    for (int p = 0; p < 7; p++)
        o[off[UNSEEN] + p] = (float)(bit_count(v1_pip_tiles[p] & unseen) / scale[UNSEEN]);
}

/* the scores of ``v`` per relative seat: ``scores[rel_sides[r]]`` (checked) for r < v->n */
static int v1_scores(view_t *v, PyObject *scores_seq, PyObject *rel_sides, const char *what) {
    Py_ssize_t n_scores, n_rel;
    PyObject **scores = items_of(scores_seq, &n_scores, what);
    PyObject **sides = scores ? items_of(rel_sides, &n_rel, "rel_sides") : NULL;
    if (sides == NULL)
        return -1;
    if (n_rel != v->n) {
        PyErr_SetString(PyExc_ValueError, "rel_sides must hold one side per seat");
        return -1;
    }
    for (Py_ssize_t r = 0; r < v->n; r++) {
        long side;
        if (int_named(sides[r], &side, "an item of ", "rel_sides") < 0)
            return -1;
        if (side < 0 || side >= n_scores) {
            PyErr_SetString(PyExc_ValueError, "rel_sides names a side outside the scores");
            return -1;
        }
        if (int_named(scores[side], &v->scores[r], "an item of ", what) < 0)
            return -1;
    }
    return 0;
}

#endif
