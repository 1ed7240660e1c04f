/*
 * collage_index_test.cpp - the LSH index (index.c) and the cpu version
 * (cpu.c) on a tiny dataset of procedural tiles: tiles in their own buckets
 * (or capped away by the rule), tuning, medians, shortlists and the report
 * against brute force, a planted near-duplicate found, the cpu version
 * against a scalar reference and on exact duplicates, exact vector
 * distances, the file's round trip, every bad file or argument refused.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "samples/collage/collage.h"

namespace {

constexpr uint64_t kTiles = 4096;
constexpr uint32_t kL = 16, kCap = 64, kSmallL = 4, kSmallCap = 4;
constexpr uint64_t kSeed = 21, kSmallSeed = 5;

using Bytes = std::vector<uint8_t>;

/* The dataset, two indexes and every tile's keys, made once for all tests. */
class CollageIndex : public ::testing::Test {
protected:
  static inline std::string dir;
  static inline collage_seeds seeds;
  static inline collage_dataset ds;
  static inline collage_index ix, small;          /* cap 64 (some capped), cap 4 (most capped) */
  static inline std::vector<uint32_t> keys, skeys; /* [tile][table] of ix, small */
  static inline std::string ixlog;                 /* what the build of ix said */

  static void SetUpTestSuite()
  {
    char tmpl[] = "/tmp/collage_index_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    ASSERT_EQ(0, collage_seeds_procedural(6, &seeds));
    const std::string path = dir + "/tiny.ds";
    ASSERT_EQ(0, collage_dataset_build(path.c_str(), &seeds, kTiles, 77, 2, nullptr));
    char err[512] = "";
    ASSERT_EQ(0, collage_dataset_open(path.c_str(), kTiles, &ds, err, sizeof(err))) << err;
    char text[4096] = "";
    FILE *log = fmemopen(text, sizeof(text), "w");
    ASSERT_NE(log, nullptr);
    ASSERT_EQ(0, collage_index_build(&ds, kL, collage_default_k(kTiles), kCap, kSeed, 2, &ix, log));
    fclose(log);
    ixlog = text;
    ASSERT_EQ(0, collage_index_build(&ds, kSmallL, ix.hdr.K, kSmallCap, kSmallSeed, 2, &small, nullptr));
    keys.resize(kTiles * kL);
    skeys.resize(kTiles * kSmallL);
    for (uint64_t i = 0; i < kTiles; i++) {
      collage_index_keys(&ix, Hist(i), &keys[i * kL]);
      collage_index_keys(&small, Hist(i), &skeys[i * kSmallL]);
    }
  }
  static void TearDownTestSuite()
  {
    collage_index_free(&ix);
    collage_index_free(&small);
    collage_dataset_close(&ds);
    collage_seeds_free(&seeds);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  static const uint32_t *Hist(uint64_t i) { return collage_dataset_record(&ds, i)->hist; }
  /* collage_key (the header's rule) of table t for the reduced histogram r */
  static uint32_t Key(const collage_index &x, uint32_t t, const int32_t *r)
  {
    return collage_key(x.w + (size_t)t * x.hdr.K * COLLAGE_DIMS, x.thr + (size_t)t * x.hdr.K, x.hdr.K, r);
  }
  /* Two indexes hold the same bytes. */
  static void ExpectSame(const collage_index &a, const collage_index &b)
  {
    const size_t L = a.hdr.L, K = a.hdr.K;
    ASSERT_EQ(0, memcmp(&a.hdr, &b.hdr, sizeof(a.hdr)));
    EXPECT_EQ(0, memcmp(a.w, b.w, L * K * COLLAGE_DIMS));
    EXPECT_EQ(0, memcmp(a.thr, b.thr, L * K * 4));
    EXPECT_EQ(0, memcmp(a.off, b.off, L * ((1ull << K) + 1) * 4));
    EXPECT_EQ(0, memcmp(a.ids, b.ids, a.hdr.nids * 4));
  }
  static std::vector<uint32_t> Bucket(const collage_index &x, uint32_t t, uint32_t key)
  {
    const uint32_t *o = x.off + (uint64_t)t * ((1ull << x.hdr.K) + 1) + key;
    return std::vector<uint32_t>(x.ids + o[0], x.ids + o[1]);
  }
  /* Uncapped bucket members from the tiles' keys: [table][key] -> tiles. */
  static std::vector<std::map<uint32_t, std::vector<uint32_t>>> Members(const std::vector<uint32_t> &k, uint32_t L)
  {
    std::vector<std::map<uint32_t, std::vector<uint32_t>>> m(L);
    for (uint64_t i = 0; i < kTiles; i++)
      for (uint32_t t = 0; t < L; t++)
        m[t][k[i * L + t]].push_back((uint32_t)i);
    return m;
  }
  /* The reference search of one histogram: keys by collage_key, the union
   * of the buckets as a set, the lowest collage_pack by collage_dist. */
  static uint32_t Reference(const collage_index &x, const uint32_t *hist, uint64_t *cands)
  {
    int32_t r[COLLAGE_DIMS];
    collage_reduce(hist, r);
    std::set<uint32_t> list;
    for (uint32_t t = 0; t < x.hdr.L; t++)
      for (uint32_t id : Bucket(x, t, Key(x, t, r)))
        list.insert(id);
    uint64_t best = COLLAGE_NO_BEST;
    for (uint32_t c : list)
      best = std::min(best, collage_pack(collage_dist(hist, Hist(c)), c));
    *cands += list.size();
    return collage_unpack_tile(best);
  }
  static std::string Path(const char *name) { return dir + "/" + name; }
  static Bytes Slurp(const std::string &p)
  {
    std::ifstream f(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  static void Spill(const std::string &p, const Bytes &b)
  {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write((const char *)b.data(), (std::streamsize)b.size());
  }
  /* Read path against ds; the error code, the message in *msg. */
  static int Read(const std::string &p, const collage_dataset *d, std::string *msg)
  {
    collage_index x;
    char err[512] = "";
    const int rc = collage_index_read(p.c_str(), d, &x, err, sizeof(err));
    *msg = err;
    if (rc == 0)
      collage_index_free(&x);
    return rc;
  }
};

TEST(CollageIndexK, DefaultKeyBitsGiveAbout16TilesABucket)
{
  EXPECT_EQ(collage_default_k(0), 8u);
  EXPECT_EQ(collage_default_k(1000), 8u);
  EXPECT_EQ(collage_default_k(65536), 12u);
  EXPECT_EQ(collage_default_k(1000000), 16u);   /* 62500 buckets' worth: 2^15.93 */
  EXPECT_EQ(collage_default_k(10000000), 19u);  /* 2^19.25 */
  EXPECT_EQ(collage_default_k(1ull << 40), COLLAGE_MAX_K);
}

TEST_F(CollageIndex, KeysEqualCollageKeyAndEveryTileIsInItsOwnBuckets)
{
  ASSERT_TRUE(ix.hdr.L == kL && ix.hdr.n == kTiles && ix.hdr.dataset_id == ds.hdr.id);
  const uint64_t nb = (1ull << ix.hdr.K) + 1;
  for (uint64_t i = 0; i < kTiles; i += 7) { /* the fast keys are collage_key's */
    int32_t r[COLLAGE_DIMS];
    collage_reduce(Hist(i), r);
    for (uint32_t t = 0; t < kL; t++)
      ASSERT_EQ(keys[i * kL + t], Key(ix, t, r)) << i << " " << t;
  }
  uint32_t hist[COLLAGE_HIST], k[COLLAGE_MAX_L];
  for (int trial = 0; trial < 20; trial++) { /* reduced sums past 16 bits too */
    int32_t r[COLLAGE_DIMS];
    for (unsigned i = 0; i < COLLAGE_HIST; i++)
      hist[i] = (uint32_t)(collage_hash2(trial + 1000, i) % (trial % 2 ? 4000 : 64));
    collage_reduce(hist, r);
    collage_index_keys(&ix, hist, k);
    for (uint32_t t = 0; t < kL; t++)
      ASSERT_EQ(k[t], Key(ix, t, r)) << trial << " " << t;
  }
  auto members = Members(keys, kL);
  uint64_t nids = 0;
  for (uint32_t t = 0; t < kL; t++) {
    EXPECT_EQ(ix.off[t * nb], nids) << "table " << t << " starts where the one before ends";
    for (uint32_t key = 0; key + 1 < nb; key++) {
      const std::vector<uint32_t> got = Bucket(ix, t, key);
      const std::vector<uint32_t> &all = members[t][key];
      ASSERT_TRUE(std::is_sorted(got.begin(), got.end()));
      ASSERT_TRUE(std::adjacent_find(got.begin(), got.end()) == got.end());
      if (all.size() <= kCap)
        ASSERT_EQ(got, all) << "table " << t << " bucket " << key;
      else {
        ASSERT_EQ(got.size(), kCap);
        ASSERT_TRUE(std::includes(all.begin(), all.end(), got.begin(), got.end()));
      }
      nids += got.size();
    }
  }
  EXPECT_EQ(nids, ix.hdr.nids);
  /* bits split the data: every table uses many buckets, none holds a tenth */
  for (uint32_t t = 0; t < kL; t++) {
    EXPECT_GT(members[t].size(), 64u) << t;
    for (auto &m : members[t])
      EXPECT_LT(m.second.size(), kTiles / 10) << t;
  }
}

TEST_F(CollageIndex, TablesAreTunedAndSplitAtTheMedians)
{
  /* 4096 tiles: the sample is every tile, so the log's largest buckets are
   * the tables' own, the best of 8 draws beating the first draws; bit b of
   * table t is set for at most half the tiles, clear for at most half plus
   * the ties (the lower median) */
  unsigned lo = 0, hi = 0;
  double mean = 0, first = 0;
  const size_t at = ixlog.rfind("largest ");
  ASSERT_NE(at, std::string::npos) << ixlog;
  ASSERT_EQ(4, sscanf(ixlog.c_str() + at, "largest %u..%u, mean %lf (first draws: %lf)", &lo, &hi, &mean, &first))
      << ixlog;
  EXPECT_EQ(std::count(ixlog.begin(), ixlog.end(), '\n'), 1) << ixlog;
  auto members = Members(keys, kL);
  std::vector<size_t> largest;
  for (auto &t : members) {
    size_t m = 0;
    for (auto &b : t)
      m = std::max(m, b.second.size());
    largest.push_back(m);
  }
  EXPECT_EQ(lo, *std::min_element(largest.begin(), largest.end()));
  EXPECT_EQ(hi, *std::max_element(largest.begin(), largest.end()));
  EXPECT_NEAR(mean, (double)std::accumulate(largest.begin(), largest.end(), size_t{0}) / kL, 0.05);
  EXPECT_LT(mean, first);
  std::vector<int32_t> r(kTiles * COLLAGE_DIMS);
  for (uint64_t i = 0; i < kTiles; i++)
    collage_reduce(Hist(i), &r[i * COLLAGE_DIMS]);
  for (const collage_index *x : {&ix, &small})
    for (uint32_t t = 0; t < x->hdr.L; t++)
      for (uint32_t b = 0; b < x->hdr.K; b++) {
        const int8_t *w = x->w + ((size_t)t * x->hdr.K + b) * COLLAGE_DIMS;
        const int32_t thr = x->thr[(size_t)t * x->hdr.K + b];
        uint64_t below = 0, above = 0;
        for (uint64_t i = 0; i < kTiles; i++) {
          int32_t dot = 0;
          for (unsigned d = 0; d < COLLAGE_DIMS; d++)
            dot += w[d] * r[i * COLLAGE_DIMS + d];
          below += dot < thr;
          above += dot > thr;
        }
        ASSERT_LE(below, (kTiles - 1) / 2) << t << " " << b;
        ASSERT_LE(above, kTiles / 2) << t << " " << b;
        for (unsigned d = 0; d < COLLAGE_DIMS; d++)
          ASSERT_TRUE(w[d] >= -126 && w[d] <= 126);
      }
}

TEST_F(CollageIndex, CappedBucketsKeepTheTilesOfLowestHashAscending)
{
  auto members = Members(skeys, kSmallL);
  const uint32_t edge = (uint32_t)members[0][skeys[0]].size() - 1; /* one table, a bucket one over its cap */
  collage_index one;
  ASSERT_GE(edge, 1u);
  ASSERT_EQ(0, collage_index_build(&ds, 1, small.hdr.K, edge, kSmallSeed, 2, &one, nullptr));
  uint64_t capped = 0;
  for (const collage_index *x : {&small, &one})
    for (uint32_t t = 0; t < x->hdr.L; t++)
      for (auto &m : members[t]) {
        std::vector<uint32_t> want = m.second;
        if (want.size() > x->hdr.cap) {
          std::sort(want.begin(), want.end(), [](uint32_t a, uint32_t b) {
            const uint64_t ha = collage_hash2(kSmallSeed ^ 0x5eed, a), hb = collage_hash2(kSmallSeed ^ 0x5eed, b);
            return ha != hb ? ha < hb : a < b;
          });
          want.resize(x->hdr.cap);
          std::sort(want.begin(), want.end());
          capped++;
        }
        EXPECT_EQ(Bucket(*x, t, m.first), want) << "cap " << x->hdr.cap << " table " << t << " bucket " << m.first;
      }
  EXPECT_GT(capped, 100u) << "the small cap must bind";
  EXPECT_EQ(Bucket(one, 0, skeys[0]).size(), edge);
  collage_index_free(&one);
}

TEST_F(CollageIndex, ShortlistIsTheAscendingUniqueUnionOfTheBuckets)
{
  std::vector<uint32_t> out(kL * kCap);
  for (int trial = 0; trial < 300; trial++) {
    for (const collage_index *x : {&ix, &small}) {
      uint32_t k[COLLAGE_MAX_L];
      for (uint32_t t = 0; t < x->hdr.L; t++) /* half random keys, half a tile's */
        k[t] = trial % 2 ? (uint32_t)collage_hash2(trial, t) & ((1u << x->hdr.K) - 1)
                         : (x == &ix ? keys : skeys)[(uint64_t)trial * 13 % kTiles * x->hdr.L + t];
      std::set<uint32_t> want;
      for (uint32_t t = 0; t < x->hdr.L; t++)
        for (uint32_t id : Bucket(*x, t, k[t]))
          want.insert(id);
      const uint32_t n = collage_shortlist(x, k, out.data());
      ASSERT_EQ(std::vector<uint32_t>(out.begin(), out.begin() + n), std::vector<uint32_t>(want.begin(), want.end()))
          << "trial " << trial;
    }
  }
}

TEST_F(CollageIndex, ReportMatchesBruteForceBucketSizes)
{
  collage_index_report rep;
  collage_index_stats(&ix, &ds, &rep);
  auto members = Members(keys, kL);
  std::vector<uint32_t> sizes;
  uint64_t dropped = 0;
  for (auto &t : members)
    for (auto &m : t) {
      sizes.push_back((uint32_t)m.second.size());
      dropped += m.second.size() > kCap ? m.second.size() - kCap : 0;
    }
  std::sort(sizes.begin(), sizes.end());
  const double buckets = (double)kL * (1u << ix.hdr.K);
  EXPECT_EQ(rep.max, sizes.back());
  EXPECT_EQ(rep.p99, sizes[(sizes.size() * 99 + 99) / 100 - 1]);
  EXPECT_DOUBLE_EQ(rep.mean, (double)(kTiles * kL) / (double)sizes.size());
  EXPECT_DOUBLE_EQ(rep.empty, (buckets - (double)sizes.size()) / buckets);
  EXPECT_DOUBLE_EQ(rep.capped, (double)dropped / (double)(kTiles * kL));
  EXPECT_DOUBLE_EQ(rep.worst_share, (double)sizes.back() / (double)kTiles);
  collage_dataset other = ds; /* an index of another dataset: a zero report */
  other.n = ds.n - 1;
  collage_index_stats(&ix, &other, &rep);
  EXPECT_EQ(rep.max, 0u);
}

/* A picture of rendered dataset tiles: blocks as rendered (the search
 * must choose the lowest index of an exact duplicate: distance 0), and
 * blocks with three pixels a little off (planted near-duplicates: the tile
 * in the shortlist, the choice the nearest tile of the whole dataset). */
TEST_F(CollageIndex, CpuFindsRenderedTilesAndPlantedNearDuplicates)
{
  const int bw = 8, bh = 6;
  collage_image pic;
  ASSERT_EQ(0, collage_image_alloc(&pic, bw * 32, bh * 32));
  std::vector<uint32_t> tile(bw * bh), choice(bw * bh), list(kL * kCap);
  std::vector<std::array<uint32_t, COLLAGE_HIST>> hist(bw * bh);
  uint8_t rgb[COLLAGE_PIXELS * 3];
  for (int b = 0; b < bw * bh; b++) {
    tile[b] = (uint32_t)(collage_hash2(9, b) % kTiles);
    ASSERT_EQ(0, collage_tile_render(&seeds, &collage_dataset_record(&ds, tile[b])->tile, rgb));
    collage_histogram(rgb, 32, 32, 96, hist[b].data());
    ASSERT_EQ(0, memcmp(hist[b].data(), Hist(tile[b]), COLLAGE_HIST * 4)) << "tile " << tile[b] << " renders true";
    for (int p = 0; b % 2 && p < 3; p++) /* odd blocks: planted */
      for (int c = 0; c < 3; c++)
        rgb[(p * 331 % COLLAGE_PIXELS) * 3 + c] += rgb[(p * 331 % COLLAGE_PIXELS) * 3 + c] < 128 ? 9 : -9;
    collage_histogram(rgb, 32, 32, 96, hist[b].data());
    for (int y = 0; y < 32; y++)
      memcpy(pic.rgb + ((size_t)(b / bw * 32 + y) * pic.w + b % bw * 32) * 3, rgb + y * 96, 96);
  }
  collage_stats st;
  ASSERT_EQ(0, collage_cpu_run(&ds, &ix, &pic, 2, choice.data(), &st));
  EXPECT_TRUE(st.blocks == (uint64_t)(bw * bh) && st.empty == 0);
  for (int b = 0; b < bw * bh; b++) {
    uint64_t best = COLLAGE_NO_BEST; /* the nearest of the whole dataset (an exact distance) */
    for (uint64_t i = 0; i < kTiles; i++)
      best = std::min(best, collage_pack(collage_cpu_dist_base(hist[b].data(), Hist(i)), (uint32_t)i));
    EXPECT_EQ(choice[b], collage_unpack_tile(best)) << "block " << b << " of tile " << tile[b];
    if (b % 2 == 0) {
      EXPECT_EQ(best >> 32, 0u) << "block " << b;
      continue;
    }
    uint32_t k[COLLAGE_MAX_L];
    collage_index_keys(&ix, hist[b].data(), k);
    const uint32_t n = collage_shortlist(&ix, k, list.data());
    EXPECT_TRUE(std::binary_search(list.begin(), list.begin() + n, tile[b])) << "block " << b;
    EXPECT_NE(best >> 32, 0u);
    EXPECT_LE(best >> 32, collage_dist(hist[b].data(), Hist(tile[b])));
  }
  collage_image_free(&pic);
}

TEST_F(CollageIndex, CpuEqualsTheScalarReferenceOnAnInputPicture)
{
  collage_image pic;
  ASSERT_EQ(0, collage_input_picture(&seeds, 1, 320, 224, &pic));
  const uint64_t blocks = collage_blocks(&pic);
  ASSERT_EQ(blocks, 70u);
  for (const collage_index *x : {&ix, &small}) {
    std::vector<uint32_t> want(blocks), got(blocks, 7), one(blocks, 7);
    uint64_t cands = 0;
    for (uint64_t b = 0; b < blocks; b++) {
      uint32_t hist[COLLAGE_HIST];
      collage_histogram(pic.rgb + (b / 10 * 32 * (size_t)pic.w + b % 10 * 32) * 3, 32, 32, (size_t)pic.w * 3, hist);
      want[b] = Reference(*x, hist, &cands);
    }
    collage_stats st, st1;
    ASSERT_EQ(0, collage_cpu_run(&ds, x, &pic, 2, got.data(), &st));
    ASSERT_EQ(0, collage_cpu_run(&ds, x, &pic, 1, one.data(), &st1));
    EXPECT_EQ(got, want);
    EXPECT_EQ(one, want);
    EXPECT_EQ(st.blocks, blocks);
    EXPECT_EQ(st.candidates, cands);
    EXPECT_EQ(st.empty, (uint64_t)std::count(want.begin(), want.end(), COLLAGE_NONE));
    EXPECT_TRUE(st.seconds > 0 && st.dist_s > 0 && st.keys_s > 0 && st.shortlist_s > 0);
  }
  collage_image_free(&pic);
}

TEST(CollageCpuDist, VectorDistancesEqualTheReference)
{
  std::vector<uint32_t> a(COLLAGE_HIST + 1), b(COLLAGE_HIST + 1);
  uint32_t (*best)(const uint32_t *, const uint32_t *) = nullptr;
  const int avx2 = collage_cpu_dist_pick(&best);
  for (int trial = 0; trial < 600; trial++) {
    for (unsigned i = 0; i <= COLLAGE_HIST; i++) { /* counts, near-equal counts, any 32-bit values */
      const uint64_t h = collage_hash2(trial, i);
      a[i] = trial < 400 ? (uint32_t)(h % 1025) : (uint32_t)h;
      b[i] = trial < 200 ? (uint32_t)((h >> 32) % 1025)
             : trial < 400 ? (uint32_t)std::max<int64_t>(0, (int64_t)a[i] + (int64_t)((h >> 32) % 9) - 4)
                           : (uint32_t)(h >> 32);
    }
    const uint32_t *pa = a.data() + trial % 2, *pb = b.data() + trial / 2 % 2; /* unaligned too */
    const uint32_t want = collage_dist(pa, pb);
    ASSERT_EQ(collage_cpu_dist_base(pa, pb), want) << trial;
    ASSERT_EQ(best(pa, pb), want) << trial;
#if defined(__x86_64__) || defined(__i386__)
    if (avx2) {
      ASSERT_EQ(collage_cpu_dist_avx2(pa, pb), want) << trial;
    }
#endif
  }
}

/* A dataset in memory whose tiles repeat 128 patterns 4 times: a block of
 * pattern p has exact duplicates p, p + 128, p + 256, p + 384; the search
 * must choose p (the tie-break: the lowest tile index). */
TEST(CollageCpuTies, ExactDuplicatesGoToTheLowestTileIndex)
{
  const uint64_t n = 512, patterns = 128;
  std::vector<uint8_t> file((n + 1) * COLLAGE_RECORD), px(patterns * COLLAGE_PIXELS * 3);
  for (size_t i = 0; i < px.size(); i++) /* each pattern: a few colours */
    px[i] = (uint8_t)(collage_hash2(i / (COLLAGE_PIXELS * 3), (i % 3) * 8 + collage_hash2(7, i / 3) % 5) & 0xf0);
  collage_dataset ds{};
  ds.n = n, ds.map = file.data(), ds.hdr.id = 99;
  for (uint64_t i = 0; i < n; i++)
    collage_histogram(&px[i % patterns * COLLAGE_PIXELS * 3], 32, 32, 96,
                      ((collage_record *)(file.data() + collage_record_offset(i)))->hist);
  collage_index x;
  ASSERT_EQ(0, collage_index_build(&ds, 8, 8, 16, 3, 2, &x, nullptr));
  collage_image pic;
  ASSERT_EQ(0, collage_image_alloc(&pic, 8 * 32, 4 * 32));
  for (int b = 0; b < 32; b++)
    for (int y = 0; y < 32; y++)
      memcpy(pic.rgb + ((size_t)(b / 8 * 32 + y) * pic.w + b % 8 * 32) * 3,
             &px[(b * 5 % patterns) * COLLAGE_PIXELS * 3 + y * 96], 96);
  std::vector<uint32_t> choice(32);
  ASSERT_EQ(0, collage_cpu_run(&ds, &x, &pic, 2, choice.data(), nullptr));
  for (int b = 0; b < 32; b++) {
    uint32_t want = (uint32_t)(b * 5 % patterns); /* or an earlier pattern with the same histogram */
    for (uint32_t p = 0; p < want; p++)
      if (!memcmp(collage_dataset_record(&ds, p)->hist, collage_dataset_record(&ds, want)->hist, COLLAGE_HIST * 4))
        want = p;
    EXPECT_EQ(choice[b], want) << "block " << b;
  }
  collage_image_free(&pic);
  collage_index_free(&x);
}

TEST_F(CollageIndex, SameBytesOnOneThreadOrManyAndAfterWriteThenRead)
{
  collage_index one;
  ASSERT_EQ(0, collage_index_build(&ds, kSmallL, small.hdr.K, kSmallCap, kSmallSeed, 1, &one, nullptr));
  ExpectSame(one, small);
  collage_index_free(&one);
  const std::string p = Path("a.ix"), q = Path("b.ix");
  ASSERT_EQ(0, collage_index_write(p.c_str(), &ix));
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp"));
  EXPECT_EQ(std::filesystem::file_size(p),
            sizeof(ix.hdr) + kL * ix.hdr.K * (COLLAGE_DIMS + 4) + kL * ((1ull << ix.hdr.K) + 1) * 4 + ix.hdr.nids * 4);
  collage_index back;
  char err[512] = "";
  ASSERT_EQ(0, collage_index_read(p.c_str(), &ds, &back, err, sizeof(err))) << err;
  ExpectSame(back, ix);
  ASSERT_EQ(0, collage_index_write(q.c_str(), &back));
  EXPECT_EQ(Slurp(p), Slurp(q));
  collage_index_free(&back);
  EXPECT_EQ(-ENOENT, collage_index_write(Path("no/such/dir/c.ix").c_str(), &ix));
  EXPECT_EQ(-EINVAL, collage_index_write(q.c_str(), nullptr));
}

TEST_F(CollageIndex, BadIndexFilesAreRefusedWithTheirErrors)
{
  const std::string good = Path("good.ix"), bad = Path("bad.ix");
  ASSERT_EQ(0, collage_index_write(good.c_str(), &small));
  const Bytes img = Slurp(good);
  std::string msg;
  ASSERT_EQ(0, Read(good, &ds, &msg)) << msg;
  EXPECT_EQ(-ENOENT, Read(Path("missing.ix"), &ds, &msg));
  EXPECT_NE(msg.find("missing.ix"), std::string::npos) << msg;
  Spill(bad, Bytes(img.size(), 'x')); /* foreign */
  EXPECT_EQ(-EINVAL, Read(bad, &ds, &msg));
  EXPECT_NE(msg.find("not a collage index"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad.ix"), std::string::npos) << msg;
  struct Patch { size_t at; uint32_t value; int rc; const char *says; };
  const collage_index_header &h = small.hdr;
  const Patch patches[] = {
      {offsetof(collage_index_header, version), COLLAGE_INDEX_VERSION + 1, -EINVAL, "version"},
      {offsetof(collage_index_header, L), 0, -EINVAL, "bad header"},
      {offsetof(collage_index_header, L), COLLAGE_MAX_L + 1, -EINVAL, "bad header"},
      {offsetof(collage_index_header, K), 0, -EINVAL, "bad header"},
      {offsetof(collage_index_header, K), COLLAGE_MAX_K + 1, -EINVAL, "bad header"},
      {offsetof(collage_index_header, cap), 0, -EINVAL, "bad header"},
      {offsetof(collage_index_header, cap), COLLAGE_MAX_CAP + 1, -EINVAL, "bad header"},
      {offsetof(collage_index_header, seed), (uint32_t)h.seed + 1, -EIO, "check"},     /* header bit */
      {img.size() - 4, small.ids[h.nids - 1] ^ 1u, -EIO, "check"},                   /* the last id */
      {sizeof(h) + 3, 0x7f, -EIO, "check"},                                            /* a projection */
  };
  for (const Patch &p : patches) {
    Bytes b = img;
    memcpy(&b[p.at], &p.value, p.at + 4 <= b.size() ? 4 : 1);
    Spill(bad, b);
    EXPECT_EQ(p.rc, Read(bad, &ds, &msg)) << "patch at " << p.at;
    EXPECT_NE(msg.find(p.says), std::string::npos) << msg;
  }
  for (size_t len : {(size_t)0, (size_t)10, sizeof(h) - 1, sizeof(h), img.size() - 1, img.size() + 1}) {
    Bytes b = img; /* truncated, or a byte too many */
    b.resize(len);
    Spill(bad, b);
    EXPECT_EQ(-EIO, Read(bad, &ds, &msg)) << len;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  }
  /* well-checked files of a bad structure (written from a damaged copy) */
  const uint64_t nb = (1ull << h.K) + 1;
  std::vector<uint32_t> off(small.off, small.off + kSmallL * nb), ids(small.ids, small.ids + h.nids);
  uint32_t two = 0; /* the first entry of a bucket of two or more */
  for (uint64_t b = 0; b + 1 < nb && small.off[b + 1] - small.off[b] < 2; b++)
    two = small.off[b + 1];
  for (int damage = 0; damage < 4; damage++) {
    collage_index x = small;
    std::vector<uint32_t> o = off, d = ids;
    x.off = o.data(), x.ids = d.data();
    if (damage == 0)
      x.hdr.cap = 1; /* buckets over the cap */
    else if (damage == 1)
      std::swap(d[two], d[two + 1]); /* out of order */
    else if (damage == 2)
      d[h.nids - 1] = (uint32_t)kTiles; /* past the tiles */
    else
      o[nb]++; /* table 1 starts after table 0 ends */
    ASSERT_EQ(0, collage_index_write(bad.c_str(), &x));
    EXPECT_EQ(-EINVAL, Read(bad, &ds, &msg)) << "damage " << damage;
    EXPECT_NE(msg.find("rebuild"), std::string::npos) << msg;
  }
  collage_dataset other = ds; /* an index of another dataset */
  other.hdr.id ^= 1;
  EXPECT_EQ(-EINVAL, Read(good, &other, &msg));
  EXPECT_NE(msg.find("another dataset"), std::string::npos) << msg;
  other = ds;
  other.n = ds.n + 1;
  EXPECT_EQ(-EINVAL, Read(good, &other, &msg));
  EXPECT_NE(msg.find("rebuild it or pass the dataset"), std::string::npos) << msg;
}

TEST_F(CollageIndex, BadArgumentsAreRefused)
{
  collage_image tiny, pic;
  uint32_t choice[4];
  ASSERT_EQ(0, collage_image_alloc(&tiny, 31, 64));
  EXPECT_EQ(-EINVAL, collage_cpu_run(&ds, &ix, &tiny, 2, choice, nullptr)); /* less than a block */
  collage_image_free(&tiny);
  ASSERT_EQ(0, collage_image_alloc(&pic, 64, 32));
  collage_dataset other = ds; /* an index of another dataset */
  other.n = ds.n - 1;
  EXPECT_EQ(-EINVAL, collage_cpu_run(&other, &ix, &pic, 2, choice, nullptr));
  other = ds;
  other.hdr.id ^= 1;
  EXPECT_EQ(-EINVAL, collage_cpu_run(&other, &ix, &pic, 2, choice, nullptr));
  EXPECT_EQ(-EINVAL, collage_cpu_run(&ds, &ix, &pic, 2, nullptr, nullptr));
  EXPECT_EQ(0, collage_cpu_run(&ds, &ix, &pic, 0, choice, nullptr));
  collage_image_free(&pic);
  collage_index x; /* L, K, cap out of range */
  const uint32_t K = collage_default_k(kTiles);
  EXPECT_EQ(-EINVAL, collage_index_build(&ds, 0, K, 4, 1, 2, &x, nullptr));
  EXPECT_EQ(-EINVAL, collage_index_build(&ds, COLLAGE_MAX_L + 1, K, 4, 1, 2, &x, nullptr));
  EXPECT_EQ(-EINVAL, collage_index_build(&ds, 2, 0, 4, 1, 2, &x, nullptr));
  EXPECT_EQ(-EINVAL, collage_index_build(&ds, 2, COLLAGE_MAX_K + 1, 4, 1, 2, &x, nullptr));
  EXPECT_EQ(-EINVAL, collage_index_build(&ds, 2, K, 0, 1, 2, &x, nullptr));
  EXPECT_EQ(-EINVAL, collage_index_build(&ds, 2, K, COLLAGE_MAX_CAP + 1, 1, 2, &x, nullptr));
  EXPECT_EQ(x.w, nullptr);
  char buf[4096] = "";
  FILE *log = fmemopen(buf, sizeof(buf), "w");
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(-EINVAL, collage_index_build(&ds, 2, K, 0, 1, 2, &x, log));
  fclose(log);
  EXPECT_NE(std::string(buf).find("out of range"), std::string::npos) << buf;
}

} // namespace
