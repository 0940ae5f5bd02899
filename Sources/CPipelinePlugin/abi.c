#include "CPipelinePlugin.h"

int32_t pipeline_plugin_header_abi_version(void) { return PIPELINE_PLUGIN_ABI_VERSION; }

// The layout both sides of the boundary assume: three 64-bit fields, then three 32-bit ones, padded to 8 bytes.
_Static_assert(sizeof(pipeline_export_state) == 40, "pipeline_export_state is 40 bytes");
