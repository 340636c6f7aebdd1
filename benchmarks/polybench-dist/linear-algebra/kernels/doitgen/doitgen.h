/* doitgen.h: dataset sizes and data type of PolyBench/C 4.2 doitgen, in the
 * suite's layout (written for tenslift; see benchmarks/README.md). */
#ifndef _DOITGEN_H
#define _DOITGEN_H

/* Default to LARGE_DATASET. */
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

#if !defined(NR) && !defined(NQ) && !defined(NP)

#ifdef MINI_DATASET
#define NR 10
#define NQ 8
#define NP 12
#endif

#ifdef SMALL_DATASET
#define NR 25
#define NQ 20
#define NP 30
#endif

#ifdef MEDIUM_DATASET
#define NR 50
#define NQ 40
#define NP 60
#endif

#ifdef LARGE_DATASET
#define NR 150
#define NQ 140
#define NP 160
#endif

#ifdef EXTRALARGE_DATASET
#define NR 250
#define NQ 220
#define NP 270
#endif

#endif /* !(NR NQ NP) */

#define _PB_NR POLYBENCH_LOOP_BOUND(NR, nr)
#define _PB_NQ POLYBENCH_LOOP_BOUND(NQ, nq)
#define _PB_NP POLYBENCH_LOOP_BOUND(NP, np)

/* Default data type. */
#if !defined(DATA_TYPE_IS_INT) && !defined(DATA_TYPE_IS_FLOAT) && !defined(DATA_TYPE_IS_DOUBLE)
#define DATA_TYPE_IS_DOUBLE
#endif

#ifdef DATA_TYPE_IS_INT
#define DATA_TYPE int
#define DATA_PRINTF_MODIFIER "%d "
#define SCALAR_VAL(x) x
#define SQRT_FUN(x) sqrt(x)
#define EXP_FUN(x) exp(x)
#define POW_FUN(x, y) pow(x, y)
#endif

#ifdef DATA_TYPE_IS_FLOAT
#define DATA_TYPE float
#define DATA_PRINTF_MODIFIER "%0.2f "
#define SCALAR_VAL(x) x##f
#define SQRT_FUN(x) sqrtf(x)
#define EXP_FUN(x) expf(x)
#define POW_FUN(x, y) powf(x, y)
#endif

#ifdef DATA_TYPE_IS_DOUBLE
#define DATA_TYPE double
#define DATA_PRINTF_MODIFIER "%0.2lf "
#define SCALAR_VAL(x) x
#define SQRT_FUN(x) sqrt(x)
#define EXP_FUN(x) exp(x)
#define POW_FUN(x, y) pow(x, y)
#endif

#endif /* !_DOITGEN_H */
