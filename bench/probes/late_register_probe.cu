/*
 * late_register_probe.cu - does compute-sanitizer's memcheck accept a
 * kernel's reads of host memory registered (cudaHostRegister, mapped)
 * after the kernel was launched?  An automatic pin is made that way: a
 * descriptor open during the pin learns it from a READ reply and reads the
 * mapping (docs/api.md, "Automatic pins").
 *
 *   late_register_probe            register after the launch, from another thread
 *   late_register_probe --before   register before the launch
 *
 * Each prints the kernel's sum of the registered words (right: 65536).
 * Run plain and under `compute-sanitizer --tool memcheck`.  On an H200
 * (CUDA 12) both sums are right; memcheck reports every read of the late
 * registration as out of bounds "inside the nearest allocation", and none
 * of the early one: memcheck checks a kernel against the allocations known
 * at its launch.  So `make sanitize` runs memcheck only on the automatic
 * pin tests where no pin arrives while a kernel runs.
 */
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <cuda/atomic>

#include "benchlib/opts.h"
#include "benchlib/report.h"

static const char probe_usage[] =
    "usage: late_register_probe [--before]\n"
    "  --before  register the host memory before the kernel's launch (default: after it, from another\n"
    "            thread, as an automatic pin does)\n";

/* The command line: 0, 1 for --help, or -EINVAL with err. */
static int probe_options(int argc, char **argv, int *before, char *err, size_t len)
{
  static const struct bench_opt table[] = {{"before", BENCH_OPT_FLAG, BENCH_OPTS_FIRST}};
  struct bench_opts p;
  int id, rc = 0;
  bench_opts_init(&p, argc, argv, table, 1, err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END) {
    if (id == BENCH_OPTS_FIRST)
      *before = 1;
    else
      rc = id == BENCH_OPTS_HELP ? 1 : id;
  }
  return rc ? rc : bench_opts_operands(&p, 0);
}
__global__ void k(unsigned *go, const unsigned long long *const *pp, unsigned long long *out)
{
  cuda::atomic_ref<unsigned, cuda::thread_scope_system> g(*go);
  /* acquire: pairs with the host thread's release of go (*pp is set) */
  while (g.load(cuda::memory_order_acquire) == 0) __nanosleep(1000);
  /* relaxed: the acquire of go above orders it after the store of *pp */
  const unsigned long long *p =
      cuda::atomic_ref<const unsigned long long *, cuda::thread_scope_system>(
          *const_cast<const unsigned long long **>(pp)).load(cuda::memory_order_relaxed);
  unsigned long long s = 0;
  for (int i = threadIdx.x; i < 1 << 16; i += blockDim.x) s += p[i];
  atomicAdd(out, s);
}
int main(int argc, char **argv)
{
  int before = 0;
  char err[256];
  int rc = probe_options(argc, argv, &before, err, sizeof(err));
  if ((rc = bench_opts_exit("late_register_probe", rc, err, probe_usage)) >= 0)
    return rc;
  if (bench_need_gpu("late_register_probe", 0) != 0)
    return 2;
  size_t len = 1 << 20;
  unsigned long long *h = (unsigned long long *)aligned_alloc(4096, len);
  for (size_t i = 0; i < len / 8; i++) h[i] = 1;
  unsigned *go; const unsigned long long **pp; unsigned long long *out;
  cudaHostAlloc((void **)&go, 4, cudaHostAllocMapped); *go = 0;
  cudaHostAlloc((void **)&pp, 8, cudaHostAllocMapped);
  cudaMalloc(&out, 8); cudaMemset(out, 0, 8);
  if (before) cudaHostRegister(h, len, cudaHostRegisterMapped | cudaHostRegisterPortable);
  k<<<1, 256>>>(go, pp, out);
  std::thread t([&] {
    cudaSetDevice(0);
    if (!before) printf("register: %s\n", cudaGetErrorString(cudaHostRegister(h, len, cudaHostRegisterMapped | cudaHostRegisterPortable)));
    *pp = h;
    /* release: publishes *pp (and the registration) to the kernel's acquire of go */
    cuda::atomic_ref<unsigned, cuda::thread_scope_system>(*go).store(1, cuda::memory_order_release);
  });
  t.join();
  cudaError_t e = cudaDeviceSynchronize();
  unsigned long long r = 0; cudaMemcpy(&r, out, 8, cudaMemcpyDeviceToHost);
  printf("%s: sync %s sum %llu (want %d)\n", before ? "registered before launch" : "registered after launch", cudaGetErrorString(e), r, 1 << 16);
  return 0;
}
