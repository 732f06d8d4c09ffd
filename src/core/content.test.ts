import { describe, it, expect } from 'vitest';
import { placeholderKind, findPlaceholders } from './content.js';

describe('placeholder values', () => {
  it('flags the documented placeholders, case-insensitive, whole value', () => {
    const hits = ['', ' ', '\t\n', 'TODO', 'todo', ' Tbd ', 'FIXME', 'n/a', 'N/A', 'Lorem ipsum dolor sit amet', 'lorem ipsum…', '<insert name here>', '<INSERT>',
      '{{customer}}', '{{ a }}', 'xxx', 'XXXXX', '...', '....', '…', 'string', 'Example', 'PLACEHOLDER', 'null', 'undefined'];
    for (const h of hits) expect(placeholderKind(h), JSON.stringify(h)).not.toBeNull();
  });
  it('leaves real values alone', () => {
    const ok = ['TODO: call back', 'xx', 'x', 'Example Corp', 'stringent', 'nullable', 'N/A-1', '{{a}} b', 'insert here', '<b>', '..', 'a...', 'Ada'];
    for (const s of ok) expect(placeholderKind(s), s).toBeNull();
  });
  it('names the kind and concrete locations, checking string values only', () => {
    expect(placeholderKind('')).toBe('empty');
    expect(placeholderKind('  ')).toBe('whitespace only');
    expect(placeholderKind('TBD')).toBe('placeholder text');
    expect(findPlaceholders({ TODO: 1, a: [{ b: 'tbd' }, null, 3], 'x.y': '' }).map((f) => [f.path, f.found])).toEqual([
      ['$.a[0].b', 'placeholder text'],
      ["$['x.y']", 'empty'],
    ]);
    expect(findPlaceholders('...')[0].path).toBe('$');
  });
});
