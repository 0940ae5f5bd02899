#!/usr/bin/env bash
# Installs what building and testing media-pipeline needs on Debian 12, skipping what is already there.
# Swift itself (6.0 or newer) must be installed from swift.org: Debian 12 does not package it.
set -euo pipefail
# `--build` installs only what building `pipeline` and running the quick start need (make quickstart); without it,
# everything the tests and benchmarks need too.

build_packages=(
  pkg-config
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev  # the C shim
  libavfilter-dev                                                                  # the shim: HDR tone mapping
  libsqlite3-dev                                                                   # the ledger (GRDB)
  curl python3                                                                     # the quick start's listing
)
test_packages=(
  ffmpeg                                                                           # reference in tests and benchmarks
  time                                                                             # peak memory in benchmarks
  python3-pip                                                                      # test peers and checks
  postgresql-15                                                                    # shared batches: tests start their own servers
  chromium                                                                         # the dashboard's browser tests
)
# Third-party servers and clients the tests run against: tuspyserver (tus), moto (S3), botocore (SigV4), and
# Alibaba Cloud's official SDKs (oss2 for OSS, aliyun-python-sdk-core and -vod for ApsaraVideo VOD's RPC API), and
# imageio-ffmpeg, whose static FFmpeg has libvmaf: the independent VMAF the quality tests compare with.
pip_packages=(tuspyserver==4.4.3 uvicorn "moto[server]" botocore tuspy oss2 aliyun-python-sdk-core aliyun-python-sdk-vod
  imageio-ffmpeg==0.8.1)
pip_modules=(tuspyserver uvicorn moto botocore tusclient oss2 aliyunsdkcore aliyunsdkvod imageio_ffmpeg)

apt_packages=("${build_packages[@]}")
case "${1:-}" in
  ""|--build) ;;
  *) echo "usage: scripts/install-deps.sh [--build]" >&2; exit 2 ;;
esac
if [ "${1:-}" = "--build" ]; then
  pip_packages=()
  pip_modules=()
else
  apt_packages+=("${test_packages[@]}")
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "install-deps: swift is not on PATH; install Swift 6 from https://www.swift.org/install/linux/" >&2
  exit 1
fi

missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian makes and starts a default cluster on port 5432; the tests run clusters of their own on free ports.
  if [[ " ${missing[*]} " == *" postgresql-15 "* ]]; then
    $sudo pg_ctlcluster 15 main stop >/dev/null 2>&1 || true
  fi
fi

# Which modules are missing or cannot be imported, found in one python3 process (one process per module took seconds
# on every `make test`). An assignment stops the script when that check itself fails (a process substitution would
# not), so a broken python3 is not taken for "nothing missing".
missing_indices=$(python3 -c '
import importlib, sys
for index, module in enumerate(sys.argv[1:]):
    try:
        importlib.import_module(module)
    except Exception:
        print(index)
' "${pip_modules[@]}")
missing_pip=()
for index in $missing_indices; do
  missing_pip+=("${pip_packages[$index]}")
done
if [ ${#missing_pip[@]} -gt 0 ]; then
  echo "install-deps: pip installing ${missing_pip[*]}"
  # Debian's own python3 refuses pip installs outside a venv (PEP 668) unless told otherwise.
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "${missing_pip[@]}" 2>/dev/null \
    || python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --break-system-packages "${missing_pip[@]}"
  for module in "${pip_modules[@]}"; do
    python3 -c "import $module" || { echo "install-deps: python module $module is still missing" >&2; exit 1; }
  done
fi
