/* Upstream's x86/cpuid.asm (nasm) as C, written for this package: the two functions x86/cpu.c calls to read the
 * CPU's feature bits. Compiled for plain x86_64 (it runs before anything knows the CPU has AVX2). Kept by
 * scripts/vendor-libvmaf.sh like config.h. */
#include <cpuid.h>
#include <stdint.h>

typedef struct {
    uint32_t eax, ebx, ecx, edx;
} CpuidRegisters;

void vmaf_cpu_cpuid(CpuidRegisters *regs, unsigned leaf, unsigned subleaf);
uint64_t vmaf_cpu_xgetbv(unsigned xcr);

void vmaf_cpu_cpuid(CpuidRegisters *regs, unsigned leaf, unsigned subleaf)
{
    __cpuid_count(leaf, subleaf, regs->eax, regs->ebx, regs->ecx, regs->edx);
}

/* Only called once cpuid reported OSXSAVE, as in upstream's cpu.c. */
uint64_t vmaf_cpu_xgetbv(unsigned xcr)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(xcr));
    return ((uint64_t)edx << 32) | eax;
}
