// SPDX-License-Identifier: MIT
/*
 * A KMS display for the GL clients that run in a guest (see gles_target.h):
 * the first connected connector of a DRM card at its preferred mode, a GBM
 * surface as the EGL window, and every presented frame shown with a page
 * flip (the first with a mode set).
 *
 * Objects: the card's fd owns the GBM device, which owns the surface; each
 * buffer the surface hands out carries the framebuffer made for it (GBM
 * user data, removed with the buffer). At most two buffers are locked: the
 * one on screen and the one being flipped to.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <gbm.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "gles/gles_target.h"

/* How long a page flip may take before the display counts as stuck. */
#define FLIP_TIMEOUT_MS 1000

struct gles_kms {
	int fd;
	struct gbm_device *gbm;
	struct gbm_surface *surface;
	drmModeModeInfo mode;
	uint32_t connector, crtc;
	struct gbm_bo *shown; /* on screen; NULL before the first frame */
	bool flip_pending;
};

static void destroy_fb(struct gbm_bo *bo, void *data)
{
	int fd = gbm_device_get_fd(gbm_bo_get_device(bo));
	uint32_t fb = (uint32_t)(uintptr_t)data;

	if (fb)
		drmModeRmFB(fd, fb);
}

/* The framebuffer of @bo, made on first use; 0 when that fails. */
static uint32_t fb_of(struct gles_kms *k, struct gbm_bo *bo)
{
	uint32_t fb = (uint32_t)(uintptr_t)gbm_bo_get_user_data(bo);

	if (fb)
		return fb;
	if (drmModeAddFB(k->fd, gbm_bo_get_width(bo), gbm_bo_get_height(bo), 24, 32,
			 gbm_bo_get_stride(bo), gbm_bo_get_handle(bo).u32, &fb))
		return 0;
	gbm_bo_set_user_data(bo, (void *)(uintptr_t)fb, destroy_fb);
	return fb;
}

/* A CRTC that can drive @conn: its current encoder's, else any possible one. */
static uint32_t pick_crtc(int fd, const drmModeRes *res, const drmModeConnector *conn)
{
	uint32_t crtc = 0;

	for (int i = 0; i < conn->count_encoders && !crtc; i++) {
		drmModeEncoder *enc = drmModeGetEncoder(fd, conn->encoders[i]);

		if (!enc)
			continue;
		if (enc->encoder_id == conn->encoder_id && enc->crtc_id)
			crtc = enc->crtc_id;
		for (int c = 0; c < res->count_crtcs && !crtc; c++) {
			if (enc->possible_crtcs & (1u << c))
				crtc = res->crtcs[c];
		}
		drmModeFreeEncoder(enc);
	}
	return crtc;
}

/* Finds the first connected connector with a mode and a CRTC for it. */
static const char *find_output(struct gles_kms *k)
{
	drmModeRes *res = drmModeGetResources(k->fd);
	const char *what = "no connected connector with a mode";

	if (!res)
		return "drmModeGetResources";
	for (int i = 0; i < res->count_connectors && !k->crtc; i++) {
		drmModeConnector *conn = drmModeGetConnector(k->fd, res->connectors[i]);

		if (!conn)
			continue;
		if (conn->connection == DRM_MODE_CONNECTED && conn->count_modes > 0) {
			/* The preferred mode, else the first (the largest, by convention). */
			k->mode = conn->modes[0];
			for (int m = 0; m < conn->count_modes; m++) {
				if (conn->modes[m].type & DRM_MODE_TYPE_PREFERRED) {
					k->mode = conn->modes[m];
					break;
				}
			}
			k->connector = conn->connector_id;
			k->crtc = pick_crtc(k->fd, res, conn);
			if (!k->crtc)
				what = "no CRTC for the connected connector";
		}
		drmModeFreeConnector(conn);
	}
	drmModeFreeResources(res);
	return k->crtc ? NULL : what;
}

/* An EGL config whose native visual is the GBM surface's format. */
static bool choose_config(EGLDisplay display, EGLConfig *config)
{
	const EGLint attribs[] = {EGL_SURFACE_TYPE,
				  EGL_WINDOW_BIT,
				  EGL_RENDERABLE_TYPE,
				  EGL_OPENGL_ES2_BIT,
				  EGL_RED_SIZE,
				  8,
				  EGL_GREEN_SIZE,
				  8,
				  EGL_BLUE_SIZE,
				  8,
				  EGL_NONE};
	EGLConfig configs[64];
	EGLint n = 0;

	if (!eglChooseConfig(display, attribs, configs, 64, &n))
		return false;
	for (EGLint i = 0; i < n; i++) {
		EGLint visual;

		if (eglGetConfigAttrib(display, configs[i], EGL_NATIVE_VISUAL_ID, &visual) &&
		    (uint32_t)visual == GBM_FORMAT_XRGB8888) {
			*config = configs[i];
			return true;
		}
	}
	return false;
}

const char *gles_target_open_kms(struct gles_target *t, const char *card, int *width, int *height)
{
	const EGLint ctx[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
	struct gles_kms *k = calloc(1, sizeof(*k));
	const char *what;
	EGLConfig config;

	if (!k)
		return "allocating the display";
	t->kms = k;
	k->fd = open(card, O_RDWR | O_CLOEXEC); /* -1 on failure, which close skips */
	if (k->fd < 0)
		return "opening the DRM card";
	what = find_output(k);
	if (what)
		return what;
	k->gbm = gbm_create_device(k->fd);
	if (!k->gbm)
		return "gbm_create_device";
	k->surface =
	    gbm_surface_create(k->gbm, k->mode.hdisplay, k->mode.vdisplay, GBM_FORMAT_XRGB8888,
			       GBM_BO_USE_SCANOUT | GBM_BO_USE_RENDERING);
	if (!k->surface)
		return "gbm_surface_create";
	t->display = eglGetPlatformDisplay(EGL_PLATFORM_GBM_KHR, k->gbm, NULL);
	if (t->display == EGL_NO_DISPLAY || !eglInitialize(t->display, NULL, NULL))
		return "eglInitialize (GBM)";
	if (!eglBindAPI(EGL_OPENGL_ES_API) || !choose_config(t->display, &config))
		return "eglChooseConfig (an XRGB8888 window)";
	t->surface = eglCreateWindowSurface(t->display, config,
					    (EGLNativeWindowType)(uintptr_t)k->surface, NULL);
	t->context = eglCreateContext(t->display, config, EGL_NO_CONTEXT, ctx);
	if (t->surface == EGL_NO_SURFACE || t->context == EGL_NO_CONTEXT ||
	    !eglMakeCurrent(t->display, t->surface, t->surface, t->context))
		return "creating the window surface and its context";
	*width = k->mode.hdisplay;
	*height = k->mode.vdisplay;
	return NULL;
}

static void on_flip(int fd, unsigned int frame, unsigned int sec, unsigned int usec, void *data)
{
	struct gles_kms *k = data;

	(void)fd, (void)frame, (void)sec, (void)usec;
	k->flip_pending = false;
}

/* Waits for the pending page flip's event; NULL, or what failed. */
static const char *wait_flip(struct gles_kms *k)
{
	drmEventContext ev = {.version = 2, .page_flip_handler = on_flip};
	struct pollfd p = {.fd = k->fd, .events = POLLIN};

	while (k->flip_pending) {
		int r = poll(&p, 1, FLIP_TIMEOUT_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return "waiting for a page flip";
		if (drmHandleEvent(k->fd, &ev))
			return "drmHandleEvent";
	}
	return NULL;
}

const char *gles_target_present(const struct gles_target *t)
{
	struct gles_kms *k = t->kms;
	struct gbm_bo *bo;
	uint32_t fb;
	const char *what;

	if (!k)
		return NULL;
	if (!eglSwapBuffers(t->display, t->surface))
		return "eglSwapBuffers";
	bo = gbm_surface_lock_front_buffer(k->surface);
	if (!bo)
		return "gbm_surface_lock_front_buffer";
	fb = fb_of(k, bo);
	if (!fb) {
		gbm_surface_release_buffer(k->surface, bo);
		return "drmModeAddFB";
	}
	if (!k->shown) {
		if (drmModeSetCrtc(k->fd, k->crtc, fb, 0, 0, &k->connector, 1, &k->mode)) {
			gbm_surface_release_buffer(k->surface, bo);
			return "drmModeSetCrtc";
		}
	} else {
		if (drmModePageFlip(k->fd, k->crtc, fb, DRM_MODE_PAGE_FLIP_EVENT, k)) {
			gbm_surface_release_buffer(k->surface, bo);
			return "drmModePageFlip";
		}
		k->flip_pending = true;
		what = wait_flip(k);
		if (what)
			return what;
		gbm_surface_release_buffer(k->surface, k->shown);
	}
	k->shown = bo;
	return NULL;
}

void gles_kms_close(struct gles_kms *k)
{
	if (!k)
		return;
	if (k->shown)
		gbm_surface_release_buffer(k->surface, k->shown);
	if (k->surface)
		gbm_surface_destroy(k->surface);
	if (k->gbm)
		gbm_device_destroy(k->gbm);
	if (k->fd >= 0)
		close(k->fd);
	free(k);
}
