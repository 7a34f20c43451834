/* Bit counts on the tile masks (28 bits) in the C accelerators (_fastobs.c, _fastlook.c): GCC's and
   Clang's builtins, MSVC's intrinsics. Header only. */

#ifndef ALLFIVES_FASTBITS_H
#define ALLFIVES_FASTBITS_H

#if defined(_MSC_VER)
#include <intrin.h>
/* the number of set bits */
static inline int bit_count(unsigned long x) { return (int)__popcnt(x); }
/* the index of the lowest set bit (x != 0) */
static inline int low_bit(unsigned long x) {
    unsigned long i;
    _BitScanForward(&i, x);
    return (int)i;
}
#else
static inline int bit_count(unsigned long x) { return __builtin_popcountl(x); }
static inline int low_bit(unsigned long x) { return __builtin_ctzl(x); }
#endif

#endif
