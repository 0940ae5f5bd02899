#!/usr/bin/env bash
# Copies into Sources/CVMAF the part of Netflix's libvmaf that the default model (vmaf_v0.6.1) needs, at one
# upstream commit, and writes the files meson would generate: the model as a C array, version.h and vcs_version.h.
#   scripts/vendor-libvmaf.sh <a clone of https://github.com/Netflix/vmaf (bare or not)>
# The AVX2 code of the three integer extractors goes to Sources/CVMAFx86/feature (not compiled directly: each is
# included by an avx2_*.c there that gives its functions the AVX2 target, Sources/CVMAFx86/avx2_target.h; libvmaf
# picks it at run time), their headers and the x86 CPU check (x86/cpu.c) to Sources/CVMAF.
# What is left out: the other SIMD code (x86 AVX-512, ARM NEON; the C paths give the same scores), nasm's
# x86/cpuid.asm (Sources/CVMAF/src/x86/cpuid.c, written by hand, stands in for it), CUDA, the float feature extractors, the extractors no built-in model of ours reads (PSNR, SSIM, MS-SSIM, CIEDE, CAMBI, PSNR-HVS,
# speed), and every other model. scripts/libvmaf.patch trims the extractor and model lists to what is copied and
# drops a duplicate `inline` clang warns about. Sources/CVMAF/src/config.h and src/x86/cpuid.c are written by hand and
# kept.
set -euo pipefail
cd "$(dirname "$0")/.."

COMMIT=f85a853692a8c730d0270cd733c8bb30b5b93b7c  # libvmaf 3.2.0 (its meson.build's version)
VERSION=3.2.0
repo=${1:?usage: scripts/vendor-libvmaf.sh <clone of Netflix/vmaf>}
git_dir=$repo
[ -d "$repo/.git" ] && git_dir=$repo/.git

sources=(
  libvmaf.c predict.c model.c picture.c mem.c output.c fex_ctx_vector.c thread_pool.c dict.c opt.c ref.c
  read_json_model.c pdjson.c log.c framesync.c metadata_handler.c picture_pool.c cpu.c svm.cpp x86/cpu.c
  feature/feature_extractor.c feature/feature_name.c feature/alias.c feature/feature_collector.c
  feature/integer_adm.c feature/integer_motion.c feature/integer_vif.c feature/common/alignment.c
)
headers=(
  cpu.h dict.h fex_ctx_vector.h framesync.h log.h mem.h metadata.h metadata_handler.h model.h opt.h output.h
  pdjson.h picture.h picture_pool.h predict.h read_json_model.h ref.h svm.h thread_pool.h
  feature/alias.h feature/barten_csf_tools.h feature/feature_collector.h feature/feature_extractor.h
  feature/feature_name.h feature/integer_adm.h feature/integer_motion.h feature/integer_vif.h
  feature/motion_blend_tools.h feature/common/alignment.h feature/common/macros.h x86/cpu.h
  feature/x86/adm_avx2.h feature/x86/motion_avx2.h feature/x86/vif_avx2.h
)
avx2_sources=(feature/x86/adm_avx2.c feature/x86/motion_avx2.c feature/x86/vif_avx2.c)
public_headers=(feature.h libvmaf.h model.h picture.h)

upstream=$(mktemp -d)
trap 'rm -rf "$upstream"' EXIT
git --git-dir="$git_dir" archive "$COMMIT" libvmaf/src libvmaf/include model/vmaf_v0.6.1.json LICENSE |
  tar -x -C "$upstream"

target=Sources/CVMAF
simd_target=Sources/CVMAFx86
config=$(cat "$target/src/config.h")
cpuid=$(cat "$target/src/x86/cpuid.c")
rm -rf "$target/src" "$target/include/libvmaf" "$simd_target/feature"
mkdir -p "$target/src/feature/common" "$target/src/feature/x86" "$target/src/x86" "$target/include/libvmaf" \
  "$simd_target/feature/x86"
for file in "${sources[@]}" "${headers[@]}"; do cp "$upstream/libvmaf/src/$file" "$target/src/$file"; done
for file in "${avx2_sources[@]}"; do cp "$upstream/libvmaf/src/$file" "$simd_target/$file"; done
for file in "${public_headers[@]}"; do cp "$upstream/libvmaf/include/libvmaf/$file" "$target/include/libvmaf/"; done
cp "$upstream/LICENSE" "$target/LICENSE"
# LIBSVM (svm.cpp, svm.h) is BSD-3-Clause: its notice, which upstream keeps only atop svm.h, as a file of its own.
sed -n '3,32p' "$upstream/libvmaf/src/svm.h" >"$target/LICENSE.libsvm"
printf '%s\n' "$config" >"$target/src/config.h"
printf '%s\n' "$cpuid" >"$target/src/x86/cpuid.c"
patch --quiet -p1 -d "$target" <scripts/libvmaf.patch

IFS=. read -r major minor patch_level <<<"$VERSION"
sed -e "s/@VMAF_API_VERSION_MAJOR@/$major/" -e "s/@VMAF_API_VERSION_MINOR@/$minor/" \
  -e "s/@VMAF_API_VERSION_PATCH@/$patch_level/" "$upstream/libvmaf/include/libvmaf/version.h.in" \
  >"$target/include/libvmaf/version.h"
printf '/* written by scripts/vendor-libvmaf.sh */\n#define VMAF_VERSION "%s-%s"\n' "$VERSION" "${COMMIT:0:8}" \
  >"$target/src/vcs_version.h"

# The model, as meson's `xxd -i -n src_vmaf_v0.6.1.json` writes it, with the types model.c declares.
python3 - "$upstream/model/vmaf_v0.6.1.json" "$target/src/vmaf_v0.6.1.json.c" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
rows = [", ".join(f"0x{b:02x}" for b in data[i:i + 12]) for i in range(0, len(data), 12)]
with open(sys.argv[2], "w") as out:
    out.write("/* libvmaf's model/vmaf_v0.6.1.json as bytes, written by scripts/vendor-libvmaf.sh */\n")
    out.write("const char src_vmaf_v0_6_1_json[] = {\n  " + ",\n  ".join(rows) + "\n};\n")
    out.write(f"const int src_vmaf_v0_6_1_json_len = {len(data)};\n")
PY
echo "vendored libvmaf $VERSION ($COMMIT) into $target"
