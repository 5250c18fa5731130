"""Card 7 (operators & runtime) subcommands of `planner ledger`: ``planner.ledgers.operators``.

Defaults are the book's ch05 examples on H100 SXM so every command runs bare.
"""

from __future__ import annotations

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import accelerator as acc
from planner.ledgers import operators as op
from planner.units import BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S, US_PER_S


def host_copy(mib: float, bandwidth_gb_per_s: float, latency_us: float, chunks: int) -> dict[str, Value]:
    if chunks < 1:
        raise ValueError(f"chunks must be >= 1, got {chunks}")
    per_chunk = op.host_copy_s(
        mib * BYTES_PER_MIB / chunks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_s=latency_us / US_PER_S
    )
    return {"copy_ms_per_chunk": per_chunk * MS_PER_S, "copy_ms_total": chunks * per_chunk * MS_PER_S}


def gemm_tiles(
    m: int, n: int, k: int, tile: int, k_step: int, peak_tflops: float, bandwidth_gb_per_s: float
) -> dict[str, Value]:
    traffic = op.gemm_tiled_traffic_bytes(m, n=n, k=k, tile_m=tile, tile_n=tile)
    intensity = op.arithmetic_intensity_flop_per_byte(acc.projection_flop(m, k=k, n=n), traffic_bytes=traffic)
    return {
        "tile_buffer_kib": op.gemm_tile_buffer_bytes(tile, tile_n=tile, k_step=k_step) / BYTES_PER_KIB,
        "traffic_mib": traffic / BYTES_PER_MIB,
        "intensity_flop_per_byte": intensity,
        "mfu_ceiling_frac": acc.mfu_ceiling_frac(
            intensity, peak_tflops=peak_tflops, bandwidth_gb_per_s=bandwidth_gb_per_s
        ),
    }


def flash_attention_io(seq_tokens: int, head_dim: int) -> dict[str, Value]:
    naive = op.attention_naive_bytes(seq_tokens, head_dim=head_dim)
    flash = op.attention_io_bytes(seq_tokens, head_dim=head_dim)
    return {
        "score_matrix_mib": op.attention_score_bytes(seq_tokens) / BYTES_PER_MIB,
        "naive_mib": naive / BYTES_PER_MIB,
        "flash_mib": flash / BYTES_PER_MIB,
        "traffic_ratio_x": naive / flash,
    }


def double_buffer(blocks: int, load_us: float, compute_us: float) -> dict[str, Value]:
    load_s, compute_s = load_us / US_PER_S, compute_us / US_PER_S
    serial = op.serial_blocks_s(blocks, load_s=load_s, compute_s=compute_s)
    piped = acc.double_buffered_pipeline_s(blocks, load_s=load_s, compute_s=compute_s)
    return {
        "serial_us": serial * US_PER_S,
        "pipelined_us": piped * US_PER_S,
        "saving_frac": 1 - piped / serial if serial else 0.0,
    }


def occupancy(
    threads_per_block: int,
    registers_per_thread: int,
    shared_kib: float,
    bandwidth_gb_per_s: float,
    latency_ns: float,
    sms: int,
) -> dict[str, Value]:
    blocks = op.blocks_per_sm(
        threads_per_block,
        registers_per_thread=registers_per_thread,
        shared_bytes_per_block=shared_kib * BYTES_PER_KIB,
    )
    inflight = op.inflight_bytes_per_sm(bandwidth_gb_per_s, latency_ns=latency_ns, sms=sms)
    return {
        "blocks_per_sm": blocks,
        "occupancy_frac": op.occupancy_frac(threads_per_block, resident_blocks=blocks),
        "inflight_kb_per_sm": inflight / 1e3,
    }


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "host-copy",
        7,
        "Host copy",
        "Host→device copy T = α + bytes/B",
        source="book ch05 Example 5-1",
        formulas=(op.host_copy_s,),
        params=(
            Param("mib", float, 64.0, "Bytes copied (8192 × 4096 BF16 = 64 MiB)", "MiB"),
            Param("bandwidth_gb_per_s", float, 64.0, "Link per direction (PCIe Gen5 x16)", "GB/s", min=0.0),
            Param("latency_us", float, 0.0, "Start-up latency", "µs"),
            Param("chunks", int, 1, "Equal chunks the copy is split into"),
        ),
        outputs=("copy_ms_per_chunk", "copy_ms_total"),
        compute=host_copy,
    ),
    LedgerCommand(
        "gemm-tiles",
        7,
        "Tiled GEMM",
        "Tiled GEMM: buffer S = 2mk + 2kn + 4mn, traffic V = 2MK·N/n + 2KN·M/m + 2MN, intensity 2MNK/V and the MFU ceiling min(1, I·β/Π)",
        source="book ch05 Example 5-3",
        formulas=(
            op.gemm_tiled_traffic_bytes,
            op.arithmetic_intensity_flop_per_byte,
            acc.projection_flop,
            op.gemm_tile_buffer_bytes,
            acc.mfu_ceiling_frac,
        ),
        params=(
            Param("m", int, 1024, "GEMM rows M"),
            Param("n", int, 12288, "GEMM columns N"),
            Param("k", int, 4096, "Inner dimension K"),
            Param("tile", int, 128, "Square output tile m = n"),
            Param("k_step", int, 32, "K slice per step"),
            Param("peak_tflops", float, 989.4, "Π, dense peak (H100 SXM BF16)", "TFLOP/s"),
            Param("bandwidth_gb_per_s", float, 3350.0, "β, memory bandwidth (H100 SXM)", "GB/s", min=0.0),
        ),
        outputs=("tile_buffer_kib", "traffic_mib", "intensity_flop_per_byte", "mfu_ceiling_frac"),
        compute=gemm_tiles,
    ),
    LedgerCommand(
        "flash-attention-io",
        7,
        "FlashAttention I/O",
        "FlashAttention I/O for one head: naive 4·L·d·2 + 4·L²·4 bytes (S and P written and re-read) vs fused 4·L·d·2 bytes",
        source="book ch05 §5.3.3",
        formulas=(op.attention_naive_bytes, op.attention_io_bytes, op.attention_score_bytes),
        params=(
            Param("seq_tokens", int, 8192, "Sequence length L", "tokens"),
            Param("head_dim", int, 128, "Head dimension d"),
        ),
        outputs=("score_matrix_mib", "naive_mib", "flash_mib", "traffic_ratio_x"),
        compute=flash_attention_io,
    ),
    LedgerCommand(
        "double-buffer",
        7,
        "Double buffering",
        "Double buffering T = t_m + (n − 1)·max(t_m, t_c) + t_c vs serial n·(t_m + t_c)",
        source="book ch05 Example 5-5",
        formulas=(op.serial_blocks_s, acc.double_buffered_pipeline_s),
        params=(
            Param("blocks", int, 4, "Blocks n"),
            Param("load_us", float, 1.29, "Load time per block t_m", "µs"),
            Param("compute_us", float, 0.28, "Compute time per block t_c", "µs"),
        ),
        outputs=("serial_us", "pipelined_us", "saving_frac"),
        compute=double_buffer,
    ),
    LedgerCommand(
        "occupancy",
        7,
        "Occupancy",
        "Occupancy (tightest of registers, shared memory, threads per SM) and in-flight bytes per SM β × latency / SMs",
        source="book ch05 §5.2; H100 limits",
        formulas=(op.blocks_per_sm, op.occupancy_frac, op.inflight_bytes_per_sm),
        params=(
            Param("threads_per_block", int, 256, "Threads per block"),
            Param("registers_per_thread", int, 128, "Registers per thread", min=1),
            Param("shared_kib", float, 97.0, "Shared memory per block", "KiB", min=0.0),
            Param("bandwidth_gb_per_s", float, 3350.0, "Memory bandwidth (H100)", "GB/s", min=0.0),
            Param("latency_ns", float, 600.0, "Memory latency", "ns", min=0.0),
            Param("sms", int, op.H100_SMS, "SM count"),
        ),
        outputs=("blocks_per_sm", "occupancy_frac", "inflight_kb_per_sm"),
        compute=occupancy,
    ),
)
