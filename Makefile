# libgpufs - a file system library for GPU kernels.
#
#   make            everything `make all` builds: the library, samples, tests,
#                   benchmarks and applications (tests/default_goal_test.sh checks)
#   make run        the main job: stream a generated 1 GiB file through gread
#   make test       host tests (ThreadSanitizer), GPU tests (skip without a GPU), the
#                   install, MPI, SemCache, debug-build and default-goal checks; the summary last
#   make DEBUG=1    the debug build (own BUILD): group-argument and invariant checks;
#                   make test-debug builds and runs its tests (docs/api.md)
#   make bench      benchmarks with their baselines (needs a GPU)
#   make rodinia    the rodinia-io suite;  make collage  the LSH image collage (GPU)
#   make mpi        collage_mpi and rodinia_mpi over MPI ranks (needs Open MPI; docs/mpi.md)
#   make fsx        the random exerciser, 10M calls (GPU; FSX_OPS, FSX_SEED, FSX_FILES, FSX_BLOCKS)
#   make install    PREFIX=/usr/local [DESTDIR=]: the public headers, libgpufs.a,
#                   the CMake package gpufs::gpufs and gpufs.pc;  make uninstall
#   V=1             show full command lines;  CUDA_ARCH=sm_90  the GPU that the
#                   tests and programs are built for;  LIB_ARCHS  those libgpufs.a
#                   holds code for (sm_80 sm_90 and CUDA_ARCH, + PTX of LIB_PTX)

.DEFAULT_GOAL := all

CUDA      ?= /usr/local/cuda
NVCC      ?= $(CUDA)/bin/nvcc
CUDA_ARCH ?= sm_90
# libgpufs.a carries machine code for each of LIB_ARCHS and PTX for LIB_PTX,
# so that an installed library links into programs for A100s (sm_80),
# H100s and H200s (sm_90) and later GPUs (the device link compiles the PTX);
# the CMake package records them and stops at configure time on an older one.
# The three cost 1.6x the library's device compile time of sm_90 alone
# (read.cu: 7.3 s against 4.6); the tests and programs build for CUDA_ARCH.
LIB_ARCHS ?= $(sort sm_80 sm_90 $(CUDA_ARCH))
LIB_PTX   ?= compute_90
PREFIX    ?= /usr/local
BUILD     ?= build
V         ?= 0
Q          = $(if $(filter 1,$(V)),,@)
say        = $(if $(filter 1,$(V)),,@printf '  %-6s %s\n' $(1) $(2);)

INC       := -I. -Iinclude
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 -Wall -Wextra -D_GNU_SOURCE $(INC) -I$(CUDA)/include
NVFLAGS   ?= -O3 -g -lineinfo
ARCH_FLAGS = -arch=$(CUDA_ARCH)
NVFLAGS   += -std=c++17 $(ARCH_FLAGS) -rdc=true $(INC) -Xcompiler -Wall \
             -Xcompiler -Wno-unused-function $(EXTRA_NVFLAGS)
TSAN      := -fsanitize=thread -g -O1
HOSTCXX   := -std=c++17 -Wall -Wextra -D_GNU_SOURCE $(INC) -I$(CUDA)/include/cccl -I$(CUDA)/include
GTEST_LIB := -lgtest -lgtest_main -pthread
CUDA_LINK := -arch=$(CUDA_ARCH) -rdc=true --cudart static -lpthread
# DEBUG=1: the debug build (docs/api.md, "The debug build"): each device
# call checks that its group passed equal arguments, and the cache's and
# queue's invariants are asserted (GPUFS_DEBUG).  Give it a BUILD of its own.
ifeq ($(DEBUG),1)
CFLAGS    += -DGPUFS_DEBUG
NVFLAGS   += -DGPUFS_DEBUG
HOSTCXX   += -DGPUFS_DEBUG
endif

# Host sources that call CUDA (the runtime and its public calls; the
# device side behind libgpufs/common/devcalls.h) are built once; the rest
# (daemon, host files, pinner, config) also with ThreadSanitizer for the
# host tests.
HOST_CUDA_SRC := $(addprefix libgpufs/host/,runtime.c instance.c stats.c host_read.c register.c acquire.c)
HOST_CORE_SRC := $(filter-out $(HOST_CUDA_SRC),$(wildcard libgpufs/host/*.c))
DEV_SRC       := $(wildcard libgpufs/device/*.cu)
HEADERS       := $(wildcard include/*.cuh include/gpufs/*.h libgpufs/*/*.h libgpufs/*/*.cuh)

LIB_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(HOST_CORE_SRC) $(HOST_CUDA_SRC)) \
            $(patsubst %.cu,$(BUILD)/obj/%.o,$(DEV_SRC))
TSAN_OBJ := $(patsubst %.c,$(BUILD)/tsan/%.o,$(HOST_CORE_SRC))
# SemCache (issue 18): its cache, protocol, calls and GPU backend, host C,
# tested with a CPU "device" in the host tests (the drop-in's entry points
# only in libsemcache.so).
SEMCACHE_C_SRC := $(filter-out %/dropin.c %/dropin_blas.c %/dropin_io.c,$(wildcard semcache/src/*.c))
SEMCACHE_TSAN  := $(patsubst %.c,$(BUILD)/tsan/%.o,$(SEMCACHE_C_SRC))
# libsemcache.so, the drop-in (LD_PRELOAD, or linked ahead of the BLAS)
SEMCACHE_SO    := $(BUILD)/lib/libsemcache.so
SEMCACHE_PIC   := $(patsubst %.c,$(BUILD)/pic/%.o,$(wildcard semcache/src/*.c))
SEMCACHE_CHAIN := $(BUILD)/tests/semcache_chain
SEMCACHE_ROUTINES := $(BUILD)/tests/semcache_routines
SEMCACHE_IO    := $(BUILD)/tests/semcache_io
# the program's BLAS however loaded, and operands on the stack (issue 36):
# a program without a BLAS that dlopens a module bringing its own, and
# stack arrays (semcache/tests/loaders_test.sh)
SEMCACHE_DLOPEN := $(BUILD)/tests/semcache_dlopen
SEMCACHE_LOCAL  := $(BUILD)/tests/libsemcache_local_blas.so
SEMCACHE_STACK  := $(BUILD)/tests/semcache_stack
# calls on both sides of the crossover on the same matrices (issue 36)
SEMCACHE_MIXED  := $(BUILD)/tests/semcache_mixed
# SemCache's benchmark programs (semcache/bench/, `make semcache-bench`)
SCB_DIR   := $(BUILD)/semcache-bench
SCB_PROGS := $(SCB_DIR)/chain $(SCB_DIR)/structdyn
SCB_CBLAS := $(SCB_DIR)/libcblas_f77.so
# the time of one call by routine and size, and cuBLAS's own (semcache/bench/calls.py)
SCB_CALLS := $(SCB_DIR)/calls $(SCB_DIR)/cublas_calls
LAPACKE_A := $(shell $(CC) -print-file-name=liblapacke.a)
LIB      := $(BUILD)/libgpufs.a

HOST_TEST_SRC := $(wildcard tests/host/*.cpp)
HOST_TEST_OBJ := $(patsubst %.cpp,$(BUILD)/tsan/%.o,$(HOST_TEST_SRC))
GPU_TEST_SRC  := $(filter-out tests/gpu/debug_%,$(wildcard tests/gpu/*.cu))
GPU_TEST_OBJ  := $(patsubst %.cu,$(BUILD)/obj/%.o,$(GPU_TEST_SRC))

# benchlib/: the generic parts of every benchmark and sample (data files,
# patterns, timing, JSON rows, tables, baselines), one library that bench/,
# samples/ and rodinia-io/ link.
BENCHLIB_C_SRC := $(wildcard benchlib/*.c)
BENCHLIB_OBJ   := $(patsubst %.c,$(BUILD)/obj/%.o,$(BENCHLIB_C_SRC)) \
                  $(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard benchlib/*.cu))
BENCHLIB       := $(BUILD)/libbenchlib.a
BENCH_OBJ      := $(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard bench/*.cu)) \
                  $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard bench/*.c))
SAMPLES        := $(patsubst samples/%.cu,$(BUILD)/samples/%,$(wildcard samples/*.cu))

# rodinia-io/: the harness and one folder per benchmark.  Plain C files
# (generators, CPU references, input files, checks) also build with
# ThreadSanitizer for the host tests; .cu files hold the four versions.
# rodinia-io/mpi/ is rodinia_mpi's (below), not the suite's.
RIO_C_SRC   := $(filter-out rodinia-io/mpi/%,$(wildcard rodinia-io/*/*.c))
RIO_OBJ     := $(patsubst %.c,$(BUILD)/obj/%.o,$(RIO_C_SRC)) \
               $(patsubst %.cu,$(BUILD)/obj/%.o,$(filter-out %/main.cu rodinia-io/mpi/%,$(wildcard rodinia-io/*/*.cu)))
RIO_MAIN    := $(BUILD)/obj/rodinia-io/harness/main.o
RIO_TSAN    := $(patsubst %.c,$(BUILD)/tsan/%.o,$(RIO_C_SRC) benchlib/util.c benchlib/datafile.c benchlib/opts.c)
RIO_HEADERS := $(filter-out rodinia-io/mpi/%,$(wildcard rodinia-io/*/*.h rodinia-io/*/*.cuh benchlib/*.h))
RIO_BIN     := $(BUILD)/rodinia-io/rodinia

# samples/collage/: the LSH image collage.  Plain C files (pictures, seeds,
# the dataset, the index, the cpu version) also build with ThreadSanitizer
# for the host tests; PNG, JPEG and zlib are linked statically (the GPU
# machines have other sonames).
COLLAGE_C_SRC  := $(wildcard samples/collage/*.c)
COLLAGE_OBJ    := $(patsubst %.c,$(BUILD)/obj/%.o,$(COLLAGE_C_SRC)) \
                  $(patsubst %.cu,$(BUILD)/obj/%.o,$(filter-out %/main.cu,$(wildcard samples/collage/*.cu)))
COLLAGE_TSAN   := $(patsubst %.c,$(BUILD)/tsan/%.o,$(COLLAGE_C_SRC)) \
                  $(BUILD)/tsan/samples/collage/mpi/plan.o
COLLAGE_MAIN   := $(BUILD)/obj/samples/collage/main.o
COLLAGE_BIN    := $(BUILD)/samples/collage/collage
IMAGE_LIBS     := $(foreach a,libpng16.a libjpeg.a libz.a,$(shell $(CC) -print-file-name=$(a))) -lm
# the collage's headers (its structs and options), also for the host tests that include them
$(COLLAGE_OBJ) $(COLLAGE_TSAN) $(COLLAGE_MAIN) $(HOST_TEST_OBJ) $(GPU_TEST_OBJ): $(wildcard samples/collage/*.h)
# The distances vectorize (AVX2 where the CPU has it: cpu.c picks at run time).
$(BUILD)/obj/samples/collage/cpu.o $(BUILD)/tsan/samples/collage/cpu.o: CFLAGS += -O3

# samples/collage/mpi/: `collage_mpi`, the collage over MPI ranks (`make mpi`,
# docs/mpi.md).  Built only when asked and only where MPI is found: the
# flags of Open MPI's wrapper (MPICC: --showme:compile, --showme:link), else
# of pkg-config ompi-c; MPI_FOUND is "yes" when mpi.h compiles with them.
# `make all` never looks.  nvcc links (the device link of the collage's
# objects): -L and -l pass as they are, -Wl,X as -Xlinker X.
MPICC           ?= mpicc
MPI_CFLAGS       = $(shell $(MPICC) --showme:compile 2>/dev/null || pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS         = $(shell $(MPICC) --showme:link 2>/dev/null || pkg-config --libs ompi-c 2>/dev/null)
MPI_FOUND        = $(shell printf '\043include <mpi.h>\nint main(void) { return 0; }\n' | \
                     $(CC) $(MPI_CFLAGS) -x c -fsyntax-only - >/dev/null 2>&1 && echo yes)
MPI_COMMA       := ,
MPI_NVLIBS       = $(foreach f,$(MPI_LIBS),$(if $(filter -L% -l%,$(f)),$(f),$(if $(filter -Wl$(MPI_COMMA)%,$(f)),\
                     -Xlinker $(patsubst -Wl$(MPI_COMMA)%,%,$(f)),-Xcompiler $(f))))
COLLAGE_MPI_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard samples/collage/mpi/*.c))
COLLAGE_MPI_BIN := $(BUILD)/samples/collage/collage_mpi
# benchlib/mpi/: where a rank runs and its GPU, shared by both MPI programs
MPI_PLACE_OBJ   := $(BUILD)/obj/benchlib/mpi/place.o
$(MPI_PLACE_OBJ): CFLAGS += $(MPI_CFLAGS)
$(MPI_PLACE_OBJ): benchlib/mpi/place.h
$(COLLAGE_MPI_OBJ) $(BUILD)/obj/rodinia-io/mpi/main.o: benchlib/mpi/place.h
$(COLLAGE_MPI_OBJ): CFLAGS += $(MPI_CFLAGS)
$(COLLAGE_MPI_OBJ): samples/collage/collage.h samples/collage/options.h $(wildcard samples/collage/mpi/*.h)

# rodinia-io/mpi/: `rodinia_mpi`, 2dconv, gesummv and pathfinder split over
# MPI ranks (`make mpi`, docs/mpi.md), found and linked as collage_mpi.
# Its plan and cpu version (plain C, no MPI) are in the host tests too.
RIO_MPI_C    := rodinia-io/mpi/plan.c rodinia-io/mpi/cpu.c
RIO_MPI_TSAN := $(patsubst %.c,$(BUILD)/tsan/%.o,$(RIO_MPI_C))
RIO_MPI_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(RIO_MPI_C) rodinia-io/mpi/main.c) $(BUILD)/obj/rodinia-io/mpi/gpu.o
RIO_MPI_BIN  := $(BUILD)/rodinia-io/rodinia_mpi
RIO_TSAN     += $(RIO_MPI_TSAN)
$(BUILD)/obj/rodinia-io/mpi/main.o: CFLAGS += $(MPI_CFLAGS)
$(RIO_MPI_OBJ) $(RIO_MPI_TSAN) $(BUILD)/tsan/tests/host/rodinia_mpi_test.o: $(wildcard rodinia-io/mpi/*.h)

# tests/fsx/: the random exerciser (`make fsx`); its engine is also linked
# into the GPU tests, which run it briefly (tests/gpu/fsx_test.cu).
FSX_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/fsx/*.c)) \
            $(patsubst %.cu,$(BUILD)/obj/%.o,$(filter-out %/main.cu,$(wildcard tests/fsx/*.cu)))
FSX_MAIN := $(BUILD)/obj/tests/fsx/main.o
FSX_BIN  := $(BUILD)/tests/fsx
$(FSX_OBJ) $(FSX_MAIN) $(BUILD)/obj/tests/gpu/fsx_test.o: $(wildcard tests/fsx/*.h tests/fsx/*.cuh)

HOST_TESTS := $(BUILD)/tests/host_tests
GPU_TESTS  := $(BUILD)/tests/gpu_tests
BENCH_BIN  := $(BUILD)/bench/gpufs_bench
include graphs/graphs.mk

.PHONY: all lib run test test-host test-gpu test-debug test-install sanitize bench bench-mgpu probe rodinia rodinia-quick collage collage-quick fsx install uninstall clean
.PHONY: mpi test-mpi semcache test-semcache
all: lib $(SAMPLES) $(HOST_TESTS) $(GPU_TESTS) $(BENCH_BIN) $(RIO_BIN) $(COLLAGE_BIN) $(FSX_BIN)
lib: $(LIB)

$(BUILD)/obj/%.o: %.c $(HEADERS) $(RIO_HEADERS)
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu $(HEADERS) $(RIO_HEADERS) $(wildcard bench/*.h tests/gpu/*.h)
	$(call say,NVCC,$<)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(NVFLAGS) $(DEV_REGS) -c $< -o $@

# The device calls fit in 128 registers a thread, so that a kernel of
# 256-thread blocks that calls them can run two blocks an SM
# (__launch_bounds__(256, 2)); an entry's register limit binds its callees.
$(BUILD)/obj/libgpufs/%.o: DEV_REGS := -maxrregcount=128
$(BUILD)/obj/libgpufs/%.o: ARCH_FLAGS = $(foreach a,$(LIB_ARCHS),-gencode arch=compute_$(a:sm_%=%),code=$(a)) \
                                        -gencode arch=$(LIB_PTX),code=$(LIB_PTX)

$(BUILD)/tsan/%.o: %.c $(HEADERS) $(RIO_HEADERS)
	$(call say,CC-TSAN,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(TSAN) -c $< -o $@

$(BUILD)/tsan/%.o: %.cpp $(HEADERS) $(RIO_HEADERS) $(wildcard tests/host/*.h)
	$(call say,CXX-TSAN,$<)mkdir -p $(dir $@)
	$(Q)$(CXX) $(HOSTCXX) $(TSAN) -c $< -o $@

$(LIB): $(LIB_OBJ)
	$(call say,AR,$@)rm -f $@
	$(Q)ar rcs $@ $^

$(HOST_TESTS): $(HOST_TEST_OBJ) $(TSAN_OBJ) $(RIO_TSAN) $(COLLAGE_TSAN) $(SEMCACHE_TSAN)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(CXX) $(TSAN) $^ -o $@ $(GTEST_LIB) $(IMAGE_LIBS) -llapack -lblas

$(BUILD)/pic/%.o: %.c $(wildcard semcache/src/*.h) libgpufs/common/sigchain.h
	$(call say,CC-PIC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -fPIC -DSC_DROPIN -c $< -o $@

$(SEMCACHE_SO): $(SEMCACHE_PIC)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(CC) -shared -o $@ $^ -ldl -lpthread -lblas

$(SEMCACHE_CHAIN): semcache/tests/chain.c
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -lblas

# every routine in both precisions, and gesv through LAPACKE (liblapacke-dev;
# linked in statically as the benchmarks' below: its dgesv_ stays LAPACK's)
$(SEMCACHE_IO): semcache/tests/io.c
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -lblas

$(SEMCACHE_ROUTINES): semcache/tests/routines.c
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ $(LAPACKE_A) -llapack -lblas -lm

$(SEMCACHE_DLOPEN): semcache/tests/dlopen.c
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -ldl

$(SEMCACHE_LOCAL): semcache/tests/local_blas.c
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -fPIC -shared $< -o $@ -llapack -lblas -lm

$(SEMCACHE_MIXED): semcache/tests/mixed.c
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -lblas

$(SEMCACHE_STACK): semcache/tests/stack.c
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -lblas -lm -lpthread

semcache: $(SEMCACHE_SO)

# The drop-in and loaders tests run again over OpenBLAS where build/openblas holds the
# unpacked libopenblas0-pthread package (.ci/run puts it there; OPENBLAS_DIR
# names another folder with its libblas.so.3): its xerbla returns where the
# reference's ends the program, and its routines run threads of their own.
OPENBLAS_DIR ?= $(firstword $(wildcard $(BUILD)/openblas/usr/lib/*/openblas-pthread))
test-semcache: $(SEMCACHE_SO) $(SEMCACHE_CHAIN) $(SEMCACHE_ROUTINES) $(SEMCACHE_IO) $(SCB_PROGS) \
               $(SEMCACHE_DLOPEN) $(SEMCACHE_LOCAL) $(SEMCACHE_STACK) $(SEMCACHE_MIXED)
	semcache/tests/dropin_test.sh $(SEMCACHE_CHAIN) $(SEMCACHE_SO) $(SEMCACHE_ROUTINES) $(SEMCACHE_IO) $(SEMCACHE_MIXED)
	semcache/tests/loaders_test.sh $(SEMCACHE_SO) $(SEMCACHE_DLOPEN) $(SEMCACHE_LOCAL) $(SEMCACHE_STACK)
	@if [ -n "$(OPENBLAS_DIR)" ]; then echo "semcache: over OpenBLAS ($(OPENBLAS_DIR))"; \
	  LD_LIBRARY_PATH=$(OPENBLAS_DIR) semcache/tests/dropin_test.sh $(SEMCACHE_CHAIN) $(SEMCACHE_SO) $(SEMCACHE_ROUTINES) $(SEMCACHE_IO) $(SEMCACHE_MIXED) && \
	  LD_LIBRARY_PATH=$(OPENBLAS_DIR) semcache/tests/loaders_test.sh $(SEMCACHE_SO) $(SEMCACHE_DLOPEN) $(SEMCACHE_LOCAL) $(SEMCACHE_STACK); \
	else echo "semcache: no OpenBLAS unpacked in $(BUILD)/openblas: the drop-in test over OpenBLAS skipped"; fi
	semcache/tests/bench_smoke.sh $(SCB_DIR)/structdyn $(SCB_DIR)/chain $(SEMCACHE_SO)
	semcache/tests/netlib_test.sh $(SEMCACHE_SO)

# The GPU tests run the drop-in on those programs (tests/gpu/semcache_test.cu).
$(GPU_TESTS): | $(SEMCACHE_SO) $(SEMCACHE_CHAIN) $(SEMCACHE_ROUTINES) $(SEMCACHE_IO)

# SemCache's benchmarks (issue 18; docs/semcache.md, "Benchmarks"): two
# ordinary CBLAS/LAPACKE programs, chain (the paper's chains of products)
# and structdyn (the application), run unchanged on OpenBLAS, NVBLAS and
# the drop-in (no cache, write-through, write-back) by
# semcache/bench/run.py: progress, targets, the table last; rows appended
# to docs/results/semcache-latest.jsonl, plots docs/results/semcache-*.svg.
# LAPACKE is linked in statically: its dgesv_ stays the dynamic LAPACK's
# (which OpenBLAS or the drop-in provide), and GPU machines need no
# liblapacke.  semcache-bench-quick: tiny sizes, rows in the build folder.
# SEMCACHE_BENCH_ARGS passes options (python3 semcache/bench/run.py -h).
SEMCACHE_BENCH_ARGS ?=
.PHONY: semcache-bench semcache-bench-quick semcache-bench-build semcache-calls

# their command lines are benchlib's (opts.c, with util.c), compiled in
SCB_OPTS := benchlib/opts.c benchlib/util.c
$(SCB_DIR)/chain: semcache/bench/chain.c semcache/bench/util.h $(SCB_OPTS) benchlib/opts.h
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -O3 $< $(SCB_OPTS) -o $@ -lblas -lm -lpthread

$(SCB_DIR)/structdyn: semcache/bench/structdyn.c semcache/bench/util.h $(SCB_OPTS) benchlib/opts.h
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)test -f $(LAPACKE_A) || { echo "liblapacke.a not found: apt-get install liblapacke-dev" >&2; exit 1; }
	$(Q)$(CC) $(CFLAGS) -O3 $< $(SCB_OPTS) -o $@ $(LAPACKE_A) -llapack -lblas -lm -lpthread

$(SCB_DIR)/calls: semcache/bench/calls.c semcache/bench/util.h
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -O3 $< -o $@ $(LAPACKE_A) -llapack -lblas -lm

$(SCB_DIR)/cublas_calls: semcache/bench/cublas_calls.c semcache/bench/util.h
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64 -lcublas -lcudart -lm

$(SCB_CBLAS): semcache/bench/cblas_f77.c
	$(call say,CC,$<)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -fPIC -shared $< -o $@ -lblas

$(SCB_DIR)/commit: $(BUILD)/commit.stamp
	$(Q)mkdir -p $(dir $@) && cp $< $@

semcache-bench-build: $(SEMCACHE_SO) $(SCB_PROGS) $(SCB_CBLAS) $(SCB_CALLS) $(SCB_DIR)/commit

semcache-bench: semcache-bench-build
	python3 semcache/bench/run.py --bin $(SCB_DIR) --lib $(SEMCACHE_SO) \
	    --out docs/results/semcache-latest.jsonl $(SEMCACHE_BENCH_ARGS); s=$$?; \
	  python3 semcache/bench/plot.py docs/results/semcache-latest.jsonl docs/results/semcache; exit $$s

# The crossovers and the cost of a call (docs/semcache.md): calls.py's
# tables last, rows in the build folder.
semcache-calls: semcache-bench-build
	python3 semcache/bench/calls.py --bin $(SCB_DIR) --lib $(SEMCACHE_SO) --out $(SCB_DIR)/calls.jsonl

semcache-bench-quick: semcache-bench-build
	python3 semcache/bench/run.py --quick --bin $(SCB_DIR) --lib $(SEMCACHE_SO) \
	    --out $(SCB_DIR)/quick.jsonl $(SEMCACHE_BENCH_ARGS)

$(BENCHLIB): $(BENCHLIB_OBJ)
	$(call say,AR,$@)rm -f $@
	$(Q)ar rcs $@ $^

$(GPU_TESTS): $(GPU_TEST_OBJ) $(RIO_OBJ) $(COLLAGE_OBJ) $(FSX_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $(GPU_TEST_OBJ) $(RIO_OBJ) $(COLLAGE_OBJ) $(FSX_OBJ) $(BENCHLIB) $(LIB) -o $@ -lgtest -lgtest_main $(IMAGE_LIBS)

$(FSX_BIN): $(FSX_MAIN) $(FSX_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@

$(BUILD)/samples/%: samples/%.cu $(LIB) $(BENCHLIB) $(HEADERS)
	$(call say,NVCC,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(NVFLAGS) $< $(BENCHLIB) $(LIB) -o $@ --cudart static -lpthread

# The commit the benchmark was built from goes into its rows (where it runs,
# the tree may have no usable git); the stamp changes only with the commit.
GIT_COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null)$(shell git diff --quiet HEAD -- 2>/dev/null || echo +)
$(BUILD)/commit.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(GIT_COMMIT)' | cmp -s - $@ || echo '$(GIT_COMMIT)' > $@
$(BUILD)/obj/bench/main.o: $(BUILD)/commit.stamp
$(BUILD)/obj/bench/main.o: EXTRA_NVFLAGS += -DBENCH_COMMIT='"$(GIT_COMMIT)"'
.PHONY: FORCE
FORCE:

$(BENCH_BIN): $(BENCH_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@

$(RIO_MAIN): $(BUILD)/commit.stamp
$(RIO_MAIN): EXTRA_NVFLAGS += -DBENCH_COMMIT='"$(GIT_COMMIT)"'

$(RIO_BIN): $(RIO_MAIN) $(RIO_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@

$(COLLAGE_MAIN): $(BUILD)/commit.stamp
$(COLLAGE_MAIN): EXTRA_NVFLAGS += -DBENCH_COMMIT='"$(GIT_COMMIT)"'

$(COLLAGE_BIN): $(COLLAGE_MAIN) $(COLLAGE_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@ $(IMAGE_LIBS)

# The collage benchmark (needs a GPU): 1M tiles (a 4 GB dataset, built once
# into /tmp/gpufs_collage with its index), every version on inputs 512x384
# to 8192x6144, then the gpufs versions with a GPU cache 10x smaller than the
# dataset; rows, the plot and one collage into docs/.  collage-quick: 20k tiles.
COLLAGE_ARGS ?=
collage: $(COLLAGE_BIN)
	$(COLLAGE_BIN) --small-cache 10x --out docs/results/collage-latest.jsonl \
	    --collage-out docs/collage/collage-2048x1536.png $(COLLAGE_ARGS)
	-python3 samples/collage/plot.py docs/results/collage-latest.jsonl docs/collage/collage-speedup.svg

collage-quick: $(COLLAGE_BIN)
	$(COLLAGE_BIN) --quick $(COLLAGE_ARGS)

$(COLLAGE_MPI_BIN): $(COLLAGE_MPI_OBJ) $(MPI_PLACE_OBJ) $(COLLAGE_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@ $(IMAGE_LIBS) $(MPI_NVLIBS)

$(RIO_MPI_BIN): $(RIO_MPI_OBJ) $(MPI_PLACE_OBJ) $(RIO_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@ $(MPI_NVLIBS)

# collage_mpi and rodinia_mpi, where MPI is found; a clear failure where it is not.
mpi:
	@if [ "$(MPI_FOUND)" != yes ]; then \
	  echo "make mpi: no usable MPI: '$(MPICC) --showme:compile' and 'pkg-config ompi-c' give no flags with" \
	       "which mpi.h compiles (apt-get install openmpi-bin libopenmpi-dev, or MPICC=/path/to/mpicc)" >&2; \
	  exit 1; fi
	+$(Q)$(MAKE) --no-print-directory $(COLLAGE_MPI_BIN) $(RIO_MPI_BIN)

# The MPI check of `make test` (no GPU): the collage by `collage` and by
# `mpirun -np 2` / `-np 3 collage_mpi --version cpu` must be the same bytes
# (tests/mpi/collage_mpi_test.sh); rodinia_mpi's cpu version by 2 and 3
# ranks must give the single-process floats (tests/mpi/rodinia_mpi_test.sh).
# Where MPI is absent they build nothing and each script prints one
# "skipped" line (exit 0).
test-mpi:
	+$(Q)if [ "$(MPI_FOUND)" = yes ]; then \
	  $(MAKE) --no-print-directory $(COLLAGE_BIN) $(COLLAGE_MPI_BIN) $(RIO_MPI_BIN) || exit 1; fi; \
	  tests/mpi/collage_mpi_test.sh $(COLLAGE_BIN) $(COLLAGE_MPI_BIN) && \
	  tests/mpi/rodinia_mpi_test.sh $(RIO_MPI_BIN)

# The suite at the paper's sizes (about 11 GB of inputs under /tmp), and at
# small sizes (under a minute).  Rows go to docs/results/rodinia-latest.jsonl.
RIO_ARGS ?=
rodinia: $(RIO_BIN)
	$(RIO_BIN) --small-cache 500M --out docs/results/rodinia-latest.jsonl $(RIO_ARGS)

rodinia-quick: $(RIO_BIN)
	$(RIO_BIN) --quick $(RIO_ARGS)

# The random exerciser (needs a GPU): FSX_OPS device calls (10M) from
# random kernels over FSX_FILES files under four names each, FSX_BLOCKS
# blocks; FSX_SEED (default: the time, printed) reproduces a run;
# FSX_ARGS passes other options (build/tests/fsx --help).
FSX_OPS    ?= 10000000
FSX_FILES  ?= 4
FSX_BLOCKS ?= 12
FSX_SEED   ?=
FSX_ARGS   ?=
fsx: $(FSX_BIN)
	$(FSX_BIN) --ops $(FSX_OPS) --files $(FSX_FILES) --blocks $(FSX_BLOCKS) $(if $(FSX_SEED),--seed $(FSX_SEED)) $(FSX_ARGS)

run: $(BUILD)/samples/stream
	$(BUILD)/samples/stream

# Every suite runs, even after a failure; the summary line comes last.
# The line names $(MAKE), so make runs it even under -n: then it is a no-op.
DRY_RUN = $(findstring n,$(firstword -$(MAKEFLAGS)))
test: $(HOST_TESTS) $(GPU_TESTS) $(LIB)
	$(if $(DRY_RUN),: )tests/run_suites.sh $(HOST_TESTS) $(GPU_TESTS) -- "$(MAKE) --no-print-directory test-install" \
	  "$(MAKE) --no-print-directory test-mpi" "$(MAKE) --no-print-directory test-semcache" \
	  "$(MAKE) --no-print-directory test-debug" \
	  tests/default_goal_test.sh

test-host: $(HOST_TESTS)
	$(HOST_TESTS)

test-gpu: $(GPU_TESTS)
	$(GPU_TESTS)

# The debug build's tests (tests/gpu/debug_*.cu: calls that break the group
# contract, which a normal build may hang on), in a binary of their own:
# `make test-debug` builds the library and them with DEBUG=1 in
# $(BUILD)/debug (for CUDA_ARCH only) and runs them; they skip without a GPU.
DEBUG_TEST_OBJ := $(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard tests/gpu/debug_*.cu))
DEBUG_TESTS    := $(BUILD)/tests/gpu_debug_tests
$(DEBUG_TESTS): $(DEBUG_TEST_OBJ) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@ -lgtest -lgtest_main

test-debug:
	+$(Q)$(MAKE) --no-print-directory DEBUG=1 BUILD=$(BUILD)/debug LIB_ARCHS=$(CUDA_ARCH) $(BUILD)/debug/tests/gpu_debug_tests
	$(BUILD)/debug/tests/gpu_debug_tests

# compute-sanitizer over the GPU tests (needs a GPU): memcheck on the small
# configurations, racecheck and synccheck on the block/warp collectives.
# memcheck runs with automatic pins off (GPUFS_AUTO_PIN=0, which the tests'
# configurations honour): it reports reads of memory registered after a
# kernel's launch as out of bounds (bench/probes/late_register_probe.cu,
# `make probe`), and a file read is pinned while kernels read it.
SAN_SMALL := Pages/ReadTest.*/4K:Pages/ReadaheadTest.*/4K:Pages/ReadaheadTest.*/4K_posted:Pages/AsyncReadaheadTest.*/4K:Pages/ReadTest.OddOffsets*:Mmap*:ErrorsTest.*:ConfigTest.*:Pages/WriteTest.*/4K:WriteErrorsTest.*:WriteFaultTest.*:InstancesTest.*:PeerTest.*:ScratchTest.*:Names/IdentityTest.*:OTruncTest.*:Kinds/ReadOnlyMappingTest.*:WritableMappingTest.*:ContractTest.*:Pages/RegisterRead.*/4K:Pages/RegisterWrite.*/4K:RegisterLife.*:Registered/ReadTest.*/4K:MultiGpuTest.*:OpenChurnTest.EveryBlock*:OpenChurnTest.FewWarps*:AutoPinTest.ABudget*:AutoPinTest.Off*
SAN_SYNC  := Pages/ReadTest.OddOffsets*/4K:Pages/ReadaheadTest.SmallCallsBlocks*/4K:Pages/ReadaheadTest.SmallCallsWarps*/4K:Pages/ReadaheadTest.CacheSmallerThanData*/4K:Pages/ReadaheadTest.SmallCallsWarps*/4K_posted:Pages/ReadaheadTest.CacheSmallerThanData*/4K_posted:Pages/AsyncReadaheadTest.*/4K:Pages/ReadTest.SharedDescriptor/4K:Pages/ReadTest.CacheSmallerThanData*/4K:MmapTest.*Cases:MmapTest.AllFrames*:Pages/WriteTest.DisjointRanges*/4K:Pages/WriteTest.FileGrowsPastTheCache/4K:Pages/WriteTest.MmapWrite*/4K:Pages/WriteTest.TruncateShrinksAndGrows/4K:InstancesTest.*:PeerTest.*:Names/IdentityTest.*:OTruncTest.*:Kinds/ReadOnlyMappingTest.*:WritableMappingTest.*:ContractTest.*:Pages/RegisterRead.SameBytes*/4K:Pages/RegisterWrite.GpuWrites*/4K:RegisterLife.TwoInstances*:Registered/ReadTest.OddOffsets*/4K:Registered/ReadTest.CacheSmallerThanData*/4K:MultiGpuTest.*:AutoPinTest.*
sanitize: $(GPU_TESTS)
	GPUFS_AUTO_PIN=0 compute-sanitizer --tool memcheck --error-exitcode 1 $(GPU_TESTS) --gtest_filter='$(SAN_SMALL)'
	compute-sanitizer --tool racecheck --error-exitcode 1 $(GPU_TESTS) --gtest_filter='$(SAN_SYNC)'
	compute-sanitizer --tool synccheck --error-exitcode 1 $(GPU_TESTS) --gtest_filter='$(SAN_SYNC)'

bench: $(BENCH_BIN)
	$(BENCH_BIN) --out docs/results/latest.jsonl

# How kernels' reads of pinned host memory fare beside host-memory polls and
# host copies (needs a GPU; bench/probes/pull_probe.cu, docs/design.md 5);
# how a grid of the hit row's shape copies cached pages out (copy_probe.cu).
PROBE_BIN := $(BUILD)/bench/pull_probe
COPY_PROBE_BIN := $(BUILD)/bench/copy_probe
LATE_PROBE_BIN := $(BUILD)/bench/late_register_probe
$(LATE_PROBE_BIN): bench/probes/late_register_probe.cu benchlib/opts.h $(BENCHLIB)
	$(call say,NVCC,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) -O2 -std=c++17 -arch=$(CUDA_ARCH) $(INC) $< $(BENCHLIB) -o $@ --cudart static -lpthread
$(COPY_PROBE_BIN): bench/probes/copy_probe.cu benchlib/cuda_check.h benchlib/baselines.h $(BENCHLIB) $(LIB)
	$(call say,NVCC,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(NVFLAGS) $< $(BENCHLIB) $(LIB) -o $@ --cudart static -lpthread
$(PROBE_BIN): bench/probes/pull_probe.cu benchlib/cuda_check.h benchlib/opts.h $(BENCHLIB)
	$(call say,NVCC,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) -O3 -std=c++17 -arch=$(CUDA_ARCH) $(INC) $< $(BENCHLIB) -o $@ --cudart static -lpthread
HOST_COPY_PROBE_BIN := $(BUILD)/bench/host_copy_probe
$(HOST_COPY_PROBE_BIN): bench/probes/host_copy_probe.cu benchlib/cuda_check.h benchlib/opts.h $(BENCHLIB)
	$(call say,NVCC,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) -O3 -std=c++17 -arch=$(CUDA_ARCH) $(INC) $< $(BENCHLIB) -o $@ --cudart static -lpthread
probe: $(PROBE_BIN) $(COPY_PROBE_BIN) $(LATE_PROBE_BIN) $(HOST_COPY_PROBE_BIN)
	$(PROBE_BIN)
	$(HOST_COPY_PROBE_BIN) && $(HOST_COPY_PROBE_BIN) --gpu
	$(COPY_PROBE_BIN)
	$(LATE_PROBE_BIN) && $(LATE_PROBE_BIN) --before
	compute-sanitizer --tool memcheck $(LATE_PROBE_BIN) --before

# Every GPU at once (needs two or more; docs/multigpu.md): the mgpu rows
# alone, with the device-0 baselines, and the multi-GPU tests.
bench-mgpu: $(BENCH_BIN) $(GPU_TESTS)
	$(GPU_TESTS) --gtest_filter='MultiGpuTest.*'
	$(BENCH_BIN) --only mgpu --out docs/results/latest-mgpu.jsonl

# The version, from the one place it is written (include/gpufs/version.h).
version_part = $(shell sed -n 's/^\#define GPUFS_VERSION_$(1) \([0-9]*\)$$/\1/p' include/gpufs/version.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION       := $(VERSION_MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)

# What `make install` puts under $(DESTDIR)$(PREFIX), and all that `make
# uninstall` removes: the public header and the three it includes, the
# library, the CMake package (target gpufs::gpufs) and the pkg-config file.
INSTALL_FILES := include/gpufs.cuh include/gpufs/config.h include/gpufs/errors.h include/gpufs/version.h \
                 lib/libgpufs.a lib/cmake/gpufs/gpufsConfig.cmake lib/cmake/gpufs/gpufsConfigVersion.cmake \
                 lib/pkgconfig/gpufs.pc
DEST := $(DESTDIR)$(PREFIX)
# LIB_ARCHS as CMake writes architectures ("80;90"), for the package's check
# (and LIB_PTX's number: later architectures link through the PTX)
LIB_CMAKE_ARCHS := $(subst $(eval) ,;,$(strip $(LIB_ARCHS:sm_%=%)))

install: $(LIB)
	install -d $(DEST)/include/gpufs $(DEST)/lib/cmake/gpufs $(DEST)/lib/pkgconfig
	install -m 644 include/gpufs.cuh $(DEST)/include/
	install -m 644 include/gpufs/config.h include/gpufs/errors.h include/gpufs/version.h $(DEST)/include/gpufs/
	install -m 644 $(LIB) $(DEST)/lib/
	sed -e 's|@ARCHS@|$(LIB_CMAKE_ARCHS)|' -e 's|@PTX@|$(LIB_PTX:compute_%=%)|' packaging/gpufsConfig.cmake.in > $(DEST)/lib/cmake/gpufs/gpufsConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@MAJOR@|$(VERSION_MAJOR)|' packaging/gpufsConfigVersion.cmake.in \
	    > $(DEST)/lib/cmake/gpufs/gpufsConfigVersion.cmake
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' packaging/gpufs.pc.in > $(DEST)/lib/pkgconfig/gpufs.pc
	@echo "libgpufs $(VERSION) installed in $(DEST)"

uninstall:
	rm -f $(addprefix $(DEST)/,$(INSTALL_FILES))
	-rmdir $(DEST)/include/gpufs $(DEST)/lib/cmake/gpufs $(DEST)/lib/cmake $(DEST)/lib/pkgconfig 2>/dev/null
	@echo "libgpufs $(VERSION) removed from $(DEST)"

# Install into a temporary prefix, check the file list, build the CMake and
# pkg-config consumers against it (compile and link: no GPU needed),
# uninstall, check that nothing is left; and the same file list with DESTDIR.
test-install: $(LIB)
	+tests/install_test.sh "$(NVCC)" "$(CUDA_ARCH)" $(INSTALL_FILES)

clean:
	rm -rf $(BUILD)
