"""Cell helpers shared by the plan and compare workbooks: trusted formulas, safe cell writes, header styles,
Excel tables with unique names, defined names, column widths and print setup."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planner.report.formatting import (
    HEADER_FILL,
    HEADER_FONT_COLOR,
    MAX_COLUMN_WIDTH,
    MIN_COLUMN_WIDTH,
    is_formula_like,
    sanitize_defined_name,
)

HEADER_WRAP_CHARS = 18
"""Wrapped headers and notes widen their column to at most this many characters."""
FORMULA_WIDTH_CHARS = 14
"""Width a formula cell asks for (its text is not what the reader sees)."""
CHARS_PER_LINE = 125
"""Characters per line of a wrapped text cell two columns wide (Summary), for the row height."""
POINTS_PER_LINE = 15
NOTE_CHARS_PER_LINE = 120
WIDE_TEXT_CHARS = 60
"""Width of wrapped text columns (sources, descriptions, notes)."""
TEXT_INDENT = 1
"""Indent (about one character) of left-aligned text cells, so that text never touches the number before it."""
PRINT_CHARS_PER_PAGE = 190
"""Characters of column width one landscape page prints legibly: about 130 at 100 % (Letter or A4 less
margins), 190 at the ~70 % scale still read comfortably on paper. A wider sheet prints over more pages."""


@dataclass(frozen=True)
class Formula:
    """A trusted formula written by the report code (user text is never one)."""

    text: str


def set_cell(ws: Any, row: int, col: int, value: Any, number_format: str | None = None) -> Any:
    """Write one cell; user strings that look like formulas are stored as text, never evaluated."""
    cell = ws.cell(row=row, column=col)
    if isinstance(value, Formula):
        cell.value = value.text
    elif isinstance(value, list | tuple):
        cell.value = ", ".join(str(v) for v in value)
        cell.data_type = "s"
    elif isinstance(value, dict):
        cell.value = str(value)
        cell.data_type = "s"
    else:
        cell.value = value
        if is_formula_like(value):
            cell.data_type = "s"
    if number_format is not None:
        cell.number_format = number_format
    return cell


def append_row(ws: Any, row: int, values: Sequence[Any], formats: Sequence[str | None] | None = None) -> None:
    """Write ``values`` from column A of ``row`` (with one number format per column when given)."""
    for col, value in enumerate(values, start=1):
        set_cell(ws, row, col, value, formats[col - 1] if formats else None)


def style_header(ws: Any, row: int, n_cols: int) -> None:
    """Bold white on dark blue, wrapped: the header style of every table."""
    from openpyxl.styles import Alignment, Font, PatternFill

    for col in range(1, n_cols + 1):
        cell = ws.cell(row=row, column=col)
        cell.font = Font(bold=True, color=HEADER_FONT_COLOR)
        cell.fill = PatternFill("solid", start_color=HEADER_FILL, end_color=HEADER_FILL)
        cell.alignment = Alignment(wrap_text=True, vertical="center")


def finish_sheet(ws: Any, *, freeze: str | None, widths: dict[str, int] | None = None) -> None:
    """Column widths from content (or ``widths`` by column letter), the height of rows with wrapped text,
    frozen panes, landscape fit-to-width printing."""
    from openpyxl.utils import get_column_letter

    _indent_text(ws)
    content: dict[int, int] = {}
    for row in ws.iter_rows():
        for cell in row:
            if cell.value is None:
                continue
            text = str(cell.value)
            if isinstance(cell.value, int | float) and not isinstance(cell.value, bool):
                text = f"${cell.value:,.2f}"  # as a number format shows it, at its widest
            length = FORMULA_WIDTH_CHARS if text.startswith("=") and cell.data_type == "f" else len(text)
            length += int(cell.alignment.indent or 0)
            if cell.alignment.wrap_text:
                # Wrapped headers and notes grow the row, not the column.
                length = min(length, HEADER_WRAP_CHARS)
            content[cell.column] = max(content.get(cell.column, 0), length)
    final = {col: max(MIN_COLUMN_WIDTH, min(MAX_COLUMN_WIDTH, width + 2)) for col, width in content.items()}
    final.update({ws[f"{col}1"].column: width for col, width in (widths or {}).items()})
    for col, width in final.items():
        ws.column_dimensions[get_column_letter(col)].width = width
    _fit_wrapped_rows(ws, final)
    if freeze:
        ws.freeze_panes = freeze
    _print_layout(ws, sum(final.values()), freeze)


def _indent_text(ws: Any) -> None:
    """Left-aligned text one indent in from its cell's edge: a right-aligned number ran into the text of the
    next column ("0.50 1" for a 0.50 GPU share and 1 instance GPU, "$9,316.62buy node", "4optimal")."""
    from openpyxl.styles import Alignment

    for row in ws.iter_rows():
        for cell in row:
            a = cell.alignment
            text = isinstance(cell.value, str) and cell.data_type == "s" and a.horizontal in (None, "general")
            if cell.value is None or not (text or a.horizontal == "left"):  # left numbers line up with text
                continue
            cell.alignment = Alignment(
                horizontal="left", vertical=a.vertical, wrap_text=a.wrap_text, indent=TEXT_INDENT
            )


def _print_layout(ws: Any, width_chars: int, freeze: str | None) -> None:
    """Landscape, as many pages wide as keep the text at a readable scale (``PRINT_CHARS_PER_PAGE`` columns
    of characters per page), rows and columns frozen on screen repeated on every printed page."""
    from openpyxl.utils.cell import coordinate_from_string, get_column_letter

    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = max(1, -(-width_chars // PRINT_CHARS_PER_PAGE))
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    if not freeze:
        return
    column, row = coordinate_from_string(freeze)
    if row > 1:
        ws.print_title_rows = f"1:{row - 1}"
    first_unfrozen = ws[f"{column}1"].column
    if first_unfrozen > 1 and ws.page_setup.fitToWidth > 1:
        ws.print_title_cols = f"A:{get_column_letter(first_unfrozen - 1)}"


def wrapped_lines(text: str, chars_per_line: int) -> int:
    """Lines ``text`` takes wrapped at spaces (and at its line breaks) in ``chars_per_line`` characters.

    Greedy, as a spreadsheet wraps: a word goes on the line if the line's characters + 1 + its characters
    fit, else it starts the next line; a word longer than a line takes ⌈characters / chars_per_line⌉ lines.
    Dividing the text's length by the line's (the count this replaced) left too few lines where long words
    end lines early: a sweep's binding constraints, 130 characters in a 50-character column
    ("demand_coverage:chat/0–11, gpu_supply:bought/h100_sxm/dc1/1–11, …"), print on 4 lines, not 3, and the
    4th was cut off under the next row."""
    per_line = max(1, chars_per_line)
    count = 0
    for paragraph in text.split("\n"):
        used = 0  # characters on the current line (0: none yet)
        count += 1
        for word in paragraph.split(" "):
            if used and used + 1 + len(word) <= per_line:
                used += 1 + len(word)
                continue
            if used:
                count += 1
            extra = max(0, -(-len(word) // per_line) - 1)  # a word longer than a line wraps inside itself
            count += extra
            used = len(word) - extra * per_line
    return count


def _fit_wrapped_rows(ws: Any, widths: dict[int, int]) -> None:
    """Give rows with wrapped text (headers, notes) the height of their longest cell's lines, unless a
    height was set already (spreadsheets do not grow rows written by openpyxl on their own)."""
    lines: dict[int, int] = {}
    for row in ws.iter_rows():
        for cell in row:
            if cell.value is None or not cell.alignment.wrap_text or cell.data_type == "f":
                continue
            # Words wrap whole: count a line as a few characters shorter than the column.
            per_line = max(1, widths.get(cell.column, MIN_COLUMN_WIDTH) - 5)
            lines[cell.row] = max(lines.get(cell.row, 1), wrapped_lines(str(cell.value), per_line))
    for row_i, n in lines.items():
        if n > 1 and ws.row_dimensions[row_i].height is None:
            ws.row_dimensions[row_i].height = POINTS_PER_LINE * n


def wrap_text_row(ws: Any, row: int, col: int, *, chars_per_line: int | None = CHARS_PER_LINE) -> None:
    """Wrap a long text cell; with ``chars_per_line``, give its row the height of its lines (else the
    spreadsheet sizes the row)."""
    from openpyxl.styles import Alignment

    cell = ws.cell(row=row, column=col)
    cell.alignment = Alignment(wrap_text=True, vertical="top")
    for other in range(1, col):
        ws.cell(row=row, column=other).alignment = Alignment(vertical="top")
    if chars_per_line is not None:
        ws.row_dimensions[row].height = POINTS_PER_LINE * (1 + len(str(cell.value or "")) // chars_per_line)


class Tables:
    """Adds Excel tables with unique display names."""

    def __init__(self, taken: set[str] | None = None) -> None:
        self.names: set[str] = {n.lower() for n in taken or set()}

    def add(self, ws: Any, name: str, first_row: int, last_row: int, n_cols: int) -> None:
        """An Excel table over A{first_row}:{n_cols}{last_row} (nothing when it has no data row)."""
        from openpyxl.utils import get_column_letter
        from openpyxl.worksheet.table import Table, TableStyleInfo

        if last_row <= first_row or n_cols < 1:
            return
        base = sanitize_defined_name(f"tbl_{name}")
        display, k = base, 2
        while display.lower() in self.names:
            display, k = f"{base}_{k}", k + 1
        self.names.add(display.lower())
        table = Table(displayName=display, ref=f"A{first_row}:{get_column_letter(n_cols)}{last_row}")
        table.tableStyleInfo = TableStyleInfo(name="TableStyleMedium2", showRowStripes=True)
        ws.add_table(table)


def header_table(
    ws: Any,
    tables: Tables,
    row: int,
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    formats: Sequence[str | None],
    name: str,
) -> int:
    """Header + rows as an Excel table starting at ``row``; returns the last row written."""
    append_row(ws, row, headers)
    style_header(ws, row, len(headers))
    for i, values in enumerate(rows, start=1):
        append_row(ws, row + i, values, formats)
    last = row + len(rows)
    tables.add(ws, name, row, last, len(headers))
    return last


def wrap_columns(ws: Any, cols: Sequence[str], first_row: int, last_row: int) -> None:
    """Wrap the text of ``cols`` over rows ``first_row``..``last_row`` (long sources and descriptions grow
    their row instead of spilling over the printed page); give the columns a width in finish_sheet."""
    from openpyxl.styles import Alignment

    for r in range(first_row, last_row + 1):
        for cell in ws[r]:  # the whole row reads from the top, next to the wrapped text
            cell.alignment = Alignment(horizontal=cell.alignment.horizontal, vertical="top")
        for col in cols:
            ws[f"{col}{r}"].alignment = Alignment(wrap_text=True, vertical="top")


def first_free_column(ws: Any) -> int:
    """The first column right of those every printed page repeats (1 when none repeat): text or a chart
    anchored in a repeated column printed again, clipped at its edge, on every later page ("Capex is paid in
    the order r", a chart's "Tota")."""
    from openpyxl.utils import column_index_from_string

    titles = ws.print_title_cols
    if not titles:
        return 1
    return int(column_index_from_string(str(titles).split(":")[-1].replace("$", ""))) + 1


def write_note(
    ws: Any, row: int, text: str, *, chars_per_line: int = NOTE_CHARS_PER_LINE, past_repeated: bool = False
) -> int:
    """A note below a table, one line per row (a long line would widen the printed page), from column A or,
    with ``past_repeated``, from the first column the printed pages do not repeat (call it after
    ``finish_sheet``); returns the last row written."""
    import textwrap

    lines = textwrap.wrap(text, chars_per_line)
    col = first_free_column(ws) if past_repeated else 1
    for k, line in enumerate(lines):
        set_cell(ws, row + k, col, line)
    return row + len(lines) - 1


def align(ws: Any, cols: Sequence[str], first_row: int, last_row: int, *, horizontal: str) -> None:
    """Horizontal alignment of ``cols`` over rows ``first_row``..``last_row`` (wrapping kept)."""
    from openpyxl.styles import Alignment

    for col in cols:
        for r in range(first_row, last_row + 1):
            cell = ws[f"{col}{r}"]
            cell.alignment = Alignment(
                horizontal=horizontal, vertical=cell.alignment.vertical, wrap_text=cell.alignment.wrap_text
            )


def column_of(headers: Sequence[str], name: str) -> str:
    """The column letter of header ``name``."""
    return letter(list(headers).index(name) + 1)


def letter(col: int) -> str:
    """Column letter of 1-based column ``col``."""
    from openpyxl.utils import get_column_letter

    return str(get_column_letter(col))


def define_name(wb: Any, name: str, sheet: str, cell: str) -> None:
    """Workbook-level defined name ``name`` for the absolute cell ``cell`` (e.g. 'C4') of ``sheet``."""
    from openpyxl.workbook.defined_name import DefinedName

    col = "".join(ch for ch in cell if ch.isalpha())
    row = "".join(ch for ch in cell if ch.isdigit())
    wb.defined_names[name] = DefinedName(name, attr_text=f"{sheet}!${col}${row}")


def define_named_formula(wb: Any, name: str, formula: str) -> None:
    """Workbook-level defined name ``name`` for ``formula`` (no leading '='), e.g. "MAX('Costs'!$X$2:$X$37)"."""
    from openpyxl.workbook.defined_name import DefinedName

    wb.defined_names[name] = DefinedName(name, attr_text=formula)


def inset_anchor(column: int, row: int, chart: Any) -> Any:
    """An anchor for ``chart`` at (``column``, ``row``), 1-based, 2 mm inside the cell."""
    from openpyxl.drawing.spreadsheet_drawing import AnchorMarker, OneCellAnchor
    from openpyxl.drawing.xdr import XDRPositiveSize2D
    from openpyxl.utils.units import cm_to_EMU

    size = XDRPositiveSize2D(cm_to_EMU(chart.width), cm_to_EMU(chart.height))
    return OneCellAnchor(_from=AnchorMarker(col=column - 1, colOff=cm_to_EMU(0.2), row=row - 1), ext=size)
