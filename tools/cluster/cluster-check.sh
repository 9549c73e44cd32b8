#!/usr/bin/env bash
# `make cluster-check`: start a one-node Slurm cluster (setup-slurm.sh), run
# tools/cluster/cluster-check.R against it with the package installed in
# $LIB, and stop the daemons again, also when the check fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
LIB=${LIB:-$PWD/check/lib}
here=tools/cluster
# future.batchtools, batchtools, future.apply and ranger come with
# tools/install-deps.sh (the `install` target ran it).
t0=$(date +%s)
trap '"$here/setup-slurm.sh" stop' EXIT
"$here/setup-slurm.sh" start
R_LIBS="$LIB${R_LIBS:+:$R_LIBS}" Rscript --vanilla "$here/cluster-check.R" "$here/slurm.tmpl"
echo "cluster-check: $(( $(date +%s) - t0 )) s with starting and stopping Slurm"
