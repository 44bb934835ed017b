"""Where runs of equal query ids start (batches -> whole-query chunks)."""

from __future__ import annotations

import numpy as np
from ._jit import kernel




@kernel
def run_starts_int64(ids):
    """Positions i > 0 with ids[i] != ids[i - 1], ascending.

    Two passes without a temporary mask: a count (vectorised), then a branch-free
    fill (every position is written, the cursor only moves past a change)."""
    n = len(ids)
    count = 0
    for i in range(1, n):
        count += ids[i] != ids[i - 1]
    out = np.empty(count + 1, np.int64)
    c = 0
    for i in range(1, n):
        out[c] = i
        c += ids[i] != ids[i - 1]
    return out[:count]
