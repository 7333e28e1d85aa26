#!/usr/bin/env bash
# Prepares this machine to run Steward as containers, with rootful podman behind a Docker-compatible socket:
# installs podman/runc/debootstrap (and podman-compose, for compose.yaml) when missing, writes its own containers.conf and storage.conf, makes a
# Debian base image with debootstrap (nothing can be pulled here), builds the node, PostgreSQL, NATS and
# Steward images on it, makes the internal planes' keys and passwords for compose.yaml, starts the API socket and
# prints `export DOCKER_HOST=...` as its last line.
# Idempotent: a second run reuses the base, the cached layers, the planes' keys and passwords, and the running socket.
#
#   STEWARD_CONTAINERS_HOME  where images, configuration and the socket live (default /var/tmp/steward-containers)
#   STEWARD_IMAGE_TAG        tag of the Steward image it builds (default dev)
#   STEWARD_PLANES           the private folder of certificates and passwords (default $STEWARD_CONTAINERS_HOME/planes)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
home="${STEWARD_CONTAINERS_HOME:-/var/tmp/steward-containers}"
tag="${STEWARD_IMAGE_TAG:-dev}"
sock="$home/podman.sock"
say() { echo "steward-containers: $*" >&2; }

mkdir -p "$home"

# 1. The engine.
need=()
for tool in podman runc debootstrap podman-compose; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || need+=("$tool")
done
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    say "missing ${need[*]}; install them as root: apt-get install -y ${need[*]}"
    exit 1
  fi
  say "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2; }
fi
export PATH="$PATH:/usr/sbin:/sbin"

# 2. Our own engine configuration: nothing goes into /etc.
#    ulimits: podman's rootful defaults raise RLIMIT_NOFILE, which this sandbox does not permit;
#    runc: crun refuses cgroups in hybrid mode; cgroupfs and file events: there is no systemd.
cat >"$home/containers.conf.new" <<CONF
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
cat >"$home/storage.conf.new" <<CONF
[storage]
driver = "overlay"
graphroot = "$home/storage"
runroot = "$home/run"
CONF
for f in containers.conf storage.conf; do
  if cmp -s "$home/$f.new" "$home/$f"; then rm "$home/$f.new"; else mv "$home/$f.new" "$home/$f"; fi
done
export CONTAINERS_CONF="$home/containers.conf"
export CONTAINERS_STORAGE_CONF="$home/storage.conf"

# 3. The base: Debian bookworm, minimal, from the machine's own apt mirror.
if ! podman image exists localhost/steward-base:bookworm; then
  mirror="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  [ -n "$mirror" ] || mirror="$(awk '/^deb / { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)"
  [ -n "$mirror" ] || mirror="http://deb.debian.org/debian"
  rootfs="$(mktemp -d "$home/rootfs.XXXXXX")"
  trap 'rm -rf "$rootfs"' EXIT
  say "making the base image with debootstrap from $mirror (about 30 s)"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$home/debootstrap.log" 2>&1 ||
    { tail -20 "$home/debootstrap.log" >&2; exit 1; }
  tar -C "$rootfs" -c . | podman import -q --change 'CMD ["/bin/bash"]' - localhost/steward-base:bookworm >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
fi

# 4. Node 20 is not in Debian 12: the node image carries this machine's node and npm, and its CA bundle
#    (npm inside a build reaches the registry the way the host does).
node_version="$(node -v)"
if ! podman image exists "localhost/steward-node:$node_version"; then
  ctx="$(mktemp -d "$home/node-context.XXXXXX")"
  trap 'rm -rf "$ctx"' EXIT
  node_bin="$(readlink -f "$(command -v node)")"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  mkdir -p "$ctx/node/bin" "$ctx/node/lib/node_modules"
  cp "$node_bin" "$ctx/node/bin/node"
  cp -a "$npm_dir" "$ctx/node/lib/node_modules/npm"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
  say "building localhost/steward-node:$node_version"
  podman build -q -f "$here/node.Containerfile" -t "localhost/steward-node:$node_version" "$ctx" >/dev/null
  rm -rf "$ctx"
  trap - EXIT
fi
podman tag "localhost/steward-node:$node_version" localhost/steward-node:20

# 5. PostgreSQL and NATS from Debian's packages; Steward from this repository (multi-stage).
build() { # image, containerfile, context
  say "building $1"
  podman build -q --layers -f "$2" -t "$1" "$3" >/dev/null
}
build localhost/steward-postgres:15 "$here/postgres.Containerfile" "$here"
build localhost/steward-nats:2.9 "$here/nats.Containerfile" "$here"
build "localhost/steward:$tag" "$here/Containerfile" "$repo"

# 6. The internal planes (SPEC §10): a CA and a certificate per service, a NATS user per service, a PostgreSQL role
#    password per service, the owner's password and the gateway's JWT secret, made by the Steward image itself
#    (infra/containers/planes.cjs; its openssl and node) in a folder only root may open. Kept across runs; a
#    certificate near its end is made again. compose.yaml mounts from it.
planes="${STEWARD_PLANES:-$home/planes}"
mkdir -p "$planes"
chmod 700 "$planes"
podman run --rm --user 0 -v "$planes:/planes" "localhost/steward:$tag" planes /planes

# 7. The Docker-compatible API socket (left running; `stop.sh` ends it).
answers() { curl -sf --max-time 2 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; }
# A service whose working directory was deleted (it was started from a checkout since removed) still answers
# pings but cannot start a container (conmon: "Failed to get working directory"; the API: "write child: broken
# pipe"): it is replaced. It is started from $home, which stays.
service_pid="$(cat "$home/service.pid" 2>/dev/null || true)"
if [ -n "$service_pid" ] && case "$(readlink "/proc/$service_pid/cwd" 2>/dev/null)" in *"(deleted)") true ;; *) false ;; esac; then
  say "restarting the API socket: its working directory is gone"
  kill "$service_pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$service_pid" 2>/dev/null || break; sleep 0.1; done
fi
if ! answers; then
  rm -f "$sock"
  say "starting the API socket $sock"
  cd "$home"
  setsid nohup podman system service --time=0 "unix://$sock" >"$home/service.log" 2>&1 </dev/null &
  echo $! >"$home/service.pid"
  for _ in $(seq 1 100); do answers && break; sleep 0.1; done
  answers || { say "the API socket did not answer; see $home/service.log"; exit 1; }
fi

say "ready: images localhost/steward:$tag, steward-postgres:15, steward-nats:2.9"
echo "export DOCKER_HOST=unix://$sock CONTAINERS_CONF=$CONTAINERS_CONF CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF"
