"""Card 5 (accelerator arithmetic) subcommands of `planner ledger`: ``planner.ledgers.accelerator``.

Defaults are the book's reference inputs (H100 SXM) so every command runs bare.
"""

from __future__ import annotations

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import accelerator as acc
from planner.units import BYTES_PER_GB, BYTES_PER_MIB, FLOP_PER_TFLOP, US_PER_S

H100_TFLOPS = 989.4
H100_GB_PER_S = 3350.0

PEAK_TFLOPS = Param(
    "peak_tflops", float, H100_TFLOPS, "Π, dense peak compute (default: H100 SXM BF16)", "TFLOP/s"
)
BANDWIDTH_GB_PER_S = Param(
    "bandwidth_gb_per_s", float, H100_GB_PER_S, "β, memory bandwidth (default: H100 SXM)", "GB/s"
)


def _bound(intensity: float, ridge: float) -> str:
    return "compute" if acc.is_compute_bound(intensity, ridge_flop_per_byte=ridge) else "memory"


def peak_compute(sms: float, clock_ghz: float, flop_per_clock_per_sm: float) -> dict[str, Value]:
    return {
        "peak_tflops": acc.peak_tensor_tflops(
            sms, clock_ghz=clock_ghz, flop_per_clock_per_sm=flop_per_clock_per_sm
        )
    }


def hbm_bandwidth(stacks: float, pin_rate_gbit_per_s: float, bus_width_bits: float) -> dict[str, Value]:
    stack = acc.hbm_stack_gb_per_s(pin_rate_gbit_per_s, bus_width_bits=bus_width_bits)
    return {
        "stack_gb_per_s": stack,
        "bandwidth_gb_per_s": acc.hbm_bandwidth_gb_per_s(stacks, stack_gb_per_s=stack),
    }


def roofline(
    intensity_flop_per_byte: float, peak_tflops: float, bandwidth_gb_per_s: float
) -> dict[str, Value]:
    ridge = acc.ridge_flop_per_byte(peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s)
    bound = _bound(intensity_flop_per_byte, ridge)
    roof = {"peak_tflops": peak_tflops, "bandwidth_gb_per_s": bandwidth_gb_per_s}
    return {
        "attainable_tflops": acc.attainable_tflops(intensity_flop_per_byte, **roof),
        "ridge_flop_per_byte": ridge,
        "bound": bound,
        "mfu_ceiling_frac": acc.mfu_ceiling_frac(intensity_flop_per_byte, **roof),
    }


def projection(
    rows: float, k: float, n: float, bytes_per_value: float, peak_tflops: float, bandwidth_gb_per_s: float
) -> dict[str, Value]:
    flop = acc.projection_flop(rows, k=k, n=n)
    moved = acc.projection_bytes(rows, k=k, n=n, bytes_per_value=bytes_per_value)
    ridge = acc.ridge_flop_per_byte(peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s)
    intensity = flop / moved
    rows_star: Value = None
    if k == n and k > bytes_per_value * ridge:
        rows_star = acc.compute_bound_rows(ridge, hidden_size=k, bytes_per_value=bytes_per_value)
    return {
        "flop": flop,
        "bytes": moved,
        "intensity_flop_per_byte": intensity,
        "compute_us": flop / (peak_tflops * FLOP_PER_TFLOP) * US_PER_S,
        "memory_us": moved / (bandwidth_gb_per_s * BYTES_PER_GB) * US_PER_S,
        "bound": _bound(intensity, ridge),
        "compute_bound_rows": rows_star,
    }


def critical_batch(
    bytes_per_weight: float, peak_tflops: float, bandwidth_gb_per_s: float, batch: float
) -> dict[str, Value]:
    ridge = acc.ridge_flop_per_byte(peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s)
    intensity = acc.decode_intensity_flop_per_byte(batch, bytes_per_weight=bytes_per_weight)
    return {
        "critical_batch_seqs": acc.critical_batch_seqs(
            bytes_per_weight, peak_tflops=peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s
        ),
        "ridge_flop_per_byte": ridge,
        "decode_intensity_flop_per_byte": intensity,
        "bound": _bound(intensity, ridge),
    }


def memory_parallelism(
    interface_gb_per_s: float, transaction_bytes: float, latency_ns: float, outstanding: float
) -> dict[str, Value]:
    return {
        "effective_gb_per_s": acc.memory_parallelism_gb_per_s(
            outstanding,
            transaction_bytes=transaction_bytes,
            latency_ns=latency_ns,
            interface_gb_per_s=interface_gb_per_s,
        ),
        "outstanding_needed_requests": acc.outstanding_requests_needed(
            interface_gb_per_s, transaction_bytes=transaction_bytes, latency_ns=latency_ns
        ),
    }


def quantized_storage(
    values: float, bits_per_value: float, group_size: float | None, scale_bytes: float
) -> dict[str, Value]:
    stored = acc.quantized_storage_bytes(
        values,
        bits_per_value=bits_per_value,
        group_size=group_size,
        scale_bytes=scale_bytes if group_size is not None else 0.0,
    )
    return {
        "storage_bytes": stored,
        "storage_mib": stored / BYTES_PER_MIB,
        "effective_bits_per_value": stored * 8 / values,
    }


def link_edge(message_bytes: float, latency_us: float, bandwidth_gb_per_s: float) -> dict[str, Value]:
    edge_s = acc.link_edge_s(message_bytes, latency_us=latency_us, bandwidth_gb_per_s=bandwidth_gb_per_s)
    return {
        "time_us": edge_s * US_PER_S,
        "crossover_bytes": acc.startup_equal_payload_bytes(latency_us, bandwidth_gb_per_s=bandwidth_gb_per_s),
    }


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "peak-compute",
        5,
        "Peak compute",
        "Peak compute Π = SMs × clock × FLOP/clock/SM",
        source="book ch04 §4.3",
        formulas=(acc.peak_tensor_tflops,),
        params=(
            Param("sms", float, 132, "Streaming multiprocessors"),
            Param("clock_ghz", float, 1.83, "Clock at which the peak is quoted", "GHz"),
            Param(
                "flop_per_clock_per_sm", float, 4096, "FLOP per clock per SM (H100 BF16 dense tensor: 4,096)"
            ),
        ),
        outputs=("peak_tflops",),
        compute=peak_compute,
    ),
    LedgerCommand(
        "hbm-bandwidth",
        5,
        "HBM bandwidth",
        "HBM bandwidth: per stack = bus bits × pin rate / 8; device = stacks × per stack",
        source="book ch04 §4.3",
        formulas=(acc.hbm_stack_gb_per_s, acc.hbm_bandwidth_gb_per_s),
        params=(
            Param("stacks", float, 5, "Active HBM stacks"),
            Param("pin_rate_gbit_per_s", float, 5.24, "Data rate per pin", "Gb/s"),
            Param("bus_width_bits", float, 1024, "Interface width per stack", "bits"),
        ),
        outputs=("stack_gb_per_s", "bandwidth_gb_per_s"),
        compute=hbm_bandwidth,
    ),
    LedgerCommand(
        "roofline",
        5,
        "Roofline",
        "Roofline: P_att = min(Π, β·I), ridge I* = Π/β, bound = compute iff I ≥ I*",
        source="book ch04 §4.7",
        formulas=(acc.ridge_flop_per_byte, acc.is_compute_bound, acc.attainable_tflops, acc.mfu_ceiling_frac),
        params=(
            Param("intensity_flop_per_byte", float, 1.0, "I, arithmetic intensity", "FLOP/B"),
            PEAK_TFLOPS,
            BANDWIDTH_GB_PER_S,
        ),
        outputs=("attainable_tflops", "ridge_flop_per_byte", "bound", "mfu_ceiling_frac"),
        compute=roofline,
    ),
    LedgerCommand(
        "projection",
        5,
        "Projection intensity",
        "Projection F = 2MKN, V = b(MK + KN + MN), I = F/V; M* = I*·b·d/(2(d − b·I*)) if K = N",
        formulas=(
            acc.projection_flop,
            acc.projection_bytes,
            acc.ridge_flop_per_byte,
            acc.compute_bound_rows,
            acc.is_compute_bound,
        ),
        params=(
            Param("rows", float, 1, "M, activation rows (tokens in the call)"),
            Param("k", float, 4096, "K, input width of the weight"),
            Param("n", float, 4096, "N, output width of the weight"),
            Param("bytes_per_value", float, 2.0, "b, value size (BF16: 2)", "B"),
            PEAK_TFLOPS,
            BANDWIDTH_GB_PER_S,
        ),
        outputs=(
            "flop",
            "bytes",
            "intensity_flop_per_byte",
            "compute_us",
            "memory_us",
            "bound",
            "compute_bound_rows",
        ),
        compute=projection,
    ),
    LedgerCommand(
        "critical-batch",
        5,
        "Critical batch",
        "Critical batch B* = b_W·Π/(2β); decode intensity I = 2B/b_W",
        source="book ch01 §1.3",
        also_cards=(1,),
        formulas=(
            acc.ridge_flop_per_byte,
            acc.decode_intensity_flop_per_byte,
            acc.critical_batch_seqs,
            acc.is_compute_bound,
        ),
        params=(
            Param("bytes_per_weight", float, 2.0, "b_W, weight size", "B"),
            PEAK_TFLOPS,
            BANDWIDTH_GB_PER_S,
            Param("batch", float, 1.0, "B, a batch to classify (decode I = 2B/b_W)", "sequences"),
        ),
        outputs=("critical_batch_seqs", "ridge_flop_per_byte", "decode_intensity_flop_per_byte", "bound"),
        compute=critical_batch,
    ),
    LedgerCommand(
        "memory-parallelism",
        5,
        "Memory-level parallelism",
        "Little's law: R_eff = min(R_if, N·s/L_lat); N_needed = ceil(R_if·L_lat/s)",
        source="book ch04 Example 4-2",
        formulas=(acc.memory_parallelism_gb_per_s, acc.outstanding_requests_needed),
        params=(
            Param("interface_gb_per_s", float, 1008.0, "R_interface, peak bandwidth", "GB/s"),
            Param("transaction_bytes", float, 128.0, "s, memory transaction size", "B"),
            Param("latency_ns", float, 500.0, "L_lat, memory latency", "ns", min=0.0),
            Param("outstanding", float, 128.0, "N_outstanding, requests in flight"),
        ),
        outputs=("effective_gb_per_s", "outstanding_needed_requests"),
        compute=memory_parallelism,
    ),
    LedgerCommand(
        "quantized-storage",
        5,
        "Quantised storage",
        "Quantised storage V_W = n·b/8 + (n/g)·s",
        source="book ch04 §4.2.4",
        formulas=(acc.quantized_storage_bytes,),
        params=(
            Param("values", float, 4096.0**2, "n, values in the tensor"),
            Param("bits_per_value", float, 4.0, "b, stored value width", "bits"),
            Param("group_size", float | None, 32.0, "g, values per scale (omit: no scales)"),
            Param("scale_bytes", float, 1.0, "s, scale size", "B"),
        ),
        outputs=("storage_bytes", "storage_mib", "effective_bits_per_value"),
        compute=quantized_storage,
    ),
    LedgerCommand(
        "link-edge",
        5,
        "Link edge",
        "Link edge T = α + V/R; start-up equals transfer at V* = α·R",
        source="book ch04",
        formulas=(acc.link_edge_s, acc.startup_equal_payload_bytes),
        params=(
            Param("message_bytes", float, 8192.0, "V, payload", "B"),
            Param("latency_us", float, 3.76, "α, start-up latency", "µs"),
            Param("bandwidth_gb_per_s", float, 50.0, "R, link bandwidth per direction", "GB/s", min=0.0),
        ),
        outputs=("time_us", "crossover_bytes"),
        compute=link_edge,
    ),
)
