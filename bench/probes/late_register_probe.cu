/*
 * late_register_probe.cu - does compute-sanitizer's memcheck accept a
 * kernel's reads of host memory registered (cudaHostRegister, mapped)
 * after the kernel was launched?  An automatic pin is made that way: a
 * descriptor open during the pin learns it from a READ reply and reads the
 * mapping (docs/api.md, "Automatic pins").
 *
 *   late_register_probe      register after the launch, from another thread
 *   late_register_probe b    register before the launch
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
  const int before = argc > 1;
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
