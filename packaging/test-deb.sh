#!/usr/bin/env bash
# CI's check of the Debian package, on the CI machine itself (root, or sudo): builds it with
# `cargo deb` from the release binary at $1 (built by CI for the container too), installs it
# with `dpkg -i` without starting anything (a policy-rc.d that refuses every start, as
# .ci/test-deps uses), runs the installed robogate's config check on the installed conf, checks
# the unit with `systemd-analyze verify`, then removes the package (a changed conffile stays)
# and purges it (nothing stays). Leaves the machine as it found it.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: test-deb.sh TARGET-TRIPLE (the binary is target/TRIPLE/release/robogate)}
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
command -v cargo-deb >/dev/null || cargo install --locked --quiet cargo-deb
rm -rf target/debian
cargo deb --no-build --target "$target" --output target/debian/
deb=$(ls target/debian/*.deb)
echo "package: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)
for f in robogate.toml robots.txt agents.toml browsers.toml; do
  grep -qx "/etc/robogate/$f" <<<"$conffiles" || { echo "FAIL: /etc/robogate/$f is not a conffile"; exit 1; }
done

policy=/usr/sbin/policy-rc.d
placed=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  placed=1
fi
cleanup() {
  $SUDO dpkg --purge robogate >/dev/null 2>&1 || true
  # A machine's own policy-rc.d stays; and the exit status stays the script's (a function's
  # last failed test would be it).
  if [ -n "$placed" ]; then $SUDO rm -f "$policy"; fi
}
trap cleanup EXIT

$SUDO dpkg -i "$deb"
/usr/bin/robogate --version
/usr/bin/robogate config check --config /etc/robogate/robogate.toml
unit=$(dpkg -L robogate | grep '/robogate.service$')
echo "unit: $unit"
if command -v systemd-analyze >/dev/null; then
  # verify reads the unit as systemd would (directives, the binaries it names). It exits 0 on
  # an unknown or misspelt key, only saying so: any line about the unit itself fails here (it
  # may also talk about the machine, a container without a running systemd, which is fine).
  findings=$($SUDO systemd-analyze verify "$unit" 2>&1) || { echo "$findings"; echo "FAIL: systemd-analyze verify"; exit 1; }
  if grep -F "robogate.service" <<<"$findings"; then
    echo "FAIL: systemd-analyze verify has findings about the unit"; exit 1
  fi
  echo "systemd-analyze verify: no finding about $unit"
else
  echo "WARNING: systemd-analyze is missing: the unit is not verified"
fi
if command -v systemctl >/dev/null && systemctl is-enabled robogate >/dev/null 2>&1; then
  echo "FAIL: the package enabled robogate.service"; exit 1
fi

# An operator's edit survives removal; purge removes everything.
echo "# edited by the operator" | $SUDO tee -a /etc/robogate/robots.txt >/dev/null
$SUDO dpkg -r robogate
[ ! -e /usr/bin/robogate ] || { echo "FAIL: /usr/bin/robogate is left after dpkg -r"; exit 1; }
grep -q "edited by the operator" /etc/robogate/robots.txt \
  || { echo "FAIL: dpkg -r lost the edited conffile"; exit 1; }
$SUDO dpkg --purge robogate
[ ! -e /etc/robogate ] || { echo "FAIL: /etc/robogate is left after purge: $(ls -R /etc/robogate)"; exit 1; }
echo "the Debian package installs, checks, removes and purges cleanly"
