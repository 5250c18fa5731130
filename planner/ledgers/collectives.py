"""Card 11 — the all-reduce algorithm a group uses: the fastest available one for its message size and fabric.

One function, :func:`allreduce_choice`, prices every algorithm a fabric offers with the α–β model of card 6
(T = rounds·α + bytes per rank / bandwidth) and keeps the fastest; the performance model calls it for every
tensor-parallel all-reduce. Bandwidths per direction in decimal GB/s, latencies α in µs, bytes in B, times
in s. Every function works on numpy arrays (the candidate table evaluates thousands of groups at once).

Algorithms (``ALGORITHMS``), with n ranks, q of them per scale-up domain, H = ⌈n/q⌉ domains:

* ``ring`` — flat ring over the slowest edge: 2(n − 1)·α_b + 2(n − 1)·M/(n·B_b), where inside one domain
  B_b = B_L, α_b = α_L, and across domains B_b = min(B_L, B_X), α_b = max(α_L, α_X) (card 6).
* ``tree`` — binomial tree reduce + broadcast: 2·⌈log2 n⌉·(α_b + M/B_b) (card 11, book eq. (6-10)). NCCL
  builds trees across nodes only and chains the GPUs inside a node, so inside one domain it is offered
  only where the fabric says so (``tree_in_domain``; the book's C11.7 teaching case).
* ``hierarchical`` — reduce-scatter inside each domain, ring across domains on the M/q slices, all-gather
  inside: 2(q − 1)·(M/q)/B_L + 2(H − 1)·(M/(q·H))/B_r + 2(q − 1)·α_L + 2(H − 1)·α_X, B_r = B_X / k for k
  ranks sharing one NIC (card 6; only when H > 1).
* ``hierarchical_sharp`` — as hierarchical, but the switches of the scale-out fabric reduce the slice:
  sent once in one round, α_X + (M/q)/B_r (card 11 in-network reduction; only when H > 1 and the fabric
  reduces in-network).
* ``in_switch`` — NVLink SHARP (NVLS): the NVSwitch reduces, each rank sends and receives its buffer
  once: α_S + M/B_S, with the switch's measured algorithm bandwidth B_S and start-up α_S (only when the
  whole group sits in one domain whose switch reduces).

References: card 11 (book ch06 §6.4–6.5, ch07 §7.2), card 6 (ring, hierarchical, α table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.units import BYTES_PER_GB, US_PER_S

Num = Any
"""float or numpy array."""

ALGORITHMS = ("ring", "tree", "hierarchical", "hierarchical_sharp", "in_switch")
"""Names of the algorithms :func:`allreduce_choice` prices, in the order of its tie-break (first wins)."""


@dataclass(frozen=True)
class CollectiveFabric:
    """Where an all-reduce group sits: its ranks, the domain they share and the links between domains.

    Every field may be a numpy array (one group per element). Zero bandwidths mean "not offered".
    """

    ranks: Num
    """Ranks n in the group."""
    ranks_per_domain: Num
    """Ranks q that share one scale-up domain (NVLink / NVSwitch); q ≥ n when the group fits in one."""
    local_gb_per_s: Num
    """Per-rank bandwidth B_L inside the domain, GB/s per direction (already × link efficiency)."""
    local_latency_us: Num
    """Start-up α_L per round inside the domain, µs."""
    cross_gb_per_s: Num = 0.0
    """Bandwidth B_X of one scale-out NIC between domains, GB/s per direction (0 = none)."""
    cross_latency_us: Num = 0.0
    """Start-up α_X per round across domains, µs."""
    ranks_per_nic: Num = 1.0
    """Ranks k of one domain that share a NIC (1 when every GPU has its own rail-aligned NIC)."""
    in_switch_gb_per_s: Num = 0.0
    """Algorithm bandwidth B_S of the domain switch's in-switch reduction (NVLS), GB/s; 0 = not offered."""
    in_switch_latency_us: Num = 0.0
    """Start-up α_S of the in-switch reduction, µs."""
    in_network_reduction: Num = 0.0
    """1 when the scale-out switches reduce in-network (InfiniBand SHARP), else 0."""
    tree_in_domain: Num = 0.0
    """1 when a binomial tree runs over the links inside the domain (the book's C11.7 case), else 0."""


@dataclass(frozen=True)
class AllreduceChoice:
    """The fastest algorithm's time and name, and every algorithm's time (inf where not offered)."""

    time_s: Num
    algorithm: Num
    """Name from :data:`ALGORITHMS` (a numpy str array shaped like ``time_s``)."""
    times_s: dict[str, Num]
    startup_s: Num = 0.0
    """The start-up (rounds × α) part of ``time_s``: the chosen algorithm's small-message latency."""


def _f(x: Num) -> Any:
    return np.asarray(x, dtype=float)


def allreduce_choice(message_bytes: Num, fabric: CollectiveFabric) -> AllreduceChoice:
    """Time of the fastest all-reduce of ``message_bytes`` per rank on ``fabric``, and its name, s.

    Parameters
    ----------
    message_bytes : float or array
        Buffer size M each rank all-reduces, B.
    fabric : CollectiveFabric
        Ranks, domain size and links (see the class).

    Returns
    -------
    AllreduceChoice
        ``time_s`` = min over the offered algorithms (module docstring); one rank costs 0 ("ring").

    Notes
    -----
    Below the message size M ≈ α·B the start-up terms dominate and the algorithm with fewer rounds wins
    (tree, SHARP, NVLS); above it the one that moves fewer bytes per link wins (ring, hierarchy, NVLS).
    Card 11 examples: 8 ranks at 450 GB/s, α = 0.822 µs, tree offered → tree below ≈ 680 KiB, ring above;
    a 24 MiB slice across S servers at 50 GB/s, α = 0.83 µs → SHARP 0.504 ms vs ring 0.505 (S = 2),
    0.760 (S = 4), 1.027 ms (S = 32). Card 6: 192 MiB over 2 × 8 H100 (NVLink 450, one 50 GB/s NIC per
    GPU) → flat ring 7.6 ms, hierarchical 1.3 ms; over 2 × 4 PCIe A100 (32 GB/s P2P, one 32 GB/s NIC slot
    per server) → flat ring 11.0 ms, hierarchical 15.7 ms.

    References
    ----------
    Card 11 (ring/tree crossover, in-network reduction), card 6 (ring, hierarchical), book ch06 eq. (6-10),
    ch07 §7.2.
    """
    m = _f(message_bytes)
    n = np.maximum(_f(fabric.ranks), 1.0)
    q = np.clip(_f(fabric.ranks_per_domain), 1.0, n)
    domains = np.ceil(n / q - 1e-9)
    one_domain = domains <= 1
    b_l = _f(fabric.local_gb_per_s) * BYTES_PER_GB
    a_l = _f(fabric.local_latency_us) / US_PER_S
    b_x = _f(fabric.cross_gb_per_s) * BYTES_PER_GB
    a_x = _f(fabric.cross_latency_us) / US_PER_S
    has_cross = b_x > 0
    inf = np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        b_b = np.where(one_domain, b_l, np.minimum(b_l, np.where(has_cross, b_x, inf)))
        a_b = np.where(one_domain, a_l, np.maximum(a_l, a_x))
        spans_ok = one_domain | has_cross
        ring = np.where(spans_ok, 2 * (n - 1) * a_b + 2 * (n - 1) * m / (n * b_b), inf)
        tree_ok = spans_ok & ((~one_domain) | (_f(fabric.tree_in_domain) > 0))
        tree = np.where(tree_ok, 2 * np.ceil(np.log2(n)) * (a_b + m / b_b), inf)
        b_r = b_x / np.maximum(_f(fabric.ranks_per_nic), 1.0)
        local = 2 * (q - 1) * (m / q) / b_l + 2 * (q - 1) * a_l
        multi = (~one_domain) & has_cross
        hier = np.where(multi, local + 2 * (domains - 1) * (m / (q * domains)) / b_r + 2 * (domains - 1) * a_x, inf)
        sharp_ok = multi & (_f(fabric.in_network_reduction) > 0)
        hier_sharp = np.where(sharp_ok, local + a_x + (m / q) / b_r, inf)
        b_s = _f(fabric.in_switch_gb_per_s) * BYTES_PER_GB
        switch_ok = one_domain & (b_s > 0)
        in_switch = np.where(switch_ok, _f(fabric.in_switch_latency_us) / US_PER_S + m / b_s, inf)
        startups = {
            "ring": 2 * (n - 1) * a_b,
            "tree": 2 * np.ceil(np.log2(n)) * a_b,
            "hierarchical": 2 * (q - 1) * a_l + 2 * (domains - 1) * a_x,
            "hierarchical_sharp": 2 * (q - 1) * a_l + a_x,
            "in_switch": _f(fabric.in_switch_latency_us) / US_PER_S,
        }
    times = {
        "ring": ring,
        "tree": tree,
        "hierarchical": hier,
        "hierarchical_sharp": hier_sharp,
        "in_switch": in_switch,
    }
    stacked = np.stack(np.broadcast_arrays(*[times[a] for a in ALGORITHMS]))
    best = np.argmin(stacked, axis=0)
    time_s = np.take_along_axis(stacked, best[None, ...], axis=0)[0]
    single = n <= 1
    time_s = np.where(single, 0.0, time_s)
    names = np.where(single, "ring", np.array(ALGORITHMS)[best])
    starts = np.stack(np.broadcast_arrays(*[startups[a] for a in ALGORITHMS], stacked[0]))[:-1]
    startup_s = np.where(single, 0.0, np.take_along_axis(starts, best[None, ...], axis=0)[0])
    return AllreduceChoice(time_s=time_s, algorithm=names, times_s=times, startup_s=startup_s)


@dataclass(frozen=True)
class InDomainAllreduce:
    """The message-free terms of the fastest all-reduce inside one scale-up domain (:func:`in_domain_allreduce`):
    the ring 2(n − 1)·α + 2(n − 1)·M/(n·B) and, where the switch reduces, NVLS α_S + M/B_S, split where the
    message M enters, so that a step table evaluated at many loads computes them once (s, B, B/s)."""

    ring_startup_s: Num
    """2(n − 1)·α."""
    ring_hops: Num
    """2(n − 1)."""
    ring_bytes_per_s: Num
    """n·B."""
    switch_startup_s: Num
    """α_S."""
    switch_bytes_per_s: Num
    """B_S; 0 where the switch does not reduce."""
    single: Num
    """n ≤ 1: no all-reduce (0 s)."""
    any_switch: bool
    """Some row's switch reduces (else the NVLS terms are not evaluated: every row rings)."""

    def time_s(self, message_bytes: Num) -> Num:
        """Time of the fastest algorithm for ``message_bytes`` per rank, s (0 for one rank)."""
        return self.time_and_startup_s(message_bytes, startup=False)[0]

    def time_and_startup_s(self, message_bytes: Num, *, startup: bool = True) -> tuple[Num, Num]:
        """(time, start-up) of the fastest algorithm for ``message_bytes`` per rank, s (0, 0 for one rank);
        the start-up is 0 unless ``startup``."""
        ring = self.ring_startup_s + self.ring_hops * message_bytes / self.ring_bytes_per_s
        time_s, startup_s = ring, self.ring_startup_s
        if self.any_switch:
            with np.errstate(divide="ignore", invalid="ignore"):
                switch = np.where(
                    self.switch_bytes_per_s > 0, self.switch_startup_s + message_bytes / self.switch_bytes_per_s, np.inf
                )
            use_switch = switch < ring
            time_s = np.where(use_switch, switch, ring)
            startup_s = np.where(use_switch, self.switch_startup_s, self.ring_startup_s)
        time_s = np.where(self.single, 0.0, time_s)
        return time_s, (np.where(self.single, 0.0, startup_s) if startup else 0.0)


def in_domain_allreduce(
    *,
    ranks: Num,
    link_gb_per_s: Num,
    latency_us: Num,
    in_switch_gb_per_s: Num = 0.0,
    in_switch_latency_us: Num = 0.0,
) -> InDomainAllreduce:
    """The :class:`InDomainAllreduce` terms of a group of ``ranks`` inside one scale-up domain: links of
    ``link_gb_per_s`` per direction with ``latency_us`` per hop, and the switch's reduction bandwidth and
    latency where it reduces (0: it does not)."""
    n = np.maximum(_f(ranks), 1.0)
    b_s = _f(in_switch_gb_per_s) * BYTES_PER_GB
    return InDomainAllreduce(
        ring_startup_s=2 * (n - 1) * (_f(latency_us) / US_PER_S),
        ring_hops=2 * (n - 1),
        ring_bytes_per_s=n * _f(link_gb_per_s) * BYTES_PER_GB,
        switch_startup_s=_f(in_switch_latency_us) / US_PER_S,
        switch_bytes_per_s=b_s,
        single=n <= 1,
        any_switch=bool(np.any(b_s > 0)),
    )


def in_domain_allreduce_s(
    message_bytes: Num,
    *,
    ranks: Num,
    link_gb_per_s: Num,
    latency_us: Num,
    in_switch_gb_per_s: Num = 0.0,
    in_switch_latency_us: Num = 0.0,
) -> tuple[Num, Num]:
    """(time, start-up) of the fastest all-reduce inside one scale-up domain, s: the min of the ring
    2(n − 1)·α + 2(n − 1)·M/(n·B) and, where the switch reduces, NVLS α_S + M/B_S; 0 for one rank.

    The same numbers as :func:`allreduce_choice` on :func:`in_domain_fabric` (tested), without the
    algorithm names: the performance model calls it once per engine step of every candidate (a step table
    at many loads keeps :func:`in_domain_allreduce`'s terms and calls their ``time_s``)."""
    terms = in_domain_allreduce(
        ranks=ranks, link_gb_per_s=link_gb_per_s, latency_us=latency_us, in_switch_gb_per_s=in_switch_gb_per_s,
        in_switch_latency_us=in_switch_latency_us,
    )
    return terms.time_and_startup_s(_f(message_bytes))


def in_domain_fabric(
    ranks: Num,
    *,
    link_gb_per_s: Num,
    latency_us: Num,
    in_switch_gb_per_s: Num = 0.0,
    in_switch_latency_us: Num = 0.0,
) -> CollectiveFabric:
    """The fabric of a group that sits inside one scale-up domain (a tensor-parallel group), see
    :class:`CollectiveFabric`."""
    return CollectiveFabric(
        ranks=ranks,
        ranks_per_domain=ranks,
        local_gb_per_s=link_gb_per_s,
        local_latency_us=latency_us,
        in_switch_gb_per_s=in_switch_gb_per_s,
        in_switch_latency_us=in_switch_latency_us,
    )
