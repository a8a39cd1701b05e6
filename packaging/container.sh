#!/usr/bin/env bash
# Builds robogate's container image where no registry is reachable (the Containerfile's build
# stage needs a Rust image): the static (musl) binary built on this machine stands in for that
# stage (`--build-context build=...`), then runs the image in front of an origin
# (Python's http.server) and asks its health check, where a container can run here. Where one cannot (a sandbox that
# forbids what the runtime needs), says so and stops after the build. Needs podman (or buildah
# for the build alone) and a static build at target/x86_64-unknown-linux-musl/release/robogate.
set -euo pipefail
cd "$(dirname "$0")/.."
bin_dir=target/x86_64-unknown-linux-musl/release
[ -x "$bin_dir/robogate" ] || { echo "no static build at $bin_dir: cargo build --release --target x86_64-unknown-linux-musl"; exit 1; }
file "$bin_dir/robogate" | grep -q "static" || { echo "FAIL: $bin_dir/robogate is not static"; exit 1; }
if ! podman info >/dev/null 2>&1; then
  # No engine to build with: the file is at least read for its stages and instructions.
  grep -q '^FROM scratch AS runtime$' packaging/Containerfile && grep -q '^HEALTHCHECK ' packaging/Containerfile \
    || { echo "FAIL: packaging/Containerfile lacks its runtime stage or HEALTHCHECK"; exit 1; }
  echo "WARNING: no working container engine here (podman info failed): the Containerfile was read, not built"
  exit 0
fi
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
strip -o "$context/robogate" "$bin_dir/robogate"
cp /etc/ssl/certs/ca-certificates.crt "$context/ca-certificates.crt"
mkdir "$context/state"
podman build --quiet --format docker -f packaging/Containerfile --build-context "build=$context" --target runtime -t localhost/robogate:test .
podman image inspect localhost/robogate:test --format 'image: {{.Size}} bytes, user {{.Config.User}}, healthcheck {{.HealthCheck.Test}}'
# The image runs as non-root, with a health check, robogate alone in it (and the CA
# certificates, and a state folder its user owns): its files listed without running it.
[ "$(podman image inspect localhost/robogate:test --format '{{.Config.User}}')" = "65532:65532" ]
[ "$(podman image inspect localhost/robogate:test --format '{{.HealthCheck.Test}}')" != "[]" ]
made=$(podman create localhost/robogate:test)
listing=$(podman export "$made" | tar -tvf -)
podman rm "$made" >/dev/null
echo "$listing"
for want in ' usr/bin/robogate$' ' etc/ssl/certs/ca-certificates.crt$' ' etc/robogate/robogate.toml$' '65532/65532 .* var/lib/robogate/$'; do
  grep -Eq "$want" <<<"$listing" || { echo "FAIL: the image lacks $want"; exit 1; }
done

# Run it: robogate in the container, in front of the demo origin on the host's loopback.
if ! podman run --rm --network host localhost/robogate:test --version >/dev/null 2>"$context/run.err"; then
  echo "WARNING: a container cannot run on this machine ($(tail -1 "$context/run.err")): the image was built and inspected, not run"
  exit 0
fi
conf=$(mktemp -d)
cp -r conf/. "$conf/"
sed -i 's/^listen = "0.0.0.0:8080"/listen = "127.0.0.1:18080"/; s/^address = "127.0.0.1:8000"/address = "127.0.0.1:18000"/' "$conf/robogate.toml"
sed -i 's/^listen = "127.0.0.1:8099"/listen = "127.0.0.1:18099"/' "$conf/robogate.toml"
mkdir -p "$conf/www" && echo '<title>origin</title>' > "$conf/www/index.html"
python3 -m http.server 18000 --bind 127.0.0.1 --directory "$conf/www" >/dev/null 2>&1 &
origin=$!
id=$(podman run -d --network host -v "$conf:/etc/robogate:ro" localhost/robogate:test)
trap 'podman rm -f "$id" >/dev/null; kill $origin; rm -rf "$context" "$conf"' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null localhost:18080/ && break; sleep 0.1; done
curl -sf -A 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' -H 'Accept: text/html' -H 'Accept-Language: en' -H 'Accept-Encoding: gzip' localhost:18080/ >/dev/null
test "$(curl -s -o /dev/null -w '%{http_code}' -A GPTBot localhost:18080/blog/)" = 403
podman exec "$id" /usr/bin/robogate health --admin 127.0.0.1:18099
echo "the container serves the demo through robogate and is healthy"
