/* Sequences: "####" and "%04d" patterns, --frames, skip-if-done resume,
 * --shard I/N (every frame in exactly one shard), summaries and exit
 * status, and Ctrl-C between frames. */
#define _XOPEN_SOURCE 700

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_test_util.h"
#include "test_util.h"

#define ARGS(...) ((const char* const[]){__VA_ARGS__, NULL})

static const char* tool = LULL_CLI_TOOL;

#define EXPECT(status, ...) \
  cli_expect(tool, dir, status, ARGS(__VA_ARGS__), __FILE__, __LINE__)

static void frame_path(char* out, size_t size, const char* dir, const char* folder, int frame)
{
  snprintf(out, size, "%s/%s/%04d.pfm", dir, folder, frame);
}

/* Which of frames 0..max have an output in folder (bit k set). */
static unsigned outputs(const char* dir, const char* folder, int max)
{
  unsigned set = 0;
  for (int k = 0; k <= max; ++k) {
    char path[1200];
    frame_path(path, sizeof path, dir, folder, k);
    if (cli_file_exists(path))
      set |= 1u << k;
  }
  return set;
}

static void make_frames(const char* dir, const char* folder, int first, int last, int size)
{
  char path[1200];
  for (int k = first; k <= last; ++k) {
    cli_scene scene;
    CHECK_EQ_INT(cli_scene_make(&scene, size, size * 2 / 3, (unsigned)k, 0.5f), 0);
    frame_path(path, sizeof path, dir, folder, k);
    CHECK_EQ_INT(cli_scene_write_plain(&scene, "noisy", path), 0);
    cli_scene_free(&scene);
  }
}

static void test_patterns_and_resume(const char* dir)
{
  char in[1200], out[1200], decoy[1200];
  snprintf(in, sizeof in, "%s/in/####.pfm", dir);
  snprintf(out, sizeof out, "%s/out/####.pfm", dir);
  make_frames(dir, "in", 1, 6, 24);
  /* names the pattern does not write */
  snprintf(decoy, sizeof decoy, "%s/in/00007.pfm", dir);
  cli_scene scene;
  cli_scene_make(&scene, 24, 16, 99, 0.5f);
  cli_scene_write_plain(&scene, "noisy", decoy);
  snprintf(decoy, sizeof decoy, "%s/in/8.pfm", dir);
  cli_scene_write_plain(&scene, "noisy", decoy);
  cli_scene_free(&scene);

  EXPECT(0, "denoise", in, "-o", out);
  CHECK_EQ_INT(outputs(dir, "out", 9), 0x7eu); /* frames 1 to 6 */
  CHECK(cli_said(dir, "stderr.txt", "6 frames: 6 denoised, 0 up to date (skipped), 0 failed"));
  char* log = cli_slurp(dir, "stderr.txt");
  int lines = 0; /* a plain line per frame when stderr is not a terminal */
  for (const char* p = log; p && (p = strstr(p, " -> ")) != NULL; ++p)
    ++lines;
  CHECK_EQ_INT(lines, 6);
  CHECK(log && strchr(log, '\r') == NULL);
  free(log);

  /* resume: everything is up to date */
  long long before[7];
  for (int k = 1; k <= 6; ++k) {
    char path[1200];
    frame_path(path, sizeof path, dir, "out", k);
    before[k] = cli_mtime(path);
  }
  EXPECT(0, "denoise", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "6 frames: 0 denoised, 6 up to date (skipped), 0 failed"));
  /* an input changed after its output: only that frame again */
  char changed[1200];
  frame_path(changed, sizeof changed, dir, "in", 3);
  CHECK_EQ_INT(cli_touch(changed, 5.0), 0);
  EXPECT(0, "denoise", in, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "6 frames: 1 denoised, 5 up to date (skipped), 0 failed"));
  for (int k = 1; k <= 6; ++k) {
    char path[1200];
    frame_path(path, sizeof path, dir, "out", k);
    CHECK_EQ_INT(cli_mtime(path) != before[k], k == 3);
  }
  EXPECT(0, "denoise", in, "-o", out, "--overwrite", "--quiet");
  for (int k = 1; k <= 6; ++k) {
    char path[1200];
    frame_path(path, sizeof path, dir, "out", k);
    CHECK(cli_mtime(path) != before[k]);
  }

  /* printf style and a frame range */
  char in2[1200], out2[1200];
  snprintf(in2, sizeof in2, "%s/in/%%04d.pfm", dir);
  snprintf(out2, sizeof out2, "%s/range/%%04d.pfm", dir);
  char range_dir[1200];
  snprintf(range_dir, sizeof range_dir, "%s/range", dir);
  CHECK_EQ_INT(cli_scratch("sequence/range", range_dir, sizeof range_dir), 0);
  EXPECT(0, "denoise", in2, "-o", out2, "--frames", "2-4");
  CHECK_EQ_INT(outputs(dir, "range", 9), 0x1cu);
  /* missing frames fail, the others are written, the exit status says so */
  EXPECT(1, "denoise", in2, "-o", out2, "--frames", "5-8,1");
  CHECK(cli_said(dir, "stderr.txt", "5 frames: 3 denoised, 0 up to date (skipped), 2 failed"));
  CHECK(cli_said(dir, "stderr.txt", "0007.pfm"));
  CHECK_EQ_INT(outputs(dir, "range", 9), 0x7eu);

  /* usage errors */
  char plain[1200];
  snprintf(plain, sizeof plain, "%s/in/0001.pfm", dir);
  EXPECT(2, "denoise", in, "-o", plain);
  CHECK(cli_said(dir, "stderr.txt", "needs a frame number too"));
  EXPECT(2, "denoise", plain, "-o", out);
  EXPECT(2, "denoise", plain, "--frames", "1-3");
  EXPECT(2, "denoise", plain, "--shard", "0/2");
  EXPECT(2, "denoise", in, "-o", out, "--frames", "5-1");
  EXPECT(2, "denoise", in, "-o", out, "--frames", "1-x");
  EXPECT(2, "denoise", in, "-o", out, "--shard", "2/2");
  EXPECT(2, "denoise", in, "-o", out, "--shard", "1");
  char two[1200];
  snprintf(two, sizeof two, "%s/in/##_%%04d.pfm", dir);
  EXPECT(2, "denoise", two, "-o", out);
  snprintf(two, sizeof two, "%s/in####/a.pfm", dir);
  EXPECT(2, "denoise", two, "-o", out);
  char none[1200];
  snprintf(none, sizeof none, "%s/in/none_####.pfm", dir);
  EXPECT(1, "denoise", none, "-o", out);
  CHECK(cli_said(dir, "stderr.txt", "no frames found"));
  /* a folder that cannot be read is a failure, as no frames are (it was a
   * usage error) */
  snprintf(none, sizeof none, "%s/no_such_folder/####.pfm", dir);
  EXPECT(1, "denoise", none, "-o", out);
}

/* Resume counts a frame done only when its side-by-side picture is there
 * too: one whose picture failed after its output was written had been
 * skipped as up to date, the picture never made. */
static void test_side_by_side_resume(const char* dir)
{
#if defined(LULL_IO_HAS_OIIO)
  char in[1200], out[1200], sbs[1200], blocker[1200];
  snprintf(in, sizeof in, "%s/in/####.pfm", dir);
  snprintf(out, sizeof out, "%s/sbs_out/####.pfm", dir);
  snprintf(sbs, sizeof sbs, "%s/sbs/####.png", dir);
  snprintf(blocker, sizeof blocker, "%s/sbs/0001.png", dir);
  char folder[1200];
  snprintf(folder, sizeof folder, "%s/sbs", dir);
  CHECK_EQ_INT(cli_scratch("sequence/sbs", folder, sizeof folder), 0);
  CHECK_EQ_INT(mkdir(blocker, 0777), 0); /* frame 1's picture cannot be written */
  EXPECT(1, "denoise", in, "-o", out, "--frames", "1-2", "--side-by-side", sbs);
  CHECK(cli_said(dir, "stderr.txt", "2 frames: 1 denoised, 0 up to date (skipped), 1 failed"));
  CHECK_EQ_INT(rmdir(blocker), 0);
  EXPECT(0, "denoise", in, "-o", out, "--frames", "1-2", "--side-by-side", sbs);
  CHECK(cli_said(dir, "stderr.txt", "2 frames: 1 denoised, 1 up to date (skipped), 0 failed"));
  CHECK(cli_file_exists(blocker));
#else
  (void)dir;
#endif
}

static void test_shards(const char* dir)
{
  char in[1200];
  snprintf(in, sizeof in, "%s/in/####.pfm", dir);
  enum { SHARDS = 3 };
  unsigned seen[SHARDS];
  for (int s = 0; s < SHARDS; ++s) {
    char out[1200], shard[16], folder[32];
    snprintf(folder, sizeof folder, "shard%d", s);
    snprintf(out, sizeof out, "%s/%s/####.pfm", dir, folder);
    snprintf(shard, sizeof shard, "%d/%d", s, SHARDS);
    EXPECT(0, "denoise", in, "-o", out, "--shard", shard);
    seen[s] = outputs(dir, folder, 9);
    for (int k = 1; k <= 6; ++k) /* frame k belongs to shard k mod 3 */
      CHECK_EQ_INT((seen[s] >> k) & 1u, k % SHARDS == s);
  }
  /* together exactly the frames, each once */
  CHECK_EQ_INT(seen[0] | seen[1] | seen[2], 0x7eu);
  CHECK_EQ_INT(seen[0] & seen[1], 0);
  CHECK_EQ_INT(seen[0] & seen[2], 0);
  CHECK_EQ_INT(seen[1] & seen[2], 0);
  /* more shards than frames: an idle machine is not an error */
  char out[1200];
  snprintf(out, sizeof out, "%s/idle/####.pfm", dir);
  EXPECT(0, "denoise", in, "-o", out, "--frames", "1-2", "--shard", "5/7");
  /* output folders that do not exist yet are made (a farm's tasks write
   * into fresh folders; the README's example failed without one) */
  snprintf(out, sizeof out, "%s/fresh/deeper/####.pfm", dir);
  EXPECT(0, "denoise", in, "-o", out, "--frames", "2-3");
  CHECK_EQ_INT(outputs(dir, "fresh/deeper", 9), 0xcu);
}

/* Ctrl-C in the middle of a sequence: the tool ends by SIGINT (status
 * 130; a shell loop stops only for a child that died of it, not for one
 * that exited with 130), every output that exists is complete, no
 * temporary file is left. */
static void test_interrupt(const char* dir)
{
  enum { FRAMES = 60 };
  make_frames(dir, "many", 1, FRAMES, 96);
  char in[1200], out[1200], first[1200], out_dir[1200];
  snprintf(in, sizeof in, "%s/many/####.pfm", dir);
  snprintf(out, sizeof out, "%s/many_out/####.pfm", dir);
  snprintf(out_dir, sizeof out_dir, "%s/many_out", dir);
  frame_path(first, sizeof first, dir, "many_out", 1);
  const int pid = cli_start(tool, dir, ARGS("denoise", in, "-o", out));
  CHECK(pid > 0);
  /* wait until a frame is written: the tool is past its start */
  for (int i = 0; i < 60000 && !cli_file_exists(first); ++i) {
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  CHECK(cli_file_exists(first));
  kill(pid, SIGINT);
  int signal = 0;
  const int status = cli_wait_signal(pid, &signal);
  int written = 0;
  for (int k = 1; k <= FRAMES; ++k) {
    char path[1200];
    frame_path(path, sizeof path, dir, "many_out", k);
    if (!cli_file_exists(path))
      continue;
    ++written;
    lull_io_image image;
    char err[512];
    CHECK_EQ_INT(lull_io_read(path, &image, err, sizeof err), 0);
    lull_io_free(&image);
  }
  if (written < FRAMES) { /* the usual case; a very fast machine may finish first */
    CHECK_EQ_INT(status, 130);
    CHECK_EQ_INT(signal, SIGINT);
    CHECK(cli_said(dir, "stderr.txt", "interrupted"));
  } else {
    CHECK(status == 130 || status == 0);
  }
  CHECK_EQ_INT(cli_temp_files(out_dir), 0);
  printf("interrupted after %d of %d frames\n", written, FRAMES);
}

/* A signal the tool was started to ignore (nohup's SIGHUP, a script's
 * background job's SIGINT) leaves the run alone: it had stopped it, and
 * then died by it. */
static void test_ignored_signal(const char* dir)
{
  enum { FRAMES = 12 };
  make_frames(dir, "hup", 1, FRAMES, 96);
  char in[1200], out[1200], first[1200];
  snprintf(in, sizeof in, "%s/hup/####.pfm", dir);
  snprintf(out, sizeof out, "%s/hup_out/####.pfm", dir);
  frame_path(first, sizeof first, dir, "hup_out", 1);
  struct sigaction ignore, before;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGHUP, &ignore, &before); /* inherited by the tool, as nohup does */
  const int pid = cli_start(tool, dir, ARGS("denoise", in, "-o", out));
  sigaction(SIGHUP, &before, NULL);
  CHECK(pid > 0);
  for (int i = 0; i < 60000 && !cli_file_exists(first); ++i) {
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  kill(pid, SIGHUP);
  int signal = 0;
  CHECK_EQ_INT(cli_wait_signal(pid, &signal), 0);
  CHECK_EQ_INT(signal, 0);
  CHECK_EQ_INT(outputs(dir, "hup_out", FRAMES), ((1u << FRAMES) - 1u) << 1);
}

/* The progress bar on a terminal (util-linux's `script` gives the tool
 * one): frames skipped as up to date count as done, so a resumed run ends
 * at 6/6 and 100% (it ended at "16%  1/6").  Skipped without `script`. */
static void test_progress_counts_skipped(const char* dir)
{
  static const char script[] = "/usr/bin/script";
  if (access(script, X_OK) != 0) {
    printf("progress bar: skipped (no %s)\n", script);
    return;
  }
  make_frames(dir, "bar", 1, 6, 24);
  char in[1200], out[1200], last[1200], command[4000];
  snprintf(in, sizeof in, "%s/bar/####.pfm", dir);
  snprintf(out, sizeof out, "%s/bar_out/####.pfm", dir);
  EXPECT(0, "denoise", in, "-o", out, "--frames", "1-5", "--quiet");
  frame_path(last, sizeof last, dir, "bar", 6);
  snprintf(command, sizeof command, "'%s' denoise '%s' -o '%s'", tool, in, out);
  const char* const args[] = {"-qc", command, "/dev/null", NULL};
  CHECK_EQ_INT(cli_run(script, dir, args), 0);
  CHECK(cli_said(dir, "stdout.txt", "100%  6/6"));
}

int main(void)
{
  if (cli_tool_built(tool))
    return 77;
  char dir[1024], sub[1200];
  if (cli_scratch("sequence", dir, sizeof dir))
    return 1;
  static const char* const folders[] = {"in", "out", "shard0", "shard1", "shard2", "idle",
                                        "many", "many_out", "bar", "hup", "hup_out"};
  for (size_t i = 0; i < sizeof folders / sizeof folders[0]; ++i) {
    char name[64];
    snprintf(name, sizeof name, "sequence/%s", folders[i]);
    if (cli_scratch(name, sub, sizeof sub))
      return 1;
  }
  test_patterns_and_resume(dir);
  test_side_by_side_resume(dir);
  test_shards(dir);
  test_interrupt(dir);
  test_ignored_signal(dir);
  test_progress_counts_skipped(dir);
  return lull_test_result("cli_sequence");
}
