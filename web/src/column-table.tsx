/** @module A table with a header row of column names, in the horizontal scroll box every wide table of the pages uses. */
import type { ComponentChildren } from 'preact';

export function ColumnTable(props: { class: string; columns: readonly string[]; caption?: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table class={props.class}>
        {props.caption !== undefined ? <caption>{props.caption}</caption> : null}
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
