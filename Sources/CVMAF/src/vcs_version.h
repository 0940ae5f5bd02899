/* written by scripts/vendor-libvmaf.sh */
#define VMAF_VERSION "3.2.0-f85a8536"
