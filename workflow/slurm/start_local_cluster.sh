#!/usr/bin/env bash
# A one-node SLURM cluster on this machine (Debian/Ubuntu, root, no systemd needed), to run
# and test the workflow's SLURM profile offline.
#
#   bash workflow/slurm/start_local_cluster.sh [start]   # install if needed, start, wait for idle
#   bash workflow/slurm/start_local_cluster.sh status    # exit 0 iff the node is up and usable
#   bash workflow/slurm/start_local_cluster.sh stop      # stop the daemons this script started
#
# Idempotent: re-running `start` while the cluster is up only checks that it is usable.
# Writes /etc/slurm/slurm.conf from slurm.conf.template (single node named `hostname -s`, all
# CPUs as `slurmd -C` sees them, RealMemory 5% under MemTotal, one GPU gres backed by
# /dev/null (gres.conf beside slurm.conf; no job sees a GPU), partitions `debug` (default)
# and `gpu`, no cgroups, no accounting); refuses to overwrite a slurm.conf it did not write (SLURM_LOCAL_FORCE=1 to
# allow). A changed configuration restarts the daemons. Logs: /var/log/slurm/.
# Another apt/dpkg process holding the dpkg lock (unattended-upgrades, a parallel apt-get) is
# waited for, up to SLURM_LOCAL_APT_WAIT seconds (default 900), not a failure.
# Env overrides: SLURM_LOCAL_CPUS, SLURM_LOCAL_MEM_MB, SLURM_LOCAL_WAIT (seconds, default 60).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TEMPLATE=$HERE/slurm.conf.template
MARKER="generated-by: softmax-ood workflow/slurm/start_local_cluster.sh"
CONF=${SLURM_CONF:-/etc/slurm/slurm.conf}
STATEDIR=/var/lib/slurm
RUNDIR=/run/slurm-local
LOGDIR=/var/log/slurm
WAIT=${SLURM_LOCAL_WAIT:-60}
HOST=$(hostname -s)

say() { echo "slurm-local: $*"; }
die() { echo "slurm-local: ERROR: $*" >&2; exit 1; }

pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# e.g. idle, mixed, allocated, down*, drained; empty if the controller is unreachable
node_state() {
    timeout 10 sinfo -h -N -n "$HOST" -o '%T' 2>/dev/null | head -n1 || true
}

node_usable() {
    case "$(node_state)" in idle | mixed | allocated | completing) return 0 ;; *) return 1 ;; esac
}

show_logs() {
    for f in "$LOGDIR/slurmctld.log" "$LOGDIR/slurmd.log" /var/log/munge/munged.log; do
        [[ -f $f ]] && { echo "--- tail $f" >&2; tail -n 20 "$f" >&2; }
    done
    return 0
}

install_packages() {
    local missing=()
    command -v munged >/dev/null || missing+=(munge)
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    ((${#missing[@]} == 0)) && return 0
    say "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt_locked update -qq || die "apt-get update failed"
    apt_locked install -y -qq --no-install-recommends munge slurmctld slurmd slurm-client \
        || die "apt-get install of munge/slurmctld/slurmd/slurm-client failed"
}

# apt-get "$@", waiting while another process holds the dpkg/apt locks: apt's own
# DPkg::Lock::Timeout covers the dpkg frontend lock, and the loop also covers the lists lock of
# `apt-get update` and apt versions without that option.
apt_locked() {
    local limit=${SLURM_LOCAL_APT_WAIT:-900} t0=$SECONDS out rc said=0
    while true; do
        rc=0
        out=$(apt-get -o DPkg::Lock::Timeout="$limit" "$@" 2>&1) || rc=$?
        if ((rc == 0)); then return 0; fi
        if ! grep -qiE 'could not get lock|unable to acquire the dpkg|is another process using it' \
            <<<"$out"; then
            echo "$out" >&2
            return "$rc"
        fi
        if ((SECONDS - t0 >= limit)); then
            echo "$out" >&2
            say "another apt/dpkg process still holds the lock after ${limit}s"
            return "$rc"
        fi
        ((said)) || { say "another apt/dpkg process holds the dpkg lock: waiting (up to ${limit}s)"; said=1; }
        sleep "${SLURM_LOCAL_APT_POLL:-5}"
    done
}

write_conf() {
    local cpus mem_total_mb mem
    # what slurmd itself detects (a node configured with more CPUs than that is drained); not
    # plain `nproc`, which honours OMP_NUM_THREADS (set to 1 by the test suite)
    cpus=${SLURM_LOCAL_CPUS:-$(slurmd -C 2>/dev/null | sed -n 's/.* CPUs=\([0-9]*\).*/\1/p')}
    [[ -n $cpus ]] || cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
    mem_total_mb=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
    # leave 5% (at least 512 MB) for the OS and the daemons; slurmd drains a node whose
    # configured RealMemory exceeds what it measures
    local reserve=$((mem_total_mb / 20 > 512 ? mem_total_mb / 20 : 512))
    mem=${SLURM_LOCAL_MEM_MB:-$((mem_total_mb - reserve))}
    if [[ -f $CONF ]] && ! grep -q "$MARKER" "$CONF" && [[ ${SLURM_LOCAL_FORCE:-0} != 1 ]]; then
        die "$CONF exists and was not written by this script; not overwriting it" \
            "(SLURM_LOCAL_FORCE=1 to allow)"
    fi
    mkdir -p "$(dirname "$CONF")"
    local tmp
    tmp=$(mktemp)
    sed -e "s|@MARKER@|$MARKER|" -e "s|@HOST@|$HOST|g" -e "s|@CPUS@|$cpus|g" \
        -e "s|@REALMEM@|$mem|g" -e "s|@STATEDIR@|$STATEDIR|g" -e "s|@RUNDIR@|$RUNDIR|g" \
        -e "s|@LOGDIR@|$LOGDIR|g" "$TEMPLATE" >"$tmp"
    # the node's one GPU gres, backed by /dev/null: schedulable, but no job sees a real GPU
    local gres
    gres="$(dirname "$CONF")/gres.conf"
    printf '# %s\nNodeName=%s Name=gpu File=/dev/null\n' "$MARKER" "$HOST" >"$tmp.gres"
    if ! cmp -s "$tmp.gres" "$gres"; then
        install -m 0644 "$tmp.gres" "$gres"
        CONF_CHANGED=1
    fi
    rm -f "$tmp.gres"
    if [[ -f $CONF ]] && cmp -s "$tmp" "$CONF"; then
        rm -f "$tmp"
    else
        install -m 0644 "$tmp" "$CONF"
        rm -f "$tmp"
        say "wrote $CONF (node $HOST: CPUs=$cpus RealMemory=$mem MB, 1 GPU gres, partitions debug and gpu)"
        CONF_CHANGED=1
    fi
}

start_munge() {
    if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
        return 0  # a munged is already serving credentials (ours or the system's)
    fi
    [[ -s /etc/munge/munge.key ]] || {
        say "creating /etc/munge/munge.key"
        mungekey --create --keyfile=/etc/munge/munge.key
        chown munge:munge /etc/munge/munge.key && chmod 0600 /etc/munge/munge.key
    }
    install -d -o munge -g munge -m 0755 /run/munge
    install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
    say "starting munged"
    runuser -u munge -- /usr/sbin/munged --force || die "munged failed to start"
    cp /run/munge/munged.pid "$RUNDIR/munged.pid"  # remember that we started it (for stop)
    for _ in $(seq 20); do
        munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    show_logs
    die "munged does not answer (munge -n | unmunge fails)"
}

start() {
    [[ $(id -u) == 0 ]] || die "must run as root (installs packages, writes $CONF, starts daemons)"
    [[ -f $TEMPLATE ]] || die "missing $TEMPLATE"
    install_packages
    mkdir -p "$RUNDIR" "$LOGDIR" "$STATEDIR/slurmctld" "$STATEDIR/slurmd"
    CONF_CHANGED=0
    write_conf
    start_munge
    if ((CONF_CHANGED)) \
        && { pid_alive "$RUNDIR/slurmctld.pid" || pid_alive "$RUNDIR/slurmd.pid"; }; then
        say "configuration changed: restarting the daemons"
        stop_slurm
    fi
    if ! pid_alive "$RUNDIR/slurmctld.pid"; then
        say "starting slurmctld"
        slurmctld -i || { show_logs; die "slurmctld failed to start"; }
    fi
    if ! pid_alive "$RUNDIR/slurmd.pid"; then
        say "starting slurmd"
        slurmd || { show_logs; die "slurmd failed to start"; }
    fi
    local state="" t0=$SECONDS resumed=0
    while ((SECONDS - t0 < WAIT)); do
        state=$(node_state)
        case $state in
            idle | mixed | allocated | completing)
                say "node $HOST is $state (partition debug); sinfo:"
                sinfo
                return 0 ;;
            drain* | down*)
                # e.g. left drained by an earlier run: ask for it back once
                if ((!resumed)); then
                    scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true
                    resumed=1
                fi ;;
        esac
        sleep 1
    done
    show_logs
    die "node $HOST did not become idle within ${WAIT}s" \
        "(last state: '${state:-controller unreachable}'; logs above)"
}

stop_one() {  # name pidfile
    local pidfile=$2 pid
    pid_alive "$pidfile" || { rm -f "$pidfile"; return 0; }
    pid=$(cat "$pidfile")
    say "stopping $1 (pid $pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
}

stop_slurm() {
    stop_one slurmd "$RUNDIR/slurmd.pid"
    stop_one slurmctld "$RUNDIR/slurmctld.pid"
}

stop() {
    stop_slurm
    stop_one munged "$RUNDIR/munged.pid"  # only if this script started it
}

[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0  # sourced (tests): define the functions only

case ${1:-start} in
    start) start ;;
    stop) stop ;;
    status)
        if node_usable; then say "up: node $HOST is $(node_state)"; else say "down"; exit 1; fi ;;
    *) die "usage: $0 [start|stop|status]" ;;
esac
