"""Where a scatter chart puts each point's name, so that points on (nearly) one spot stay readable.

buy_vs_rent's best h100_sxm plan and best us_east plan are one deployment at 25.2 ms, $824k and $847k: on a
chart from $0 to $1.2M the circle and the square drew on one spot and the names hid each other. The workbook's
native chart places each name on the first side of its point (right, top, bottom, left) where the name's box
meets no name placed before and no other marker, highest point first (:func:`label_positions`); the PNG
stacks the names of points close together one line apart beside them (:func:`label_offsets_pt`); and a
marker on the very spot of an earlier one is drawn larger and hollow around it (:func:`cluster_ranks`).
"""

from __future__ import annotations

from collections.abc import Sequence

NEAR_X_FRAC = 0.15
"""Points closer than this share of the x span (and :data:`NEAR_Y_FRAC` of the y span) have their PNG names
stacked: a name written beside its point is about this wide (chat_70b_cloud's h200_sxm and mi300x, 2 ms and
$5k apart, read into each other)."""
NEAR_Y_FRAC = 0.12
"""See :data:`NEAR_X_FRAC`."""
SAME_SPOT_FRAC = 0.02
"""Markers closer than this share of both spans are drawn on one spot (one hides the other)."""
LINE_PT = 11.0
"""Height of one 7-point label line in points, the step between stacked PNG labels."""
SIDES = ("r", "t", "b", "l")
"""Data-label sides (OOXML dLblPos) tried in turn."""
AXIS_PAD = 1.5
"""A spreadsheet's x axis spans about this many times the data's (rounded ticks: 20–43.5 ms drew 15–50)."""
CHAR_FRAC = 0.0095
"""Width of one label character as a share of the x axis (a 24 cm chart without a legend, 9-point text)."""
LINE_FRAC = 0.05
"""Height of one label line as a share of the y axis."""
MARK_FRAC = 0.012
"""Half a marker, as a share of either axis."""
NAME_OVERLAP_FRAC = 0.05
"""A name may touch another (this share of its box: the estimate of a name's box is rough); never a marker."""

Box = tuple[float, float, float, float]


def _span(values: Sequence[float], from_zero: bool) -> float:
    low = min(0.0, *values) if from_zero else min(values)
    span = max(values) - low
    return span if span > 0 else max(abs(max(values)), 1.0)


def clusters(
    points: Sequence[tuple[float, float]],
    *,
    y_from_zero: bool = False,
    x_frac: float = NEAR_X_FRAC,
    y_frac: float = NEAR_Y_FRAC,
) -> list[list[int]]:
    """Indices of ``points`` (x, y) grouped by proximity (single linkage), each group in the order given.

    ``y_from_zero``: the y axis starts at 0 (the workbook's cost axis), so its span is max(y), not max − min.
    """
    if not points:
        return []
    x_span = _span([p[0] for p in points], False)
    y_span = _span([p[1] for p in points], y_from_zero)
    group = list(range(len(points)))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, (xi, yi) in enumerate(points):
        for j in range(i):
            xj, yj = points[j]
            if abs(xi - xj) <= x_frac * x_span and abs(yi - yj) <= y_frac * y_span:
                group[root(i)] = root(j)
    found: dict[int, list[int]] = {}
    for i in range(len(points)):
        found.setdefault(root(i), []).append(i)
    return list(found.values())


def _highest_first(points: Sequence[tuple[float, float]], members: Sequence[int]) -> list[int]:
    return sorted(members, key=lambda i: (-points[i][1], points[i][0], i))


def _box(x: float, y: float, side: str, chars: int) -> Box:
    """The label box (x0, y0, x1, y1) in axis shares of a name of ``chars`` characters on ``side`` of (x, y)."""
    w, h = chars * CHAR_FRAC, LINE_FRAC
    if side == "r":
        return (x + MARK_FRAC, y - h / 2, x + MARK_FRAC + w, y + h / 2)
    if side == "l":
        return (x - MARK_FRAC - w, y - h / 2, x - MARK_FRAC, y + h / 2)
    if side == "t":
        return (x - w / 2, y + MARK_FRAC, x + w / 2, y + MARK_FRAC + h)
    return (x - w / 2, y - MARK_FRAC - h, x + w / 2, y - MARK_FRAC)


def _padded(box: Box) -> Box:
    """``box`` with a character's room on each side: two names side by side read as one ("b200 (gpu)h200_sxm")."""
    return (box[0] - CHAR_FRAC, box[1] - LINE_FRAC / 6, box[2] + CHAR_FRAC, box[3] + LINE_FRAC / 6)


def _overlap(a: Box, b: Box) -> float:
    dx = min(a[2], b[2]) - max(a[0], b[0])
    dy = min(a[3], b[3]) - max(a[1], b[1])
    return dx * dy if dx > 0 and dy > 0 else 0.0


def label_positions(
    points: Sequence[tuple[float, float]], names: Sequence[str], *, y_from_zero: bool = False
) -> list[str]:
    """The data-label side of each point: highest point first, the first side (right, top, bottom, left) where
    its name meets no name placed before nor another marker; where every side meets one, the least covered."""
    if not points:
        return []
    x_low = min(p[0] for p in points)
    y_low = min(0.0, *(p[1] for p in points)) if y_from_zero else min(p[1] for p in points)
    x_span = _span([p[0] for p in points], False) * AXIS_PAD
    y_span = _span([p[1] for p in points], y_from_zero) * (1.1 if y_from_zero else AXIS_PAD)
    at = [((x - x_low) / x_span, (y - y_low) / y_span) for x, y in points]
    markers = [(x - MARK_FRAC, y - MARK_FRAC, x + MARK_FRAC, y + MARK_FRAC) for x, y in at]
    sides = ["r"] * len(points)
    placed: list[Box] = []
    for i in _highest_first(points, range(len(points))):
        others = [m for j, m in enumerate(markers) if j != i]
        boxes = {s: _box(*at[i], s, len(names[i])) for s in SIDES}
        on_markers = {s: sum(_overlap(b, m) for m in others) for s, b in boxes.items()}
        on_names = {s: sum(_overlap(_padded(b), p) for p in placed) for s, b in boxes.items()}
        area = LINE_FRAC * len(names[i]) * CHAR_FRAC
        clear = [s for s in SIDES if on_markers[s] == 0 and on_names[s] <= NAME_OVERLAP_FRAC * area]
        sides[i] = clear[0] if clear else min(SIDES, key=lambda s: (on_markers[s] + on_names[s]))
        placed.append(boxes[sides[i]])
    return sides


def label_offsets_pt(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The PNG label offset (points) of each point from its marker: alone up-right; in a cluster, the names
    stacked one line apart from the highest point's down, so that no two overlap."""
    offsets = [(4.0, 4.0)] * len(points)
    for members in clusters(points):
        order = _highest_first(points, members)
        if len(order) == 1:
            continue
        top = 4.0 + LINE_PT * (len(order) - 1) / 2
        for k, i in enumerate(order):
            offsets[i] = (8.0, top - LINE_PT * k)
    return offsets


def cluster_ranks(points: Sequence[tuple[float, float]], *, y_from_zero: bool = False) -> list[int]:
    """Each point's place among the markers on its spot (0 alone or first): a later one is drawn larger and
    hollow around the first."""
    ranks = [0] * len(points)
    same = clusters(points, y_from_zero=y_from_zero, x_frac=SAME_SPOT_FRAC, y_frac=SAME_SPOT_FRAC)
    for members in same:
        for k, i in enumerate(members):
            ranks[i] = k
    return ranks
