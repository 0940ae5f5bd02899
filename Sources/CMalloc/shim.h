// glibc's allocator tuning (mallopt), which Swift's Glibc module does not include.
#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif
#endif
