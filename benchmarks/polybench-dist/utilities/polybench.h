/* polybench.h: tenslift's own implementation of the PolyBench/C 4.2 macro
 * interface, written from the suite's documentation (its README and
 * polybench.pdf describe these macros and flags); no file of the suite is
 * copied. Kernels of benchmarks/polybench-dist/ include it exactly as they
 * would include the distribution's header, so they compile as the suite is
 * distributed: fixed-size arrays padded by POLYBENCH_PADDING_FACTOR, loops
 * bounded by the run-time parameters (_PB_N = n), sizes picked with
 * -D<MINI|SMALL|MEDIUM|LARGE|EXTRALARGE>_DATASET in each kernel's <name>.h.
 *
 * Flags understood (all optional):
 *   POLYBENCH_USE_C99_PROTO   array parameters and arrays sized by the run-time
 *                             sizes (C99 variable-length arrays) instead of the
 *                             macro constants
 *   POLYBENCH_USE_SCALAR_LB   loop bounds _PB_* are the macro constants, not
 *                             the run-time parameters
 *   POLYBENCH_PADDING_FACTOR  extra elements added to every array dimension
 *                             (default 0)
 *   POLYBENCH_STACK_ARRAYS    arrays of main() on the stack instead of the heap
 *   POLYBENCH_USE_RESTRICT    array parameters are declared restrict
 *   POLYBENCH_DUMP_ARRAYS     main() dumps the output arrays to stderr
 *   POLYBENCH_TIME            main() prints the kernel's run time in seconds
 */
#ifndef TENSLIFT_POLYBENCH_H
#define TENSLIFT_POLYBENCH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* #pragma scop / endscop mark the static control part; compilers that do not
 * know them must stay quiet under -Wall. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

#ifndef POLYBENCH_PADDING_FACTOR
#define POLYBENCH_PADDING_FACTOR 0
#endif

/* Which extent an array is declared with: the macro constant (the default) or
 * the run-time size (C99 prototypes). */
#ifdef POLYBENCH_USE_C99_PROTO
#define POLYBENCH_C99_SELECT(fixed, runtime) runtime
#else
#define POLYBENCH_C99_SELECT(fixed, runtime) fixed
#endif

/* Which bound a loop runs to: the run-time parameter (the default) or the
 * macro constant. Kernel headers define _PB_<SIZE> with it. */
#ifdef POLYBENCH_USE_SCALAR_LB
#define POLYBENCH_LOOP_BOUND(fixed, runtime) fixed
#else
#define POLYBENCH_LOOP_BOUND(fixed, runtime) runtime
#endif

#ifdef POLYBENCH_USE_RESTRICT
#define POLYBENCH_RESTRICT restrict
#else
#define POLYBENCH_RESTRICT
#endif

#define POLYBENCH_EXTENT(fixed, runtime) (POLYBENCH_C99_SELECT(fixed, runtime) + POLYBENCH_PADDING_FACTOR)

/* Array parameters and declarations: var[extent]... */
#define POLYBENCH_1D(var, dim1, ddim1) var[POLYBENCH_RESTRICT POLYBENCH_EXTENT(dim1, ddim1)]
#define POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2)                                              \
  var[POLYBENCH_RESTRICT POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)]
#define POLYBENCH_3D(var, dim1, dim2, dim3, ddim1, ddim2, ddim3)                                 \
  var[POLYBENCH_RESTRICT POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)]             \
     [POLYBENCH_EXTENT(dim3, ddim3)]
#define POLYBENCH_4D(var, dim1, dim2, dim3, dim4, ddim1, ddim2, ddim3, ddim4)                    \
  var[POLYBENCH_RESTRICT POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)]             \
     [POLYBENCH_EXTENT(dim3, ddim3)][POLYBENCH_EXTENT(dim4, ddim4)]

/* Arrays of main(): by default a pointer to a heap array (so large datasets do
 * not overflow the stack), used through POLYBENCH_ARRAY(var) = *var. */
#ifdef POLYBENCH_STACK_ARRAYS
#define POLYBENCH_1D_ARRAY_DECL(var, type, dim1, ddim1) type POLYBENCH_1D(var, dim1, ddim1)
#define POLYBENCH_2D_ARRAY_DECL(var, type, dim1, dim2, ddim1, ddim2)                             \
  type POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2)
#define POLYBENCH_3D_ARRAY_DECL(var, type, dim1, dim2, dim3, ddim1, ddim2, ddim3)                \
  type POLYBENCH_3D(var, dim1, dim2, dim3, ddim1, ddim2, ddim3)
#define POLYBENCH_4D_ARRAY_DECL(var, type, dim1, dim2, dim3, dim4, ddim1, ddim2, ddim3, ddim4)   \
  type POLYBENCH_4D(var, dim1, dim2, dim3, dim4, ddim1, ddim2, ddim3, ddim4)
#define POLYBENCH_ARRAY(var) var
#define POLYBENCH_FREE_ARRAY(var)
#else
#define POLYBENCH_1D_ARRAY_DECL(var, type, dim1, ddim1)                                          \
  type(*var)[POLYBENCH_EXTENT(dim1, ddim1)] = (type(*)[POLYBENCH_EXTENT(dim1, ddim1)])           \
      polybench_alloc_data((unsigned long long)POLYBENCH_EXTENT(dim1, ddim1), (int)sizeof(type))
#define POLYBENCH_2D_ARRAY_DECL(var, type, dim1, dim2, ddim1, ddim2)                             \
  type(*var)[POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)] =                     \
      (type(*)[POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)])                     \
          polybench_alloc_data((unsigned long long)POLYBENCH_EXTENT(dim1, ddim1) *                \
                                   POLYBENCH_EXTENT(dim2, ddim2),                                 \
                               (int)sizeof(type))
#define POLYBENCH_3D_ARRAY_DECL(var, type, dim1, dim2, dim3, ddim1, ddim2, ddim3)                \
  type(*var)[POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)]                       \
            [POLYBENCH_EXTENT(dim3, ddim3)] =                                                     \
      (type(*)[POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)]                      \
              [POLYBENCH_EXTENT(dim3, ddim3)])                                                    \
          polybench_alloc_data((unsigned long long)POLYBENCH_EXTENT(dim1, ddim1) *                \
                                   POLYBENCH_EXTENT(dim2, ddim2) * POLYBENCH_EXTENT(dim3, ddim3), \
                               (int)sizeof(type))
#define POLYBENCH_4D_ARRAY_DECL(var, type, dim1, dim2, dim3, dim4, ddim1, ddim2, ddim3, ddim4)   \
  type(*var)[POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)]                       \
            [POLYBENCH_EXTENT(dim3, ddim3)][POLYBENCH_EXTENT(dim4, ddim4)] =                      \
      (type(*)[POLYBENCH_EXTENT(dim1, ddim1)][POLYBENCH_EXTENT(dim2, ddim2)]                      \
              [POLYBENCH_EXTENT(dim3, ddim3)][POLYBENCH_EXTENT(dim4, ddim4)])                     \
          polybench_alloc_data((unsigned long long)POLYBENCH_EXTENT(dim1, ddim1) *                \
                                   POLYBENCH_EXTENT(dim2, ddim2) * POLYBENCH_EXTENT(dim3, ddim3) * \
                                   POLYBENCH_EXTENT(dim4, ddim4),                                 \
                               (int)sizeof(type))
#define POLYBENCH_ARRAY(var) (*var)
#define POLYBENCH_FREE_ARRAY(var) polybench_free_data((void *)var)
#endif

/* Dumping the outputs: main() calls print_array through
 * polybench_prevent_dce, which runs it only when POLYBENCH_DUMP_ARRAYS is
 * defined, and otherwise behind a condition the compiler cannot prove false
 * (so the kernel's stores are not dead code). */
#define POLYBENCH_DUMP_TARGET stderr
#define POLYBENCH_DUMP_START fprintf(POLYBENCH_DUMP_TARGET, "==BEGIN DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_FINISH fprintf(POLYBENCH_DUMP_TARGET, "==END   DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_BEGIN(name) fprintf(POLYBENCH_DUMP_TARGET, "begin dump: %s", name)
#define POLYBENCH_DUMP_END(name) fprintf(POLYBENCH_DUMP_TARGET, "\nend   dump: %s\n", name)

#ifdef POLYBENCH_DUMP_ARRAYS
#define POLYBENCH_DCE_ONLY_CODE
#else
#define POLYBENCH_DCE_ONLY_CODE if (argc > 42 && !strcmp(argv[0], ""))
#endif
#define polybench_prevent_dce(call) POLYBENCH_DCE_ONLY_CODE call

/* Instruments: the wall-clock timer with -DPOLYBENCH_TIME, nothing otherwise. */
#ifdef POLYBENCH_TIME
#define polybench_start_instruments polybench_timer_start();
#define polybench_stop_instruments polybench_timer_stop();
#define polybench_print_instruments polybench_timer_print();
#else
#define polybench_start_instruments
#define polybench_stop_instruments
#define polybench_print_instruments
#endif

/* Functions of polybench.c. */
extern void polybench_flush_cache(void);
extern void polybench_prepare_instruments(void);
extern void polybench_timer_start(void);
extern void polybench_timer_stop(void);
extern void polybench_timer_print(void);
extern void *polybench_alloc_data(unsigned long long n, int elt_size);
extern void polybench_free_data(void *ptr);

#endif /* TENSLIFT_POLYBENCH_H */
