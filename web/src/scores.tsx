/** @module The three scores of a verification (schema, integrity, overall) as a small table. */
export interface Score {
  ratio: number;
  passed: number;
  total: number;
}

export function Scores(props: { schema?: Score; integrity?: Score; overall?: Score }) {
  const rows: Array<[string, Score | undefined]> = [
    ['Schema compliance', props.schema],
    ['Integrity checks', props.integrity],
    ['Overall', props.overall],
  ];
  return (
    <div class="table-scroll">
      <table class="scores">
        <caption class="sr-only">Scores</caption>
        <tbody>
          {rows.map(([name, s]) =>
            s ? (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>
                  {s.passed} / {s.total} passed
                </td>
                <td>
                  <meter min={0} max={1} value={s.ratio} aria-label={`${name} ratio`} /> {(s.ratio * 100).toFixed(1)}%
                </td>
              </tr>
            ) : null,
          )}
        </tbody>
      </table>
    </div>
  );
}
