// SPDX-License-Identifier: MIT
/*
 * Names of the features (see predict_features.h), as `mediatorctl model`
 * and the model files show them.
 */
#include "predict_features.h"

static const char *const feature_names[PF_COUNT] = {
    [PF_GROUP] = "group",
    [PF_CMDS] = "cmds",
    [PF_CLEAR_C] = "clear_c",
    [PF_CLEAR_D] = "clear_d",
    [PF_CLEAR_S] = "clear_s",
    [PF_CLEAR_CD] = "clear_cd",
    [PF_CLEAR_CS] = "clear_cs",
    [PF_CLEAR_DS] = "clear_ds",
    [PF_CLEAR_CDS] = "clear_cds",
    [PF_DRAWS] = "draws",
    [PF_VERTICES] = "vertices",
    [PF_VS_WORK] = "vs_work",
    [PF_FRAGMENTS] = "fragments",
    [PF_FS_ALU_WORK] = "fs_alu_work",
    [PF_FS_TEX_WORK] = "fs_tex_work",
    [PF_TRANSFER_BYTES] = "transfer_bytes",
    [PF_BLIT_PIXELS] = "blit_pixels",
    [PF_COPY_PIXELS] = "copy_pixels",
    [PF_CLEAR_TEX_PIXELS] = "clear_tex_pixels",
    [PF_SHADER_TOKENS] = "shader_tokens",
};

const char *predict_feature_name(enum predict_feature f)
{
	if ((unsigned)f >= PF_COUNT)
		return "invalid";
	return feature_names[f];
}
