#!/usr/bin/env bash
# Rootless Podman serving a Docker-compatible API, for running the docker runtime against it.
# Idempotent: installs podman and its rootless helpers, creates an unprivileged user
# (default bbpodman) with subordinate ids, starts `podman system service` as that user and
# loads the offline base image into its storage. Prints the DOCKER_HOST line to use:
#   eval "$(bash .ci/podman-setup.sh)"     # exports DOCKER_HOST=unix:///run/user/<uid>/podman/podman.sock
#   bash .ci/podman-setup.sh --stop
set -euo pipefail

PODMAN_USER="${BACKENDBENCH_PODMAN_USER:-bbpodman}"
BASE_IMAGE="${BACKENDBENCH_BASE_IMAGE:-backendbench/python:3.11}"
PYTHON="${PYTHON:-python}"
log() { echo "podman-setup: $*" >&2; }

if [ "${1:-}" = "--stop" ]; then
    pkill -u "$PODMAN_USER" -f "podman system service" 2>/dev/null || true
    exit 0
fi

# netavark + aardvark-dns: with the older CNI backend an --internal network has no DNS, so a
# candidate could not reach its mocks by name.
packages=(podman uidmap slirp4netns netavark aardvark-dns)
missing=()
for package in "${packages[@]}"; do dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package"); done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

id "$PODMAN_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$PODMAN_USER"
grep -q "^$PODMAN_USER:" /etc/subuid || echo "$PODMAN_USER:300000:65536" >> /etc/subuid
grep -q "^$PODMAN_USER:" /etc/subgid || echo "$PODMAN_USER:300000:65536" >> /etc/subgid
# slirp4netns (the rootless network) opens /dev/net/tun; some images ship it root-only.
if [ -c /dev/net/tun ]; then chmod 0666 /dev/net/tun; fi
uid=$(id -u "$PODMAN_USER")
runtime_dir="/run/user/$uid"
mkdir -p "$runtime_dir/podman"
chown -R "$PODMAN_USER:" "$runtime_dir"
chmod 0700 "$runtime_dir"
home=$(getent passwd "$PODMAN_USER" | cut -d: -f6)
mkdir -p "$home/.config/containers"
# Native overlay (kernel >= 5.13 allows it unprivileged); fuse-overlayfs would need /dev/fuse.
printf '[storage]\ndriver = "overlay"\n' > "$home/.config/containers/storage.conf"
printf '[network]\nnetwork_backend = "netavark"\n' > "$home/.config/containers/containers.conf"
chown -R "$PODMAN_USER:" "$home/.config"
socket="$runtime_dir/podman/podman.sock"
as_user() { runuser -u "$PODMAN_USER" -- env XDG_RUNTIME_DIR="$runtime_dir" HOME="$home" "$@"; }
backend=$(cd / && as_user podman info --format '{{.Host.NetworkBackend}}' </dev/null 2>/dev/null || true)
if [ -n "$backend" ] && [ "$backend" != "netavark" ]; then
    log "switching podman's network backend from $backend to netavark (podman system reset)"
    pkill -u "$PODMAN_USER" -f "podman system service" 2>/dev/null || true
    (cd / && as_user podman system reset -f </dev/null >/dev/null 2>&1) || true
fi
answers() { DOCKER_HOST="unix://$socket" "$PYTHON" -c 'import docker; docker.from_env(timeout=5).ping()' >/dev/null 2>&1; }

if ! answers; then
    log "starting podman system service as $PODMAN_USER (log: /tmp/podman-service.log)"
    (cd / && as_user setsid podman system service --time=0 "unix://$socket" >/tmp/podman-service.log 2>&1 </dev/null &)
    for _ in $(seq 1 40); do
        answers && break
        sleep 0.25
    done
    answers || { log "the podman service did not answer; see /tmp/podman-service.log"; exit 1; }
fi
if ! as_user podman image exists "$BASE_IMAGE" </dev/null 2>/dev/null; then
    log "loading $BASE_IMAGE from the docker engine into podman's storage"
    docker save "$BASE_IMAGE" | as_user podman load -q >/dev/null
    as_user podman tag "localhost/$BASE_IMAGE" "$BASE_IMAGE" </dev/null 2>/dev/null || true
fi
echo "export DOCKER_HOST=unix://$socket"
