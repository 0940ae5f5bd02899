#include "CPipelinePlugin.h"

int32_t pipeline_plugin_header_abi_version(void) { return PIPELINE_PLUGIN_ABI_VERSION; }
