/** A table cell: printed as text, `null`/`undefined` as `-`. */
export type Cell = string | number | boolean | null | undefined;

/** Formats rows under upper-case headers, columns aligned with two spaces between, no trailing spaces. */
export function formatTable(headers: string[], rows: Cell[][]): string {
  const text = [headers, ...rows.map((row) => row.map(cellText))];
  const widths = headers.map((_, column) => Math.max(...text.map((row) => (row[column] ?? '').length)));
  return text
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function cellText(cell: Cell): string {
  if (cell === null || cell === undefined) return '-';
  if (typeof cell === 'boolean') return cell ? 'yes' : 'no';
  return String(cell);
}
