/* The DDID filter's iterations (§4.3), the same on every backend: each
 * step's parameters S_n, T_n, r_n, a_n, its planes (the guide of the step
 * before), and progress by the work done (a step's time grows with its
 * window's cube, the separable DFT at every pixel). */
#include <string.h>

#include "ddid.h"

lull_ddid_step lull_ddid_params_step(const lull_ddid_params* params, int n)
{
  return lull_ddid_step_of(n, params->iterations, params->sigma_spatial, params->range,
                           params->frequency, params->log_alpha);
}

void lull_ddid_state_init(lull_ddid_state* state, const lull_ddid_images* images, int width,
                          int height, float* const* P)
{
  memset(state, 0, sizeof *state);
  state->width = width;
  state->height = height;
  for (int c = 0; c < 3; ++c) {
    state->y[c] = P[LULL_DDID_P_Y + c];
    state->v[c] = P[LULL_DDID_P_V + c];
    state->g[c] = P[LULL_DDID_P_G + c];
    state->gn[c] = P[LULL_DDID_P_GN + c];
  }
  const lull_regression_features fa = lull_regression_half_features(images, 0);
  state->nf = lull_regression_feature_channels(&fa);
  for (int c = 0; c < state->nf; ++c)
    state->f[c] = P[LULL_DDID_P_F + c];
}

lull_status lull_ddid_halves_variance(const lull_ddid_ops* ops, float* const* P, int width,
                                      int height, lull_error* err)
{
  lull_rdfc_pixels a;
  memset(&a, 0, sizeof a);
  a.width = width;
  a.height = height;
  a.channels = 3;
  a.kind = LULL_RDFC_TWO_BUFFER_H;
  for (int c = 0; c < 3; ++c) {
    a.src[c] = P[LULL_DDID_P_A + c];
    a.src2[c] = P[LULL_DDID_P_B + c];
    a.dst[c] = P[LULL_DDID_P_TMP + c];
  }
  lull_status status = ops->pixels(ops->ctx, &a, err);
  a.kind = LULL_RDFC_BLUR_V;
  for (int c = 0; c < 3; ++c) {
    a.src[c] = P[LULL_DDID_P_TMP + c];
    a.src2[c] = NULL;
    a.dst[c] = P[LULL_DDID_P_TMP + 3 + c];
  }
  if (status == LULL_OK)
    status = ops->pixels(ops->ctx, &a, err);
  a.kind = LULL_RDFC_BOX;
  a.radius = 2;
  for (int c = 0; c < 3; ++c) {
    a.src[c] = P[LULL_DDID_P_TMP + 3 + c];
    a.dst[c] = P[LULL_DDID_P_V + c];
  }
  return status == LULL_OK ? ops->pixels(ops->ctx, &a, err) : status;
}

lull_status lull_ddid_iterate(const lull_ddid_ops* ops, const lull_ddid_params* params,
                              lull_ddid_state* state, const lull_progress* progress,
                              lull_error* err)
{
  double total = 0.0, done = 0.0;
  for (int n = params->iterations; n >= 1; --n) {
    const double W = 2.0 * lull_ddid_params_step(params, n).radius + 1.0;
    total += W * W * W;
  }
  float* g[3] = {state->g[0], state->g[1], state->g[2]};
  float* out[3] = {state->gn[0], state->gn[1], state->gn[2]};
  for (int n = params->iterations; n >= 1; --n) {
    const lull_ddid_step st = lull_ddid_params_step(params, n);
    const double W = 2.0 * st.radius + 1.0;
    lull_ddid_planes pl;
    memset(&pl, 0, sizeof pl);
    pl.width = state->width;
    pl.height = state->height;
    for (int c = 0; c < 3; ++c) {
      pl.g[c] = g[c];
      pl.y[c] = state->y[c];
      pl.v[c] = state->v[c];
      pl.out[c] = out[c];
    }
    pl.nf = params->k_feature > 0.0f ? state->nf : 0;
    for (int c = 0; c < pl.nf; ++c)
      pl.f[c] = state->f[c];
    pl.inv_2kf2 = pl.nf ? 1.0f / (2.0f * params->k_feature * params->k_feature) : 0.0f;
    const lull_progress_span span = {progress, done / total, (done + W * W * W) / total};
    const lull_status status = ops->step(ops->ctx, &pl, &st, &span, err);
    if (status != LULL_OK)
      return status;
    done += W * W * W;
    for (int c = 0; c < 3; ++c) {
      float* t = g[c];
      g[c] = out[c];
      out[c] = t;
    }
  }
  for (int c = 0; c < 3; ++c)
    state->result[c] = g[c];
  return LULL_OK;
}
