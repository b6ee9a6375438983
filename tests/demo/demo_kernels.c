/* libdemokernels.so: the demo's kernels (demo.cu) for the simulated driver.
 *
 * Same names, parameters and arithmetic as the __global__ functions in
 * demo.cu, written as host functions that the simulated libcuda.so.1 runs on
 * the stream's worker thread (see tests/sim/simkernel.h). demo_sim.c loads
 * them with cuModuleLoadData(&mod, "simcuda:" DEMO_KERNELS_PATH). */
#include <math.h>

#include "simkernel.h"

#define ARG(T, i) (*(T *)args[(i)])

/* jacobi(float *out, const float *in, const float *f, float h2, int n) */
static void jacobi_body(const simcuda_dims *d, void **args)
{
    (void)d;
    float *out = ARG(float *, 0);
    const float *in = ARG(const float *, 1), *f = ARG(const float *, 2);
    float h2 = ARG(float, 3);
    int n = ARG(int, 4);
    for (int i = 0; i < n; i++) {
        float l = i > 0 ? in[i - 1] : 0.0f;
        float r = i < n - 1 ? in[i + 1] : 0.0f;
        out[i] = 0.5f * (l + r + h2 * f[i]);
    }
}
SIMCUDA_KERNEL(jacobi, jacobi_body, sizeof(float *), sizeof(float *), sizeof(float *), sizeof(float), sizeof(int));

/* copy(float *old, const float *u, int n): old = u */
static void copy_body(const simcuda_dims *d, void **args)
{
    (void)d;
    float *old = ARG(float *, 0);
    const float *u = ARG(const float *, 1);
    int n = ARG(int, 2);
    for (int i = 0; i < n; i++)
        old[i] = u[i];
}
SIMCUDA_KERNEL(copy, copy_body, sizeof(float *), sizeof(float *), sizeof(int));

/* axpy(float *w, const float *u, float a, int n): w = w * 0.5 + a * u */
static void axpy_body(const simcuda_dims *d, void **args)
{
    (void)d;
    float *w = ARG(float *, 0);
    const float *u = ARG(const float *, 1);
    float a = ARG(float, 2);
    int n = ARG(int, 3);
    for (int i = 0; i < n; i++)
        w[i] = w[i] * 0.5f + a * u[i];
}
SIMCUDA_KERNEL(axpy, axpy_body, sizeof(float *), sizeof(float *), sizeof(float), sizeof(int));

/* scale_shift(float *w, float s, float t, int n): w = w * s + t */
static void scale_shift_body(const simcuda_dims *d, void **args)
{
    (void)d;
    float *w = ARG(float *, 0);
    float s = ARG(float, 1), t = ARG(float, 2);
    int n = ARG(int, 3);
    for (int i = 0; i < n; i++)
        w[i] = w[i] * s + t;
}
SIMCUDA_KERNEL(scale_shift, scale_shift_body, sizeof(float *), sizeof(float), sizeof(float), sizeof(int));

/* clamp(float *w, float lo, float hi, int n) */
static void clamp_body(const simcuda_dims *d, void **args)
{
    (void)d;
    float *w = ARG(float *, 0);
    float lo = ARG(float, 1), hi = ARG(float, 2);
    int n = ARG(int, 3);
    for (int i = 0; i < n; i++)
        w[i] = fminf(fmaxf(w[i], lo), hi);
}
SIMCUDA_KERNEL(clamp, clamp_body, sizeof(float *), sizeof(float), sizeof(float), sizeof(int));

/* change(float *res, const float *u, const float *old, int n): res[0] = sum |u - old| */
static void change_body(const simcuda_dims *d, void **args)
{
    (void)d;
    float *res = ARG(float *, 0);
    const float *u = ARG(const float *, 1), *old = ARG(const float *, 2);
    int n = ARG(int, 3);
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += fabsf(u[i] - old[i]);
    res[0] = s;
}
SIMCUDA_KERNEL(change, change_body, sizeof(float *), sizeof(float *), sizeof(float *), sizeof(int));
