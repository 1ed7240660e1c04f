# graphs/: the graph suite (docs/graphs.md), included by the Makefile.
#
#   make graphs        every algorithm in every version on the graph of
#                      docs/results/2026-11-29-graphs-kron25.md (Kronecker
#                      scale 25, 8.65 GB under /tmp/gpufs_graphs, made once;
#                      GRAPH_SUITE_ARGS), libgpufs's cache and uvm's GPU
#                      memory a quarter of it, verified against the cpu
#                      version, a 20 s cap a version; rows in
#                      docs/results/graphs-latest.jsonl, the table last, the
#                      plot docs/results/graphs.svg (python3-matplotlib)
#   make graphs-quick  the same on small graphs (about a minute), rows in the
#                      build folder
#   GRAPH_ARGS         more options, after make graphs' own: a later one wins
#                      ($(BUILD)/graphs/graphs --help; the program's defaults,
#                      kron:26 and uniform:64M, are for a longer run)
#   make graph-service        GAIA's updated-graph service as measured in
#                      docs/results/2026-11-29-graph-service-100.md
#                      (graph_service: Kronecker scale 24, 4.3 GB): 10% and
#                      75% changed, up to 100 rounds of each version (30 s
#                      a version and share); then 1, 25, 50 and 100%, 5 s a
#                      version and share; checked against the cpu version at
#                      rounds 0, 1, 34, 67 and 100; rows in
#                      docs/results/graph-service-latest.jsonl, each run's
#                      table last (about 10 minutes on an H200)
#   make graph-service-quick  the same at scale 16, 10 rounds (seconds)
#   GRAPH_SERVICE_ARGS more options ($(BUILD)/graphs/graph_service --help)
#
# Plain C files (the file format, generators, converter, references, the
# cpu version and the options) also build with ThreadSanitizer for the host
# tests; the GPU versions (versions.cu) link into the GPU tests.

GRAPH_CORE_C := graphs/format.c graphs/build.c graphs/gen.c graphs/convert.c graphs/ref.c graphs/cpu.c graphs/options.c
GRAPH_CORE_C := graphs/format.c graphs/build.c graphs/gen.c graphs/convert.c graphs/ref.c graphs/cpu.c graphs/options.c \
                graphs/update.c graphs/service_opts.c
GRAPH_C      := $(GRAPH_CORE_C) graphs/loader.c graphs/suite.c graphs/service_run.c
GRAPH_OBJ    := $(patsubst %.c,$(BUILD)/obj/%.o,$(GRAPH_C)) \
                $(patsubst %.cu,$(BUILD)/obj/%.o,graphs/versions.cu graphs/rounds.cu graphs/service.cu)
GRAPH_TSAN   := $(patsubst %.c,$(BUILD)/tsan/%.o,$(GRAPH_CORE_C) benchlib/util.c benchlib/opts.c)
GRAPH_MAIN   := $(BUILD)/obj/graphs/main.o
GRAPH_BIN    := $(BUILD)/graphs/graphs
GRAPH_SVC_MAIN := $(BUILD)/obj/graphs/service_main.o
GRAPH_SVC_BIN  := $(BUILD)/graphs/graph_service
GRAPH_CONVERT := $(BUILD)/graphs/graph_convert
GRAPH_HEADERS := $(wildcard graphs/*.h graphs/*.cuh)

$(GRAPH_OBJ) $(GRAPH_TSAN) $(GRAPH_MAIN) $(GRAPH_SVC_MAIN) $(BUILD)/obj/graphs/convert_main.o: $(GRAPH_HEADERS)
$(patsubst tests/%.cpp,$(BUILD)/tsan/tests/%.o,$(wildcard tests/host/graph*.cpp)): $(GRAPH_HEADERS)
$(patsubst tests/%.cu,$(BUILD)/obj/tests/%.o,$(wildcard tests/gpu/graph*.cu)): $(GRAPH_HEADERS)

# into the existing lists: the host tests link their prerequisites ($^),
# the GPU tests link GPU_TEST_OBJ
$(HOST_TESTS): $(GRAPH_TSAN)
GPU_TEST_OBJ += $(GRAPH_OBJ)
all: $(GRAPH_BIN) $(GRAPH_CONVERT) $(GRAPH_SVC_BIN)

$(GRAPH_MAIN) $(GRAPH_SVC_MAIN): $(BUILD)/commit.stamp
$(GRAPH_MAIN) $(GRAPH_SVC_MAIN): EXTRA_NVFLAGS += -DBENCH_COMMIT='"$(GIT_COMMIT)"'

$(GRAPH_BIN): $(GRAPH_MAIN) $(GRAPH_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@

$(GRAPH_SVC_BIN): $(GRAPH_SVC_MAIN) $(GRAPH_OBJ) $(BENCHLIB) $(LIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(CUDA_LINK) $^ -o $@

$(GRAPH_CONVERT): $(BUILD)/obj/graphs/convert_main.o $(patsubst %.c,$(BUILD)/obj/%.o,graphs/format.c graphs/build.c graphs/convert.c) $(BENCHLIB)
	$(call say,LINK,$@)mkdir -p $(dir $@)
	$(Q)$(CC) $^ -o $@ -lpthread -lm

# what one device call holds: the 2026-11-29 kron25 run (about 200 s with
# the generation on an H200 with 16 cores)
GRAPH_SUITE_ARGS := --graphs kron:25 --limit 4x --cap 20 --ref cpu
GRAPH_ARGS ?=
GRAPH_SERVICE_ARGS ?=
.PHONY: graphs graphs-quick graph-service graph-service-quick
graphs: $(GRAPH_BIN) $(GRAPH_CONVERT)
	$(GRAPH_BIN) $(GRAPH_SUITE_ARGS) --out docs/results/graphs-latest.jsonl $(GRAPH_ARGS); s=$$?; \
	  python3 graphs/plot.py docs/results/graphs-latest.jsonl docs/results/graphs.svg || \
	  echo "graphs: no plot drawn (python3-matplotlib?)"; exit $$s

graphs-quick: $(GRAPH_BIN) $(GRAPH_CONVERT)
	$(GRAPH_BIN) --quick --limit 4x --out $(BUILD)/graphs/quick.jsonl $(GRAPH_ARGS)

GRAPH_SERVICE_COMMON := --ref cpu --verify-every 33 --rounds 100 --out docs/results/graph-service-latest.jsonl
graph-service: $(GRAPH_SVC_BIN)
	$(GRAPH_SVC_BIN) $(GRAPH_SERVICE_COMMON) --shares 10,75 --cap 30 $(GRAPH_SERVICE_ARGS)
	$(GRAPH_SVC_BIN) $(GRAPH_SERVICE_COMMON) --shares 1,25,50,100 --cap 5 \
	    --versions copy,uvm,gpufs-reopen,gpufs-acquire $(GRAPH_SERVICE_ARGS)

graph-service-quick: $(GRAPH_SVC_BIN)
	$(GRAPH_SVC_BIN) --quick --out $(BUILD)/graphs/service-quick.jsonl $(GRAPH_SERVICE_ARGS)
