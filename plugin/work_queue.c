/* A device's worker thread: OIDN's asynchronous calls on a device whose
 * backend runs work on the calling thread (the CPU).  Jobs run one after
 * another, in the order they were queued, on one thread started by the
 * first job; the first error of queued work waits here until a
 * synchronising call takes it (lull_device_wait).
 *
 * A job's finish runs after it, before it counts as done, on the worker
 * and without the device's lock (a thread may hold the lock while it waits
 * for the queue): it drops the references the job held.  Those are the
 * last ones of a filter or a buffer when the application released them
 * meanwhile; of the device only when a progress monitor released it (an
 * application's release of the device waits for the queue first).  The
 * device's destruction then happens on the worker, which cannot wait for
 * itself: the queue is orphaned, and the worker frees it and ends once the
 * finish returns. */
#include <stdatomic.h>
#include <stdlib.h>

#include "handles.h"

struct lull_work_queue
{
  pthread_mutex_t mutex;
  pthread_cond_t work; /* a job was queued, or stop */
  pthread_cond_t idle; /* done caught up with queued */
  lull_job *head, *tail;
  unsigned long long queued, done;
  int stop, orphaned;
  pthread_t thread;
  atomic_int started; /* set (after thread) once the thread exists */
  lull_error error; /* the first error of queued work not yet taken */
};

static void* worker_main(void* arg)
{
  lull_work_queue* q = arg;
  pthread_mutex_lock(&q->mutex);
  for (;;) {
    while (!q->head && !q->stop)
      pthread_cond_wait(&q->work, &q->mutex);
    lull_job* job = q->head;
    if (!job)
      break; /* stop, and nothing left */
    q->head = job->next;
    if (!q->head)
      q->tail = NULL;
    pthread_mutex_unlock(&q->mutex);

    lull_error err = {LULL_OK, ""};
    const lull_status status = job->run(job, &err);

    pthread_mutex_lock(&q->mutex);
    if (status != LULL_OK && q->error.code == LULL_OK)
      q->error = err;
    pthread_mutex_unlock(&q->mutex);
    /* the job's references go before it counts as done: once a wait
     * returns, releasing the device releases it there and then */
    job->finish(job); /* may orphan q (lull_work_queue_destroy) */
    pthread_mutex_lock(&q->mutex);
    if (++q->done == q->queued)
      pthread_cond_broadcast(&q->idle);
    if (q->orphaned)
      break;
  }
  const int orphaned = q->orphaned;
  pthread_mutex_unlock(&q->mutex);
  if (orphaned) {
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->idle);
    pthread_mutex_destroy(&q->mutex);
    free(q);
  }
  return NULL;
}

lull_work_queue* lull_work_queue_new(void)
{
  lull_work_queue* q = calloc(1, sizeof *q);
  if (!q)
    return NULL;
  if (pthread_mutex_init(&q->mutex, NULL) != 0) {
    free(q);
    return NULL;
  }
  if (pthread_cond_init(&q->work, NULL) != 0) {
    pthread_mutex_destroy(&q->mutex);
    free(q);
    return NULL;
  }
  if (pthread_cond_init(&q->idle, NULL) != 0) {
    pthread_cond_destroy(&q->work);
    pthread_mutex_destroy(&q->mutex);
    free(q);
    return NULL;
  }
  q->error.code = LULL_OK;
  return q;
}

int lull_work_queue_on_worker(lull_work_queue* q)
{
  /* thread is written once, before started */
  return q && atomic_load(&q->started) && pthread_equal(q->thread, pthread_self());
}

void lull_work_queue_push(lull_work_queue* q, lull_job* job)
{
  job->next = NULL;
  pthread_mutex_lock(&q->mutex);
  if (!atomic_load(&q->started)) {
    /* the first job starts the thread; where no thread can be made, the
     * job runs here and now, in order (nothing was queued before it) */
    if (pthread_create(&q->thread, NULL, worker_main, q) != 0) {
      pthread_mutex_unlock(&q->mutex);
      lull_error err = {LULL_OK, ""};
      if (job->run(job, &err) != LULL_OK) {
        pthread_mutex_lock(&q->mutex);
        if (q->error.code == LULL_OK)
          q->error = err;
        pthread_mutex_unlock(&q->mutex);
      }
      job->finish(job);
      return;
    }
    atomic_store(&q->started, 1);
  }
  if (q->tail)
    q->tail->next = job;
  else
    q->head = job;
  q->tail = job;
  q->queued++;
  pthread_cond_signal(&q->work);
  pthread_mutex_unlock(&q->mutex);
}

int lull_work_queue_idle(lull_work_queue* q)
{
  pthread_mutex_lock(&q->mutex);
  const int idle = q->done == q->queued;
  pthread_mutex_unlock(&q->mutex);
  return idle;
}

void lull_work_queue_wait(lull_work_queue* q)
{
  /* the worker does not wait for itself: a progress monitor of a queued
   * run that synchronises sees the work before it, which is done */
  if (lull_work_queue_on_worker(q))
    return;
  pthread_mutex_lock(&q->mutex);
  while (q->done != q->queued)
    pthread_cond_wait(&q->idle, &q->mutex);
  pthread_mutex_unlock(&q->mutex);
}

lull_status lull_work_queue_take_error(lull_work_queue* q, lull_error* err)
{
  pthread_mutex_lock(&q->mutex);
  const lull_status code = q->error.code;
  if (code != LULL_OK) {
    *err = q->error;
    q->error.code = LULL_OK;
    q->error.message[0] = '\0';
  }
  pthread_mutex_unlock(&q->mutex);
  return code;
}

void lull_work_queue_destroy(lull_work_queue* q)
{
  if (!q)
    return;
  pthread_mutex_lock(&q->mutex);
  if (lull_work_queue_on_worker(q)) {
    /* the last reference went with a finishing job: the worker ends and
     * frees the queue once that finish returns */
    q->orphaned = 1;
    pthread_mutex_unlock(&q->mutex);
    pthread_detach(pthread_self());
    return;
  }
  const int started = atomic_load(&q->started);
  q->stop = 1;
  pthread_cond_signal(&q->work);
  pthread_mutex_unlock(&q->mutex);
  if (started)
    pthread_join(q->thread, NULL);
  pthread_cond_destroy(&q->work);
  pthread_cond_destroy(&q->idle);
  pthread_mutex_destroy(&q->mutex);
  free(q);
}
