/* What dav1d's meson build would generate for the Debian tarball in build.sh. */
#define DAV1D_VERSION "1.5.1"
