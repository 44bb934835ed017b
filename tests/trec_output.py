"""Reading trec_eval's own output files (``measure  qid  value`` lines), shared by the
parity tests."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path


def parse_trec_eval(path: Path) -> dict[str, dict[str, str]]:
    """``{measure: {qid or "all": printed value}}`` of every line of the file."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for line in Path(path).read_text().splitlines():
        fields = line.split()
        if not fields:
            continue
        assert len(fields) == 3, f"{Path(path).name}: unexpected line {line!r}"
        measure, qid, value = fields
        assert qid not in out[measure], f"{Path(path).name}: {measure} {qid} twice"
        out[measure][qid] = value
    return dict(out)
