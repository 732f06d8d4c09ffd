/**
 * @module Lines of a pretty-printed JSON value tagged with their locations, and
 * matchers for the paths the service reports. Paths are in the service's
 * notation (`$.line_items[1].qty`, `$['a.b']`); a rule's or bound's path may
 * hold `[]`, which stands for every element of the array.
 */
import { formatSegments } from 'agent-output-verifier/json';

export interface JsonLine {
  indent: number;
  text: string;
  /** Concrete location of the value this line opens, closes or holds. */
  path: string;
}

/** Lines of a 2-space pretty print, each tagged with the location of its value. */
export function jsonLines(value: unknown): JsonLine[] {
  const lines: JsonLine[] = [];
  const walk = (v: unknown, segs: Array<string | number>, indent: number, prefix: string, comma: string) => {
    const path = formatSegments(segs);
    if (Array.isArray(v)) {
      if (v.length === 0) return lines.push({ indent, text: `${prefix}[]${comma}`, path });
      lines.push({ indent, text: `${prefix}[`, path });
      v.forEach((item, i) => walk(item, [...segs, i], indent + 1, '', i < v.length - 1 ? ',' : ''));
      lines.push({ indent, text: `]${comma}`, path });
      return;
    }
    if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      if (keys.length === 0) return lines.push({ indent, text: `${prefix}{}${comma}`, path });
      lines.push({ indent, text: `${prefix}{`, path });
      keys.forEach((k, i) =>
        walk((v as Record<string, unknown>)[k], [...segs, k], indent + 1, `${JSON.stringify(k)}: `, i < keys.length - 1 ? ',' : ''),
      );
      lines.push({ indent, text: `}${comma}`, path });
      return;
    }
    lines.push({ indent, text: `${prefix}${JSON.stringify(v)}${comma}`, path });
  };
  walk(value, [], 0, '', '');
  return lines;
}

/** A matcher for a reported path: `[]` matches any index. */
export function pathMatcher(reported: string): RegExp {
  const p = reported.startsWith('$') ? reported : `$.${reported}`;
  const escaped = p.replace(/[.*+?^${}()|\\]/g, '\\$&').replace(/\[/g, '\\[').replace(/\]/g, '\\]').replace(/\\\[\\\]/g, '\\[\\d+\\]');
  return new RegExp(`^${escaped}$`);
}
