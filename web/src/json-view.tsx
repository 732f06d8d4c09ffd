/**
 * @module The submitted output, pretty-printed one value per line, with the
 * lines at the paths of failed checks highlighted (each line names its checks
 * in its title and, for screen readers, in hidden text).
 */
import { jsonLines, pathMatcher } from './json-lines.js';

export interface Mark {
  path: string;
  check: string;
}

export function JsonView({ value, marks, label }: { value: unknown; marks: Mark[]; label: string }) {
  const matchers = marks.map((m) => ({ ...m, re: pathMatcher(m.path) }));
  const lines = jsonLines(value);
  return (
    <pre class="json-view" aria-label={label} tabIndex={0}>
      {lines.map((line, i) => {
        const hits = matchers.filter((m) => m.re.test(line.path));
        const checks = [...new Set(hits.map((h) => h.check))];
        return (
          <div
            key={i}
            class={checks.length ? 'jl hit' : 'jl'}
            data-path={line.path}
            data-checks={checks.length ? checks.join(' ') : undefined}
            title={checks.length ? `${line.path}: ${checks.join(', ')}` : undefined}
          >
            <span class="ln" aria-hidden="true">{i + 1}</span>
            <span class="code">{'  '.repeat(line.indent) + line.text}</span>
            {checks.length ? <span class="sr-only"> (failed: {checks.join(', ')})</span> : null}
          </div>
        );
      })}
    </pre>
  );
}
