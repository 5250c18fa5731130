"""Card 5 — accelerator arithmetic: peaks from hardware parameters, roofline, memory-level parallelism,
link start-up, tiles, quantised storage, energy and cost per token.

Pure formulas over floats. Units follow the rest of the ledgers: compute in dense TFLOP/s
(``peak_tflops``), bandwidth in decimal GB/s (``bandwidth_gb_per_s``), bytes in B, times in s, link
start-up in µs. Functions marked "works on numpy arrays" use plain arithmetic only.

References: card 5 of ``reference/ledgers.md`` (book ch04 §4.1–4.8; ch01 GPU table;
``calculations/results/hardware.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from planner.ledgers._checks import require_fraction
from planner.ledgers._checks import require_non_negative as _require_nonnegative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.communication import transfer_s
from planner.units import BYTES_PER_GB, FLOP_PER_TFLOP, S_PER_HOUR, US_PER_S

_HZ_PER_GHZ = 1e9
_BITS_PER_BYTE = 8.0
_S_PER_NS = 1e-9
_J_PER_PJ = 1e-12
_HBM_STACK_BUS_BITS = 1024.0


def _require_fraction(name: str, value: float) -> None:
    require_fraction(name, value, allow_zero=False)


def _ceil_count(x: float) -> int:
    # Float products such as 1,792 GB/s x 500 ns / 128 B can land a hair above an integer.
    return math.ceil(round(x, 9))


# --- peaks from hardware parameters -------------------------------------------------------------


def peak_tensor_tflops(sm_count: float, *, clock_ghz: float, flop_per_clock_per_sm: float) -> float:
    """Peak compute from the chip layout, TFLOP/s.

    Parameters
    ----------
    sm_count : float
        Streaming multiprocessors (or equivalent cores).
    clock_ghz : float
        Clock at which the peak is quoted, GHz (tensor boost clock for tensor peaks).
    flop_per_clock_per_sm : float
        FLOP per clock per SM (one multiply-add = 2 FLOP; H100 BF16 dense tensor: 4,096).

    Returns
    -------
    float
        Peak compute, TFLOP/s.

    Notes
    -----
    Π = SMs × clock × FLOP/clock/SM. H100 SXM: 132 × 1.83 GHz × 4,096 = 989.4 TFLOP/s BF16 dense;
    FP32 non-tensor 132 × (128 FMA × 2) × 1.98 GHz = 66.9 TFLOP/s. Use dense peaks only; 2:4-sparse
    figures are 2× dense and never used. Works on numpy arrays.

    References
    ----------
    Card 5 (peak derivation); book ch04 §4.3; ``calculations/results/hardware.md``.
    """
    _require_positive("sm_count", sm_count)
    _require_positive("clock_ghz", clock_ghz)
    _require_positive("flop_per_clock_per_sm", flop_per_clock_per_sm)
    return sm_count * clock_ghz * _HZ_PER_GHZ * flop_per_clock_per_sm / FLOP_PER_TFLOP


def hbm_stack_gb_per_s(pin_rate_gbit_per_s: float, *, bus_width_bits: float = _HBM_STACK_BUS_BITS) -> float:
    """Bandwidth of one HBM stack from its pin rate, GB/s.

    Parameters
    ----------
    pin_rate_gbit_per_s : float
        Data rate per pin, Gb/s (H100 HBM3: 5.24; HBM3E: 9.6).
    bus_width_bits : float, optional
        Interface width of one stack, bits (1,024 for HBM2/HBM3/HBM3E).

    Returns
    -------
    float
        Per-stack bandwidth, GB/s (decimal).

    Notes
    -----
    β_stack = bus width × pin rate / 8 (HBM3E at 9.6 Gb/s: 1,229 GB/s). Works on numpy arrays.

    References
    ----------
    Card 5 (HBM bandwidth per stack); book ch04 §4.3.
    """
    _require_positive("pin_rate_gbit_per_s", pin_rate_gbit_per_s)
    _require_positive("bus_width_bits", bus_width_bits)
    return bus_width_bits * pin_rate_gbit_per_s / _BITS_PER_BYTE


def hbm_bandwidth_gb_per_s(stacks: float, *, stack_gb_per_s: float) -> float:
    """Device memory bandwidth from the number of HBM stacks, GB/s.

    Parameters
    ----------
    stacks : float
        Active HBM stacks (H100 SXM: 5; H200: 6; B200: 8).
    stack_gb_per_s : float
        Bandwidth per stack, GB/s (see :func:`hbm_stack_gb_per_s`).

    Returns
    -------
    float
        Device bandwidth, GB/s.

    Notes
    -----
    β = stacks × β_stack (H100 5 × 670 = 3,350 GB/s; H200 6 × 800 = 4,800 GB/s). Works on numpy arrays.

    References
    ----------
    Card 5 (HBM bandwidth); book ch04 §4.3.
    """
    _require_positive("stacks", stacks)
    _require_positive("stack_gb_per_s", stack_gb_per_s)
    return stacks * stack_gb_per_s


# --- arithmetic intensity and the roofline --------------------------------------------------------


def projection_flop(rows: float, *, k: float, n: float) -> float:
    """FLOPs of an (M × K) · (K × N) projection, FLOP.

    Parameters
    ----------
    rows : float
        M, rows of the activation (tokens in the call).
    k, n : float
        Input and output widths of the weight matrix.

    Returns
    -------
    float
        F = 2·M·K·N, FLOP.

    Notes
    -----
    One multiply-add = 2 FLOP. Works on numpy arrays.

    References
    ----------
    Card 5 (arithmetic intensity of a projection); book ch04 §4.7.2.
    """
    _require_nonnegative("rows", rows)
    _require_positive("k", k)
    _require_positive("n", n)
    return 2.0 * rows * k * n


def projection_bytes(rows: float, *, k: float, n: float, bytes_per_value: float = 2.0) -> float:
    """Bytes moved by an (M × K) · (K × N) projection (read input and weights, write output), B.

    Parameters
    ----------
    rows : float
        M, rows of the activation.
    k, n : float
        Input and output widths of the weight matrix.
    bytes_per_value : float, optional
        Bytes per value for activations and weights, B (BF16: 2).

    Returns
    -------
    float
        V = b·(M·K + K·N + M·N), B (BF16: 2MK + 2KN + 2MN).

    Notes
    -----
    Each operand crosses memory once (ideal tiling). Works on numpy arrays.

    References
    ----------
    Card 5 (arithmetic intensity of a projection); book ch04 §4.7.2.
    """
    _require_nonnegative("rows", rows)
    _require_positive("k", k)
    _require_positive("n", n)
    _require_positive("bytes_per_value", bytes_per_value)
    return bytes_per_value * (rows * k + k * n + rows * n)


def projection_intensity_flop_per_byte(
    rows: float, *, k: float, n: float, bytes_per_value: float = 2.0
) -> float:
    """Arithmetic intensity I(M) of an (M × K) · (K × N) projection, FLOP/B.

    Parameters
    ----------
    rows : float
        M, rows of the activation.
    k, n : float
        Input and output widths of the weight matrix.
    bytes_per_value : float, optional
        Bytes per value, B (BF16: 2).

    Returns
    -------
    float
        I = F/V, FLOP/B.

    Notes
    -----
    I(M) = 2MKN / (b·(MK + KN + MN)); BF16: I(M) = 2KN / (2KN/M + 2(K + N)), which tends to
    KN/(K + N) = 2,048 FLOP/B for K = N = 4,096 as M grows. Works on numpy arrays.

    References
    ----------
    Card 5 (arithmetic intensity); book ch04 §4.7.2.
    """
    return projection_flop(rows, k=k, n=n) / projection_bytes(rows, k=k, n=n, bytes_per_value=bytes_per_value)


def ridge_flop_per_byte(peak_tflops: float, *, bandwidth_gb_per_s: float) -> float:
    """Roofline ridge point I* = Π/β, FLOP/B.

    Parameters
    ----------
    peak_tflops : float
        Peak compute Π, dense TFLOP/s.
    bandwidth_gb_per_s : float
        Memory bandwidth β, GB/s.

    Returns
    -------
    float
        Ridge intensity, FLOP/B (RTX 4090 ≈ 164; H100 ≈ 295).

    Notes
    -----
    Kernels with I < I* are bandwidth-bound (report MBU), with I ≥ I* compute-bound (report MFU).
    Works on numpy arrays.

    References
    ----------
    Card 5 (roofline); book ch04 §4.7.
    """
    _require_positive("peak_tflops", peak_tflops)
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    return peak_tflops * FLOP_PER_TFLOP / (bandwidth_gb_per_s * BYTES_PER_GB)


def attainable_tflops(
    intensity_flop_per_byte: float, *, peak_tflops: float, bandwidth_gb_per_s: float
) -> float:
    """Roofline attainable compute P_att = min(Π, β·I), TFLOP/s.

    Parameters
    ----------
    intensity_flop_per_byte : float
        Arithmetic intensity I of the kernel, FLOP/B.
    peak_tflops : float
        Peak compute Π, dense TFLOP/s.
    bandwidth_gb_per_s : float
        Memory bandwidth β, GB/s.

    Returns
    -------
    float
        Attainable compute, TFLOP/s.

    Notes
    -----
    P_att = min(Π, β·I). Scalar helper.

    References
    ----------
    Card 5 (roofline); book ch04 §4.7.
    """
    _require_nonnegative("intensity_flop_per_byte", intensity_flop_per_byte)
    _require_positive("peak_tflops", peak_tflops)
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    bandwidth_roof_tflops = bandwidth_gb_per_s * BYTES_PER_GB * intensity_flop_per_byte / FLOP_PER_TFLOP
    return min(peak_tflops, bandwidth_roof_tflops)


def mfu_ceiling_frac(
    intensity_flop_per_byte: float, *, peak_tflops: float, bandwidth_gb_per_s: float
) -> float:
    """Highest MFU the roofline allows at intensity I: P_att/Π, fraction.

    Parameters
    ----------
    intensity_flop_per_byte : float
        Arithmetic intensity, FLOP/B.
    peak_tflops : float
        Peak compute Π, dense TFLOP/s.
    bandwidth_gb_per_s : float
        Memory bandwidth β, GB/s.

    Returns
    -------
    float
        min(1, β·I/Π), fraction (Qwen3-235B experts at B = 1 on H100: 0.3 %).

    Notes
    -----
    MFU ceiling = min(Π, β·I)/Π. Scalar helper.

    References
    ----------
    Card 5 (roofline; quote MFU above the ridge, MBU below it); book ch04 §4.7, ch06 §6.1.
    """
    attainable = attainable_tflops(
        intensity_flop_per_byte, peak_tflops=peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s
    )
    return attainable / peak_tflops


def is_compute_bound(intensity_flop_per_byte: float, *, ridge_flop_per_byte: float) -> bool:
    """Roofline classification: True iff I ≥ I* (compute-bound), False if bandwidth-bound.

    Parameters
    ----------
    intensity_flop_per_byte : float
        Arithmetic intensity of the kernel or step, FLOP/B.
    ridge_flop_per_byte : float
        Ridge intensity I* = Π/β, FLOP/B.

    Returns
    -------
    bool
        True when compute-bound (report MFU), False when bandwidth-bound (report MBU).

    Notes
    -----
    compute-bound ⇔ I ≥ I*.

    References
    ----------
    Card 5 (decision rule: below the ridge report MBU, above it MFU); book ch04 §4.7.
    """
    _require_nonnegative("intensity_flop_per_byte", intensity_flop_per_byte)
    _require_positive("ridge_flop_per_byte", ridge_flop_per_byte)
    return intensity_flop_per_byte >= ridge_flop_per_byte


def compute_bound_rows(
    ridge_flop_per_byte: float, *, hidden_size: float, bytes_per_value: float = 2.0
) -> float:
    """Rows M* at which a d × d projection reaches the ridge (becomes compute-bound), rows.

    Parameters
    ----------
    ridge_flop_per_byte : float
        Ridge intensity I* = Π/β, FLOP/B.
    hidden_size : float
        d, width of the square projection.
    bytes_per_value : float, optional
        Bytes per value, B (BF16: 2).

    Returns
    -------
    float
        M* (fractional; round up for a row count: RTX 4090, d = 4,096 → 178.1 → 179 rows).

    Notes
    -----
    For K = N = d, I(M) = 2Md / (b(2M + d)); I(M*) = I* gives M* = I*·b·d / (2(d − b·I*)), i.e.
    M* = I*·d/(d − 2I*) for BF16. Raises if I* ≥ d/b (the projection never becomes compute-bound).

    References
    ----------
    Card 5 (rows at which a d × d projection becomes compute-bound); book ch04 §4.7.2.
    """
    _require_positive("ridge_flop_per_byte", ridge_flop_per_byte)
    _require_positive("hidden_size", hidden_size)
    _require_positive("bytes_per_value", bytes_per_value)
    headroom = hidden_size - bytes_per_value * ridge_flop_per_byte
    if headroom <= 0:
        raise ValueError(
            f"a {hidden_size:g} x {hidden_size:g} projection never reaches the ridge "
            f"{ridge_flop_per_byte:g} FLOP/B: its intensity is below d/b = {hidden_size / bytes_per_value:g}"
        )
    return ridge_flop_per_byte * bytes_per_value * hidden_size / (2.0 * headroom)


def decode_intensity_flop_per_byte(batch: float, *, bytes_per_weight: float) -> float:
    """Arithmetic intensity of a weight-only decode step, I = 2B/b_W, FLOP/B.

    Parameters
    ----------
    batch : float
        B, concurrent sequences in the step.
    bytes_per_weight : float
        b_W, bytes per weight, B (BF16: 2).

    Returns
    -------
    float
        Intensity, FLOP/B (BF16: I = B, so B = 1–16 gives 1–16 FLOP/B).

    Notes
    -----
    F ≈ 2·N·B while the weights b_W·N are read once per step: I = 2B/b_W, far left of the
    164–295 FLOP/B ridges, so decode is bandwidth-bound. Works on numpy arrays.

    References
    ----------
    Card 5 (why decode is bandwidth-bound), card 1; book ch04 §4.7, ch01 §1.3.
    """
    _require_nonnegative("batch", batch)
    _require_positive("bytes_per_weight", bytes_per_weight)
    return 2.0 * batch / bytes_per_weight


def critical_batch_seqs(bytes_per_weight: float, *, peak_tflops: float, bandwidth_gb_per_s: float) -> float:
    """Critical batch B* at which decode compute time equals weight-read time, sequences.

    Parameters
    ----------
    bytes_per_weight : float
        b_W, bytes per weight, B.
    peak_tflops : float
        Peak compute Π, dense TFLOP/s.
    bandwidth_gb_per_s : float
        Memory bandwidth β, GB/s.

    Returns
    -------
    float
        B* = b_W·Π/(2β), sequences (H100, 1 B/param: 147.7).

    Notes
    -----
    Solving 2B/b_W = Π/β. If B ≪ B*, decode is bandwidth-bound: doubling compute changes nothing,
    doubling bandwidth or halving weight bytes halves the floor. Works on numpy arrays.

    References
    ----------
    Card 5 and card 1 (critical batch; stated once, here); book ch01 §1.3.
    """
    _require_positive("bytes_per_weight", bytes_per_weight)
    ridge = ridge_flop_per_byte(peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s)
    return bytes_per_weight * ridge / 2.0


# --- memory-level parallelism, pipelines, links ---------------------------------------------------


def memory_parallelism_gb_per_s(
    outstanding_requests: float, *, transaction_bytes: float, latency_ns: float, interface_gb_per_s: float
) -> float:
    """Bandwidth sustained by a number of outstanding memory requests (Little's law), GB/s.

    Parameters
    ----------
    outstanding_requests : float
        N_outstanding, requests in flight.
    transaction_bytes : float
        s, bytes per transaction, B (e.g. 128).
    latency_ns : float
        L_lat, memory latency, ns.
    interface_gb_per_s : float
        R_interface, interface peak bandwidth, GB/s.

    Returns
    -------
    float
        R_eff = min(R_interface, N·s/L_lat), GB/s (RTX 4090 with 128 outstanding: 32.8 GB/s).

    Notes
    -----
    R_eff ≤ min(R_interface, N_outstanding·s/L_lat). Scalar helper.

    References
    ----------
    Card 5 (memory-level parallelism); book ch04 Example 4-2.
    """
    _require_nonnegative("outstanding_requests", outstanding_requests)
    _require_positive("transaction_bytes", transaction_bytes)
    _require_positive("latency_ns", latency_ns)
    _require_positive("interface_gb_per_s", interface_gb_per_s)
    little_gb_per_s = outstanding_requests * transaction_bytes / (latency_ns * _S_PER_NS) / BYTES_PER_GB
    return min(interface_gb_per_s, little_gb_per_s)


def outstanding_requests_needed(
    target_gb_per_s: float, *, transaction_bytes: float, latency_ns: float
) -> int:
    """Outstanding memory requests needed to sustain a bandwidth, requests.

    Parameters
    ----------
    target_gb_per_s : float
        R_target, bandwidth to sustain, GB/s.
    transaction_bytes : float
        s, bytes per transaction, B.
    latency_ns : float
        L_lat, memory latency, ns.

    Returns
    -------
    int
        N_needed = ceil(R_target·L_lat/s) (RTX 4090, 128 B, 500 ns: 3,938).

    Notes
    -----
    Little's law: bytes in flight = rate × latency.

    References
    ----------
    Card 5 (memory-level parallelism); book ch04 Example 4-2.
    """
    _require_positive("target_gb_per_s", target_gb_per_s)
    _require_positive("transaction_bytes", transaction_bytes)
    _require_positive("latency_ns", latency_ns)
    in_flight_bytes = target_gb_per_s * BYTES_PER_GB * latency_ns * _S_PER_NS
    return _ceil_count(in_flight_bytes / transaction_bytes)


def double_buffered_pipeline_s(stages: int, *, load_s: float, compute_s: float) -> float:
    """Time of n load/compute stages with double buffering (load of i + 1 overlaps compute of i), s.

    Parameters
    ----------
    stages : int
        n, number of tiles or chunks (≥ 1).
    load_s : float
        t_load, time to load one stage, s.
    compute_s : float
        t_compute, time to compute one stage, s.

    Returns
    -------
    float
        T = t_load + t_compute + (n − 1)·max(t_load, t_compute), s.

    Notes
    -----
    The first load and the last compute are exposed; in between the slower of the two sets the pace.

    References
    ----------
    Card 5 (double-buffered pipeline); book ch04.
    """
    if stages < 1:
        raise ValueError(f"stages must be at least 1, got {stages}")
    _require_nonnegative("load_s", load_s)
    _require_nonnegative("compute_s", compute_s)
    return load_s + compute_s + (stages - 1) * max(load_s, compute_s)


def link_edge_s(message_bytes: float, *, latency_us: float, bandwidth_gb_per_s: float) -> float:
    """Time of one transfer over a link edge, T = α + V/R, s.

    Parameters
    ----------
    message_bytes : float
        V, payload, B.
    latency_us : float
        α, start-up latency, µs.
    bandwidth_gb_per_s : float
        R, link bandwidth per direction, GB/s.

    Returns
    -------
    float
        Transfer time, s.

    Notes
    -----
    T_edge = α + V/R: one message of planner.ledgers.communication.transfer_s. Works on numpy arrays.

    References
    ----------
    Card 5 (link edge); book ch04; README rule 4 (transfers).
    """
    _require_nonnegative("message_bytes", message_bytes)
    return transfer_s(message_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us)


def startup_equal_payload_bytes(latency_us: float, *, bandwidth_gb_per_s: float) -> float:
    """Payload at which start-up time equals transfer time, V* = α·R, B.

    Parameters
    ----------
    latency_us : float
        α, start-up latency, µs.
    bandwidth_gb_per_s : float
        R, link bandwidth per direction, GB/s.

    Returns
    -------
    float
        V*, B. Messages much smaller than V* are start-up-bound: fuse them or use fewer rounds.

    Notes
    -----
    V* = α·R. Works on numpy arrays.

    References
    ----------
    Card 5 (link edge); book ch04.
    """
    _require_nonnegative("latency_us", latency_us)
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    return latency_us / US_PER_S * bandwidth_gb_per_s * BYTES_PER_GB


def tile_efficiency_frac(m: int, *, n: int, k: int, tile_m: int, tile_n: int, tile_k: int) -> float:
    """Useful fraction of the work done by a tiled M × N × K matrix product, fraction.

    Parameters
    ----------
    m, n, k : int
        Problem shape.
    tile_m, tile_n, tile_k : int
        Tile shape of the kernel.

    Returns
    -------
    float
        η = MNK / (ceil(M/m_t)·m_t · ceil(N/n_t)·n_t · ceil(K/k_t)·k_t), fraction.

    Notes
    -----
    Partial edge tiles are computed in full; η < 1 is padding waste.

    References
    ----------
    Card 5 (tile-shape efficiency); book ch04.
    """
    for name, value in (
        ("m", m),
        ("n", n),
        ("k", k),
        ("tile_m", tile_m),
        ("tile_n", tile_n),
        ("tile_k", tile_k),
    ):
        if value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value}")
    padded = math.ceil(m / tile_m) * tile_m * math.ceil(n / tile_n) * tile_n * math.ceil(k / tile_k) * tile_k
    return m * n * k / padded


# --- storage, energy, cost ------------------------------------------------------------------------


def quantized_storage_bytes(
    n_values: float, *, bits_per_value: float, group_size: float | None = None, scale_bytes: float = 0.0
) -> float:
    """Stored bytes of a quantised tensor with one scale per group, B.

    Parameters
    ----------
    n_values : float
        n, values in the tensor.
    bits_per_value : float
        b, bits per stored value (BF16: 16, FP8: 8, 4-bit: 4).
    group_size : float or None, optional
        g, values sharing one scale; None for an unscaled format (then scale_bytes must be 0).
    scale_bytes : float, optional
        s, bytes per scale, B (MXFP4/MXFP8: 1).

    Returns
    -------
    float
        V_W = n·b/8 + (n/g)·s, B (4096², 4-bit, g = 32, 1-byte scale: 8.5 MiB).

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 5 (quantised storage); book ch04 §4.2.4.
    """
    _require_nonnegative("n_values", n_values)
    _require_positive("bits_per_value", bits_per_value)
    _require_nonnegative("scale_bytes", scale_bytes)
    value_bytes = n_values * bits_per_value / _BITS_PER_BYTE
    if group_size is None:
        if scale_bytes:
            raise ValueError("scale_bytes needs a group_size (values per scale)")
        return value_bytes
    _require_positive("group_size", group_size)
    return value_bytes + n_values / group_size * scale_bytes


def step_energy_j(
    flop: float,
    *,
    pj_per_flop: float,
    moved_bytes: Sequence[float] = (),
    pj_per_byte: Sequence[float] = (),
) -> float:
    """Energy of one step from bytes moved per memory tier and FLOPs executed, J.

    Parameters
    ----------
    flop : float
        FLOPs executed, FLOP.
    pj_per_flop : float
        Energy per FLOP, pJ/FLOP (FP16 FMA: 0.75).
    moved_bytes : sequence of float, optional
        Bytes moved through each tier (HBM, SRAM, link, ...), B.
    pj_per_byte : sequence of float, optional
        Access energy of each tier, pJ/B, same order (HBM2 31.76; NVLink-C2C 10.4; MB-scale SRAM 12.5;
        KB-scale SRAM 1.25; LPDDR 160).

    Returns
    -------
    float
        E = Σ bytes × pJ/B + FLOPs × pJ/FLOP, J.

    Notes
    -----
    E = Σ_t V_t·e_t + F·e_F.

    References
    ----------
    Card 5 (energy per step); book ch04.
    """
    if len(moved_bytes) != len(pj_per_byte):
        raise ValueError(
            f"moved_bytes ({len(moved_bytes)} tiers) and pj_per_byte ({len(pj_per_byte)} tiers) must match"
        )
    _require_nonnegative("flop", flop)
    _require_nonnegative("pj_per_flop", pj_per_flop)
    for volume, energy in zip(moved_bytes, pj_per_byte, strict=True):
        _require_nonnegative("moved_bytes", volume)
        _require_nonnegative("pj_per_byte", energy)
    memory_pj = sum(volume * energy for volume, energy in zip(moved_bytes, pj_per_byte, strict=True))
    return (memory_pj + flop * pj_per_flop) * _J_PER_PJ


def power_budget_pj_per_flop(tdp_w: float, *, peak_tflops: float, memory_power_w: float = 0.0) -> float:
    """Power budget available per FLOP at peak, b = (TDP − P_mem)/Π, pJ/FLOP.

    Parameters
    ----------
    tdp_w : float
        Board power, W (H100 SXM 700; B200 1,000).
    peak_tflops : float
        Peak compute Π, dense TFLOP/s.
    memory_power_w : float, optional
        Power spent on memory traffic, W.

    Returns
    -------
    float
        Energy per FLOP the compute units may spend, pJ/FLOP (W per TFLOP/s = pJ/FLOP).

    Notes
    -----
    b = (TDP − P_mem)/Π. Works on numpy arrays.

    References
    ----------
    Card 5 (power budget per FLOP); book ch04.
    """
    _require_positive("tdp_w", tdp_w)
    _require_positive("peak_tflops", peak_tflops)
    _require_nonnegative("memory_power_w", memory_power_w)
    if not np.all(np.asarray(memory_power_w) < np.asarray(tdp_w)):
        raise ValueError(f"memory_power_w {memory_power_w!r} must be below tdp_w {tdp_w!r}")
    return (tdp_w - memory_power_w) / peak_tflops


def usd_per_token(usd_per_hour: float, *, utilization_frac: float, tokens_per_s: float) -> float:
    """Cost per token of a device rented by the hour, currency per token.

    Parameters
    ----------
    usd_per_hour : float
        c_hour, price of the device per hour (any currency; USD by convention).
    utilization_frac : float
        u, fraction of the paid hours spent serving, 0..1.
    tokens_per_s : float
        q, tokens per second while serving.

    Returns
    -------
    float
        c_hour / (3,600·u·q), currency per token.

    Notes
    -----
    Works on numpy arrays.

    References
    ----------
    Card 5 (cost comparison); book ch04.
    """
    _require_nonnegative("usd_per_hour", usd_per_hour)
    _require_fraction("utilization_frac", utilization_frac)
    _require_positive("tokens_per_s", tokens_per_s)
    return usd_per_hour / (S_PER_HOUR * utilization_frac * tokens_per_s)


def device_a_cheaper_per_task(
    usd_per_hour_a: float, *, usd_per_hour_b: float, task_s_a: float, task_s_b: float
) -> bool:
    """True iff device A is cheaper per task than device B: c_A/c_B < t_B/t_A.

    Parameters
    ----------
    usd_per_hour_a, usd_per_hour_b : float
        Hourly prices of A and B (same currency).
    task_s_a, task_s_b : float
        Time per task on A and on B, s.

    Returns
    -------
    bool
        True when c_A·t_A < c_B·t_B.

    Notes
    -----
    A faster device pays only if its price ratio is below its speed-up.

    References
    ----------
    Card 5 (cost comparison); book ch04.
    """
    _require_nonnegative("usd_per_hour_a", usd_per_hour_a)
    _require_positive("usd_per_hour_b", usd_per_hour_b)
    _require_positive("task_s_a", task_s_a)
    _require_positive("task_s_b", task_s_b)
    return usd_per_hour_a / usd_per_hour_b < task_s_b / task_s_a


def rom_hbm_share_ratio(weight_bytes: float, *, batch: float, kv_bytes_per_seq: float) -> float:
    """Card 5's S_HBM = 1 + W/(B·K) for a weight-resident (ROM) device, ratio.

    Parameters
    ----------
    weight_bytes : float
        W, weights read per step, B.
    batch : float
        B, sequences per step.
    kv_bytes_per_seq : float
        K, state (KV) bytes read per sequence per step, B.

    Returns
    -------
    float
        (W + B·K)/(B·K): total step bytes per byte that still has to come from HBM once the
        weights live in ROM/SRAM.

    Notes
    -----
    S_HBM = 1 + W/(B·K). Works on numpy arrays.

    References
    ----------
    Card 5 (weight-resident device); book ch04, ch06 §6.7.4.
    """
    _require_nonnegative("weight_bytes", weight_bytes)
    _require_positive("batch", batch)
    _require_positive("kv_bytes_per_seq", kv_bytes_per_seq)
    return 1.0 + weight_bytes / (batch * kv_bytes_per_seq)


def rom_memory_time_s(
    weight_bytes: float,
    *,
    batch: float,
    kv_bytes_per_seq: float,
    rom_gb_per_s: float,
    hbm_gb_per_s: float,
) -> float:
    """Memory-time floor of a weight-resident device, t_mem ≥ max(W/β_ROM, B·K/β_HBM), s.

    Parameters
    ----------
    weight_bytes : float
        W, weights read per step from ROM/SRAM, B.
    batch : float
        B, sequences per step.
    kv_bytes_per_seq : float
        K, KV bytes read from HBM per sequence per step, B.
    rom_gb_per_s : float
        β_ROM, bandwidth of the weight store, GB/s.
    hbm_gb_per_s : float
        β_HBM, bandwidth of the state store, GB/s.

    Returns
    -------
    float
        Memory-time lower bound per step, s.

    Notes
    -----
    Weights and state are read in parallel from separate stores: t = max(W/β_ROM, B·K/β_HBM).
    Scalar helper.

    References
    ----------
    Card 5 (weight-resident device); book ch04, ch06 §6.7.4.
    """
    _require_nonnegative("weight_bytes", weight_bytes)
    _require_nonnegative("batch", batch)
    _require_nonnegative("kv_bytes_per_seq", kv_bytes_per_seq)
    _require_positive("rom_gb_per_s", rom_gb_per_s)
    _require_positive("hbm_gb_per_s", hbm_gb_per_s)
    weights_s = weight_bytes / (rom_gb_per_s * BYTES_PER_GB)
    state_s = batch * kv_bytes_per_seq / (hbm_gb_per_s * BYTES_PER_GB)
    return max(weights_s, state_s)
