#!/usr/bin/env bash
# user+sys CPU and wall of `fastndcg evaluate` on a synthetic log, with idle Numba
# threads waiting passively (the default) and busy-waiting (OMP_WAIT_POLICY=ACTIVE),
# interleaved, 5 rounds each. Usage: scripts/wait_policy.sh [QUERIES]  (default 200000,
# ~10M rows). Prints the median of each.
set -euo pipefail
queries=${1:-200000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fastndcg synth --queries "$queries" --out "$dir/log.parquet" --quiet
fastndcg evaluate "$dir/log.parquet" --quiet >/dev/null   # load or compile the kernels once
for _ in 1 2 3 4 5; do
    /usr/bin/time -f "passive %e %U %S" fastndcg evaluate "$dir/log.parquet" --quiet >/dev/null
    OMP_WAIT_POLICY=ACTIVE /usr/bin/time -f "active %e %U %S" \
        fastndcg evaluate "$dir/log.parquet" --quiet >/dev/null
done 2>&1 | python3 -c '
import statistics, sys
rows = {}
for line in sys.stdin:
    kind, wall, user, sys_ = line.split()
    rows.setdefault(kind, []).append((float(wall), float(user) + float(sys_)))
for kind, v in rows.items():
    print(f"{kind}: wall {statistics.median(w for w, _ in v):.2f} s, "
          f"cpu {statistics.median(c for _, c in v):.2f} s")
cpu = {k: statistics.median(c for _, c in v) for k, v in rows.items()}
print(f"cpu passive / active: {cpu[\"passive\"] / cpu[\"active\"]:.2f}")
'
