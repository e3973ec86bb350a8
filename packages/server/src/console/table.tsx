import type { ComponentChildren } from 'preact';

/**
 * The console's list table: `<table id>` with its caption, a head row of `<th scope="col">` headers, and in its body
 * what `row` draws for each of `rows` (a `<tr>`, or several). With `empty`, no rows show that sentence as a paragraph
 * in the table's place; without it, the table stands even with no rows. A header given as null is left out (a column
 * only some keys see), and `row` leaves out that column's cells too. A table of another shape (no head row, a second
 * list of rows) is written out where it stands.
 */
export function DataTable<T>(props: {
  id?: string;
  caption: string;
  columns: (string | null)[];
  rows: readonly T[];
  row: (item: T) => ComponentChildren;
  empty?: string;
}) {
  if (props.empty !== undefined && props.rows.length === 0) return <p>{props.empty}</p>;
  return (
    <table id={props.id}>
      <caption>{props.caption}</caption>
      <thead>
        <tr>{props.columns.map((c) => (c === null ? null : <th scope="col">{c}</th>))}</tr>
      </thead>
      <tbody>{props.rows.map((item) => props.row(item))}</tbody>
    </table>
  );
}
