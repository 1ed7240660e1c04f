/*
 * plan.c - gpufs_bench's plan: which libgpufs configurations run, in which
 * order, and with which grid (bench/plan.h).
 *
 * Registered twins: each seq job and each rand job with a cold cache is
 * followed by the same job with the data file registered (gpufs_register,
 * bench_job.reg), so that the two rows sit side by side: "seq/reg" after
 * "seq" (and its "hit"), "rand/reg" after "rand", "rand20/reg" after
 * "rand20".  They belong to the groups of their twins (--only seq, --only
 * rand); --only reg selects the registered jobs alone.
 *
 * Cold files, last: "seq/cold" at 4 and 64 KiB pages, then "seq/cold/reg"
 * (64 KiB, registered), each with the data file dropped from the host page
 * cache first (bench_job.cold, bench/cold.h), after the "expert_cold"
 * baseline that bench_plan_run measures before the first of them; the file
 * is read into the page cache again after the last.  Group "cold" alone
 * (--only reg leaves its registered job out).  A full run's default set
 * includes it; --quick's does not (--quick --only cold runs it): it needs
 * the data file on a disk file system (on tmpfs its rows fail, and a quick
 * run is the check that must pass anywhere), and it reads the file from the
 * disk seven times (expert_cold's 3 passes, 3 jobs, the warming after).
 */
#include "bench/plan.h"

#include <stdio.h>
#include <stdlib.h>

#include <gpufs/config.h>

#include "bench/driver.h"
#include "benchlib/util.h"

/* Append a job with the defaults (libgpufs's readahead, no
 * random reads, no hit run) and return it for the caller to adjust.  A plan
 * that outgrows BENCH_MAX_JOBS is a bug here: stop rather than overrun. */
static struct bench_job *bench_add(struct bench_job *jobs, int *n, const char *group,
                                   const char *workload, enum bench_access access, uint32_t page,
                                   uint64_t cache, uint64_t io, int blocks)
{
  struct bench_job *j;
  if (*n >= BENCH_MAX_JOBS) {
    fprintf(stderr, "gpufs_bench: the plan has more than BENCH_MAX_JOBS (%d) jobs\n",
            BENCH_MAX_JOBS);
    abort();
  }
  j = &jobs[(*n)++];
  j->group = group;
  j->workload = workload;
  j->access = access;
  j->page = page;
  j->cache = cache;
  j->io = io;
  j->blocks = blocks;
  j->rand_reads = 0;
  j->hit = 0;
  j->ra = BENCH_RA_DEFAULT;
  j->reg = 0;
  j->write_behind = -1;
  j->async = -1;
  j->cold = 0;
  j->passes = 0;
  j->pass_names = NULL;
  j->pin_budget = 0;
  return j;
}

/* Append the registered twin of the job just added: the same job, without
 * the hit run, reading a registered file. */
static void bench_add_reg(struct bench_job *jobs, int *n, const char *workload)
{
  struct bench_job *j = bench_add(jobs, n, "", "", BENCH_SEQ_BLOCK, 0, 0, 0, 0);
  *j = j[-1]; /* every field of the twin, then what differs */
  j->workload = workload;
  j->hit = 0;
  j->reg = 1;
}

/* Append a passes job (bench_job.passes): names[0..n-1] its rows. */
static struct bench_job *bench_add_passes(struct bench_job *jobs, int *n, const char *const *names,
                                          uint32_t passes, enum bench_access access, uint32_t page)
{
  const uint64_t size = g_bench.size;
  const int blocks = (access == BENCH_RAND_WARP ? BENCH_RAND_BLOCKS_PER_SM
                                                : BENCH_SEQ_BLOCKS_PER_SM) * g_bench.sms;
  struct bench_job *j = bench_add(jobs, n, "passes", names[0], access, page,
                                  size / 4 / page * page,
                                  access == BENCH_RAND_WARP ? page : BENCH_MIB, blocks);
  j->passes = passes;
  j->pass_names = names;
  if (access == BENCH_RAND_WARP)
    j->rand_reads = g_bench.opt.quick ? (1ull << 18) : (1ull << 20);
  return j;
}

int bench_job_kernels(const struct bench_job *j)
{
  return 1 + j->hit + (j->passes > 1 ? (int)j->passes - 1 : 0);
}

int bench_job_selected(const struct bench_job *j)
{
  return bench_selected(j->group) || (j->reg && !j->cold && bench_selected("reg"));
}

int bench_plan(struct bench_job *jobs)
{
  static const uint32_t seq_full[] = {4096, 16384, 65536, 262144};
  static const uint32_t two[] = {4096, 65536};
  static const uint32_t ra_full[] = {0, 16384, 32768, 65536, 131072};
  static const uint32_t ra_quick[] = {0, 131072};
  const uint32_t *seq_pages = g_bench.opt.quick ? two : seq_full;
  const int nseq = g_bench.opt.quick ? 2 : 4;
  const uint32_t *ras = g_bench.opt.quick ? ra_quick : ra_full;
  const int nra = g_bench.opt.quick ? 2 : 5;
  const uint64_t size = g_bench.size;
  const int seq_blocks = BENCH_SEQ_BLOCKS_PER_SM * g_bench.sms;
  const int rand_blocks = BENCH_RAND_BLOCKS_PER_SM * g_bench.sms;
  const uint64_t rand_reads = g_bench.opt.quick ? (1ull << 18) : (1ull << 20);
  int n = 0, i, x;

  /* the cache holds the file twice over: nothing is evicted; each page size
   * twice: the daemon path (and the hit run), then the file registered */
  for (i = 0; i < nseq; i++) {
    bench_add(jobs, &n, "seq", "seq", BENCH_SEQ_BLOCK, seq_pages[i], 2 * size, BENCH_MIB,
              seq_blocks)->hit = 1;
    bench_add_reg(jobs, &n, "seq/reg");
  }
  for (i = 0; i < 2; i++)
    bench_add(jobs, &n, "seq_warp", "seq_warp", BENCH_SEQ_WARP, two[i], 2 * size,
              256 * BENCH_KIB, seq_blocks);
  /* each piece is read once: the cache stays cold; then registered */
  bench_add(jobs, &n, "rand", "rand", BENCH_RAND_WARP, 4096, 2 * size, 4096,
            rand_blocks)->rand_reads = rand_reads;
  bench_add_reg(jobs, &n, "rand/reg");
  /* the same with a cache 1/20 of the file: nearly every read evicts */
  bench_add(jobs, &n, "rand", "rand20", BENCH_RAND_WARP, 4096, size / 20 / 4096 * 4096, 4096,
            rand_blocks)->rand_reads = rand_reads;
  bench_add_reg(jobs, &n, "rand20/reg");
  /* the file is twice the cache */
  bench_add(jobs, &n, "big", "big", BENCH_SEQ_BLOCK, 65536, size / 2, BENCH_MIB, seq_blocks);
  /* readahead: small sequential greads (one page each), which without it
   * cost a round trip to the host per page.  First the reference every ra
   * row is compared with: 64 KiB pages and calls, no readahead (its GB/s is
   * g_bench.ra64_gbps); then 4 KiB pages and calls under growing windows. */
  bench_add(jobs, &n, "ra", "ra", BENCH_SEQ_BLOCK, 65536, 2 * size, 65536, seq_blocks)->ra = 0;
  for (i = 0; i < nra; i++)
    bench_add(jobs, &n, "ra", "ra", BENCH_SEQ_BLOCK, 4096, 2 * size, 4096, seq_blocks)->ra =
        ras[i];
  /* the same with warps (gread_warp, one page a call): readahead per warp */
  for (i = 0; i < 2; i++)
    bench_add(jobs, &n, "ra", "ra_warp", BENCH_SEQ_WARP, 4096, 2 * size, 4096, seq_blocks)->ra =
        i ? 131072 : 0;
  /* posted windows (readahead_async) of 128 and 256 KiB, blocks and warps */
  for (x = 0; x < 2; x++)
    for (i = 0; i < 2; i++) {
      struct bench_job *j = bench_add(jobs, &n, "ra", x ? "ra_warp/posted" : "ra/posted",
                                      x ? BENCH_SEQ_WARP : BENCH_SEQ_BLOCK, 4096, 2 * size, 4096,
                                      seq_blocks);
      j->ra = i ? 262144 : 131072;
      j->async = 1;
    }
  /* few groups, where each window's wait for the host is not hidden by
   * other groups' work: 16 blocks, or 16 warps (2 blocks), loaded in the
   * call and posted */
  for (x = 0; x < 2; x++)
    for (i = 0; i < 2; i++) {
      static const char *const few[2][2] = {{"ra_few", "ra_few/posted"},
                                            {"ra_warp_few", "ra_warp_few/posted"}};
      struct bench_job *j = bench_add(jobs, &n, "ra", few[x][i],
                                      x ? BENCH_SEQ_WARP : BENCH_SEQ_BLOCK, 4096, 2 * size, 4096,
                                      x ? 2 : 16);
      j->ra = 131072;
      j->async = i;
    }
  /* passes: the default configuration (no register call), a cache a quarter
   * of the file so that every pass misses, the file read three times in one
   * instance: the second open asks for the automatic pin, made beside the
   * second pass; then the same with a pin budget a quarter of the file,
   * which never pins it */
  {
    static const char *const seqp[] = {"seq/pass1", "seq/pass2", "seq/pass3"};
    static const char *const randp[] = {"rand/pass1", "rand/pass2", "rand/pass3"};
    static const char *const overp[] = {"seq/4xbudget/pass1", "seq/4xbudget/pass2"};
    static const char *const roverp[] = {"rand/4xbudget/pass1", "rand/4xbudget/pass2"};
    for (i = 0; i < 2; i++)
      bench_add_passes(jobs, &n, seqp, 3, BENCH_SEQ_BLOCK, two[i]);
    bench_add_passes(jobs, &n, randp, 3, BENCH_RAND_WARP, 4096);
    bench_add_passes(jobs, &n, overp, 2, BENCH_SEQ_BLOCK, 4096)->pin_budget = size / 4;
    bench_add_passes(jobs, &n, roverp, 2, BENCH_RAND_WARP, 4096)->pin_budget = size / 4;
  }
  /* last: the cache holds the new file twice over, so only gfsync writes back */
  for (i = 0; i < 2; i++) {
    bench_add(jobs, &n, "write", "write", BENCH_SEQ_WRITE, two[i], 2 * size, BENCH_MIB,
              seq_blocks);
    /* the twin without write-behind (the host starts the disk at the fsync) */
    bench_add(jobs, &n, "write", "write/nobehind", BENCH_SEQ_WRITE, two[i], 2 * size, BENCH_MIB,
              seq_blocks)->write_behind = 0;
  }
  /* after everything that wants the file page-cached: seq on a cold file */
  for (i = 0; i < 2; i++)
    bench_add(jobs, &n, "cold", "seq/cold", BENCH_SEQ_BLOCK, two[i], 2 * size, BENCH_MIB,
              seq_blocks)->cold = 1;
  bench_add_reg(jobs, &n, "seq/cold/reg");
  return n;
}
