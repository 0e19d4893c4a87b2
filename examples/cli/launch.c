/* lull blender / lull run: start a program with lull as its Open Image
 * Denoise.
 *
 * Blender (4.x, 5.x on Linux), the bpy module and OIDN's own programs load
 * libOpenImageDenoise.so.2 through the dynamic loader: Blender's binary and
 * bpy find the copy they ship through RUNPATH ($ORIGIN/lib), a distribution's
 * Blender the system's.  LD_LIBRARY_PATH comes before RUNPATH and the
 * system's folders, so a folder that holds lull's libOpenImageDenoise.so.2
 * there puts lull under Cycles' render and viewport denoising and the
 * compositor's Denoise node, with nothing of Blender changed.  The folder
 * holds only that one library (a link to lull's), not the folder lull is
 * installed in, whose other libraries (an OpenImageIO, a TBB) Blender must
 * not pick up instead of its own; it lives in TMPDIR while the program
 * runs and is removed after.  LD_LIBRARY_PATH reaches the program's
 * children too (a render farm's workers, `bpy` in subprocesses). */
#define _GNU_SOURCE /* dladdr */

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static const char blender_usage[] =
    "usage: lull blender [--blender PATH] [BLENDER ARGUMENTS...]\n"
    "\n"
    "Starts Blender with lull as its Open Image Denoise: Cycles' denoiser\n"
    "'OpenImageDenoise' (render and viewport, on the CPU) and the compositor's\n"
    "Denoise node run lull's RT filter.  Blender is the one on PATH, or PATH.\n"
    "Every other argument goes to Blender unchanged, e.g.\n"
    "  lull blender scene.blend\n"
    "  lull blender -b scene.blend -f 1\n"
    "The lull add-on's panel (Render Properties) says which library Cycles uses.\n"
    "Exits with Blender's status.\n";

static const char run_usage[] =
    "usage: lull run COMMAND [ARGUMENTS...]\n"
    "\n"
    "Runs COMMAND with lull as its Open Image Denoise (libOpenImageDenoise.so.2\n"
    "first on the library path): Python scripts that use Blender's bpy module,\n"
    "OIDN's own programs, any program linked against Open Image Denoise, e.g.\n"
    "  lull run python render.py\n"
    "Exits with COMMAND's status.\n";

/* The libOpenImageDenoise.so.2 built and installed with the library this
 * program runs on (liblull.so, found from one of its functions). */
static int lull_oidn_library(char* out, size_t size)
{
  Dl_info info;
  if (!dladdr((void*)oidnNewDevice, &info) || !info.dli_fname) {
    cli_error("cannot tell where lull's library is loaded from");
    return 0;
  }
  char lib[PATH_MAX];
  if (!realpath(info.dli_fname, lib)) {
    cli_error("cannot resolve %s: %s", info.dli_fname, strerror(errno));
    return 0;
  }
  char* slash = strrchr(lib, '/');
  if (slash)
    *slash = '\0';
  char candidate[PATH_MAX + 32];
  snprintf(candidate, sizeof candidate, "%s/libOpenImageDenoise.so.2", lib);
  if (!realpath(candidate, out) || strlen(out) >= size || access(out, R_OK) != 0) {
    cli_error("lull's libOpenImageDenoise.so.2 is not beside %s (build or install lull "
              "with its OIDN library)", info.dli_fname);
    return 0;
  }
  return 1;
}

/* A program on PATH (a name with a slash is taken as it is). */
static int find_program(const char* name, char* out, size_t size)
{
  if (strchr(name, '/')) {
    if (access(name, X_OK) != 0)
      return 0;
    snprintf(out, size, "%s", name);
    return 1;
  }
  const char* path = getenv("PATH");
  if (!path || !*path)
    path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    const char* end = strchr(path, ':');
    const size_t length = end ? (size_t)(end - path) : strlen(path);
    if (length > 0 && length < size - 2 - strlen(name)) {
      snprintf(out, size, "%.*s/%s", (int)length, path, name);
      struct stat st;
      if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
        return 1;
    }
    if (!end)
      break;
    path = end + 1;
  }
  return 0;
}

/* Runs argv[0] with a private folder holding lull's library first on
 * LD_LIBRARY_PATH; returns its exit status, or ends this process by the
 * signal that ended it. */
static int run_with_lull(char** argv)
{
  char library[PATH_MAX];
  if (!lull_oidn_library(library, sizeof library))
    return CLI_FAILED;
  const char* tmp = getenv("TMPDIR");
  char folder[PATH_MAX];
  snprintf(folder, sizeof folder, "%s/lull-oidn-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(folder)) {
    cli_error("cannot make a folder in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
    return CLI_FAILED;
  }
  char link_path[PATH_MAX + 32];
  snprintf(link_path, sizeof link_path, "%s/libOpenImageDenoise.so.2", folder);
  if (symlink(library, link_path) != 0) {
    cli_error("cannot link %s: %s", link_path, strerror(errno));
    rmdir(folder);
    return CLI_FAILED;
  }
  const char* old = getenv("LD_LIBRARY_PATH");
  const size_t length = strlen(folder) + (old ? strlen(old) : 0) + 2;
  char* value = malloc(length);
  int status = CLI_FAILED, signalled = 0;
  pid_t child = -1;
  if (!value) {
    cli_error("out of memory");
  } else {
    snprintf(value, length, "%s%s%s", folder, old && *old ? ":" : "", old && *old ? old : "");
    fflush(NULL);
    child = fork();
    if (child == 0) {
      setenv("LD_LIBRARY_PATH", value, 1);
      setenv("LULL_OIDN_LIBRARY", library, 1); /* what the add-on's panel compares with */
      execv(argv[0], argv);
      fprintf(stderr, "lull: cannot run %s: %s\n", argv[0], strerror(errno));
      _exit(127);
    }
    if (child < 0)
      cli_error("cannot start %s: %s", argv[0], strerror(errno));
  }
  if (child > 0) {
    /* Ctrl-C reaches the program (the terminal signals the whole group);
     * this process waits for it and cleans up, as a shell does */
    struct sigaction ignore, old_int, old_quit;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    int wstatus = 0;
    pid_t done;
    while ((done = waitpid(child, &wstatus, 0)) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (done < 0) {
      cli_error("waiting for %s: %s", argv[0], strerror(errno));
    } else if (WIFEXITED(wstatus)) {
      status = WEXITSTATUS(wstatus);
    } else if (WIFSIGNALED(wstatus)) {
      status = 128 + WTERMSIG(wstatus);
      signalled = WTERMSIG(wstatus);
    }
  }
  unlink(link_path);
  rmdir(folder);
  free(value);
  if (signalled) {
    /* end as the program ended: a shell's loop stops for a child that died
     * of SIGINT, not for one that exited with 130 */
    fflush(NULL);
    signal(signalled, SIG_DFL);
    raise(signalled);
  }
  return status;
}

int cli_blender_main(int argc, char** argv)
{
  const char* blender = NULL;
  int first = 1; /* Blender's arguments start here */
  for (; first < argc; ++first) {
    const char* arg = argv[first];
    if (strcmp(arg, "--help") == 0 && !blender) {
      fputs(blender_usage, stdout);
      return CLI_OK;
    }
    if (strcmp(arg, "--blender") == 0) {
      if (first + 1 >= argc) {
        cli_error("--blender needs a path (lull blender --help)");
        return CLI_USAGE;
      }
      blender = argv[++first];
    } else if (strncmp(arg, "--blender=", 10) == 0) {
      blender = arg + 10;
    } else {
      break;
    }
  }
  char program[PATH_MAX];
  if (!find_program(blender ? blender : "blender", program, sizeof program)) {
    if (blender)
      cli_error("%s is not an executable Blender", blender);
    else
      cli_error("blender is not on PATH: give its path with --blender PATH");
    return CLI_USAGE;
  }
  char** args = calloc((size_t)(argc - first) + 2, sizeof *args);
  if (!args) {
    cli_error("out of memory");
    return CLI_FAILED;
  }
  args[0] = program;
  for (int i = first; i < argc; ++i)
    args[1 + i - first] = argv[i];
  const int status = run_with_lull(args);
  free(args);
  return status;
}

int cli_run_main(int argc, char** argv)
{
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(run_usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  char program[PATH_MAX];
  if (!find_program(argv[1], program, sizeof program)) {
    cli_error("%s: command not found", argv[1]);
    return 127;
  }
  char** args = calloc((size_t)argc, sizeof *args);
  if (!args) {
    cli_error("out of memory");
    return CLI_FAILED;
  }
  args[0] = program;
  for (int i = 2; i < argc; ++i)
    args[i - 1] = argv[i];
  const int status = run_with_lull(args);
  free(args);
  return status;
}
