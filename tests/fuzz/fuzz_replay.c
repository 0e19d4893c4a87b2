/* Runs a fuzz harness's LLVMFuzzerTestOneInput on files, without libFuzzer:
 * the seed corpus and the inputs of fixed crashes (regressions_*) are
 * replayed by every build (GCC, the sanitizer build, valgrind), not only
 * by clang builds that can link libFuzzer.
 *
 *   fuzz_<harness>_replay FILE_OR_DIRECTORY...
 *
 * Prints how many inputs ran; exits 1 when an argument cannot be read (a
 * finding aborts, as under libFuzzer). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int run_file(const char* path)
{
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
    return 1;
  }
  size_t capacity = 4096, size = 0;
  uint8_t* data = malloc(capacity);
  size_t n;
  while (data && (n = fread(data + size, 1, capacity - size, f)) > 0) {
    size += n;
    if (size == capacity) {
      uint8_t* bigger = realloc(data, capacity * 2);
      if (!bigger) {
        free(data);
        data = NULL;
        break;
      }
      data = bigger;
      capacity *= 2;
    }
  }
  fclose(f);
  if (!data) {
    fprintf(stderr, "fuzz_replay: out of memory reading %s\n", path);
    return 1;
  }
  (void)LLVMFuzzerTestOneInput(data, size);
  free(data);
  return 0;
}

static int compare_names(const void* a, const void* b)
{
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* Runs every regular file of a directory, in name order (runs repeat). */
static int run_directory(const char* path, int* count)
{
  DIR* dir = opendir(path);
  if (!dir) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
    return 1;
  }
  char** names = NULL;
  size_t used = 0, capacity = 0;
  int failed = 0;
  struct dirent* entry;
  while (!failed && (entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.')
      continue;
    if (used == capacity) {
      capacity = capacity ? 2 * capacity : 64;
      char** bigger = realloc(names, capacity * sizeof *names);
      if (!bigger) {
        failed = 1;
        break;
      }
      names = bigger;
    }
    const size_t length = strlen(path) + strlen(entry->d_name) + 2;
    names[used] = malloc(length);
    if (!names[used]) {
      failed = 1;
      break;
    }
    snprintf(names[used], length, "%s/%s", path, entry->d_name);
    ++used;
  }
  closedir(dir);
  if (names)
    qsort(names, used, sizeof *names, compare_names);
  for (size_t i = 0; i < used; ++i) {
    struct stat st;
    if (!failed && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      failed = run_file(names[i]);
      ++*count;
    }
    free(names[i]);
  }
  free(names);
  return failed;
}

int main(int argc, char** argv)
{
  int count = 0, failed = 0;
  for (int i = 1; i < argc && !failed; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "fuzz_replay: cannot open %s\n", argv[i]);
      failed = 1;
    } else if (S_ISDIR(st.st_mode)) {
      failed = run_directory(argv[i], &count);
    } else {
      failed = run_file(argv[i]);
      ++count;
    }
  }
  printf("fuzz_replay: %d inputs ran\n", count);
  return failed || count == 0;
}
