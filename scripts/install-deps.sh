#!/usr/bin/env bash
# Installs what building and testing media-pipeline needs on Debian 12, skipping what is already there.
# Swift itself (6.0 or newer) must be installed from swift.org: Debian 12 does not package it.
set -euo pipefail

apt_packages=(
  pkg-config
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev  # the C shim
  ffmpeg                                                                           # reference in tests and benchmarks
  time                                                                             # peak memory in benchmarks
)

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
fi
