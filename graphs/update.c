/*
 * update.c - the service's writer (update.h).
 */
#include "graphs/update.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static uint64_t upd_mix(uint64_t x)
{
  /* splitmix64's finaliser: every input bit reaches every output bit */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t upd_hash3(uint64_t a, uint64_t b, uint64_t c) { return upd_mix(upd_mix(upd_mix(a) ^ b) ^ c); }

int graph_update_choose(const struct graph_update_spec *s, uint64_t round, struct graph_update_plan *p)
{
  const uint64_t m = s->edges;
  if (!(s->share > 0 && s->share <= 100) || s->runs < 1 || s->runs > GRAPH_UPDATE_MAX_RUNS || m == 0)
    return -EINVAL;
  uint64_t k = (uint64_t)llround((double)m * s->share / 100.0);
  k = k < 1 ? 1 : k > m ? m : k;
  const uint64_t nr = s->runs < k ? s->runs : k;
  p->nruns = (uint32_t)nr;
  p->total = 0;
  for (uint64_t i = 0; i < nr; i++) {
    /* stratum [a, b); its run has k * (b - a) / m edges, rounded so that
     * the runs add up to k: floor(k b / m) - floor(k a / m) <= b - a */
    const uint64_t a = (uint64_t)((unsigned __int128)m * i / nr), b = (uint64_t)((unsigned __int128)m * (i + 1) / nr);
    const uint64_t len = (uint64_t)((unsigned __int128)k * b / m) - (uint64_t)((unsigned __int128)k * a / m);
    const uint64_t room = b - a - len + 1;
    p->run[i].first = a + upd_hash3(s->seed, round, i) % room;
    p->run[i].count = len;
    p->total += len;
  }
  return 0;
}

/* A round's weights: one multiply per edge over a per-round hash (the
 * writer rewrites up to every weight a round; weights need not be strong
 * random numbers, only differ between rounds). */
static uint64_t upd_round_key(uint64_t seed, uint64_t round) { return upd_hash3(seed, round, 0x5741u); }

static uint32_t upd_weight(uint64_t key, uint64_t e)
{
  return 1 + (uint32_t)((((e + key) * 0x9e3779b97f4a7c15ull) >> 32) % 255);
}

uint32_t graph_update_weight(uint64_t seed, uint64_t round, uint64_t e)
{
  return upd_weight(upd_round_key(seed, round), e);
}

int graph_update_apply(int fd, uint64_t weights_off, const struct graph_update_plan *p, uint64_t seed,
                       uint64_t round)
{
  enum { UPD_CHUNK = 16384 }; /* weights per pwrite */
  uint32_t buf[UPD_CHUNK];
  const uint64_t key = upd_round_key(seed, round);
  for (uint32_t i = 0; i < p->nruns; i++)
    for (uint64_t e = p->run[i].first, end = e + p->run[i].count; e < end;) {
      const uint64_t n = end - e < UPD_CHUNK ? end - e : UPD_CHUNK;
      for (uint64_t j = 0; j < n; j++)
        buf[j] = upd_weight(key, e + j);
      const ssize_t w = pwrite(fd, buf, 4 * n, (off_t)(weights_off + 4 * e));
      if (w < 0)
        return -errno;
      if ((uint64_t)w != 4 * n)
        return -EIO;
      e += n;
    }
  return 0;
}

void graph_update_span(const struct graph_update_plan *p, uint64_t weights_off, uint64_t *off, uint64_t *len)
{
  *off = *len = 0;
  if (p->nruns == 0)
    return;
  const struct graph_update_run *last = &p->run[p->nruns - 1];
  *off = weights_off + 4 * p->run[0].first;
  *len = 4 * (last->first + last->count - p->run[0].first);
}
