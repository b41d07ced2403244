/* STREAM-like memory bandwidth for bench/compare.sh: copy (c = a) and triad (a = b + s*c) over
 * three arrays of N doubles (default 2^25 each, 768 MiB in all, far beyond any cache), OpenMP over
 * OMP_NUM_THREADS threads, best of REPS. Bytes counted as STREAM does: copy 16 per element (read a,
 * write c), triad 24 (read b and c, write a); write-allocate traffic is not counted.
 * Prints one JSON line: {"n": ..., "reps": ..., "threads": ..., "copy_gb_s": ..., "triad_gb_s": ...}
 * (GB = 1e9 bytes). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : (1L << 25);
  const int reps = argc > 2 ? atoi(argv[2]) : 5;
  double* a = malloc(sizeof(double) * n);
  double* b = malloc(sizeof(double) * n);
  double* c = malloc(sizeof(double) * n);
  if (!a || !b || !c) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.0;
  }
  double best_copy = 1e30, best_triad = 1e30;
  const double s = 3.0;
  for (int r = 0; r < reps; ++r) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) c[i] = a[i];
    double t1 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    double t2 = omp_get_wtime();
    if (t1 - t0 < best_copy) best_copy = t1 - t0;
    if (t2 - t1 < best_triad) best_triad = t2 - t1;
  }
  double check = 0;
  for (long i = 0; i < n; i += 4096) check += a[i];
  printf("{\"n\": %ld, \"reps\": %d, \"threads\": %d, \"copy_gb_s\": %.3f, \"triad_gb_s\": %.3f, \"check\": %.1f}\n",
         n, reps, omp_get_max_threads(), 16.0 * n / best_copy / 1e9, 24.0 * n / best_triad / 1e9, check);
  free(a);
  free(b);
  free(c);
  return 0;
}
