// SPDX-License-Identifier: MIT
/*
 * Persistent model state (Keller's thesis, Predicting the GPU Execution Time
 * of 3D Rendering Commands using Machine Learning Concepts, §4.6): one file
 * holds the learned states of several models for one GPU/driver identity, so that a worker
 * starts with trained models instead of learning from scratch.
 *
 * File format (all integers little endian):
 *   "GMPRED"            6 bytes magic
 *   u16 version         PREDICT_PERSIST_VERSION
 *   u32 identity length, identity bytes (no NUL)
 *   u32 model count     <= PREDICT_PERSIST_MODELS_MAX
 *   per model or section: u32 name length, name bytes, u32 state length,
 *              state bytes (its save() output, <= PREDICT_MODEL_STATE_MAX)
 *   u32 CRC-32 (IEEE, as zlib's crc32()) of every byte before it
 *
 * The file is not trusted: load checks the whole structure and the CRC
 * before touching any model, and each model's load() checks its state
 * again. Only the calling thread touches the models passed in.
 */
#ifndef PREDICT_PERSIST_H
#define PREDICT_PERSIST_H

#include <stddef.h>
#include <stdint.h>

#include "predict_model.h"

#define PREDICT_PERSIST_VERSION 1
/* Longest identity string (GPU + driver + version), bytes without NUL. */
#define PREDICT_PERSIST_IDENTITY_MAX 256
/* Longest model name, bytes without NUL. */
#define PREDICT_PERSIST_NAME_MAX 64
/* Most models in one file: the four models with room to spare. */
#define PREDICT_PERSIST_MODELS_MAX 16

/*
 * State other than a model's kept in the same file (what a context's
 * fragment estimators learned, the memo of under-predicted groups):
 * save() and load() as in struct predict_model_ops.
 */
struct predict_persist_section {
	const char *name;
	int (*save)(const void *obj, uint8_t *buf, size_t size);
	int (*load)(void *obj, const uint8_t *buf, size_t size);
};

/* One model (@ops and @model) or one other section (@section and @obj). */
struct predict_persist_entry {
	const struct predict_model_ops *ops;	       /* saved/loaded under ops->name */
	struct predict_model *model;		       /* owned by the caller */
	const struct predict_persist_section *section; /* saved/loaded under section->name */
	void *obj;				       /* owned by the caller */
	/*
	 * Out, set by predict_persist_load(): 0 loaded, -ENOENT no state of
	 * that name in the file (model unchanged), -EINVAL the model refused
	 * its state (model unchanged), -ENOMEM.
	 */
	int status;
};

/*
 * Removes the temporary files predict_persist_save() left next to @path
 * ("PATH.tmp.XXXXXX") that were last written more than @older_than_s
 * seconds ago: a process killed between writing one and renaming it (a
 * worker stopped while it saved) leaves it behind, and every such stop
 * would leave another. Younger ones may be another process's save in
 * progress and stay. Returns how many were removed, or the errno of the
 * directory that could not be read.
 */
int predict_persist_sweep(const char *path, unsigned older_than_s);

/*
 * Writes the states of @n models (@entries[i].status is not used) and
 * @identity to @path atomically: a temporary file next to it, fsync,
 * rename. Returns 0, -EINVAL (bad arguments, duplicate names, identity or
 * name too long), -ENOSPC (a state too large) or the errno of the failed
 * file operation. @path keeps its old content on failure.
 */
int predict_persist_save(const char *path, const char *identity,
			 const struct predict_persist_entry *entries, size_t n);

/*
 * Loads the models of @entries from @path, matching by name; models not
 * in the file are left as they are. A NULL @identity accepts the file's,
 * whatever it is (tools that replay a saved state on recorded groups).
 * Returns:
 *   0        the file is valid and every state present was loaded
 *            (see each entry's status);
 *   -ENOENT  no file at @path;
 *   -EINVAL  the file is corrupt, truncated, has a bad CRC or unknown
 *            version (no model changed), or some model refused its
 *            state (that entry's status says so; the others loaded);
 *   -ESTALE  the file is valid but for another @identity (no model
 *            changed): the GPU or driver changed, learn again;
 *   or another negative errno from open/read.
 */
int predict_persist_load(const char *path, const char *identity,
			 struct predict_persist_entry *entries, size_t n);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32()) of @len bytes. */
uint32_t predict_persist_crc32(const void *data, size_t len);

#endif
