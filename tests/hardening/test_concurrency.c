/* One device, several filters, several threads at once.
 *
 *   - every filter type (ATrous, tiled ATrous, RT, RTLightmap, Gaussian,
 *     Poisson with each solver, GradientDomain) run by 4 threads at once, each with
 *     its own filters on the one device, gives bit for bit the output of a
 *     serial run, every time;
 *   - errors stay on the thread that caused them: a fifth thread provokes
 *     errors all along (bad setups, unknown types, a cancelled run) and
 *     finds each in its own error slot with its code and message, while
 *     the workers' slots stay empty after every call; the device's error
 *     callback sees exactly the errors provoked;
 *   - a run is reproducible: the same filter run again with 4 worker
 *     threads per filter (numThreads) gives the same bits.
 *
 * Asynchronous executions are left out on purpose: OIDN parks their errors
 * device-wide until the next synchronisation, whoever calls it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <OpenImageDenoise/oidn.h>

#include "sanitizer.h"
#include "test_util.h"

#if defined(LULL_ASAN)
enum { ROUNDS = 1 }; /* 20x slower under AddressSanitizer */
#else
enum { ROUNDS = 3 };
#endif
enum { W = 72, H = 56, WORKERS = 4 };

typedef struct job
{
  const char* type;
  int tiled;          /* ATrous with maxMemoryMB 0 */
  int cg;             /* Poisson with the conjugate-gradient solver */
  float* images[16];  /* inputs, 3 channels (depth: 1) */
  const char* names[16];
  int channels[16];
  int count;
  float* reference;   /* serial output */
} job;

static float* noise(int channels, unsigned seed, float lo, float hi)
{
  const size_t n = (size_t)W * H * (size_t)channels;
  float* v = malloc(n * sizeof(float));
  unsigned state = seed;
  for (size_t i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * lull_test_random(&state);
  return v;
}

static void add_image(job* j, const char* name, int channels, unsigned seed, float lo, float hi)
{
  j->names[j->count] = name;
  j->channels[j->count] = channels;
  j->images[j->count] = noise(channels, seed, lo, hi);
  ++j->count;
}

static int make_jobs(job* jobs)
{
  int n = 0;
  static const char* const guided[] = {"ATrous", "ATrous", "RT"};
  for (int k = 0; k < 3; ++k, ++n) {
    job* j = &jobs[n];
    memset(j, 0, sizeof *j);
    j->type = guided[k];
    j->tiled = k == 1;
    add_image(j, "color", 3, 11u + (unsigned)k, 0.0f, 2.0f);
    add_image(j, "albedo", 3, 21u, 0.1f, 0.9f);
    add_image(j, "normal", 3, 31u, -1.0f, 1.0f);
    if (k < 2)
      add_image(j, "depth", 1, 41u, 1.0f, 1.2f);
  }
  const char* const plain[] = {"RTLightmap", "Gaussian"};
  for (int k = 0; k < 2; ++k, ++n) {
    memset(&jobs[n], 0, sizeof jobs[n]);
    jobs[n].type = plain[k];
    add_image(&jobs[n], "color", 3, 51u + (unsigned)k, 0.0f, 4.0f);
  }
  for (int k = 0; k < 2; ++k, ++n) {
    job* p = &jobs[n];
    memset(p, 0, sizeof *p);
    p->type = "Poisson";
    p->cg = k;
    add_image(p, "color", 3, 61u, 0.0f, 1.0f);
    add_image(p, "gradientX", 3, 62u, -0.1f, 0.1f);
    add_image(p, "gradientY", 3, 63u, -0.1f, 0.1f);
  }
  job* g = &jobs[n++];
  memset(g, 0, sizeof *g);
  g->type = "GradientDomain";
  static const char* const halves[] = {"colorA", "colorB", "gradientXA", "gradientXB",
                                       "gradientYA", "gradientYB"};
  for (unsigned k = 0; k < 6; ++k)
    add_image(g, halves[k], 3, 71u + k, k < 2 ? 0.0f : -0.1f, k < 2 ? 1.0f : 0.1f);
  add_image(g, "albedo", 3, 81u, 0.1f, 0.9f);
  add_image(g, "normal", 3, 82u, -1.0f, 1.0f);
  add_image(g, "depth", 1, 83u, 1.0f, 1.2f);
  return n;
}

/* Reads this thread's error slot; returns the code, copies the message. */
static OIDNError slot(OIDNDevice device, char* message, size_t size)
{
  const char* m = NULL;
  const OIDNError code = oidnGetDeviceError(device, &m);
  if (message)
    snprintf(message, size, "%s", m ? m : "");
  return code;
}

/* Sets up, commits and runs one job into output; returns 0, or the first
 * error code this thread saw (its slot must be empty after every call). */
static int run_job(OIDNDevice device, const job* j, float* output)
{
  OIDNFilter f = oidnNewFilter(device, j->type);
  int bad = slot(device, NULL, 0) != OIDN_ERROR_NONE;
  for (int k = 0; k < j->count; ++k) {
    oidnSetSharedFilterImage(f, j->names[k], j->images[k],
                             j->channels[k] == 1 ? OIDN_FORMAT_FLOAT : OIDN_FORMAT_FLOAT3, W, H, 0,
                             0, 0);
    bad |= slot(device, NULL, 0) != OIDN_ERROR_NONE;
  }
  oidnSetSharedFilterImage(f, "output", output, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
  if (strcmp(j->type, "RT") == 0)
    oidnSetFilterBool(f, "hdr", true);
  if (j->tiled)
    oidnSetFilterInt(f, "maxMemoryMB", 0);
  if (j->cg)
    oidnSetFilterInt(f, "solver", 1);
  oidnCommitFilter(f);
  bad |= slot(device, NULL, 0) != OIDN_ERROR_NONE;
  oidnExecuteFilter(f);
  char message[256];
  const OIDNError code = slot(device, message, sizeof message);
  if (code != OIDN_ERROR_NONE)
    fprintf(stderr, "%s: %s\n", j->type, message);
  bad |= code != OIDN_ERROR_NONE;
  oidnReleaseFilter(f);
  return bad;
}

typedef struct shared
{
  OIDNDevice device;
  job* jobs;
  int jobs_count;
  atomic_int mismatches;
  atomic_int worker_errors;
  atomic_int errors_seen_by_callback;
  atomic_int errors_provoked;
  atomic_int errors_found;
  atomic_int running; /* workers still running */
} shared;

typedef struct worker_arg
{
  shared* s;
  int index;
} worker_arg;

static void* worker(void* user)
{
  worker_arg* a = user;
  shared* s = a->s;
  float* out = malloc((size_t)W * H * 3 * sizeof(float));
  for (int round = 0; round < ROUNDS; ++round)
    for (int k = 0; k < s->jobs_count; ++k) {
      const job* j = &s->jobs[(k + a->index) % s->jobs_count]; /* different orders */
      memset(out, 0xff, (size_t)W * H * 3 * sizeof(float));
      if (run_job(s->device, j, out))
        atomic_fetch_add(&s->worker_errors, 1);
      if (memcmp(out, j->reference, (size_t)W * H * 3 * sizeof(float)) != 0) {
        fprintf(stderr, "worker %d, %s: output differs from the serial run\n", a->index, j->type);
        atomic_fetch_add(&s->mismatches, 1);
      }
    }
  free(out);
  atomic_fetch_sub(&s->running, 1);
  return NULL;
}

static bool cancel_at_once(void* user, double done)
{
  (void)user;
  (void)done;
  return false;
}

/* Provokes one error and checks this thread's slot holds it. */
static void expect_own(shared* s, OIDNError want, const char* fragment)
{
  char message[256];
  const OIDNError code = slot(s->device, message, sizeof message);
  atomic_fetch_add(&s->errors_provoked, 1);
  if (code == want && strstr(message, fragment))
    atomic_fetch_add(&s->errors_found, 1);
  else
    fprintf(stderr, "error thread: got %d '%s', wanted %d '%s'\n", (int)code, message, (int)want,
            fragment);
  /* one error per call: the slot is empty again */
  if (slot(s->device, NULL, 0) != OIDN_ERROR_NONE)
    fprintf(stderr, "error thread: a second error in the slot\n");
}

static void* error_thread(void* user)
{
  shared* s = user;
  float* color = noise(3, 5u, 0.0f, 1.0f);
  float* out = malloc((size_t)W * H * 3 * sizeof(float));
  while (atomic_load(&s->running) > 0) {
    (void)oidnNewFilter(s->device, "Bogus");
    expect_own(s, OIDN_ERROR_INVALID_ARGUMENT, "unknown filter type");
    OIDNFilter f = oidnNewFilter(s->device, "ATrous");
    oidnSetSharedFilterImage(f, "color", color, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(f); /* no output */
    expect_own(s, OIDN_ERROR_INVALID_OPERATION, "output image not specified");
    oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, 70000, H, 0, 0, 0);
    expect_own(s, OIDN_ERROR_INVALID_ARGUMENT, "too large");
    oidnSetSharedFilterImage(f, "output", out, OIDN_FORMAT_FLOAT3, W, H, 0, 0, 0);
    oidnCommitFilter(f);
    (void)slot(s->device, NULL, 0);
    oidnSetFilterProgressMonitorFunction(f, cancel_at_once, NULL);
    oidnExecuteFilter(f);
    expect_own(s, OIDN_ERROR_CANCELLED, "cancelled");
    oidnReleaseFilter(f);
  }
  free(out);
  free(color);
  return NULL;
}

static void count_callback(void* user, OIDNError code, const char* message)
{
  (void)code;
  (void)message;
  atomic_fetch_add(&((shared*)user)->errors_seen_by_callback, 1);
}

/* The same job on a device with 4 threads, twice: the same bits. */
static void test_reproducible(const job* jobs, int count)
{
  OIDNDevice device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSetDeviceInt(device, "numThreads", 4);
  oidnCommitDevice(device);
  float* a = malloc((size_t)W * H * 3 * sizeof(float));
  float* b = malloc((size_t)W * H * 3 * sizeof(float));
  for (int k = 0; k < count; ++k) {
    int same = 1;
    CHECK_EQ_INT(run_job(device, &jobs[k], a), 0);
    for (int again = 0; again < 4; ++again) {
      CHECK_EQ_INT(run_job(device, &jobs[k], b), 0);
      same &= memcmp(a, b, (size_t)W * H * 3 * sizeof(float)) == 0;
    }
    if (!same)
      fprintf(stderr, "%s: runs with 4 threads differ from each other\n", jobs[k].type);
    CHECK(same);
  }
  free(a);
  free(b);
  oidnReleaseDevice(device);
}

int main(void)
{
  job jobs[10];
  const int count = make_jobs(jobs);
  shared s;
  memset(&s, 0, sizeof s);
  s.device = oidnNewDevice(OIDN_DEVICE_TYPE_CPU);
  oidnSetDeviceInt(s.device, "numThreads", 2);
  oidnCommitDevice(s.device);
  oidnSetDeviceErrorFunction(s.device, count_callback, &s);
  s.jobs = jobs;
  s.jobs_count = count;

  /* serial references */
  for (int k = 0; k < count; ++k) {
    jobs[k].reference = malloc((size_t)W * H * 3 * sizeof(float));
    CHECK_EQ_INT(run_job(s.device, &jobs[k], jobs[k].reference), 0);
  }

  pthread_t threads[WORKERS + 1];
  worker_arg args[WORKERS];
  atomic_store(&s.running, WORKERS);
  for (int t = 0; t < WORKERS; ++t) {
    args[t].s = &s;
    args[t].index = t;
    CHECK_EQ_INT(pthread_create(&threads[t], NULL, worker, &args[t]), 0);
  }
  CHECK_EQ_INT(pthread_create(&threads[WORKERS], NULL, error_thread, &s), 0);
  for (int t = 0; t <= WORKERS; ++t)
    pthread_join(threads[t], NULL);

  printf("concurrency: %d workers x %d rounds x %d filter types; %d mismatches, %d worker "
         "errors; error thread: %d errors provoked, %d found in its own slot, callback saw %d\n",
         WORKERS, ROUNDS, count, atomic_load(&s.mismatches), atomic_load(&s.worker_errors),
         atomic_load(&s.errors_provoked), atomic_load(&s.errors_found),
         atomic_load(&s.errors_seen_by_callback));
  CHECK_EQ_INT(atomic_load(&s.mismatches), 0);
  CHECK_EQ_INT(atomic_load(&s.worker_errors), 0);
  CHECK(atomic_load(&s.errors_provoked) >= 4);
  CHECK_EQ_INT(atomic_load(&s.errors_found), atomic_load(&s.errors_provoked));
  CHECK_EQ_INT(atomic_load(&s.errors_seen_by_callback), atomic_load(&s.errors_provoked));

  test_reproducible(jobs, count);

  for (int k = 0; k < count; ++k) {
    for (int i = 0; i < jobs[k].count; ++i)
      free(jobs[k].images[i]);
    free(jobs[k].reference);
  }
  oidnReleaseDevice(s.device);
  return lull_test_result("hardening_concurrency");
}
