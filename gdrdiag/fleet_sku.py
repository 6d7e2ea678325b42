"""Which SKU each node is meant to be: from an inventory file, else the nearest SKU by its own facts.

Pure (the inventory's text is read by ``cli/``). Used by :mod:`gdrdiag.fleet`.

**Inventory** (``gdrdiag fleet --inventory FILE``): one line per rule, ``PATTERN SKU-NAME``,
where PATTERN is a host name or a shell glob (``fnmatch``) and SKU-NAME the rest of the line;
``#`` starts a comment. An exact host name wins over globs; among globs the first listed wins.
A node the inventory names is judged against every other node of that name, whatever its own
machine says. A node it does not name joins the named SKU whose nodes mostly have the same own
key, else the nearest SKU by facts (below).

**Nearest SKU by facts.** Each record's own key is its GPU models and count, NIC models and
count, NVIDIA driver, bare metal or VM. A key held by fewer than a quarter as many nodes as
another (:data:`FOLD`) is a node of that SKU gone wrong when it *could be* one: the same
platform; each of its GPU and NIC models is one of the SKU's, never more of one than the SKU
has (a node cannot have grown a GPU); and at least one of the two - GPUs or NICs - exactly the
SKU's, so a part that is short is anchored by the other, still whole (a 4-GPU node that lost a
GPU still has its 4 NICs, which an 8-GPU + 8-NIC SKU does not). A node with no GPU and no NIC
at all could be any SKU of its platform. Among the SKUs it could be it is folded into the
nearest: fewest parts differing (GPUs, NICs, driver), then fewest devices short, then the
larger group. Two keys of similar size (a driver roll-out half done) stay two groups.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from typing import Iterable, Optional

from gdrdiag.model.fleet import FleetOptions, InventoryRule, NodeRecordHead

FOLD = 4  # a SKU key with fewer than 1/FOLD of a similar key's nodes is that key's node gone wrong
MAX_INVENTORY_CHARS = 16 << 20
_COUNTED = re.compile(r"^(\d+)x (.+)$")
_SKU_NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,200}$")


def parse_inventory(text: str) -> tuple[InventoryRule, ...]:
    """``PATTERN SKU-NAME`` lines -> rules; ValueError naming the line when one is malformed."""
    if len(text) > MAX_INVENTORY_CHARS:
        raise ValueError(f"larger than {MAX_INVENTORY_CHARS} characters")
    rules = []
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        parts = body.split(None, 1)
        if len(parts) != 2:
            raise ValueError(f"line {number}: expected 'HOST-OR-GLOB SKU-NAME', got {body[:60]!r}")
        pattern, sku = parts[0], parts[1].strip()
        if not _SKU_NAME.match(sku):
            raise ValueError(f"line {number}: SKU name {sku[:60]!r} has control characters or is too long")
        rules.append(InventoryRule(pattern=pattern[:300], sku=sku))
    if not rules:
        raise ValueError("no 'HOST-OR-GLOB SKU-NAME' line")
    return tuple(rules)


def counted(text: str) -> dict[str, int]:
    """``"4x NVIDIA H100, 1x X"`` -> {"NVIDIA H100": 4, "X": 1}; "none"/"unknown" -> {}."""
    out: dict[str, int] = {}
    if text in ("", "none", "unknown"):
        return out
    for part in text.split(", "):
        m = _COUNTED.match(part)
        if m:
            out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
        else:
            out[part] = out.get(part, 0) + 1
    return out


def _within(mine: dict[str, int], sku: dict[str, int]) -> bool:
    """Every model of mine is one of the SKU's, never more of it than the SKU has."""
    return all(model in sku and count <= sku[model] for model, count in mine.items())


def fold_distance(node: dict[str, str], sku: dict[str, str]) -> Optional[tuple[int, int]]:
    """(parts differing, devices short) when a node with ``node``'s parts could be ``sku``; else None."""
    platform = node.get("platform")
    if not node or not sku or platform != sku.get("platform") or platform in (None, "unknown"):
        return None
    ga, gb = counted(node.get("gpus", "")), counted(sku.get("gpus", ""))
    na, nb = counted(node.get("nics", "")), counted(sku.get("nics", ""))
    short = sum(gb.values()) - sum(ga.values()) + sum(nb.values()) - sum(na.values())
    differ = (ga != gb) + (na != nb) + (node.get("driver") != sku.get("driver"))
    if not ga and not na:  # lost every GPU and NIC: its platform is all that says where it belongs
        return (differ, short)
    if not (_within(ga, gb) and _within(na, nb)):
        return None
    if ga != gb and na != nb:  # neither part whole: nothing anchors it to this SKU
        return None
    return (differ, short)


def intended_skus(records: Iterable[NodeRecordHead]) -> dict[str, str]:
    """{own SKU key: intended SKU key}: rare keys folded into the nearest SKU they could be.

    Keys are taken from the most nodes down, so the SKUs a key could fold into (more than FOLD
    times its nodes) are a prefix of those kept so far, and among them only those of its
    platform sharing its GPUs or its NICs exactly (or, for a key with neither, any of its
    platform) can pass :func:`fold_distance`: an index on those keeps a fleet of thousands of
    one-node keys linear instead of comparing every key with every other.
    """
    records = list(records)
    counts = Counter(r.sku for r in records)
    parts: dict[str, dict[str, str]] = {}
    for r in records:
        parts.setdefault(r.sku, r.sku_parts)
    kept = _KeptSkus()
    out: dict[str, str] = {}
    for key in sorted(counts, key=lambda k: (-counts[k], k)):
        best: Optional[tuple] = None
        for t in kept.candidates(parts[key], counts[key] * FOLD):
            d = fold_distance(parts[key], parts[t])
            if d is not None and (best is None or (d, -counts[t], t) < best[0]):
                best = ((d, -counts[t], t), t)
        if best is None:
            kept.add(key, parts[key], counts[key])
        out[key] = best[1] if best is not None else key
    return out


class _KeptSkus:
    """The SKU keys kept as groups so far (added from the most nodes down), indexed for folding.

    Each index lists its keys in the order added, so the keys with more than a given number of
    nodes are a prefix of every list.
    """

    def __init__(self) -> None:
        self._by_gpus: dict[tuple, list[tuple[int, str]]] = defaultdict(list)
        self._by_nics: dict[tuple, list[tuple[int, str]]] = defaultdict(list)
        self._by_platform: dict[Optional[str], list[tuple[int, str]]] = defaultdict(list)

    @staticmethod
    def _parts(part: dict[str, str]) -> tuple[Optional[str], tuple, tuple]:
        platform = part.get("platform")
        gpus = tuple(sorted(counted(part.get("gpus", "")).items()))
        nics = tuple(sorted(counted(part.get("nics", "")).items()))
        return platform, gpus, nics

    def add(self, key: str, part: dict[str, str], nodes: int) -> None:
        """Keep ``key`` (with ``nodes`` nodes, no more than any key kept before it)."""
        platform, gpus, nics = self._parts(part)
        self._by_platform[platform].append((nodes, key))
        self._by_gpus[(platform, gpus)].append((nodes, key))
        self._by_nics[(platform, nics)].append((nodes, key))

    def candidates(self, part: dict[str, str], more_than: int) -> list[str]:
        """Kept keys with more than ``more_than`` nodes that a key of ``part`` could fold into."""
        platform, gpus, nics = self._parts(part)
        if not gpus and not nics:
            lists = [self._by_platform.get(platform, [])]
        else:
            lists = [self._by_gpus.get((platform, gpus), []), self._by_nics.get((platform, nics), [])]
        out: dict[str, None] = {}
        for kept in lists:
            for _, key in itertools.takewhile(lambda k: k[0] > more_than, kept):
                out[key] = None
        return list(out)


def intended_groups(records: list[NodeRecordHead], options: FleetOptions) -> dict[str, tuple[str, str]]:
    """{host: (the SKU group it is judged in, "inventory" | "facts")}.

    Named nodes go to their inventory SKU. The rest: the own key is folded to its nearest SKU
    key, and that key becomes the inventory name most of whose nodes have it, if any.
    """
    named = {r.host: options.sku_for(r.host) for r in records} if options.inventory else {}
    keys_by_name: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        name = named.get(r.host)
        if name is not None:
            keys_by_name[name][r.sku] += 1
    name_of_key: dict[str, str] = {}
    for name in sorted(keys_by_name):
        key, count = keys_by_name[name].most_common(1)[0]
        if count * 2 > sum(keys_by_name[name].values()):
            name_of_key.setdefault(key, name)
    mapping = intended_skus(records)
    out: dict[str, tuple[str, str]] = {}
    for r in records:
        name = named.get(r.host)
        if name is not None:
            out[r.host] = (name, "inventory")
        else:
            key = mapping[r.sku]
            out[r.host] = (name_of_key.get(key, key), "facts")
    return out
