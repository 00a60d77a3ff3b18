#!/usr/bin/env bash
# Builds the .deb and .rpm packages from a configured and built CMake tree (nothing is compiled
# again): both are made from `cmake --install <build> --prefix /usr`. nurllama-cuda is built too
# when the tree has the CUDA plugin (the toolkit was found at configure time).
#   packaging/build-packages.sh [--deb] [--rpm] [--out DIR] [BUILD_DIR]   (default: both, build, build/packages)
# Needs debhelper and dpkg-dev (deb), rpm (rpmbuild) — scripts/install-deps.sh installs them.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
want_deb=0 want_rpm=0 out="" build=""
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) want_deb=1 ;;
    --rpm) want_rpm=1 ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    -*) echo "build-packages: unknown option $1" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
[ $want_deb = 0 ] && [ $want_rpm = 0 ] && want_deb=1 want_rpm=1
build=$(cd "${build:-$src/build}" && pwd)
out=${out:-$build/packages}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ ! -f "$build/packaging.env" ]; then
  echo "build-packages: $build is not a configured nurllama build tree (no packaging.env)" >&2
  exit 1
fi
# shellcheck source=/dev/null
. "$build/packaging.env"
cuda=0
[ "${NURLLAMA_HAVE_CUDA}" = ON ] && cuda=1

# Only what the packages ship; a no-op when the tree is up to date.
targets=(nurllamad nurllama nurl_docs)
[ $cuda = 1 ] && targets+=(nurllama_cuda)
cmake --build "$build" --target "${targets[@]}" >/dev/null

if [ $want_deb = 1 ]; then
  # A source tree of just debian/: debian/rules installs the build tree (NURLLAMA_BUILD_DIR).
  stage="$out/deb/nurllama-$NURLLAMA_VERSION"
  rm -rf "$out/deb"
  mkdir -p "$stage"
  cp -r "$src/packaging/deb/debian" "$stage/"
  profiles=()
  [ $cuda = 1 ] && profiles=(-Ppkg.nurllama.cuda)
  (cd "$stage" && NURLLAMA_BUILD_DIR="$build" dpkg-buildpackage -b -uc -us -nc "${profiles[@]}") \
    >"$out/deb.log" 2>&1 || { tail -40 "$out/deb.log" >&2; echo "build-packages: dpkg-buildpackage failed (log: $out/deb.log)" >&2; exit 1; }
  rm -f "$out"/nurllama*.deb
  mv "$out"/deb/*.deb "$out/"
  echo "build-packages: $(cd "$out" && ls nurllama*.deb | tr '\n' ' ')"
fi

if [ $want_rpm = 1 ]; then
  rm -rf "$out/rpm"
  with=()
  [ $cuda = 1 ] && with=(--with cuda)
  # --nodeps: the build needs nothing from the rpm database (it installs a finished tree), which
  # is empty on Debian. No debuginfo subpackages or build-id links: the spec strips the binaries.
  rpmbuild -bb --nodeps "${with[@]}" --define "_topdir $out/rpm" --define "nurl_builddir $build" \
    --define "debug_package %{nil}" --define "_build_id_links none" "$src/packaging/rpm/nurllama.spec" >"$out/rpm.log" 2>&1 ||
    { tail -40 "$out/rpm.log" >&2; echo "build-packages: rpmbuild failed (log: $out/rpm.log)" >&2; exit 1; }
  rm -f "$out"/nurllama*.rpm
  mv "$out"/rpm/RPMS/*/*.rpm "$out/"
  echo "build-packages: $(cd "$out" && ls nurllama*.rpm | tr '\n' ' ')"
fi
