#!/bin/sh
# The Helm 3 plugin's install and update hook: puts this platform's
# aws-ccm-renderer and aws-ccm-renderer-helm into $HELM_PLUGIN_DIR/bin, from
# the release archive, after checking its SHA-256 against the release's
# checksums.txt. The archive is, in this order:
#   $AWS_CCM_ARCHIVE                   a file (checksums.txt beside it, or
#                                      $AWS_CCM_CHECKSUMS)
#   $HELM_PLUGIN_DIR/<archive>         the file beside this script (and
#                                      checksums.txt beside it)
#   $AWS_CCM_RELEASE_URL/<archive>     downloaded with checksums.txt;
#                                      the default is the GitHub release of
#                                      the plugin's version
# The release is $AWS_CCM_VERSION (vX.Y.Z) when set; else, when the plugin
# is a git clone (helm plugin install URL-OF-THE-REPOSITORY [--version
# vX.Y.Z]), its newest vX.Y.Z tag at or before the commit checked out;
# else plugin.yaml's version (make dist stamps the release's).
# Any failure is one line on stderr and exit status 1, and no program
# installed. Only the archive's programs are written into bin/, nothing
# else there removed: a local install of a developer's clone (helm plugin
# install .) leaves the tools make built in its bin/.
set -eu

fail() {
	echo "aws-ccm: $*" >&2
	exit 1
}

dir=${HELM_PLUGIN_DIR:?run by helm plugin install}
version=${AWS_CCM_VERSION:-}
if [ -z "$version" ] && [ -e "$dir/.git" ] && command -v git >/dev/null 2>&1; then
	version=$(git --git-dir="$dir/.git" describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' --exclude '*-*' HEAD 2>/dev/null) || version=
fi
[ -n "$version" ] || version=v$(sed -n 's/^version: *//p' "$dir/plugin.yaml")

case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
MINGW* | MSYS* | CYGWIN* | Windows_NT) os=windows ;;
*) fail "no release archive for the OS $(uname -s): build from source (go install github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/...@$version)" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) fail "no release archive for the CPU $(uname -m): build from source (go install github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/...@$version)" ;;
esac
ext=.tar.gz
[ "$os" = windows ] && ext=.zip
archive=aws-ccm-renderer_${version}_${os}_${arch}$ext
case "$os/$arch" in
linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64 | windows/amd64) ;;
*) fail "no release archive for $os/$arch" ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch() { # URL FILE
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL -o "$2" "$1" || fail "cannot download $1 (set AWS_CCM_ARCHIVE to a local archive on a machine without access)"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O "$2" "$1" || fail "cannot download $1 (set AWS_CCM_ARCHIVE to a local archive on a machine without access)"
	else
		fail "neither curl nor wget to download $1 with: install one, or set AWS_CCM_ARCHIVE to a local archive"
	fi
}

if [ -n "${AWS_CCM_ARCHIVE:-}" ]; then
	[ -f "$AWS_CCM_ARCHIVE" ] || fail "AWS_CCM_ARCHIVE=$AWS_CCM_ARCHIVE is not a file"
	src=$AWS_CCM_ARCHIVE
	archive=$(basename "$src")
	sums=${AWS_CCM_CHECKSUMS:-$(dirname "$src")/checksums.txt}
	[ -f "$sums" ] || fail "no $sums to check $archive against: put the release's checksums.txt beside it, or set AWS_CCM_CHECKSUMS"
	from=$src
elif [ -f "$dir/$archive" ]; then
	src=$dir/$archive
	sums=$dir/checksums.txt
	[ -f "$sums" ] || fail "no checksums.txt beside $src to check it against: copy the release's"
	from=$src
else
	base=${AWS_CCM_RELEASE_URL:-https://github.com/aws-ccm-renderer/aws-ccm-renderer/releases/download/$version}
	fetch "$base/checksums.txt" "$tmp/checksums.txt"
	fetch "$base/$archive" "$tmp/$archive"
	src=$tmp/$archive
	sums=$tmp/checksums.txt
	from=$base/$archive
fi

want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$sums")
[ -n "$want" ] || fail "$sums lists no $archive: is it the checksums.txt of release $version?"
if command -v sha256sum >/dev/null 2>&1; then
	got=$(sha256sum "$src" | awk '{ print $1 }')
elif command -v shasum >/dev/null 2>&1; then
	got=$(shasum -a 256 "$src" | awk '{ print $1 }')
else
	fail "neither sha256sum nor shasum to check $archive with"
fi
[ "$got" = "$want" ] || fail "$archive has SHA-256 $got, but checksums.txt gives $want: refusing it (a damaged or changed download; fetch both again from the release)"

mkdir -p "$tmp/bin"
if [ "$ext" = .zip ]; then
	unzip -q -o "$src" -d "$tmp/bin" || fail "cannot unpack $archive"
else
	tar -xzf "$src" -C "$tmp/bin" || fail "cannot unpack $archive"
fi
mkdir -p "$dir/bin" || fail "cannot create $dir/bin"
for f in "$tmp/bin"/*; do
	mv -f "$f" "$dir/bin/" || fail "cannot write $dir/bin/$(basename "$f")"
done
echo "aws-ccm: installed aws-ccm-renderer $version ($os/$arch) from $from, SHA-256 checked against checksums.txt"
