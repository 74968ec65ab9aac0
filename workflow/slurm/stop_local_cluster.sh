#!/usr/bin/env bash
# Stop the one-node SLURM cluster started by start_local_cluster.sh (only the daemons it started).
exec bash "$(dirname "${BASH_SOURCE[0]}")/start_local_cluster.sh" stop
